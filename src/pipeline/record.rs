//! The hook's rows in the record: a refusal's, a would-refuse's, an override's, each forwarded
//! to the system log the catalog names.

use super::{Answer, Answered};
use crate::catalog::LazyCatalog;
use crate::config::Paths;
use crate::decide::Refusal;
use crate::hook::{self, Event};
use crate::instead::Suggestion;
use crate::record::{Event as Row, Kind, RecordError};

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
/// (else the system's own): never where the hook's environment says (decision 0059). The
/// catalog is the event's own handle: read already when the decision needed it.
pub fn append(paths: &Paths, catalog: &LazyCatalog, row: &Row) -> Result<(), RecordError> {
    let setting = catalog.get().ok().and_then(|c| c.syslog());
    // Only the hooks (PreToolUse and SessionStart) come here. As a process they exit right
    // after their answer, and leave the connection to the exit (decision 0042); run in another
    // program's process (`mesh_guard::run`), which goes on, they close it.
    if crate::io::in_process_call() {
        crate::record::record(&paths.db, row, setting).map(drop)
    } else {
        crate::record::record_before_exit(&paths.db, row, setting).map(drop)
    }
}

/// The stderr note for a refusal that could not be recorded: addressed to the operator, without
/// host paths (the agent reads it too).
pub(crate) fn not_recorded(paths: &Paths, e: &RecordError) -> String {
    crate::record::not_recorded_line(&paths.db, e)
}

/// What the record shows as the command: the shell command, or the file a tool writes.
pub(crate) fn shown_command(event: &Event) -> String {
    match &event.action {
        hook::Action::Shell { command } => command.clone(),
        hook::Action::WriteFile { path, .. } => format!("write {path}"),
        hook::Action::Other => String::new(),
    }
}

/// The row of a refusal (or a would-refuse): its rule, target, the tools it named, and the
/// shape that needs a tool when it named none.
pub(crate) fn refusal_row(
    kind: Kind,
    event: &Event,
    refusal: &Refusal,
    instead: &[Suggestion],
) -> Row {
    let mut row = row(kind, event, &shown_command(event));
    row.rule = refusal.rule.into();
    row.target = refusal.target.clone();
    row.tools = instead.iter().map(|s| s.tool.clone()).collect();
    if instead.is_empty() {
        row.shape = refusal.shape.clone();
    }
    row
}

/// A row's grant columns: the scope signed, who signed it and when it expires.
pub(crate) fn with_grant(mut row: Row, grant: &crate::grant::Verified) -> Row {
    row.scope = grant.grant.scope.clone();
    row.signer = grant.signer.clone();
    row.grant_expires = crate::time::format_time(grant.grant.expires_ms, false);
    row
}

impl Answered<'_> {
    pub(crate) fn append(&self, row: &Row) -> Result<(), RecordError> {
        append(self.paths, self.catalog, row)
    }

    /// A refusal in report-only mode (decision 0060): the command passes, and the refusal it
    /// would have been is recorded as a `would-refuse` row in the same chain, forwarded like
    /// every row. A row that cannot be written is said on stderr (and noted by the next row's
    /// gap), never turned into a refusal: the operator chose to let these pass.
    pub(crate) fn reported(
        &self,
        refusal: &Refusal,
        instead: &[Suggestion],
        message: &str,
    ) -> Answer {
        let mut reported = refusal_row(Kind::WouldRefuse, self.event, refusal, instead);
        reported.reason = message.to_string();
        let note = self
            .append(&reported)
            .err()
            .map(|e| not_recorded(self.paths, &e));
        Answer::Reported { note }
    }
}
