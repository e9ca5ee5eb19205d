//! A stored row: its columns, read and decoded in one place.

use super::chain;
use super::error::RecordError;
use super::event::*;
use super::write::*;
use std::path::Path;

/// A stored event with its id and its hash (lower-case hex).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub id: i64,
    pub hash: String,
    pub event: Event,
}

/// Which rows `query` returns. `None` fields do not filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Rows of any of these kinds (none: every kind).
    pub kinds: Vec<Kind>,
    /// Rows of this rule (`remote-access`).
    pub rule: Option<String>,
    /// Rows whose target contains this (`atlas` finds `atlas` and `atlas/mesh-controller`).
    pub target: Option<String>,
    /// Rows at or after this time (UTC ms).
    pub since_ms: Option<i64>,
    /// Rows at or before this time (UTC ms).
    pub until_ms: Option<i64>,
    /// A session id, or a prefix of one (the table shows them shortened).
    pub session: Option<String>,
    pub limit: Option<u64>,
}

/// A row as read, before its kind and tools are checked.
pub(crate) struct RawRow {
    id: i64,
    time_ms: i64,
    strings: [String; 13],
    hash: Vec<u8>,
    scope: String,
}

/// The columns `raw_row` decodes, in its order: one list for every query of whole rows.
pub(crate) const ROW_COLUMNS: &str = "id, time_ms, kind, agent, session_id, tool_use_id, cwd, user, host, command, rule, target, tools, shape, reason, hash, scope";

pub(crate) fn raw_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
    let mut strings: [String; 13] = Default::default();
    for (slot, i) in strings.iter_mut().zip(2..) {
        *slot = r.get(i)?;
    }
    Ok(RawRow {
        id: r.get(0)?,
        time_ms: r.get(1)?,
        strings,
        hash: blob(r.get_ref(15)?),
        scope: r.get(16)?,
    })
}

impl RawRow {
    pub(super) fn into_row(self, path: &Path) -> Result<Row, RecordError> {
        let [
            kind,
            agent,
            session_id,
            tool_use_id,
            cwd,
            user,
            host,
            command,
            rule,
            target,
            tools,
            shape,
            reason,
        ] = self.strings;
        let bad = |what: String| RecordError::Corrupt {
            path: path.to_path_buf(),
            cause: format!("row {}: {what}", self.id),
        };
        let kind = kind.parse::<Kind>().map_err(bad)?;
        let tools: Vec<String> =
            serde_json::from_str(&tools).map_err(|e| bad(format!("tools: {e}")))?;
        Ok(Row {
            id: self.id,
            hash: chain::hex(&self.hash),
            event: Event {
                time_ms: self.time_ms,
                kind,
                agent,
                session_id,
                tool_use_id,
                cwd,
                user,
                host,
                command,
                rule,
                target,
                tools,
                shape,
                reason,
                scope: self.scope,
            },
        })
    }
}
