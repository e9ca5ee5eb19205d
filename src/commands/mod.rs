//! The subcommands, one file each: each reads its inputs, runs one decision or view, and
//! maps the result to the contract's output and exit code.

pub mod audit;
pub mod catalog;
pub mod check;
pub mod doctor;
pub mod hook;
pub mod instead_of;
pub mod mcp;
pub mod override_grant;
pub mod replay;
pub mod search;
pub mod session_start;
pub mod test;

use crate::cli::{Args, CatalogAction, Command};
use crate::config::Paths;

pub fn run(args: Args) -> i32 {
    // The hook's arm alone, with nothing of the operator's commands inlined: this frame
    // stays on the stack under the whole decision, and a frame is as large as its largest arm.
    if let Command::Hook { agent, mcp } = args.command {
        let paths = Paths::resolve(args.catalog, args.db, args.rules);
        return hook::run(&paths, agent, crate::app::hints(mcp));
    }
    operator(args)
}

/// The operator's commands (everything but the hook), kept out of the hook's frame.
#[inline(never)]
fn operator(args: Args) -> i32 {
    let given = crate::install::Given {
        catalog: args.catalog.clone(),
        db: args.db.clone(),
        rules: args.rules.clone(),
    };
    let mut paths = Paths::resolve(args.catalog, args.db, args.rules);
    if !args.command.is_hook() {
        paths.home = crate::config::Home::Session;
    }
    match args.command {
        Command::Hook { agent, mcp } => hook::run(&paths, agent, crate::app::hints(mcp)),
        Command::Check {
            json,
            mcp,
            override_reason,
            scope,
            command,
        } => {
            let preview = check::Preview::new(&paths, override_reason, scope);
            check::run(
                &paths,
                &command.join(" "),
                json,
                crate::app::hints(mcp),
                &preview,
            )
        }
        Command::Catalog {
            action: CatalogAction::Check,
        } => catalog::check(&paths),
        Command::Catalog {
            action: CatalogAction::Compile,
        } => catalog::compile(&paths),
        Command::Install(install) => crate::install::install(&paths, &install.request(given)),
        Command::Uninstall(install) => crate::install::uninstall(&install.request(given)),
        Command::Override {
            action: crate::cli::OverrideAction::Grant(grant),
        } => override_grant::run(&paths, &grant),
        Command::Doctor { json, user } => doctor::run(&paths, json, user.as_deref()),
        Command::InsteadOf { format, mcp } => instead_of::run(&paths, format, mcp),
        Command::Replay {
            paths: given,
            format,
        } => replay::run(&paths, &given, format),
        Command::Search { json, command } => search::run(&paths, &command.join(" "), json),
        Command::Mcp => mcp::serve(&paths),
        Command::SessionStart { agent } => session_start::run(&paths, agent),
        Command::Test { files } => test::run(&paths, &files),
        Command::Audit {
            action,
            kind,
            rule,
            target,
            wide,
            since,
            until,
            session,
            after,
            limit,
            format,
        } => audit::run(
            &paths,
            action,
            audit::AuditQuery {
                kind,
                rule,
                target,
                wide,
                since,
                until,
                session,
                after,
                limit,
                format,
            },
        ),
    }
}
