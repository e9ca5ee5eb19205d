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
    /// Rows older than this one (id below it): the page after one that ended with it.
    pub below_id: Option<i64>,
    pub limit: Option<u64>,
}

/// A row as read, before its kind and tools are checked.
pub(crate) struct RawRow {
    id: i64,
    time_ms: i64,
    strings: [String; 13],
    hash: Vec<u8>,
    granted: Granted<String>,
}

/// The override's columns outside `text_columns!()`: the scope (schema 4), the grant's
/// signer and expiry (schema 6).
pub(crate) struct Granted<T> {
    pub scope: T,
    pub signer: T,
    pub grant_expires: T,
}

/// The row's text columns, in the order every query of them lists them (`ROW_COLUMNS`, the
/// chain walk's) and [`Texts::from_columns`] takes them: the one place that order is spelled.
macro_rules! text_columns {
    () => {
        "kind, agent, session_id, tool_use_id, cwd, user, host, command, rule, target, tools, shape, reason"
    };
}
pub(crate) use text_columns;

/// The columns `raw_row` decodes, in its order: one list for every query of whole rows.
pub(crate) const ROW_COLUMNS: &str = concat!(
    "id, time_ms, ",
    text_columns!(),
    ", hash, scope, signer, grant_expires"
);

/// The text columns of one row, named.
pub(crate) struct Texts<T> {
    pub kind: T,
    pub agent: T,
    pub session_id: T,
    pub tool_use_id: T,
    pub cwd: T,
    pub user: T,
    pub host: T,
    pub command: T,
    pub rule: T,
    pub target: T,
    pub tools: T,
    pub shape: T,
    pub reason: T,
}

impl<T> Texts<T> {
    /// The texts as read, in `text_columns!()` order.
    pub(crate) fn from_columns(columns: [T; 13]) -> Texts<T> {
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
        ] = columns;
        Texts {
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
        }
    }
}

impl Texts<String> {
    /// The hashed fields of the row these texts were read from (`tools` decoded by the caller).
    pub(crate) fn fields<'a>(
        &'a self,
        id: i64,
        time_ms: i64,
        tools: &'a [String],
        granted: &'a Granted<String>,
    ) -> chain::Fields<'a> {
        chain::Fields {
            id,
            time_ms,
            kind: &self.kind,
            agent: &self.agent,
            session_id: &self.session_id,
            tool_use_id: &self.tool_use_id,
            cwd: &self.cwd,
            user: &self.user,
            host: &self.host,
            command: &self.command,
            rule: &self.rule,
            target: &self.target,
            tools,
            shape: &self.shape,
            reason: &self.reason,
            scope: &granted.scope,
            signer: &granted.signer,
            grant_expires: &granted.grant_expires,
        }
    }
}

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
        granted: Granted {
            scope: r.get(16)?,
            signer: r.get(17)?,
            grant_expires: r.get(18)?,
        },
    })
}

impl RawRow {
    pub(super) fn into_row(self, path: &Path) -> Result<Row, RecordError> {
        let Texts {
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
        } = Texts::from_columns(self.strings);
        let bad = |what: String| RecordError::Corrupt {
            path: path.to_path_buf(),
            cause: format!("row {}: {what}", self.id),
        };
        let kind = kind.parse::<Kind>().map_err(|e| bad(e.to_string()))?;
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
                scope: self.granted.scope,
                signer: self.granted.signer,
                grant_expires: self.granted.grant_expires,
            },
        })
    }
}
