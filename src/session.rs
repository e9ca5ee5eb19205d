//! The operator's side: the override (read only from the guard's own environment), the
//! record of every refusal and override, the SessionStart hook and the audit views.

use crate::app::{fail_closed, refuse};
use crate::config::Paths;
use crate::decide::{OVERRIDE_VAR, Refusal, Rule};
use crate::hook::{self, Event};
use crate::instead::Suggestion;
use crate::record::{Event as Row, Kind};

/// The operator's override reason, from this process's environment: the environment the
/// agent session was started with. Never from the command or a file (decision 0003).
pub fn override_reason() -> Option<String> {
    crate::io::var(OVERRIDE_VAR)
        .ok()
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty())
}

pub(crate) fn row(kind: Kind, event: &Event, command: &str) -> Row {
    let mut row = Row::now(kind);
    row.agent = event.agent.name().to_string();
    row.session_id = event.session_id.clone();
    row.tool_use_id = event.tool_use_id.clone();
    row.cwd = event.cwd.clone();
    row.command = command.to_string();
    row
}

/// Records `row` and forwards it to the system log in force; the catalog is read for its
/// `[record] syslog` only when `MESH_GUARD_SYSLOG` does not decide.
pub(crate) fn append(paths: &Paths, row: &Row) -> Result<(), crate::record::RecordError> {
    let env_decides =
        crate::io::var_os(crate::record::forward::SYSLOG_VAR).is_some_and(|v| !v.is_empty());
    let catalog = (!env_decides).then(|| paths.lazy_catalog());
    let setting = catalog
        .as_ref()
        .and_then(|c| c.get().ok())
        .and_then(|c| c.syslog().map(str::to_string));
    // Only the hooks (PreToolUse and SessionStart) come here. As a process they exit right
    // after their answer, and leave the connection to the exit (decision 0042); run in another
    // program's process (`mesh_guard::run`), which goes on, they close it.
    if crate::io::in_process_call() {
        crate::record::record(&paths.db, row, setting.as_deref()).map(drop)
    } else {
        crate::record::record_before_exit(&paths.db, row, setting.as_deref()).map(drop)
    }
}

/// The stderr note for a refusal that could not be recorded: addressed to the operator, without
/// host paths (the agent reads it too).
pub(crate) fn not_recorded(paths: &Paths, e: &crate::record::RecordError) -> String {
    let dir = paths
        .db
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let state = if !dir.is_dir() {
        "the record's directory is missing"
    } else {
        "the record's directory or file is not writable"
    };
    format!(
        "mesh-guard: not recorded: {e} ({state}). Operator: run `mesh-guard doctor`; the next recorded row will note this gap."
    )
}

