//! The record: refusals and overrides appended to a tamper-evident SQLite log, and read back for
//! the operators' `audit` views.
//!
//! Decisions: docs/decisions/0004-record-hash-chain.md, docs/decisions/0005-record-schema.md.

pub mod anchor;
mod chain;
mod error;
pub mod forward;
mod gap;
pub mod logcheck;
mod modes;
mod schema;
#[cfg(test)]
mod tests;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

pub use chain::{Breach, Verification};
pub use error::RecordError;
pub use forward::{ForwardingStatus, Target, forwarding_status};
pub use modes::mode_findings;

/// How long a writer waits for another writer's lock before giving up. Hooks run concurrently
/// but each append is one short transaction, so this is only reached when something is stuck.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// What a row records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Refusal,
    Override,
    OverrideAttempt,
    SessionStart,
    /// Rows that could not be written before this one (the record was missing or unwritable).
    Gap,
    /// Stands for the rows `audit prune` removed, carrying their chain's head hash.
    Checkpoint,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Refusal,
        Kind::Override,
        Kind::OverrideAttempt,
        Kind::SessionStart,
        Kind::Gap,
        Kind::Checkpoint,
    ];

    /// The stable name stored in the database and accepted by `audit --kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Refusal => "refusal",
            Kind::Override => "override",
            Kind::OverrideAttempt => "override-attempt",
            Kind::SessionStart => "session-start",
            Kind::Gap => "gap",
            Kind::Checkpoint => "checkpoint",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Kind {
    type Err = String;

    fn from_str(s: &str) -> Result<Kind, String> {
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown kind {s:?}: expected one of refusal, override, override-attempt, session-start, gap, checkpoint"
                )
            })
    }
}

/// One recorded event, as the contract lists its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// UTC milliseconds since the Unix epoch.
    pub time_ms: i64,
    pub kind: Kind,
    pub agent: String,
    pub session_id: String,
    pub tool_use_id: String,
    pub cwd: String,
    pub user: String,
    pub host: String,
    /// The whole command, as the agent proposed it.
    pub command: String,
    pub rule: String,
    pub target: String,
    /// The mesh tools the refusal named; empty when one must be created.
    pub tools: Vec<String>,
    /// The command shape that needs a tool (`docker inspect <container>`), independent of the
    /// target, so `missing` can count them.
    pub shape: String,
    /// The operator's override reason, for override kinds.
    pub reason: String,
    /// The override's scope (`MESH_GUARD_OVERRIDE_SCOPE`) as the operator wrote it; empty when
    /// the override covers the whole session or there is none.
    pub scope: String,
}

impl Event {
    /// An event of `kind` happening now, by this process's user on this host; the caller fills in
    /// the rest.
    pub fn now(kind: Kind) -> Event {
        Event {
            time_ms: now_ms(),
            kind,
            agent: String::new(),
            session_id: String::new(),
            tool_use_id: String::new(),
            cwd: String::new(),
            user: env_nonempty("USER")
                .or_else(|| env_nonempty("LOGNAME"))
                .or_else(user_from_uid)
                .unwrap_or_default(),
            host: host_name(),
            command: String::new(),
            rule: String::new(),
            target: String::new(),
            tools: Vec::new(),
            shape: String::new(),
            reason: String::new(),
            scope: String::new(),
        }
    }
}

/// UTC milliseconds since the Unix epoch; 0 if the clock is before it.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The process's user when the environment does not say: its uid's name in
/// `/etc/passwd`, or `uid N`.
fn user_from_uid() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .to_string();
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let name = passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        (fields.nth(1)? == uid).then(|| name.to_string())
    });
    Some(name.unwrap_or_else(|| format!("uid {uid}")))
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| env_nonempty("HOSTNAME"))
        .unwrap_or_default()
}

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
    pub kind: Option<Kind>,
    /// Rows at or after this time (UTC ms).
    pub since_ms: Option<i64>,
    /// Rows at or before this time (UTC ms).
    pub until_ms: Option<i64>,
    /// A session id, or a prefix of one (the table shows them shortened).
    pub session: Option<String>,
    pub limit: Option<u64>,
}

