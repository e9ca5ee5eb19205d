//! The record's schema and its forward migrations, versioned by `PRAGMA user_version`.
//!
//! See docs/decisions/0005-record-schema.md. A released step is never edited: a change is a new
//! step appended to `STEPS`.

use rusqlite::{Connection, TransactionBehavior};

/// Schema 1: the first released schema. Kept verbatim so a database created by it can be migrated
/// (and so tests can create one).
pub(crate) const SCHEMA_1: &str = "
CREATE TABLE events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    time_ms     INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    agent       TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    tool_use_id TEXT NOT NULL,
    cwd         TEXT NOT NULL,
    user        TEXT NOT NULL,
    host        TEXT NOT NULL,
    command     TEXT NOT NULL,
    rule        TEXT NOT NULL,
    target      TEXT NOT NULL,
    tools       TEXT NOT NULL,
    reason      TEXT NOT NULL,
    prev_hash   BLOB NOT NULL,
    hash        BLOB NOT NULL
);
";

/// Schema 2: the command shape that needs a tool (for `missing`), the per-row chain format (rows
/// from schema 1 keep hashing without a shape), and indexes for the audit filters.
const SCHEMA_2: &str = "
ALTER TABLE events ADD COLUMN shape TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN format INTEGER NOT NULL DEFAULT 1;
CREATE INDEX events_time ON events(time_ms);
CREATE INDEX events_kind_time ON events(kind, time_ms);
CREATE INDEX events_session ON events(session_id);
";

/// Schema 3: whether the system log took the row (empty when it did, or forwarding is off; else
/// why not). Not hashed: it describes the copy, not the event.
const SCHEMA_3: &str = "
ALTER TABLE events ADD COLUMN syslog TEXT NOT NULL DEFAULT '';
";

/// `STEPS[n]` takes a database from schema `n` to `n + 1`; schema 0 is an empty file. One step
/// per line, appended at the end, so parallel changes merge as added lines.
/// Schema 4: the scope of the operator's override (decision 0015), hashed by row format 3.
const SCHEMA_4: &str = "
ALTER TABLE events ADD COLUMN scope TEXT NOT NULL DEFAULT '';
";

/// Schema 5: schema 2's indexes dropped (decision 0037). Each refusal wrote a leaf of every one
/// of them to the write-ahead log (three of its six pages), and every hook parsed them; the
/// `audit` views they served scan the table instead, in milliseconds for an operator's command.
const SCHEMA_5: &str = "
DROP INDEX IF EXISTS events_time;
DROP INDEX IF EXISTS events_kind_time;
DROP INDEX IF EXISTS events_session;
";

/// Schema 6: who signed the operator's override grant and when it expires (decision 0058),
/// hashed by row format 4.
const SCHEMA_6: &str = "
ALTER TABLE events ADD COLUMN signer TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN grant_expires TEXT NOT NULL DEFAULT '';
";

pub(crate) const STEPS: &[&str] = &[SCHEMA_1, SCHEMA_2, SCHEMA_3, SCHEMA_4, SCHEMA_5, SCHEMA_6];

/// The schema this version writes.
pub(crate) const LATEST: i64 = STEPS.len() as i64;

/// What the file's schema is, compared with this version's.
pub(crate) enum State {
    Current,
    Older(i64),
    Newer(i64),
}

pub(crate) fn state(conn: &Connection) -> rusqlite::Result<State> {
    let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    Ok(match v {
        v if v == LATEST => State::Current,
        v if v > LATEST => State::Newer(v),
        v => State::Older(v),
    })
}

/// Brings the file up to `LATEST`. Runs in one `BEGIN IMMEDIATE` transaction that re-reads the
/// version, so hooks opening a fresh database at once migrate it exactly once.
pub(crate) fn migrate(conn: &mut Connection) -> rusqlite::Result<State> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let from = match state(&tx)? {
        State::Older(v) => v,
        other => return Ok(other),
    };
    for step in STEPS.iter().skip(usize::try_from(from).unwrap_or(0)) {
        tx.execute_batch(step)?;
    }
    tx.pragma_update(None, "user_version", LATEST)?;
    tx.commit()?;
    Ok(State::Current)
}
