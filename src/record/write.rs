//! Appending one row: the chain's link computed, the row inserted, the anchors moved.

use super::error::RecordError;
use super::event::*;
use super::forward::Target;
use super::row::{Granted, Texts};
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
    pub forwarded: Result<(), super::forward::ForwardError>,
}

/// Appends one row to the record at `db`, forwarding it to the system log in force
/// (`MESH_GUARD_SYSLOG`, else `catalog_syslog`, else the system's log). When the record cannot
/// be written, the failure is noted so the next write records a `gap` row.
pub fn record(
    db: &Path,
    event: &Event,
    catalog_syslog: Option<&str>,
) -> Result<Appended, RecordError> {
    record_then(db, event, catalog_syslog, drop)
}

/// As [`record`], in a hook process that exits right after its answer: the record's connection
/// is not closed but left to the exit ([`Store::leave_to_exit`], decision 0042).
pub fn record_before_exit(
    db: &Path,
    event: &Event,
    catalog_syslog: Option<&str>,
) -> Result<Appended, RecordError> {
    record_then(db, event, catalog_syslog, Store::leave_to_exit)
}

/// `done` takes the store after a successful append: closes it, or leaves it to the exit.
fn record_then(
    db: &Path,
    event: &Event,
    catalog_syslog: Option<&str>,
    done: fn(Store),
) -> Result<Appended, RecordError> {
    // Only the hooks record: the catalog says where the copy goes, never their environment
    // (decision 0059).
    let (mut link, unreachable) =
        match Target::resolve(None, catalog_syslog).and_then(|t| forward::connect(&t)) {
            Ok(link) => (link, None),
            Err(e) => (
                forward::Link::Off,
                Some(forward::ForwardError::SystemLogUnreachable(Box::new(e))),
            ),
        };
    // What the row says of it: empty when the link was made.
    let noted = unreachable
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    let result = Store::open(db).and_then(|mut s| {
        let appended = s.append_forwarded(event, &mut link, &noted);
        // A failed append is closed as usual: nothing of it is committed.
        if appended.is_ok() {
            done(s);
        }
        appended
    });
    if let Err(e) = &result {
        // Not lost: the system log takes the whole row, marked not recorded (decision 0072).
        let cause = super::health::cause_of(db, e);
        let said = format!("{} ({})", cause.as_str(), e.detail());
        let key = gap::lost_key(event);
        let forwarded = match &unreachable {
            None => forward::send_unrecorded(&mut link, event, db, &said, &key),
            Some(e) => Err(e.clone()),
        };
        super::health::lost_forwarded(forwarded.is_ok());
        gap::note(db, event, e, cause.as_str(), &forwarded);
    }
    result.map(|mut a| {
        if let Some(e) = unreachable {
            a.forwarded = Err(e);
        }
        a
    })
}

/// What an append reads of the chain, once, inside its write transaction.
pub(crate) struct Ends {
    /// The oldest row's id, which the anchor counts from; `None` in an empty record.
    pub first: Option<i64>,
    /// The newest row's hash, which the next row links to; `None` in an empty record.
    pub head: Option<Vec<u8>>,
    /// The id the next row gets: the one AUTOINCREMENT would pick (decision 0041).
    pub next: i64,
}

