//! A log's events kept on disk while `audit verify --log` compares them: a log file can hold
//! more events than memory should (a fleet's syslog over months), so each event read is put in
//! a private temporary SQLite database and read back sorted by id (decision 0062). The rows'
//! events are kept in a table ordered by id and line, so reading them back in that order is a
//! walk, not a sort; a log in id order (as the hook forwards) is appended at its end.

use std::io::BufRead;

use rusqlite::{Connection, params};

use super::{Forwarded, Logged, Unrecorded, read_line};

/// A line longer than this is skipped: no event the hook forwards comes near it (its input is
/// at most 8 MiB, which journalctl's byte arrays write in at most four bytes each).
pub const MAX_LINE: u64 = 64 * 1024 * 1024;

/// Why a log could not be spilled: the log could not be read, or the temporary database
/// would not take it. Each prints its library's own words.
#[derive(Debug)]
pub enum SpillError {
    Read(std::io::Error),
    Store(rusqlite::Error),
}

impl From<std::io::Error> for SpillError {
    fn from(e: std::io::Error) -> SpillError {
        SpillError::Read(e)
    }
}

impl From<rusqlite::Error> for SpillError {
    fn from(e: rusqlite::Error) -> SpillError {
        SpillError::Store(e)
    }
}

impl std::fmt::Display for SpillError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpillError::Read(e) => write!(f, "{e}"),
            SpillError::Store(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SpillError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SpillError::Read(e) => Some(e),
            SpillError::Store(e) => Some(e),
        }
    }
}

/// The events of one log, spilled to disk.
pub struct Spilled {
    conn: Connection,
    /// Every mesh-guard event read.
    pub all: u64,
    /// The events naming this record, or naming none.
    pub mine: u64,
    /// Events the record could not take (`RECORDED=no`), of any record.
    pub unrecorded_all: u64,
    /// Those naming this record, or naming none.
    pub unrecorded_mine: u64,
    /// Lines skipped for their length, by line number.
    pub too_long: Vec<u64>,
    /// Whether the log's events come in id order: of every record, and of this one. A log in
    /// order is read back as it was written, without sorting it (most logs: one record's
    /// hook writes its ids in order).
    in_order: InOrder,
}

/// Whether the ids seen so far never went down, for every event and for this record's.
#[derive(Clone, Copy, Default)]
struct InOrder {
    all: Ascending,
    mine: Ascending,
}

impl InOrder {
    fn see(&mut self, id: i64, mine: bool) {
        self.all.see(id);
        if mine {
            self.mine.see(id);
        }
    }

    fn sorted(self, whole: bool) -> bool {
        if whole { self.all } else { self.mine }.so_far
    }
}

/// Whether a run of ids never went down.
#[derive(Clone, Copy)]
struct Ascending {
    last: i64,
    so_far: bool,
}

impl Default for Ascending {
    fn default() -> Self {
        Ascending {
            last: i64::MIN,
            so_far: true,
        }
    }
}

impl Ascending {
    fn see(&mut self, id: i64) {
        self.so_far &= id >= self.last;
        self.last = id;
    }
}

impl Spilled {
    /// Reads `input` line by line, keeping every mesh-guard event and marking those of the
    /// record at `ours`.
    pub fn read(input: impl BufRead, ours: &str) -> Result<Spilled, SpillError> {
        Spilled::read_lines_up_to(input, ours, MAX_LINE)
    }

