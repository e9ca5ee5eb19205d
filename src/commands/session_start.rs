//! `mesh-guard session-start`: records a session started with an override grant.

use crate::cli::TableFormat;
use crate::commands::instead_of::instead_of_table;
use crate::config::Paths;
use crate::error::exit;
use crate::hook::AgentChoice;
use crate::pipeline::append;
use crate::record::{Event as Row, Kind};
use crate::rule::Rule;

/// The SessionStart hook: records a session started with a grant, and gives the agent
/// the mesh's "instead of" table so it knows the tools before it reaches for ssh.
pub fn run(paths: &Paths, choice: AgentChoice) -> i32 {
    let mut input = Vec::new();
    let _ = crate::io::read_in(1024 * 1024, &mut input);
    let json: serde_json::Value = serde_json::from_slice(&input).unwrap_or_default();
    let field = |k: &str| {
        json.get(k)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let agent = choice.fallback().name();
    let start = |kind: Kind| {
        let mut row = Row::now(kind);
        row.agent = agent.to_string();
        row.session_id = field("session_id");
        row.cwd = field("cwd");
        row
    };
    // Read once, from its TOML: it names the record's system log and gives the agent its
    // table; a broken one is the operator's warning below.
    let catalog = crate::catalog::LazyCatalog::new(paths.catalog.clone());
    // A session started with a grant: recorded as the operator's start when it verifies,
    // as an attempt when it does not (decision 0058).
    match crate::pipeline::grant_in_force(paths) {
        None => {}
        Some(Ok(grant)) => {
            let mut row = start(Kind::SessionStart);
            row.reason = grant.grant.reason.clone();
            row.scope = grant.grant.scope.clone();
            row.signer = grant.signer.clone();
            row.grant_expires = crate::time::format_time(grant.grant.expires_ms, false);
            if let Err(e) = append(paths, &catalog, &row) {
                errln!(
                    "mesh-guard: the session's override could not be recorded ({e}); it will not be honoured"
                );
            }
        }
        Some(Err(not)) => {
            let mut row = start(Kind::OverrideAttempt);
            row.rule = Rule::Override.into();
            row.reason = format!("override not honoured: {}", not.why);
            row.signer = not.signer;
            row.grant_expires = not.expires;
            if append(paths, &catalog, &row).is_err() {
                errln!("mesh-guard: this session's override attempt could not be recorded");
            }
            errln!(
                "mesh-guard: the operator's override ({}) is not honoured: {}",
                crate::grant::VAR,
                not.why
            );
        }
    }
    let loaded = catalog.get();
    // A broken catalog refuses every guarded command: the operator hears it at the start.
    let broken = loaded.err().map(|errors| {
        crate::decide::Broken::Catalog(errors.first().map(|e| e.to_string()).unwrap_or_default())
    });
    if let Some(broken) = &broken {
        eprintln!("{}", crate::message::setup::session_warning(broken));
    }
    let catalog = loaded.ok();
    // The operator may read this where the agent's hooks log; the agent sees no table.
    if catalog.as_ref().is_some_and(|c| c.machine_count() == 0) {
        errln!(
            "mesh-guard: warning: the catalog {} has no machine: no machine is guarded by name, only what `[mesh]` domains and networks cover",
            paths.catalog.display()
        );
    }
    let table = catalog.map(|c| instead_of_table(c, TableFormat::Markdown));
    let context = match table {
        Some(table) => format!(
            "This machine's shell commands are checked by mesh-guard. For the mesh's machines, containers and units, use the mesh's own tools instead of ssh, scp, docker, journalctl or systemctl:\n\n{table}\nIf no tool fits, tell the operator which tool is missing rather than working round the guard."
        ),
        None => match &broken {
            Some(broken) => crate::message::setup::session_context(broken),
            None => "This machine's shell commands are checked by mesh-guard: use the mesh's own tools for its machines, containers and units, not ssh, docker or journalctl.".to_string(),
        },
    };
    outln!(
        "{}",
        crate::hook::session_start(choice.fallback(), &context)
    );
    exit::OK
}
