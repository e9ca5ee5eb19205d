//! Reading the record back: filtered rows, rows after an id, the shapes of refusals
//! without a tool. Each is a cursor handed row by row to the caller, so what a view holds does
//! not grow with the record (decision 0062); the `Vec` forms are for callers that want them all.

use std::ops::ControlFlow;

use super::row::TABLE_COLUMNS;
use super::{Filter, ROW_COLUMNS, RecordError, Row, Store};

impl Store {
    /// The rows `filter` selects, newest first, each given to `each` as it is read; `each`
    /// breaks to stop early (a closed stdout). Every row is decoded into the same `Row`, so
    /// `each` sees it only for the call.
    pub fn each_row(
        &self,
        filter: &Filter,
        mut each: impl FnMut(&Row) -> ControlFlow<()>,
    ) -> Result<(), RecordError> {
        self.each_selected(filter, ROW_COLUMNS, Row::read_from, &mut each)
    }

    /// [`Store::each_row`] for the table: only the columns it shows are read; the others are
    /// empty in the row `each` sees.
    pub fn each_table_row(
        &self,
        filter: &Filter,
        mut each: impl FnMut(&Row) -> ControlFlow<()>,
    ) -> Result<(), RecordError> {
        self.each_selected(filter, TABLE_COLUMNS, Row::read_table_from, &mut each)
    }

    /// The rows `filter` selects, as `columns`, each read by `decode` and given to `each`.
    fn each_selected(
        &self,
        filter: &Filter,
        columns: &str,
        decode: Decoder,
        each: &mut dyn FnMut(&Row) -> ControlFlow<()>,
    ) -> Result<(), RecordError> {
        let (selection, args) = selection(filter);
        let sql = format!("SELECT {columns} FROM events {selection}");
        self.each_of(&sql, rusqlite::params_from_iter(args), decode, each)
    }

    /// The extent of the rows `filter` selects, for laying a table out before printing it:
    /// only the six measured columns are read, and counted where SQLite holds them. Counted
    /// here rather than by SQLite's `length`, which stops at a NUL character and so needed a
    /// second scan of every text to be trusted (issue 39: two thirds of the pass).
    pub fn extent(&self, filter: &Filter) -> Result<Extent, RecordError> {
        let (selection, args) = selection(filter);
        let sql = format!(
            "SELECT time_ms, kind, session_id, rule, target, scope, reason FROM events {selection}"
        );
        let mut st = self.conn.prepare(&sql).map_err(|e| self.err(&e))?;
        let mut rows = st
            .query(rusqlite::params_from_iter(args))
            .map_err(|e| self.err(&e))?;
        let mut extent = Extent {
            earliest_ms: i64::MAX,
            latest_ms: i64::MIN,
            ..Extent::default()
        };
        while let Some(r) = rows.next().map_err(|e| self.err(&e))? {
            let time = r.get::<_, i64>(0).map_err(|e| self.err(&e))?;
            extent.rows += 1;
            extent.earliest_ms = extent.earliest_ms.min(time);
            extent.latest_ms = extent.latest_ms.max(time);
            for (longest, i) in extent.longest.iter_mut().zip(1..) {
                let chars = match r.get_ref(i).map_err(|e| self.err(&e))? {
                    rusqlite::types::ValueRef::Text(t) => characters(t),
                    _ => 0,
                };
                *longest = (*longest).max(chars);
            }
        }
        if extent.rows == 0 {
            (extent.earliest_ms, extent.latest_ms) = (0, 0);
        }
        Ok(extent)
    }

    /// The rows `filter` selects, newest first, all at once.
    pub fn query(&self, filter: &Filter) -> Result<Vec<Row>, RecordError> {
        let mut rows = Vec::new();
        self.each_row(filter, |r| {
            rows.push(r.clone());
            ControlFlow::Continue(())
        })?;
        Ok(rows)
    }

    /// Rows with an id above `after`, oldest first (`audit export`), each given to `each` (as
    /// [`Store::each_row`] does).
    pub fn each_row_after(
        &self,
        after: i64,
        mut each: impl FnMut(&Row) -> ControlFlow<()>,
    ) -> Result<(), RecordError> {
        let sql = format!("SELECT {ROW_COLUMNS} FROM events WHERE id > ?1 ORDER BY id");
        self.each_of(&sql, [after], Row::read_from, &mut each)
    }

    /// Rows with an id above `after`, oldest first, all at once.
    pub fn rows_after(&self, after: i64) -> Result<Vec<Row>, RecordError> {
        let mut rows = Vec::new();
        self.each_row_after(after, |r| {
            rows.push(r.clone());
            ControlFlow::Continue(())
        })?;
        Ok(rows)
    }