    fn read_lines_up_to(
        mut input: impl BufRead,
        ours: &str,
        max_line: u64,
    ) -> Result<Spilled, SpillError> {
        // An empty name: SQLite's private temporary database, deleted when closed, whose
        // pages go to a file once its cache is full.
        let conn = Connection::open("")?;
        conn.execute_batch(
            "PRAGMA temp_store = FILE;
             CREATE TABLE logged (seq INTEGER PRIMARY KEY, id INTEGER NOT NULL,
                kind TEXT NOT NULL, hash TEXT NOT NULL, mine INTEGER NOT NULL);
             CREATE TABLE checkpoint (id INTEGER NOT NULL, mine INTEGER NOT NULL);
             CREATE TABLE unrecorded (seq INTEGER PRIMARY KEY, lost TEXT NOT NULL,
                kind TEXT NOT NULL, time TEXT NOT NULL, mine INTEGER NOT NULL);
             CREATE TABLE named (lost TEXT PRIMARY KEY) WITHOUT ROWID;
             BEGIN",
        )?;
        let (mut all, mut mine_all, mut unrecorded_all, mut unrecorded_mine) = (0, 0, 0, 0);
        let mut too_long = Vec::new();
        let mut in_order = InOrder::default();
        // Prepared once for the whole log, not looked up in the statement cache per line.
        let mut logged_row = conn.prepare(
            "INSERT INTO logged (id, seq, kind, hash, mine) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        // A prune is rare: its events are found in a table of their own, not by a scan.
        let mut checkpoint_row =
            conn.prepare("INSERT INTO checkpoint (id, mine) VALUES (?1, ?2)")?;
        let mut unrecorded_row = conn.prepare(
            "INSERT INTO unrecorded (seq, lost, kind, time, mine) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        let mut line = Vec::new();
        let mut number = 0u64;
        loop {
            line.clear();
            number += 1;
            let n = std::io::Read::take(&mut input, max_line).read_until(b'\n', &mut line)?;
            if n == 0 {
                break;
            }
            if line.last() != Some(&b'\n') && n as u64 == max_line {
                too_long.push(number);
                skip_line(&mut input)?;
                continue;
            }
            let text = match std::str::from_utf8(&line) {
                Ok(text) => std::borrow::Cow::Borrowed(text),
                Err(_) => String::from_utf8_lossy(&line),
            };
            let Some(logged) = read_line(&text) else {
                continue;
            };
            let mine = |record: &str| record.is_empty() || record == ours;
            match logged {
                Logged::Row(e) => {
                    let mine = mine(&e.record);
                    all += 1;
                    mine_all += u64::from(mine);
                    in_order.see(e.id, mine);
                    if e.kind == "checkpoint" {
                        checkpoint_row.execute(params![e.id, mine])?;
                    }
                    logged_row.execute(params![e.id, number as i64, e.kind, e.hash, mine])?;
                }
                Logged::Unrecorded(e) => {
                    let mine = mine(&e.record);
                    unrecorded_all += 1;
                    unrecorded_mine += u64::from(mine);
                    unrecorded_row.execute(params![number as i64, e.lost, e.kind, e.time, mine])?;
                }
            }
        }
        drop((logged_row, checkpoint_row, unrecorded_row));
        conn.execute_batch("COMMIT")?;
        Ok(Spilled {
            conn,
            all,
            mine: mine_all,
            unrecorded_all,
            unrecorded_mine,
            too_long,
            in_order,
        })
    }

    /// Each event in id order, the first logged of each id (a relay's retry is one event):
    /// of this record only, or of every record when `whole`.
    pub fn each(&self, whole: bool, mut f: impl FnMut(Forwarded)) -> rusqlite::Result<()> {
        // By id, the first logged first: a log in order already is, and is not sorted again.
        let mut st = self.conn.prepare(if self.in_order.sorted(whole) {
            "SELECT id, kind, hash FROM logged WHERE mine OR ?1 ORDER BY seq"
        } else {
            "SELECT id, kind, hash FROM logged WHERE mine OR ?1 ORDER BY id, seq"
        })?;
        let mut rows = st.query([whole])?;
        let mut last = None;
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            if last == Some(id) {
                continue;
            }
            last = Some(id);
            f(Forwarded {
                id,
                kind: r.get(1)?,
                hash: r.get(2)?,
                prev_hash: String::new(),
                record: String::new(),
            });
        }
        Ok(())
    }

    /// Whether the comparison has events the record could not take to look for in gap rows:
    /// of this record, or of any when `whole`.
    pub fn has_unrecorded(&self, whole: bool) -> bool {
        (if whole {
            self.unrecorded_all
        } else {
            self.unrecorded_mine
        }) > 0
    }

    /// Notes that a gap row of the record names the lost event `lost` (its key).
    pub fn named(&self, lost: &str) -> rusqlite::Result<()> {
        self.conn
            .prepare_cached("INSERT OR IGNORE INTO named (lost) VALUES (?1)")?
            .execute([lost.to_ascii_lowercase()])
            .map(drop)
    }

    /// Each event the record could not take whose key no gap row names ([`Spilled::named`]),
    /// once per key, in the order the log has them: of this record, or of any when `whole`.
    pub fn each_unnamed(&self, whole: bool, mut f: impl FnMut(Unrecorded)) -> rusqlite::Result<()> {
        let mut st = self.conn.prepare(
            "SELECT lost, kind, time, min(seq) AS first FROM unrecorded
             WHERE (mine OR ?1) AND lost NOT IN (SELECT lost FROM named)
             GROUP BY lost ORDER BY first",
        )?;
        let mut rows = st.query([whole])?;
        while let Some(r) = rows.next()? {
            f(Unrecorded {
                lost: r.get(0)?,
                kind: r.get(1)?,
                time: r.get(2)?,
                record: String::new(),
            });
        }
        Ok(())
    }

    /// The ids of the log's checkpoint events (of this record, or of any when `whole`), from
    /// the lowest, each given to `is_it` until it says one is the checkpoint sought.
    pub fn each_checkpoint(
        &self,
        whole: bool,
        mut is_it: impl FnMut(i64) -> rusqlite::Result<bool>,
    ) -> rusqlite::Result<()> {
        let mut st = self
            .conn
            .prepare("SELECT DISTINCT id FROM checkpoint WHERE mine OR ?1 ORDER BY id")?;
        let mut rows = st.query([whole])?;
        while let Some(r) = rows.next()? {
            if is_it(r.get(0)?)? {
                break;
            }
        }
        Ok(())
    }
}

/// Reads past the rest of a line too long to keep.
fn skip_line(input: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(at) => {
                input.consume(at + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: i64, kind: &str, hash: &str, record: &str) -> String {
        format!(
            "{{\"MESH_GUARD_ID\":\"{id}\",\"MESH_GUARD_KIND\":\"{kind}\",\"MESH_GUARD_HASH\":\"{hash}\",\"MESH_GUARD_RECORD\":\"{record}\"}}\n"
        )
    }

    fn checkpoints(log: &Spilled, whole: bool) -> Vec<i64> {
        let mut ids = Vec::new();
        log.each_checkpoint(whole, |id| {
            ids.push(id);
            Ok(false)
        })
        .unwrap();
        ids
    }

    fn events(log: &Spilled, whole: bool) -> Vec<(i64, String)> {
        let mut out = Vec::new();
        log.each(whole, |e| out.push((e.id, e.hash))).unwrap();
        out
    }

    #[test]
    fn events_come_back_by_id_first_logged_first_and_of_this_record() {
        let text = [
            line(3, "refusal", "c", "/r/a.db"),
            line(1, "refusal", "a", "/r/a.db"),
            "unrelated\n".to_string(),
            line(2, "refusal", "b", ""),
            line(1, "refusal", "retry", "/r/a.db"),
            line(2, "refusal", "other", "/r/b.db"),
            line(4, "checkpoint", "d", "/r/b.db"),
        ]
        .concat();
        let log = Spilled::read(text.as_bytes(), "/r/a.db").unwrap();
        assert_eq!((log.all, log.mine), (6, 4));
        let hashes = |v: Vec<(i64, String)>| v.into_iter().map(|(_, h)| h).collect::<Vec<_>>();
        assert_eq!(hashes(events(&log, false)), ["a", "b", "c"]);
        assert_eq!(hashes(events(&log, true)), ["a", "b", "c", "d"]);
        assert_eq!(checkpoints(&log, true), [4]);
        assert!(checkpoints(&log, false).is_empty());
        assert!(!log.in_order.sorted(false) && !log.in_order.sorted(true));
    }

    #[test]
    fn a_log_in_order_reads_back_as_a_sorted_one_would() {
        // This record's ids in order, a retry beside its first copy; another record's
        // between them, out of order.
        let text = [
            line(1, "refusal", "a", "/r/a.db"),
            line(7, "refusal", "x", "/r/b.db"),
            line(2, "refusal", "b", "/r/a.db"),
            line(2, "refusal", "retry", "/r/a.db"),
            line(3, "refusal", "y", "/r/b.db"),
            line(5, "checkpoint", "c", ""),
        ]
        .concat();
        let log = Spilled::read(text.as_bytes(), "/r/a.db").unwrap();
        assert!(log.in_order.sorted(false) && !log.in_order.sorted(true));
        assert_eq!(
            events(&log, false),
            [(1, "a".into()), (2, "b".into()), (5, "c".into())]
        );
        let whole: Vec<i64> = events(&log, true).into_iter().map(|(id, _)| id).collect();
        assert_eq!(whole, [1, 2, 3, 5, 7]);
        assert_eq!(checkpoints(&log, false), [5]);
    }

    #[test]
    fn a_line_past_the_limit_is_skipped_and_named() {
        let long = format!("{}{}", line(9, "refusal", "x", ""), "y".repeat(300));
        let text = [
            line(1, "refusal", "a", ""),
            long.replace('\n', ""),
            "\n".into(),
            line(2, "refusal", "b", ""),
        ]
        .concat();
        let log = Spilled::read_lines_up_to(text.as_bytes(), "", 200).unwrap();
        assert_eq!(log.too_long, [2]);
        assert_eq!(events(&log, false), [(1, "a".into()), (2, "b".into())]);
    }
}