/// An open record.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens the record at `path` for writing, creating it and its parent directories, and
    /// migrating it to the latest schema.
    pub fn open(path: &Path) -> Result<Store, RecordError> {
        modes::prepare(path).map_err(|cause| RecordError::Unavailable {
            path: path.to_path_buf(),
            cause,
        })?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut store = Store::connect(path, flags)?;
        store.prepare_for_writing()?;
        Ok(store)
    }

    /// Opens an existing record for reading only (the `audit` views); it is neither created nor
    /// migrated, and `append` on it fails with [`RecordError::ReadOnly`].
    pub fn open_read_only(path: &Path) -> Result<Store, RecordError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let store = Store::connect(path, flags)?;
        match schema::state(&store.conn).map_err(|e| store.err(&e))? {
            schema::State::Current => Ok(store),
            schema::State::Newer(found) => Err(RecordError::NewerSchema {
                path: store.path.clone(),
                found,
                known: schema::LATEST,
            }),
            schema::State::Older(found) => Err(RecordError::NeedsMigration {
                path: store.path.clone(),
                found,
                known: schema::LATEST,
            }),
        }
    }

    fn connect(path: &Path, flags: OpenFlags) -> Result<Store, RecordError> {
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| RecordError::from_sqlite(path, &e))?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store
            .conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| store.err(&e))?;
        Ok(store)
    }

    fn prepare_for_writing(&mut self) -> Result<(), RecordError> {
        self.set_wal()?;
        // In WAL mode only FULL syncs the log on every commit: an override must be on disk
        // before the command it allows runs.
        self.conn
            .pragma_update(None, "synchronous", "FULL")
            .map_err(|e| self.err(&e))?;
        let state = match schema::state(&self.conn).map_err(|e| self.err(&e))? {
            schema::State::Current => schema::State::Current,
            _ => schema::migrate(&mut self.conn).map_err(|e| self.err(&e))?,
        };
        match state {
            schema::State::Newer(found) => Err(RecordError::NewerSchema {
                path: self.path.clone(),
                found,
                known: schema::LATEST,
            }),
            _ => Ok(()),
        }
    }

    /// Switching to WAL needs a moment of exclusive access, and SQLite reports a busy file here
    /// without waiting on the busy handler, so hooks that create the file together retry.
    fn set_wal(&self) -> Result<(), RecordError> {
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            let res = self
                .conn
                .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0));
            match res {
                Ok(_) => return Ok(()),
                Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(self.err(&e)),
            }
        }
    }

    fn err(&self, e: &rusqlite::Error) -> RecordError {
        RecordError::from_sqlite(&self.path, e)
    }

    /// Waits this long for other writers; [`BUSY_TIMEOUT`] unless changed.
    pub fn set_busy_timeout(&mut self, timeout: Duration) -> Result<(), RecordError> {
        self.conn.busy_timeout(timeout).map_err(|e| self.err(&e))
    }

    /// Appends `event` to the chain and returns its row id. When this returns `Ok`, the row is
    /// committed and synced to disk, and the anchor updated.
    pub fn append(&mut self, event: &Event) -> Result<i64, RecordError> {
        self.append_forwarded(event, &mut forward::Link::Off, "")
            .map(|a| a.id)
    }

    /// Appends `event` (after a `gap` row, if an earlier write failed), anchors the chain, then
    /// sends the new rows over `link`. `unreachable` is stored in the row when the system log
    /// could not be reached. The send comes after the commit and never fails the append.
    pub fn append_forwarded(
        &mut self,
        event: &Event,
        link: &mut forward::Link,
        unreachable: &str,
    ) -> Result<Appended, RecordError> {
        let path = self.path.clone();
        let err = |e: rusqlite::Error| RecordError::from_sqlite(&path, &e);
        let pending_gap = gap::pending(&self.path);
        // IMMEDIATE takes the write lock before the previous hash is read, so two hooks cannot
        // both link to the same row.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let mut events = Vec::with_capacity(2);
        if let Some(note) = &pending_gap {
            let mut g = Event::now(Kind::Gap);
            g.agent = event.agent.clone();
            g.session_id = event.session_id.clone();
            g.reason = note.clone();
            events.push(g);
        }
        events.push(event.clone());
        let mut written = Vec::with_capacity(2);
        for e in &events {
            written.push(insert(&tx, &path, e, unreachable)?);
        }
        let first: i64 = tx
            .query_row("SELECT id FROM events ORDER BY id LIMIT 1", [], |r| {
                r.get(0)
            })
            .map_err(err)?;
        tx.commit().map_err(err)?;
        if pending_gap.is_some() {
            gap::clear(&self.path);
        }
        let (id, _, hash) = written.last().cloned().unwrap_or_default();
        let anchor = anchor::Anchor {
            id,
            count: u64::try_from(id - first + 1).unwrap_or(0),
            hash: chain::hex(&hash),
        };
        // The row is durable already; an anchor that could not be written is one row behind,
        // which verification still accepts as a prefix.
        let _ = anchor.write(&anchor::path_for(&self.path));
        // The second copy, outside the record's directory: hiding or swapping the directory
        // whole does not take it along.
        let _ = anchor.write(&gap::side_path(&self.path, "anchor"));
        let mut forwarded = Ok(());
        for ((id, prev, hash), event) in written.into_iter().zip(events) {
            let row = Row {
                id,
                hash: chain::hex(&hash),
                event,
            };
            if let Err(e) = forward::send(link, &row, &chain::hex(&prev), &self.path) {
                forwarded = Err(e);
            }
        }
        Ok(Appended {
            id,
            hash: chain::hex(&hash),
            forwarded,
        })
    }

    /// The local anchor checked against the rows: does the row it names still hold its hash?
    pub fn check_anchor(&self) -> Result<AnchorCheck, RecordError> {
        self.check_anchor_at(&anchor::path_for(&self.path))
    }

    /// The second anchor, kept outside the record's directory by the user who writes the
    /// record; `None` when this user has none (another user's record, or after a reboot
    /// emptied the runtime directory).
    pub fn check_second_anchor(&self) -> Result<Option<(PathBuf, AnchorCheck)>, RecordError> {
        let path = second_anchor_path(&self.path);
        match self.check_anchor_at(&path)? {
            AnchorCheck::Missing => Ok(None),
            found => Ok(Some((path, found))),
        }
    }

    fn check_anchor_at(&self, path: &Path) -> Result<AnchorCheck, RecordError> {
        let anchor = match anchor::Anchor::read(path) {
            Ok(Some(a)) => a,
            Ok(None) => return Ok(AnchorCheck::Missing),
            Err(e) => return Ok(AnchorCheck::Unreadable(e)),
        };
        let stored: Option<Vec<u8>> = self
            .conn
            .query_row("SELECT hash FROM events WHERE id = ?1", [anchor.id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.err(&e))?;
        Ok(match stored {
            None => AnchorCheck::RowGone(anchor),
            Some(h) if chain::hex(&h) != anchor.hash => AnchorCheck::Differs(anchor),
            Some(_) => AnchorCheck::Holds(anchor),
        })
    }

    /// Every row's id, kind and hash, oldest first, for comparing with the system log.
    pub fn hashes(&self) -> Result<Vec<logcheck::Stored>, RecordError> {
        let mut st = self
            .conn
            .prepare("SELECT id, kind, hash FROM events ORDER BY id")
            .map_err(|e| self.err(&e))?;
        st.query_map([], |r| {
            Ok(logcheck::Stored {
                id: r.get(0)?,
                kind: r.get::<_, String>(1).unwrap_or_default(),
                hash: chain::hex(&blob(r.get_ref(2)?)),
            })
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| self.err(&e))
    }

    /// The id of the checkpoint row standing for pruned rows, or 0.
    pub fn checkpoint(&self) -> Result<i64, RecordError> {
        self.conn
            .query_row(
                "SELECT id FROM events WHERE kind = 'checkpoint' ORDER BY id LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()
            .map(|id| id.unwrap_or(0))
            .map_err(|e| self.err(&e))
    }

    /// Rows with an id above `after`, oldest first (`audit export`).
    pub fn rows_after(&self, after: i64) -> Result<Vec<Row>, RecordError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT id, time_ms, kind, agent, session_id, tool_use_id, cwd, user, host, command,
                    rule, target, tools, shape, reason, hash, scope
                 FROM events WHERE id > ?1 ORDER BY id",
            )
            .map_err(|e| self.err(&e))?;
        let raw = st
            .query_map([after], raw_row)
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.err(&e))?;
        raw.into_iter().map(|r| r.into_row(&self.path)).collect()
    }

    /// Removes the rows older than `before_ms`, replacing the newest of them by a checkpoint row
    /// that keeps its id and hash, so the next row still links to it and `verify` holds.
    /// Returns the checkpoint row and how many rows it stands for; `None` when nothing is older.
    pub fn prune(
        &mut self,
        before_ms: i64,
        link: &mut forward::Link,
    ) -> Result<Option<(Row, u64)>, RecordError> {
        let path = self.path.clone();
        let err = |e: rusqlite::Error| RecordError::from_sqlite(&path, &e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        // Only a prefix of the chain can go: up to the newest row older than the cut.
        let cut: Option<(i64, Vec<u8>, Vec<u8>, String)> = tx
            .query_row(
                "SELECT id, prev_hash, hash, kind FROM events WHERE id =
                    (SELECT MAX(id) FROM events WHERE time_ms < ?1)",
                [before_ms],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()
            .map_err(err)?;
        let Some((id, prev, hash, kind)) = cut else {
            return Ok(None);
        };
        let n: i64 = tx
            .query_row("SELECT COUNT(*) FROM events WHERE id <= ?1", [id], |r| {
                r.get(0)
            })
            .map_err(err)?;
        if n == 1 && kind == Kind::Checkpoint.as_str() {
            return Ok(None);
        }
        let mut event = Event::now(Kind::Checkpoint);
        event.reason = format!(
            "{n} rows older than {} pruned; this row keeps the hash of row {id}",
            crate::audit::format_time(before_ms, true)
        );
        tx.execute("DELETE FROM events WHERE id <= ?1", [id])
            .map_err(err)?;
        tx.execute(
            "INSERT INTO events (id, time_ms, kind, agent, session_id, tool_use_id, cwd, user, host,
                command, rule, target, tools, reason, shape, format, prev_hash, hash)
             VALUES (?1, ?2, 'checkpoint', '', '', '', '', ?3, ?4, '', '', '', '[]', ?5, '', 0, ?6, ?7)",
            params![id, event.time_ms, event.user, event.host, event.reason, prev, hash],
        )
        .map_err(err)?;
        let (head, first): (i64, Vec<u8>) = tx
            .query_row(
                "SELECT id, hash FROM events ORDER BY id DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(err)?;
        tx.commit().map_err(err)?;
        let head_anchor = anchor::Anchor {
            id: head,
            count: u64::try_from(head - id + 1).unwrap_or(0),
            hash: chain::hex(&first),
        };
        let _ = head_anchor.write_durably(&anchor::path_for(&self.path));
        let _ = head_anchor.write(&gap::side_path(&self.path, "anchor"));
        let row = Row {
            id,
            hash: chain::hex(&hash),
            event,
        };
        let _ = forward::send(link, &row, &chain::hex(&prev), &self.path);
        Ok(Some((row, u64::try_from(n).unwrap_or(0))))
    }

    /// Checks the whole chain and names the first broken row.
    pub fn verify(&self) -> Result<Verification, RecordError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT id, time_ms, kind, agent, session_id, tool_use_id, cwd, user, host,
                    command, rule, target, tools, shape, reason, format, prev_hash, hash, scope
                 FROM events ORDER BY id",
            )
            .map_err(|e| self.err(&e))?;
        let links = st
            .query_map([], link)
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.err(&e))?;
        // Only AUTOINCREMENT tables have this row, and only once one was inserted.
        let highest: i64 = self
            .conn
            .query_row(
                "SELECT seq FROM sqlite_sequence WHERE name = 'events'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(&e))?
            .unwrap_or(0);
        Ok(chain::walk(&links, highest))
    }

    /// The rows `filter` selects, newest first.
    pub fn query(&self, filter: &Filter) -> Result<Vec<Row>, RecordError> {
        let mut sql = String::from(
            "SELECT id, time_ms, kind, agent, session_id, tool_use_id, cwd, user, host, command,
                rule, target, tools, shape, reason, hash, scope
             FROM events WHERE 1 = 1",
        );
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        if let Some(kind) = filter.kind {
            args.push(kind.as_str().to_string().into());
            sql.push_str(&format!(" AND kind = ?{}", args.len()));
        }
        if let Some(since) = filter.since_ms {
            args.push(since.into());
            sql.push_str(&format!(" AND time_ms >= ?{}", args.len()));
        }
        if let Some(until) = filter.until_ms {
            args.push(until.into());
            sql.push_str(&format!(" AND time_ms <= ?{}", args.len()));
        }
        if let Some(session) = &filter.session {
            args.push(session.clone().into());
            let n = args.len();
            // A prefix compare rather than LIKE: session ids may contain `_` and `%`.
            sql.push_str(&format!(" AND substr(session_id, 1, length(?{n})) = ?{n}"));
        }
        sql.push_str(" ORDER BY id DESC");
        if let Some(limit) = filter.limit {
            args.push(i64::try_from(limit).unwrap_or(i64::MAX).into());
            sql.push_str(&format!(" LIMIT ?{}", args.len()));
        }
        let mut st = self.conn.prepare(&sql).map_err(|e| self.err(&e))?;
        let raw = st
            .query_map(rusqlite::params_from_iter(args), raw_row)
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.err(&e))?;
        raw.into_iter().map(|r| r.into_row(&self.path)).collect()
    }

    /// Refusals that named no tool, counted by the command shape that needs one, most frequent
    /// first.
    pub fn missing(&self) -> Result<Vec<(String, u64)>, RecordError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT shape, COUNT(*) FROM events
                 WHERE kind = 'refusal' AND tools = '[]'
                 GROUP BY shape ORDER BY COUNT(*) DESC, shape",
            )
            .map_err(|e| self.err(&e))?;
        st.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?.max(0) as u64))
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| self.err(&e))
    }
}