    fn each_of(
        &self,
        sql: &str,
        args: impl rusqlite::Params,
        decode: Decoder,
        each: &mut dyn FnMut(&Row) -> ControlFlow<()>,
    ) -> Result<(), RecordError> {
        let mut st = self.conn.prepare(sql).map_err(|e| self.err(&e))?;
        let mut rows = st.query(args).map_err(|e| self.err(&e))?;
        let mut row = Row::empty();
        while let Some(r) = rows.next().map_err(|e| self.err(&e))? {
            decode(&mut row, r, &self.path, &|e| self.err(e))?;
            if each(&row).is_break() {
                break;
            }
        }
        Ok(())
    }

    /// Refusals that named no tool, counted by the command shape that needs one, most frequent
    /// first: (shape, refusals, would-refuse rows of report-only mode).
    pub fn missing(&self) -> Result<Vec<(String, u64, u64)>, RecordError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT shape, SUM(kind = 'refusal'), SUM(kind = 'would-refuse') FROM events
                 WHERE kind IN ('refusal', 'would-refuse') AND tools = '[]'
                 GROUP BY shape ORDER BY COUNT(*) DESC, shape",
            )
            .map_err(|e| self.err(&e))?;
        let count = |r: &rusqlite::Row<'_>, i| r.get::<_, i64>(i).map(|n| n.max(0) as u64);
        st.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, count(r, 1)?, count(r, 2)?))
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| self.err(&e))
    }

    /// Runs `f` on one snapshot of the record: rows hooks append meanwhile are not seen, so
    /// the passes of a view (the table's widths, then its lines) and a verification's scans
    /// agree. Sorting and grouping spill to temporary files rather than memory.
    pub fn snapshot<T>(&self, f: impl FnOnce(&Store) -> T) -> Result<T, RecordError> {
        self.conn
            .pragma_update(None, "temp_store", "FILE")
            .map_err(|e| self.err(&e))?;
        // Deferred: the read snapshot is taken at the first read, and dropping the
        // transaction (which wrote nothing) ends it.
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(|e| self.err(&e))?;
        let out = f(self);
        drop(tx);
        Ok(out)
    }
}

/// The characters of UTF-8 `text`: its bytes that do not continue a character. (A text that is
/// not UTF-8 fails when its row is read to be shown.)
fn characters(text: &[u8]) -> u64 {
    text.iter().filter(|&&b| b & 0xc0 != 0x80).count() as u64
}

/// How a row of a query's columns is read into a [`Row`]: [`Row::read_from`] for
/// `ROW_COLUMNS`, [`Row::read_table_from`] for `TABLE_COLUMNS`.
type Decoder = fn(
    &mut Row,
    &rusqlite::Row<'_>,
    &std::path::Path,
    &dyn Fn(&rusqlite::Error) -> RecordError,
) -> Result<(), RecordError>;

/// How many rows a selection holds, their earliest and latest times, and the longest text, in
/// characters, of `kind`, `session_id`, `rule`, `target`, `scope` and `reason`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extent {
    pub rows: u64,
    pub earliest_ms: i64,
    pub latest_ms: i64,
    pub longest: [u64; 6],
}

/// The `WHERE`, `ORDER BY` and `LIMIT` of the rows `filter` selects, and their arguments.
fn selection(filter: &Filter) -> (String, Vec<rusqlite::types::Value>) {
    let mut sql = "WHERE 1 = 1".to_string();
    let mut args: Vec<rusqlite::types::Value> = Vec::new();
    if !filter.kinds.is_empty() {
        let mut any = Vec::new();
        for kind in &filter.kinds {
            args.push(kind.as_str().to_string().into());
            any.push(format!("?{}", args.len()));
        }
        sql.push_str(&format!(" AND kind IN ({})", any.join(", ")));
    }
    if let Some(rule) = &filter.rule {
        args.push(rule.id().to_string().into());
        sql.push_str(&format!(" AND rule = ?{}", args.len()));
    }
    if let Some(target) = &filter.target {
        args.push(target.clone().into());
        // instr, not LIKE: targets may contain `_` and `%`.
        sql.push_str(&format!(" AND instr(target, ?{}) > 0", args.len()));
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
    if let Some(below) = filter.below_id {
        // Keyset paging on the primary key: SQLite starts the walk at `below`, so a page
        // deep in the record costs what the first one does.
        args.push(below.into());
        sql.push_str(&format!(" AND id < ?{}", args.len()));
    }
    sql.push_str(" ORDER BY id DESC");
    if let Some(limit) = filter.limit {
        args.push(i64::try_from(limit).unwrap_or(i64::MAX).into());
        sql.push_str(&format!(" LIMIT ?{}", args.len()));
    }
    (sql, args)
}