/// Answers a refusal in the hook: honoured override (recorded first), or the refusal
/// (recorded, but refused even when the record cannot be written).
pub fn answer_refusal(
    paths: &Paths,
    event: &Event,
    refusal: &Refusal,
    instead: &[Suggestion],
    message: &str,
) -> i32 {
    let command = match &event.action {
        hook::Action::Shell { command } => command.clone(),
        hook::Action::WriteFile { path, .. } => format!("write {path}"),
        hook::Action::Other => String::new(),
    };
    let mut refused = row(Kind::Refusal, event, &command);
    refused.rule = refusal.rule.id().to_string();
    refused.target = refusal.target.clone();
    refused.tools = instead.iter().map(|s| s.tool.clone()).collect();
    if instead.is_empty() && !refusal.shape.is_empty() {
        refused.shape = refusal.shape.clone();
    }
    // A broken setup: the record says what the operator must fix, as the message does.
    if let crate::decide::Why::Broken(broken) = &refusal.why {
        refused.reason = crate::message::setup::reason(broken);
    }
    // Every row of a session with an override carries its scope (decision 0015).
    if override_reason().is_some() {
        refused.scope = scope_text();
    }
    let overridable = !matches!(refusal.rule, Rule::Override | Rule::SelfProtection);
    let planted = match (override_reason(), overridable) {
        (Some(_), true) => crate::protect::usetime::find(
            &crate::protect::usetime::OVERRIDE_VARIABLES,
            event_cwd(event).as_deref(),
        ),
        _ => None,
    };
    if let Some(planted) = planted {
        // Recorded as an attempt, never as the operator's override (decision 0008).
        let mut attempt = refused.clone();
        attempt.kind = Kind::OverrideAttempt;
        attempt.reason = planted_reason(&planted);
        let text = joined(&planted_message(&planted, false), message);
        let note = append(paths, &attempt).err().map(|_| {
            "mesh-guard: this refusal could not be recorded in the audit database".to_string()
        });
        return refuse(event.agent, &text, note.as_deref());
    }
    // A scoped override (decision 0015) covers only what its scope names; a malformed
    // scope covers nothing.
    let scope = match (override_reason(), overridable) {
        (Some(_), true) => crate::scope::from_env(),
        _ => None,
    };
    let uncovered = match &scope {
        Some(Err(e)) => Some(format!(
            "its scope ({}) is malformed: {e}",
            crate::scope::SCOPE_VAR
        )),
        Some(Ok(scope)) => {
            let others = every_target(paths, event, &command);
            let all: Vec<&Refusal> = std::iter::once(refusal).chain(others.iter()).collect();
            scope
                .covers(&all, crate::record::now_ms())
                .err()
                .map(|why| {
                    format!(
                        "it does not cover this command ({why}); it covers `{}`",
                        scope.shown()
                    )
                })
        }
        None => None,
    };
    if let Some(why) = uncovered {
        refused.reason = format!("override not honoured: {why}");
        refused.scope = scope_text();
        let text = joined(
            &format!("The operator's override was not honoured: {why}."),
            message,
        );
        let note = append(paths, &refused).err().map(|_| {
            "mesh-guard: this refusal could not be recorded in the audit database".to_string()
        });
        return refuse(event.agent, &text, note.as_deref());
    }
    if let (Some(reason), true) = (override_reason(), overridable) {
        let mut honoured = refused.clone();
        honoured.kind = Kind::Override;
        honoured.reason = reason;
        honoured.scope = scope_text();
        // The override is honoured only once its row is durably written.
        match append(paths, &honoured) {
            Ok(()) => return 0,
            Err(_) => {
                let text = format!(
                    "{message} The operator's override ({OVERRIDE_VAR}) was not honoured because it could not be recorded in the audit database."
                );
                return refuse(
                    event.agent,
                    &text,
                    Some(
                        "mesh-guard: the override could not be recorded; ask the operator to check the audit database",
                    ),
                );
            }
        }
    }
    if refusal.rule == Rule::Override {
        refused.kind = Kind::OverrideAttempt;
    }
    let note = append(paths, &refused)
        .err()
        .map(|e| not_recorded(paths, &e));
    refuse(event.agent, message, note.as_deref())
}

/// A refusal in report-only mode (decision 0060): the command passes, and the refusal it would
/// have been is recorded as a `would-refuse` row in the same chain, forwarded like every row.
/// A row that cannot be written is said on stderr (and noted by the next row's gap), never
/// turned into a refusal: the operator chose to let these pass.
pub fn answer_reported(
    paths: &Paths,
    event: &Event,
    refusal: &Refusal,
    instead: &[Suggestion],
    message: &str,
) -> i32 {
    let command = match &event.action {
        hook::Action::Shell { command } => command.clone(),
        hook::Action::WriteFile { path, .. } => format!("write {path}"),
        hook::Action::Other => String::new(),
    };
    let mut reported = row(Kind::WouldRefuse, event, &command);
    reported.rule = refusal.rule.id().to_string();
    reported.target = refusal.target.clone();
    reported.tools = instead.iter().map(|s| s.tool.clone()).collect();
    if instead.is_empty() {
        reported.shape = refusal.shape.clone();
    }
    reported.reason = message.to_string();
    // Every row of a session with an override carries its scope (decision 0015).
    if override_reason().is_some() {
        reported.scope = scope_text();
    }
    if let Err(e) = append(paths, &reported) {
        errln!("{}", not_recorded(paths, &e));
    }
    crate::error::exit::OK
}

/// The override's scope as the record keeps it: as the operator wrote it, even malformed.
pub(crate) fn scope_text() -> String {
    crate::io::var_os(crate::scope::SCOPE_VAR)
        .map(|v| v.to_string_lossy().chars().take(1000).collect())
        .unwrap_or_default()
}

/// Every mesh object the event's command reaches (only asked under a scoped override).
pub(crate) fn every_target(paths: &Paths, event: &Event, command: &str) -> Vec<Refusal> {
    if !matches!(event.action, hook::Action::Shell { .. }) {
        return Vec::new();
    }
    let Ok(rules) = crate::rules::Rules::load(paths.rules.as_deref()) else {
        return Vec::new();
    };
    let catalog = paths.lazy_catalog();
    let protected = paths.protected(event_cwd(event));
    crate::decide::Guard {
        rules: &rules,
        catalog: &catalog,
        protected: &protected,
    }
    .every_target(command)
}

