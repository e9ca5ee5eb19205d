//! Verifying the record: the hash chain, the anchors, and what the system log holds.

use super::{
    AnchorCheck, RecordError, Store, Verification, anchor, chain, link, logcheck,
    second_anchor_path,
};
use rusqlite::OptionalExtension;
use rusqlite::types::ValueRef;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

impl Store {
    /// Checks the whole chain and names the first broken row. One row at a time, in one
    /// snapshot: memory stays the same whatever the record's size (decision 0062).
    pub fn verify(&self) -> Result<Verification, RecordError> {
        self.snapshot(|store| store.verify_here())?
    }

    fn verify_here(&self) -> Result<Verification, RecordError> {
        let mut st = self
            .conn
            .prepare(concat!(
                "SELECT id, time_ms, ",
                super::row::text_columns!(),
                ", format, prev_hash, hash, scope, signer, grant_expires FROM events ORDER BY id"
            ))
            .map_err(|e| self.err(&e))?;
        let columns = st.column_count();
        let mut rows = st.query([]).map_err(|e| self.err(&e))?;
        let mut walk = chain::Walk::default();
        let around = Scans {
            store: self,
            error: Default::default(),
        };
        // This thread reads the rows from SQLite, a second one hashes them (and checks their
        // texts and tools): reading is about three fifths of the walk, so the two overlap.
        // Batches go round between them, at most two in flight, so memory stays the same
        // whatever the record's size; the walk takes each batch's links in id order.
        let sqlite = |e: rusqlite::Error| self.err(&e);
        let found = std::thread::scope(|scope| -> Result<Option<Verification>, RecordError> {
            let (to_hasher, to_hash) = mpsc::sync_channel::<Batch>(1);
            let (to_walk, hashed) = mpsc::sync_channel::<Batch>(1);
            scope.spawn(move || {
                let (mut tools, mut encoded) = (Vec::new(), Vec::new());
                for mut batch in to_hash {
                    batch.link(columns, &mut tools, &mut encoded);
                    if to_walk.send(batch).is_err() {
                        break;
                    }
                }
            });
            let mut spare = Vec::new();
            let (mut in_flight, mut read_all) = (0, false);
            // A row SQLite cannot give ends the reading, but the rows before it are walked
            // first, as a walk of one row at a time would: a break among them is the answer.
            let mut unread = None;
            loop {
                if !read_all {
                    let mut batch: Batch = spare.pop().unwrap_or_default();
                    batch.clear();
                    while batch.rows < Batch::ROWS {
                        let copied = match rows.next() {
                            Ok(Some(r)) => batch.copy(r, columns),
                            Ok(None) => {
                                read_all = true;
                                break;
                            }
                            Err(e) => Err(e),
                        };
                        if let Err(e) = copied {
                            unread = Some(e);
                            read_all = true;
                            break;
                        }
                    }
                    if batch.rows > 0 {
                        if to_hasher.send(batch).is_err() {
                            break;
                        }
                        in_flight += 1;
                    }
                }
                if in_flight == 0 {
                    return unread.map_or(Ok(None), |e| Err(sqlite(e)));
                }
                if in_flight == 2 || read_all {
                    let Ok(mut batch) = hashed.recv() else { break };
                    in_flight -= 1;
                    for l in batch.links.drain(..) {
                        if let Some(found) = walk.step(l, &around) {
                            return Ok(Some(found));
                        }
                    }
                    if let Some(e) = batch.error.take() {
                        return Err(sqlite(e));
                    }
                    spare.push(batch);
                }
            }
            // Only a hashing thread that stopped ends the loop here: it panicked, and the scope
            // raises that panic again once it has joined the thread.
            Err(RecordError::Failed {
                path: self.path.clone(),
                cause: "the chain's hashing thread stopped".into(),
            })
        })?;
        if let Some(found) = found {
            return around.failed().map(|()| found);
        }
        around.failed()?;
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
        Ok(walk.end(highest))
    }

