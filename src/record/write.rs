//! Appending one row: the chain's link computed, the row inserted, the anchors moved.

use super::error::RecordError;
use super::event::*;
use super::forward::Target;
use super::row::Texts;
use super::{Store, chain, forward, gap};
use rusqlite::params;
use rusqlite::types::ValueRef;
use std::path::Path;

/// What `append_forwarded` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    pub id: i64,
    /// Lower-case hex.
    pub hash: String,
    /// Whether the system log took the event; the row is durable either way.
    pub forwarded: Result<(), String>,
}

/// Appends one row to the record at `db`, forwarding it to the system log in force
/// (`MESH_GUARD_SYSLOG`, else `catalog_syslog`, else the system's log). When the record cannot
/// be written, the failure is noted so the next write records a `gap` row.
pub fn record(
    db: &Path,
    event: &Event,
    catalog_syslog: Option<&str>,
) -> Result<Appended, RecordError> {
    let env = crate::io::var(forward::SYSLOG_VAR).ok();
    let (mut link, unreachable) =
        match Target::resolve(env.as_deref(), catalog_syslog).and_then(|t| forward::connect(&t)) {
            Ok(link) => (link, String::new()),
            Err(e) => (forward::Link::Off, format!("system log unreachable: {e}")),
        };
    let result =
        Store::open(db).and_then(|mut s| s.append_forwarded(event, &mut link, &unreachable));
    if let Err(e) = &result {
        gap::note(db, event, e);
    }
    result.map(|mut a| {
        if !unreachable.is_empty() {
            a.forwarded = Err(unreachable);
        }
        a
    })
}

/// The chain's two ends, read once per append (inside its write transaction): the oldest row's
/// id, which the anchor counts from, and the newest row's hash, which the next row links to.
/// Both `None` in an empty record.
pub(crate) fn chain_ends(
    tx: &rusqlite::Transaction<'_>,
) -> rusqlite::Result<(Option<i64>, Option<Vec<u8>>)> {
    tx.query_row(
        "SELECT (SELECT id FROM events ORDER BY id LIMIT 1),
                (SELECT hash FROM events ORDER BY id DESC LIMIT 1)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Inserts one row in `tx`, linked to `prev` (the newest row's hash); returns its id and hash.
pub(crate) fn insert(
    tx: &rusqlite::Transaction<'_>,
    path: &Path,
    event: &Event,
    prev: &[u8],
    syslog: &str,
) -> Result<(i64, [u8; 32]), RecordError> {
    let err = |e: rusqlite::Error| RecordError::from_sqlite(path, &e);
    let tools = serde_json::to_string(&event.tools).map_err(|e| RecordError::Failed {
        path: path.to_path_buf(),
        cause: e.to_string(),
    })?;
    // SQLite picks the id (AUTOINCREMENT never reuses one); the hash covers it, so it is
    // filled in once the id is known, inside the same transaction.
    tx.prepare_cached(
        "INSERT INTO events (time_ms, kind, agent, session_id, tool_use_id, cwd, user, host,
            command, rule, target, tools, shape, reason, format, prev_hash, hash, syslog, scope)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, x'', ?17, ?18)",
    )
    .and_then(|mut st| {
        st.execute(params![
            event.time_ms,
            event.kind.as_str(),
            event.agent,
            event.session_id,
            event.tool_use_id,
            event.cwd,
            event.user,
            event.host,
            event.command,
            event.rule,
            event.target,
            tools,
            event.shape,
            event.reason,
            chain::FORMAT_CURRENT,
            prev,
            syslog,
            event.scope,
        ])
    })
    .map_err(err)?;
    let id = tx.last_insert_rowid();
    let hash =
        chain::row_hash(chain::FORMAT_CURRENT, prev, &fields(id, event)).ok_or_else(|| {
            RecordError::Failed {
                path: path.to_path_buf(),
                cause: "the current row format cannot be hashed".to_string(),
            }
        })?;
    tx.prepare_cached("UPDATE events SET hash = ?1 WHERE id = ?2")
        .and_then(|mut st| st.execute(params![hash.as_slice(), id]))
        .map_err(err)?;
    Ok((id, hash))
}

pub(crate) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy) | Some(rusqlite::ErrorCode::DatabaseLocked)
    )
}

pub(crate) fn fields(id: i64, e: &Event) -> chain::Fields<'_> {
    chain::Fields {
        id,
        time_ms: e.time_ms,
        kind: e.kind.as_str(),
        agent: &e.agent,
        session_id: &e.session_id,
        tool_use_id: &e.tool_use_id,
        cwd: &e.cwd,
        user: &e.user,
        host: &e.host,
        command: &e.command,
        rule: &e.rule,
        target: &e.target,
        tools: &e.tools,
        shape: &e.shape,
        reason: &e.reason,
        scope: &e.scope,
    }
}

/// Text as stored, or `None` when the column holds anything but text (which only tampering does).
pub(crate) fn text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Text(t) => std::str::from_utf8(t).ok().map(str::to_string),
        _ => None,
    }
}

pub(crate) fn blob(v: ValueRef<'_>) -> Vec<u8> {
    match v {
        ValueRef::Blob(b) | ValueRef::Text(b) => b.to_vec(),
        _ => Vec::new(),
    }
}

/// Reads one row for the chain walk. A column of the wrong type makes the row unsound rather
/// than failing the walk, so `verify` still names it.
pub(crate) fn link(r: &rusqlite::Row<'_>) -> rusqlite::Result<chain::Link> {
    let id: i64 = r.get(0)?;
    let prev = blob(r.get_ref(16)?);
    let hash = blob(r.get_ref(17)?);
    let int = |i: usize| -> rusqlite::Result<Option<i64>> {
        Ok(match r.get_ref(i)? {
            ValueRef::Integer(n) => Some(n),
            _ => None,
        })
    };
    let mut texts = Vec::with_capacity(13);
    for i in 2..=14 {
        texts.push(text(r.get_ref(i)?));
    }
    let scope = text(r.get_ref(18)?);
    let checkpoint = int(15)? == Some(0)
        && texts.first().and_then(|k| k.as_deref()) == Some(Kind::Checkpoint.as_str());
    let sound = (|| {
        let time_ms = int(1).ok()??;
        let format = int(15).ok()??;
        let t: Vec<String> = texts.into_iter().collect::<Option<_>>()?;
        let t = Texts::from_columns(<[String; 13]>::try_from(t).ok()?);
        let scope = scope?;
        let tools: Vec<String> = serde_json::from_str(&t.tools).ok()?;
        let f = t.fields(id, time_ms, &tools, &scope);
        let want = chain::row_hash(format, &prev, &f)?;
        Some(want.as_slice() == hash.as_slice())
    })()
    .unwrap_or(false);
    Ok(chain::Link {
        id,
        prev,
        hash,
        sound,
        checkpoint,
    })
}