/// A note put before a refusal's message, the whole kept under the contract's 1,000
/// characters: the note is what the operator must read, so the message's tail gives way.
pub(crate) fn joined(note: &str, message: &str) -> String {
    const LIMIT: usize = 999;
    let text = format!("{note} {message}");
    if text.chars().count() <= LIMIT {
        return text;
    }
    let mut cut: String = text.chars().take(LIMIT - 1).collect();
    cut.push('…');
    cut
}

pub(crate) fn event_cwd(event: &Event) -> Option<std::path::PathBuf> {
    Some(std::path::PathBuf::from(&event.cwd)).filter(|p| p.is_absolute())
}

/// What the record says of a planted variable: where it came from, and its value (the
/// agent's own words, never shown as the operator's reason).
pub(crate) fn planted_reason(planted: &crate::protect::usetime::Planted) -> String {
    let value = crate::io::var(planted.variable).unwrap_or_default();
    format!(
        "not honoured: {} is also set by {}, a file the agent can write; value: {}",
        planted.variable,
        planted.shown_file(),
        value.chars().take(200).collect::<String>()
    )
}

/// The refusal's words to the operator. `every` says that every command is refused.
pub(crate) fn planted_message(planted: &crate::protect::usetime::Planted, every: bool) -> String {
    let scope = if every {
        "mesh-guard refuses every command until then"
    } else {
        "the override is not honoured"
    };
    format!(
        "Tell the operator: {} is set by {}, a file the agent can write, so it is not the operator's and {scope}. Operator: remove it from that file, and set it only in the environment you start the session from. Do not change that file or work round this.",
        planted.variable,
        planted.shown_file()
    )
}

/// A guard variable that chooses the guard's binary or files, planted by a file the agent
/// can write: every command is refused and the attempt recorded, in the record the
/// variable did not choose.
pub fn answer_planted(
    paths: &Paths,
    event: &Event,
    planted: &crate::protect::usetime::Planted,
) -> i32 {
    let command = match &event.action {
        hook::Action::Shell { command } => command.clone(),
        hook::Action::WriteFile { path, .. } => format!("write {path}"),
        hook::Action::Other => String::new(),
    };
    let mut attempt = row(Kind::OverrideAttempt, event, &command);
    attempt.rule = Rule::Override.id().to_string();
    attempt.target = planted.file.display().to_string();
    attempt.reason = planted_reason(planted);
    let trusted = trusted_paths(paths, planted, event_cwd(event).as_deref());
    let note = append(&trusted, &attempt).err().map(|_| {
        "mesh-guard: this refusal could not be recorded in the audit database".to_string()
    });
    let message = format!(
        "{} Other tools that do not run commands or write files still work.",
        planted_message(planted, true)
    );
    refuse(event.agent, &message, note.as_deref())
}

/// Used where a hook cannot even begin (the launcher's own failures are in plugin/bin).
/// The paths with a planted `MESH_GUARD_DB` or `MESH_GUARD_CATALOG` replaced by the default:
/// the record the agent chose is not where an operator looks, and the catalog it chose must
/// not say where the row is forwarded (its `[record] syslog`), nor be read at all.
pub(crate) fn trusted_paths(
    paths: &Paths,
    planted: &crate::protect::usetime::Planted,
    cwd: Option<&std::path::Path>,
) -> Paths {
    // Another variable may have been found first: each is looked for on its own.
    let planted_here = |variable: &'static str, path: &std::path::Path| {
        let found = planted.variable == variable
            || crate::protect::usetime::find(&[variable], cwd).is_some();
        found && crate::io::var_os(variable).is_some_and(|v| std::path::Path::new(&v) == path)
    };
    let defaults = Paths::resolve(None, None, None);
    let mut trusted = paths.clone();
    if planted_here("MESH_GUARD_DB", &paths.db) {
        trusted.db = defaults.db;
    }
    if planted_here("MESH_GUARD_CATALOG", &paths.catalog) {
        trusted.catalog = defaults.catalog;
    }
    trusted
}

pub fn internal_error_message() -> String {
    fail_closed("mesh-guard failed inside (an internal error)")
}