    /// Compares the events a log holds (of this record, or all of them when `whole`) with the
    /// rows, in id order, giving each finding to `each`; true when the record has rows.
    pub fn compare_log(
        &self,
        log: &logcheck::Spilled,
        whole: bool,
        mut each: impl FnMut(logcheck::Finding),
    ) -> Result<bool, RecordError> {
        let compared = self.snapshot(|store| -> rusqlite::Result<bool> {
            let pruned = store.pruned_through(log, whole)?;
            let mut st = store
                .conn
                .prepare("SELECT id, hash FROM events ORDER BY id")?;
            let failed = std::cell::Cell::new(None);
            let stored = st
                .query_map([], |r| {
                    Ok(logcheck::Stored {
                        id: r.get(0)?,
                        hash: chain::hex(super::stored_bytes(r.get_ref(1)?)),
                    })
                })?
                .map_while(|r| r.map_err(|e| failed.set(Some(e))).ok());
            let mut merge = logcheck::Merge::new(stored, pruned);
            log.each(whole, |e| {
                if let Some(found) = merge.next(&e) {
                    each(found);
                }
            })?;
            drop(merge);
            if let Some(e) = failed.take() {
                return Err(e);
            }
            if log.has_unrecorded(whole) {
                store.unnamed_lost_events(log, whole, &mut each)?;
            }
            store
                .conn
                .query_row("SELECT EXISTS (SELECT 1 FROM events)", [], |r| r.get(0))
        })?;
        compared.map_err(|e| self.err(&e))
    }