/// What `append_forwarded` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    pub id: i64,
    /// Lower-case hex.
    pub hash: String,
    /// Whether the system log took the event; the row is durable either way.
    pub forwarded: Result<(), String>,
}

/// The local anchor compared with the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnchorCheck {
    /// The row the anchor names is there with the anchored hash.
    Holds(anchor::Anchor),
    /// No anchor file: a record written before anchors, or one whose anchor was deleted.
    Missing,
    Unreadable(String),
    /// The anchored row is gone: the newest rows were deleted.
    RowGone(anchor::Anchor),
    /// The anchored row holds another hash: the chain was rewritten.
    Differs(anchor::Anchor),
}

impl fmt::Display for AnchorCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnchorCheck::Holds(a) => write!(f, "the anchor (row {}, {} rows) holds", a.id, a.count),
            AnchorCheck::Missing => f.write_str(
                "the local anchor is missing (deleted, or never written by this version)",
            ),
            AnchorCheck::Unreadable(e) => write!(f, "the local anchor cannot be read: {e}"),
            AnchorCheck::RowGone(a) => write!(
                f,
                "broken at row {}: the anchor records rows up to {} ({} rows), the database ends before it: rows deleted from the end",
                a.id, a.id, a.count
            ),
            AnchorCheck::Differs(a) => write!(
                f,
                "broken at row {}: its hash is not the anchored {}: the chain was rewritten",
                a.id, a.hash
            ),
        }
    }
}

