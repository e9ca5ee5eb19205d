//! The record: refusals and overrides appended to a tamper-evident SQLite log, and read back for
//! the operators' `audit` views.
//!
//! Decisions: docs/decisions/0004-record-hash-chain.md, docs/decisions/0005-record-schema.md.

pub mod anchor;
mod anchor_check;
mod bulk;
mod chain;
mod error;
mod event;
pub mod forward;
mod gap;
pub mod health;
pub mod logcheck;
mod memory;
mod modes;
#[cfg(test)]
mod open_tests;
mod prune;
mod read;
mod row;
mod schema;
#[cfg(test)]
mod tests;
mod verify;
mod vfs;
mod write;

pub use anchor_check::*;
pub use event::*;
pub use read::Extent;
pub use row::*;
pub use write::*;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior};

pub use chain::{Breach, Verification};
pub use error::RecordError;
pub use forward::{ForwardingStatus, Target, forwarding_status};
pub use gap::{MAX_FIELD, MAX_LOST_ROWS};
pub use health::{Cause, not_recorded_line};
pub use modes::mode_findings;

/// How long a writer waits for another writer's lock before giving up. Hooks run concurrently
/// but each append is one short transaction, so this is only reached when something is stuck.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Past this size the write-ahead log is checkpointed into the database and emptied, by the
/// hook whose commit took it there (decision 0026). Every hook reads the whole log when it
/// opens the record (SQLite rebuilds its index of it), so the limit bounds that read; each
/// refusal adds two pages, about 8 KiB (the table's leaf and `sqlite_sequence`, since schema 5
/// dropped the indexes: decision 0037), so one hook in sixteen or so pays the checkpoint.
const WAL_LIMIT: u64 = 128 * 1024;

/// An open record.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens the record at `path` for writing, creating it and its parent directories, and
    /// migrating it to the latest schema.
    pub fn open(path: &Path) -> Result<Store, RecordError> {
        // The record's errors carry their cause as text (SQLite's words, mostly).
        modes::prepare(path).map_err(|e| RecordError::Unavailable {
            path: path.to_path_buf(),
            cause: e.to_string(),
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
        // Through the shim that opens an existing write-ahead log without a directory sync
        // (decision 0028).
        let conn = match vfs::name() {
            Some(vfs) => Connection::open_with_flags_and_vfs(path, flags, vfs),
            None => Connection::open_with_flags(path, flags),
        }
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
        // The log stays between hooks (decision 0026): a checkpoint on every close cost two
        // fsyncs, and deleting the log a third and a fourth to create it again (its header,
        // its directory). `trim_wal` bounds it instead.
        self.conn
            .set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                true,
            )
            .map_err(|e| self.err(&e))?;
        // Always asked, though the file mostly is in WAL already: reading its header first
        // would take a descriptor of the database whose close drops every POSIX lock this
        // process holds on it (a connection of the same process included), and a FIFO there
        // would block that read where SQLite's open fails at once.
        self.set_wal()?;
        // In WAL mode only FULL syncs the log on every commit: an override must be on disk
        // before the command it allows runs. Said on every open rather than left to SQLite's
        // compiled default, which a build with other flags (or a system SQLite) may change.
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

    /// Checkpoints the write-ahead log into the database and empties it once it is past
    /// [`WAL_LIMIT`]. Only the emptying keeps it small: SQLite forgets between processes how
    /// much of the log a checkpoint already copied, so a log that is never emptied grows, and
    /// every open reads it whole. Best effort and without waiting: while another hook writes
    /// or a reader holds an old snapshot, the next hook tries again.
    fn trim_wal(&self) {
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        if !std::fs::metadata(&wal).is_ok_and(|m| m.len() > WAL_LIMIT) {
            return;
        }
        let _ = self.conn.busy_timeout(Duration::ZERO);
        let _ = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        let _ = self.conn.busy_timeout(BUSY_TIMEOUT);
    }

    /// Leaves the connection to the process's exit instead of closing it (decision 0042): for
    /// the hook only, which exits right after its answer, never for `audit`, the MCP server or
    /// a library caller that keeps running (it would keep the files open and their locks held).
    ///
    /// Safe for SQLite's WAL because nothing is left for a close to do: each commit is synced
    /// to disk before `append` returns (synchronous FULL), and a close would not checkpoint
    /// (`NO_CKPT_ON_CLOSE`) nor remove the log (kept between hooks, decision 0026). What a close
    /// would release, the exit releases: the kernel drops the descriptors' POSIX locks on the
    /// database and its `-shm`, and the memory. The `-shm` is left as a killed process leaves
    /// it, which SQLite is built to survive: the next hook to open the record is its first
    /// opener again and rebuilds the index from the log, as every hook already does.
    pub fn leave_to_exit(self) {
        std::mem::forget(self);
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
        let ends = chain_ends(&tx).map_err(err)?;
        let mut prev = ends.head.unwrap_or_else(|| chain::GENESIS.to_vec());
        let mut written = Vec::with_capacity(2);
        let mut id = ends.next;
        for e in &events {
            let hash = insert(&tx, &path, id, e, &prev, unreachable)?;
            written.push((id, std::mem::replace(&mut prev, hash.to_vec()), hash));
            // The gap row's successor: AUTOINCREMENT would give it the next id too.
            id = id.checked_add(1).ok_or_else(|| RecordError::Failed {
                path: path.clone(),
                cause: "the record has used every row id".to_string(),
            })?;
        }
        // An empty record's first row is the first one written here.
        let first = ends.first.or(written.first().map(|w| w.0)).unwrap_or(0);
        tx.commit().map_err(err)?;
        self.trim_wal();
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
}