    /// The record's first checkpoint row, if the log saw that prune too (a checkpoint excuses
    /// the rows before it only then), else 0. Found from the log's checkpoints, which are few,
    /// each looked up by its id: the record is not scanned for its kinds.
    fn pruned_through(&self, log: &logcheck::Spilled, whole: bool) -> rusqlite::Result<i64> {
        let mut checkpoint = self.conn.prepare(
            "SELECT EXISTS (SELECT 1 FROM events WHERE id = ?1 AND kind = 'checkpoint')",
        )?;
        let mut found = 0;
        log.each_checkpoint(whole, |id| {
            let is_one: bool = checkpoint.query_row([id], |r| r.get(0))?;
            if is_one {
                found = id;
            }
            Ok(is_one)
        })?;
        if found == 0 {
            return Ok(0);
        }
        let earlier: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM events WHERE id < ?1 AND kind = 'checkpoint')",
            [found],
            |r| r.get(0),
        )?;
        Ok(if earlier { 0 } else { found })
    }

    /// Each event the log marks not recorded that no gap row accounts for: named whole in a
    /// gap row (by its key), or counted by kind past the row's bound (decision 0072).
    fn unnamed_lost_events(
        &self,
        log: &logcheck::Spilled,
        whole: bool,
        each: &mut impl FnMut(logcheck::Finding),
    ) -> rusqlite::Result<()> {
        let mut counted: std::collections::HashMap<String, u64> = Default::default();
        let mut st = self
            .conn
            .prepare("SELECT reason FROM events WHERE kind = 'gap'")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let reason = r.get::<_, String>(0).unwrap_or_default();
            for line in reason.lines().skip(1) {
                match super::gap::accounted(line) {
                    super::gap::Accounted::Named(key) => log.named(&key)?,
                    super::gap::Accounted::Counted(by_kind) => {
                        for (kind, n) in by_kind {
                            *counted.entry(kind).or_default() += n;
                        }
                    }
                    super::gap::Accounted::Nothing => {}
                }
            }
        }
        log.each_unnamed(whole, |lost| match counted.get_mut(&lost.kind) {
            Some(n) if *n > 0 => *n -= 1,
            _ => each(logcheck::Finding::Unaccounted {
                lost: lost.lost,
                kind: lost.kind,
                time: lost.time,
            }),
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

    pub(super) fn check_anchor_at(&self, path: &Path) -> Result<AnchorCheck, RecordError> {
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
}

/// Rows of the chain walk on their way from the thread that reads them to the one that hashes
/// them, and back as links: every column's value copied out of SQLite's row.
#[derive(Default)]
struct Batch {
    rows: usize,
    cells: Vec<Cell>,
    bytes: Vec<u8>,
    links: Vec<chain::Link>,
    /// What stopped the hashing of this batch, after its `links`.
    error: Option<rusqlite::Error>,
}

/// One column's value in a [`Batch`]; a text or a blob is a range of its bytes.
#[derive(Clone, Copy)]
enum Cell {
    Null,
    Integer(i64),
    Real(f64),
    Text(usize, usize),
    Blob(usize, usize),
}

impl Batch {
    const ROWS: usize = 256;

    fn clear(&mut self) {
        self.rows = 0;
        self.cells.clear();
        self.bytes.clear();
        self.links.clear();
        self.error = None;
    }

    /// Copies `r`'s first `columns` values, or none of them.
    fn copy(&mut self, r: &rusqlite::Row<'_>, columns: usize) -> rusqlite::Result<()> {
        let (cells, bytes) = (self.cells.len(), self.bytes.len());
        let copied = self.copy_values(r, columns);
        if copied.is_err() {
            self.cells.truncate(cells);
            self.bytes.truncate(bytes);
        }
        copied
    }

    fn copy_values(&mut self, r: &rusqlite::Row<'_>, columns: usize) -> rusqlite::Result<()> {
        for i in 0..columns {
            let mut bytes = |b: &[u8]| {
                let start = self.bytes.len();
                self.bytes.extend_from_slice(b);
                (start, self.bytes.len())
            };
            let cell = match r.get_ref(i)? {
                ValueRef::Null => Cell::Null,
                ValueRef::Integer(n) => Cell::Integer(n),
                ValueRef::Real(x) => Cell::Real(x),
                ValueRef::Text(t) => {
                    let (start, end) = bytes(t);
                    Cell::Text(start, end)
                }
                ValueRef::Blob(b) => {
                    let (start, end) = bytes(b);
                    Cell::Blob(start, end)
                }
            };
            self.cells.push(cell);
        }
        self.rows += 1;
        Ok(())
    }

    /// Reads each row's link ([`link`]), up to the first that fails.
    fn link(&mut self, columns: usize, tools: &mut Vec<String>, encoded: &mut Vec<u8>) {
        let bytes = &self.bytes;
        let value = |cell: &Cell| match *cell {
            Cell::Null => ValueRef::Null,
            Cell::Integer(n) => ValueRef::Integer(n),
            Cell::Real(x) => ValueRef::Real(x),
            Cell::Text(start, end) => ValueRef::Text(&bytes[start..end]),
            Cell::Blob(start, end) => ValueRef::Blob(&bytes[start..end]),
        };
        let mut values = Vec::with_capacity(columns);
        for row in self.cells.chunks(columns.max(1)) {
            values.clear();
            values.extend(row.iter().map(value));
            match link(&values, tools, encoded) {
                Ok(l) => self.links.push(l),
                Err(e) => {
                    self.error = Some(e);
                    return;
                }
            }
        }
    }
}

/// The rows around a break, found by scanning the record again (once, on a broken chain),
/// each stored hash read as the walk reads it.
struct Scans<'a> {
    store: &'a Store,
    /// The first error a scan met: the walk's answer is then unsure, and that is said.
    error: std::cell::RefCell<Option<RecordError>>,
}

impl Scans<'_> {
    fn failed(&self) -> Result<(), RecordError> {
        self.error.take().map_or(Ok(()), Err)
    }

    fn each(&self, sql: &str, id: i64, mut f: impl FnMut(i64, &[u8]) -> bool) {
        let mut scan = || -> rusqlite::Result<()> {
            let mut st = self.store.conn.prepare(sql)?;
            let mut rows = st.query([id])?;
            while let Some(r) = rows.next()? {
                if !f(r.get(0)?, super::stored_bytes(r.get_ref(1)?)) {
                    break;
                }
            }
            Ok(())
        };
        if let Err(e) = scan() {
            self.error.borrow_mut().get_or_insert(self.store.err(&e));
        }
    }
}

impl chain::Around for Scans<'_> {
    fn after_row_hashed(&self, hash: &[u8], before: i64) -> Option<i64> {
        let (mut found, mut next) = (false, None);
        self.each(
            "SELECT id, hash FROM events WHERE id < ?1 ORDER BY id",
            before,
            |id, h| {
                if found && next.is_none() {
                    next = Some(id);
                }
                if h == hash {
                    found = true;
                    next = None;
                }
                true
            },
        );
        // The row after the newest match; a match that is the last row before `before`
        // is followed by `before` itself.
        found.then_some(next.unwrap_or(before))
    }

    fn later_links_to(&self, after: i64, prev: &[u8]) -> bool {
        let mut any = false;
        self.each(
            "SELECT id, prev_hash FROM events WHERE id > ?1 ORDER BY id",
            after,
            |_, p| {
                any = p == prev;
                !any
            },
        );
        any
    }
}
