//! The record: refusals and overrides appended to a tamper-evident SQLite log, and read back for
//! the operators' `audit` views.
//!
//! Decisions: docs/decisions/0004-record-hash-chain.md, docs/decisions/0005-record-schema.md.

mod chain;
mod error;
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
}

impl Kind {
    pub const ALL: [Kind; 4] = [
        Kind::Refusal,
        Kind::Override,
        Kind::OverrideAttempt,
        Kind::SessionStart,
    ];

    /// The stable name stored in the database and accepted by `audit --kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Refusal => "refusal",
            Kind::Override => "override",
            Kind::OverrideAttempt => "override-attempt",
            Kind::SessionStart => "session-start",
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
                    "unknown kind {s:?}: expected one of refusal, override, override-attempt, session-start"
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
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| RecordError::Unavailable {
                path: path.to_path_buf(),
                cause: format!("creating {}: {e}", dir.display()),
            })?;
        }
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
    /// committed and synced to disk.
    pub fn append(&mut self, event: &Event) -> Result<i64, RecordError> {
        let path = self.path.clone();
        let err = |e: rusqlite::Error| RecordError::from_sqlite(&path, &e);
        let tools = serde_json::to_string(&event.tools).map_err(|e| RecordError::Failed {
            path: path.clone(),
            cause: e.to_string(),
        })?;
        // IMMEDIATE takes the write lock before the previous hash is read, so two hooks cannot
        // both link to the same row.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
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
                command, rule, target, tools, shape, reason, format, prev_hash, scope, hash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, x'')",
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
                event.scope,
            ])
        })
        .map_err(err)?;
        let id = tx.last_insert_rowid();
        let hash =
            chain::row_hash(chain::FORMAT_CURRENT, &prev, &fields(id, event)).ok_or_else(|| {
                RecordError::Failed {
                    path: path.clone(),
                    cause: "the current row format cannot be hashed".to_string(),
                }
            })?;
        tx.prepare_cached("UPDATE events SET hash = ?1 WHERE id = ?2")
            .and_then(|mut st| st.execute(params![hash.as_slice(), id]))
            .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(id)
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
