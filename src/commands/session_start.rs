//! `mesh-guard session-start`: records a session started with an override.

use crate::cli::TableFormat;
use crate::commands::instead_of::instead_of_table;
use crate::config::Paths;
use crate::decide::Rule;
use crate::error::exit;
use crate::hook::AgentChoice;
use crate::record::{Event as Row, Kind};
use crate::session::{
    append, override_reason, planted_message, planted_reason, scope_text, trusted_paths,
};

/// The SessionStart hook: records a session started with an override, and gives the agent
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
    let mut code = exit::OK;
    // A session whose override (or guard variable) a file the agent can write also sets
    // is recorded as an attempt, not as the operator's start (decision 0008).
    let cwd = Some(std::path::PathBuf::from(field("cwd"))).filter(|p| p.is_absolute());
    let planted = if override_reason().is_some()
        || !crate::protect::usetime::present(&crate::protect::usetime::PATH_VARIABLES).is_empty()
    {
        let names: Vec<&'static str> = crate::protect::usetime::OVERRIDE_VARIABLES
            .iter()
            .chain(crate::protect::usetime::PATH_VARIABLES.iter())
            .copied()
            .collect();
        crate::protect::usetime::find(&names, cwd.as_deref())
    } else {
        None
    };
    if let Some(planted) = &planted {
        let mut row = Row::now(Kind::OverrideAttempt);
        row.agent = agent.to_string();
        row.session_id = field("session_id");
        row.cwd = field("cwd");
        row.rule = Rule::Override.id().to_string();
        row.target = planted.file.display().to_string();
        row.reason = planted_reason(planted);
        if append(&trusted_paths(paths, planted, cwd.as_deref()), &row).is_err() {
            errln!("mesh-guard: this session's planted guard variable could not be recorded");
        }
        errln!(
            "mesh-guard: {}",
            planted_message(
                planted,
                crate::protect::usetime::PATH_VARIABLES.contains(&planted.variable)
            )
        );
    } else if let Some(reason) = override_reason() {
        let mut row = Row::now(Kind::SessionStart);
        row.agent = agent.to_string();
        row.session_id = field("session_id");
        row.cwd = field("cwd");
        row.reason = reason;
        row.scope = scope_text();
        if let Some(Err(e)) = crate::scope::from_env() {
            errln!(
                "mesh-guard: the override's scope is malformed ({e}); no command will pass under it"
            );
        }
        if let Err(e) = append(paths, &row) {
            errln!(
                "mesh-guard: the session's override could not be recorded ({e}); it will not be honoured"
            );
            code = exit::OK;
        }
    }
    let loaded = crate::catalog::load(&paths.catalog);
    // A broken catalog refuses every guarded command: the operator hears it at the start.
    let broken = loaded.as_ref().err().map(|errors| {
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
    let table = catalog.map(|c| instead_of_table(&c, TableFormat::Markdown));
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
    code
}