/// Where the second anchor of the record at `db` is kept (outside its directory).
pub fn second_anchor_path(db: &Path) -> PathBuf {
    gap::side_path(db, "anchor")
}

/// Appends one row to the record at `db`, forwarding it to the system log in force
/// (`MESH_GUARD_SYSLOG`, else `catalog_syslog`, else the system's log). When the record cannot
/// be written, the failure is noted so the next write records a `gap` row.
pub fn record(
    db: &Path,
    event: &Event,
    catalog_syslog: Option<&str>,
) -> Result<Appended, RecordError> {
    let env = std::env::var(forward::SYSLOG_VAR).ok();
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

/// Inserts one row in `tx`, linked to the newest; returns its id, previous hash and hash.
fn insert(
    tx: &rusqlite::Transaction<'_>,
    path: &Path,
    event: &Event,
    syslog: &str,
) -> Result<(i64, Vec<u8>, [u8; 32]), RecordError> {
    let err = |e: rusqlite::Error| RecordError::from_sqlite(path, &e);
    let tools = serde_json::to_string(&event.tools).map_err(|e| RecordError::Failed {
        path: path.to_path_buf(),
        cause: e.to_string(),
    })?;
    let prev: Vec<u8> = tx
        .query_row(
            "SELECT hash FROM events ORDER BY id DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(err)?
        .unwrap_or_else(|| chain::GENESIS.to_vec());
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
        chain::row_hash(chain::FORMAT_CURRENT, &prev, &fields(id, event)).ok_or_else(|| {
            RecordError::Failed {
                path: path.to_path_buf(),
                cause: "the current row format cannot be hashed".to_string(),
            }
        })?;
    tx.prepare_cached("UPDATE events SET hash = ?1 WHERE id = ?2")
        .and_then(|mut st| st.execute(params![hash.as_slice(), id]))
        .map_err(err)?;
    Ok((id, prev, hash))
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy) | Some(rusqlite::ErrorCode::DatabaseLocked)
    )
}

fn fields(id: i64, e: &Event) -> chain::Fields<'_> {
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
fn text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Text(t) => std::str::from_utf8(t).ok().map(str::to_string),
        _ => None,
    }
}

fn blob(v: ValueRef<'_>) -> Vec<u8> {
    match v {
        ValueRef::Blob(b) | ValueRef::Text(b) => b.to_vec(),
        _ => Vec::new(),
    }
}

/// Reads one row for the chain walk. A column of the wrong type makes the row unsound rather
/// than failing the walk, so `verify` still names it.
fn link(r: &rusqlite::Row<'_>) -> rusqlite::Result<chain::Link> {
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
        let scope = scope?;
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
        ] = t.as_slice()
        else {
            return None;
        };
        let tools: Vec<String> = serde_json::from_str(tools).ok()?;
        let f = chain::Fields {
            id,
            time_ms,
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
            tools: &tools,
            shape,
            reason,
            scope: &scope,
        };
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

/// A row as read, before its kind and tools are checked.
struct RawRow {
    id: i64,
    time_ms: i64,
    strings: [String; 13],
    hash: Vec<u8>,
    scope: String,
}

fn raw_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
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
    fn into_row(self, path: &Path) -> Result<Row, RecordError> {
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