/// The chain's ends and the next id. The id is AUTOINCREMENT's own rule, one more than the
/// larger of the highest id ever handed out (`sqlite_sequence`, read as an integer as SQLite
/// reads it) and the highest id present, so an id is never reused, also after the newest rows
/// are deleted or pruned. Read under the transaction's write lock, so no other writer can take
/// it in between.
pub(crate) fn chain_ends(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<Ends> {
    tx.query_row(
        "SELECT (SELECT id FROM events ORDER BY id LIMIT 1),
                (SELECT hash FROM events ORDER BY id DESC LIMIT 1),
                max(coalesce((SELECT max(CAST(seq AS INTEGER)) FROM sqlite_sequence
                              WHERE name = 'events'), 0),
                    coalesce((SELECT max(id) FROM events), 0))",
        [],
        |r| {
            let highest: i64 = r.get(2)?;
            Ok(Ends {
                first: r.get(0)?,
                head: r.get(1)?,
                // At the end of the id space AUTOINCREMENT fails with "database or disk is
                // full"; so does this.
                next: highest
                    .checked_add(1)
                    .ok_or(rusqlite::Error::SqliteFailure(
                        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
                        None,
                    ))?,
            })
        },
    )
}

/// Inserts one row with id `id` in `tx`, linked to `prev` (the newest row's hash); returns its
/// hash. The id is chosen before the insert (see [`chain_ends`]), so the row is written once,
/// hash and all; inserting it explicitly moves `sqlite_sequence` as AUTOINCREMENT would.
pub(crate) fn insert(
    tx: &rusqlite::Transaction<'_>,
    path: &Path,
    id: i64,
    event: &Event,
    prev: &[u8],
    syslog: &str,
) -> Result<[u8; 32], RecordError> {
    let err = |e: rusqlite::Error| RecordError::from_sqlite(path, &e);
    let tools = serde_json::to_string(&event.tools).map_err(|e| RecordError::Failed {
        path: path.to_path_buf(),
        cause: e.to_string(),
    })?;
    let hash =
        chain::row_hash(chain::FORMAT_CURRENT, prev, &fields(id, event)).ok_or_else(|| {
            RecordError::Failed {
                path: path.to_path_buf(),
                cause: "the current row format cannot be hashed".to_string(),
            }
        })?;
    tx.prepare_cached(
        "INSERT INTO events (id, time_ms, kind, agent, session_id, tool_use_id, cwd, user, host,
            command, rule, target, tools, shape, reason, format, prev_hash, hash, syslog, scope,
            signer, grant_expires)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
            ?19, ?20, ?21, ?22)",
    )
    .and_then(|mut st| {
        st.execute(params![
            id,
            event.time_ms,
            event.kind.as_str(),
            event.agent,
            event.session_id,
            event.tool_use_id,
            event.cwd,
            event.user,
            event.host,
            event.command,
            event.rule.as_str(),
            event.target,
            tools,
            event.shape,
            event.reason,
            chain::FORMAT_CURRENT,
            prev,
            hash.as_slice(),
            syslog,
            event.scope,
            event.signer,
            event.grant_expires,
        ])
    })
    .map_err(err)?;
    Ok(hash)
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
        rule: e.rule.as_str(),
        target: &e.target,
        tools: &e.tools,
        shape: &e.shape,
        reason: &e.reason,
        scope: &e.scope,
        signer: &e.signer,
        grant_expires: &e.grant_expires,
    }
}

/// A stored hash's bytes as SQLite holds them: a blob (or text, which only tampering stores);
/// anything else is no bytes.
pub(crate) fn stored_bytes(v: ValueRef<'_>) -> &[u8] {
    match v {
        ValueRef::Blob(b) | ValueRef::Text(b) => b,
        _ => &[],
    }
}

/// Text as stored, borrowed from SQLite's row, or `None` when the column holds anything but
/// text (which only tampering does).
fn text_ref(v: ValueRef<'_>) -> Option<&str> {
    match v {
        ValueRef::Text(t) => std::str::from_utf8(t).ok(),
        _ => None,
    }
}

/// Reads one row for the chain walk, from its columns' values. A column of the wrong type makes
/// the row unsound rather than failing the walk, so `verify` still names it. The tools are
/// decoded into `tools` and the row encoded into `encoded`, the walk's rooms for them kept
/// from row to row, and the hashes held inline: a walk allocates nothing per row (issue 39).
pub(crate) fn link(
    r: &[ValueRef<'_>],
    tools: &mut Vec<String>,
    encoded: &mut Vec<u8>,
) -> rusqlite::Result<chain::Link> {
    // The walk's SELECT names 21 columns; fewer is a caller's mistake, not a damaged row.
    if r.len() < 21 {
        return Err(rusqlite::Error::InvalidColumnIndex(r.len()));
    }
    let value = |i: usize| r[i];
    let id = match value(0) {
        ValueRef::Integer(n) => n,
        other => {
            return Err(rusqlite::Error::InvalidColumnType(
                0,
                "id".into(),
                other.data_type(),
            ));
        }
    };
    let stored = |i: usize| chain::StoredHash::of(stored_bytes(value(i)));
    let (prev, hash) = (stored(16), stored(17));
    let int = |i: usize| match value(i) {
        ValueRef::Integer(n) => Some(n),
        _ => None,
    };
    let mut texts: [Option<&str>; 13] = [None; 13];
    for (slot, i) in texts.iter_mut().zip(2..) {
        *slot = text_ref(value(i));
    }
    let granted = Granted {
        scope: text_ref(value(18)),
        signer: text_ref(value(19)),
        grant_expires: text_ref(value(20)),
    };
    let checkpoint = int(15) == Some(0) && texts[0] == Some(Kind::Checkpoint.as_str());
    let sound = (|| {
        let time_ms = int(1)?;
        let format = int(15)?;
        let mut all: [&str; 13] = [""; 13];
        for (to, from) in all.iter_mut().zip(texts) {
            *to = from?;
        }
        let t = Texts::from_columns(all);
        let granted = Granted {
            scope: granted.scope?,
            signer: granted.signer?,
            grant_expires: granted.grant_expires?,
        };
        super::row::fill_tools(t.tools, tools).ok()?;
        let f = t.fields(id, time_ms, tools, &granted);
        chain::row_encoding(format, prev.as_slice(), &f, encoded)?;
        Some(<sha2::Sha256 as sha2::Digest>::digest(&encoded[..]).as_slice() == hash.as_slice())
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
