//! The operator's side: the override grant (read only from the guard's own environment,
//! honoured only when its signature verifies), the record of every refusal and override.

use crate::app::{fail_closed, refuse};
use crate::config::Paths;
use crate::decide::{Refusal, Rule};
use crate::hook::{self, Event};
use crate::instead::Suggestion;
use crate::record::{Event as Row, Kind};

pub(crate) fn row(kind: Kind, event: &Event, command: &str) -> Row {
    let mut row = Row::now(kind);
    row.agent = event.agent.name().to_string();
    row.session_id = event.session_id.clone();
    row.tool_use_id = event.tool_use_id.clone();
    row.cwd = event.cwd.clone();
    row.command = command.to_string();
    row
}

/// Records `row` and forwards it to the system log the catalog's `[record] syslog` names
/// (else the system's own): never where the hook's environment says (decision 0059).
pub(crate) fn append(paths: &Paths, row: &Row) -> Result<(), crate::record::RecordError> {
    let catalog = paths.lazy_catalog();
    let setting = catalog
        .get()
        .ok()
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
    crate::record::not_recorded_line(&paths.db, e)
}

/// The override grant in this process's environment, verified against `allowed_signers`
/// beside the catalog: `None` when `MESH_GUARD_OVERRIDE` is not set (decision 0058).
pub fn grant_in_force(
    paths: &Paths,
) -> Option<Result<crate::grant::Verified, crate::grant::NotHonoured>> {
    let text = crate::grant::text_in_env()?;
    Some(verify_grant(paths, &text))
}

/// `text` verified as a grant on this host, now.
pub fn verify_grant(
    paths: &Paths,
    text: &str,
) -> Result<crate::grant::Verified, crate::grant::NotHonoured> {
    verify_grant_on(paths, text, &crate::record::host_name())
}

/// `text` verified as a grant on `host`, now, against `allowed_signers` beside the catalog.
pub fn verify_grant_on(
    paths: &Paths,
    text: &str,
    host: &str,
) -> Result<crate::grant::Verified, crate::grant::NotHonoured> {
    let signers = crate::grant::read_signers(&crate::grant::allowed_signers_for(&paths.catalog));
    crate::grant::verify(
        text,
        signers.as_ref().map_err(String::as_str),
        host,
        crate::record::now_ms(),
    )
}

/// What the record shows as the command: the shell command, or the file a tool writes.
fn shown_command(event: &Event) -> String {
    match &event.action {
        hook::Action::Shell { command } => command.clone(),
        hook::Action::WriteFile { path, .. } => format!("write {path}"),
        hook::Action::Other => String::new(),
    }
}

/// The row of a refusal (or a would-refuse): its rule, target, the tools it named, and the
/// shape that needs a tool when it named none.
fn refusal_row(
    kind: Kind,
    event: &Event,
    command: &str,
    refusal: &Refusal,
    instead: &[Suggestion],
) -> Row {
    let mut row = row(kind, event, command);
    row.rule = refusal.rule.id().to_string();
    row.target = refusal.target.clone();
    row.tools = instead.iter().map(|s| s.tool.clone()).collect();
    if instead.is_empty() {
        row.shape = refusal.shape.clone();
    }
    row
}

/// A row's grant columns: the scope signed, who signed it and when it expires.
fn with_grant(mut row: Row, grant: &crate::grant::Verified) -> Row {
    row.scope = grant.grant.scope.clone();
    row.signer = grant.signer.clone();
    row.grant_expires = crate::time::format_time(grant.grant.expires_ms, false);
    row
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
    let command = shown_command(event);
    let mut refused = refusal_row(Kind::Refusal, event, &command, refusal, instead);
    // A broken setup: the record says what the operator must fix, as the message does.
    if let crate::decide::Why::Broken(broken) = &refusal.why {
        refused.reason = crate::message::setup::reason(broken);
    }
    let overridable = !matches!(refusal.rule, Rule::Override | Rule::SelfProtection);
    // Only a refusal about to be overridden verifies a grant: a pass never does.
    let grant = if overridable {
        grant_in_force(paths)
    } else {
        None
    };
    let not_honoured = |row: &Row, why: &str| {
        let text = joined(
            &format!("The operator's override was not honoured: {why}."),
            message,
        );
        let note = append(paths, row).err().map(|_| {
            "mesh-guard: this refusal could not be recorded in the audit database".to_string()
        });
        refuse(event.agent, &text, note.as_deref())
    };
    match grant {
        None => {}
        // Unsigned, not allowed, expired, for another host, malformed: an attempt.
        Some(Err(not)) => {
            let mut attempt = refused.clone();
            attempt.kind = Kind::OverrideAttempt;
            attempt.reason = format!("override not honoured: {}", not.why);
            attempt.signer = not.signer;
            attempt.grant_expires = not.expires;
            return not_honoured(&attempt, &not.why);
        }
        Some(Ok(grant)) => {
            // A scoped grant (decision 0015) covers only what its scope names.
            if let Some(why) = uncovered(paths, event, &command, refusal, &grant.grant.scope) {
                let mut refused = with_grant(refused, &grant);
                refused.reason = format!("override not honoured: {why}");
                return not_honoured(&refused, &why);
            }
            let mut honoured = with_grant(refused, &grant);
            honoured.kind = Kind::Override;
            honoured.reason = grant.grant.reason.clone();
            // The override is honoured only once its row is durably written.
            return match append(paths, &honoured) {
                Ok(()) => 0,
                Err(_) => {
                    let text = format!(
                        "{message} The operator's override ({}) was not honoured because it could not be recorded in the audit database.",
                        crate::grant::VAR
                    );
                    refuse(
                        event.agent,
                        &text,
                        Some(
                            "mesh-guard: the override could not be recorded; ask the operator to check the audit database",
                        ),
                    )
                }
            };
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
    let mut reported = refusal_row(
        Kind::WouldRefuse,
        event,
        &shown_command(event),
        refusal,
        instead,
    );
    reported.reason = message.to_string();
    if let Err(e) = append(paths, &reported) {
        errln!("{}", not_recorded(paths, &e));
    }
    crate::error::exit::OK
}

/// Why a grant's scope does not cover the command, every mesh object it reaches counted;
/// `None` when it does (or the grant has no scope: the whole session).
fn uncovered(
    paths: &Paths,
    event: &Event,
    command: &str,
    refusal: &Refusal,
    scope: &str,
) -> Option<String> {
    if scope.is_empty() {
        return None;
    }
    let scope = match crate::scope::parse(scope) {
        Ok(scope) => scope,
        Err(e) => return Some(format!("its scope is malformed: {e}")),
    };
    let others = every_target(paths, event, command);
    let all: Vec<&Refusal> = std::iter::once(refusal).chain(others.iter()).collect();
    scope.covers(&all).err().map(|why| {
        format!(
            "it does not cover this command ({why}); it covers `{}`",
            scope.shown()
        )
    })
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

pub fn internal_error_message() -> String {
    fail_closed("mesh-guard failed inside (an internal error)")
}
