//! Reading the record back: filtered rows, rows after an id, the shapes of refusals
//! without a tool.

use super::{Filter, ROW_COLUMNS, RecordError, Row, Store, raw_row};
impl Store {
    /// The rows `filter` selects, newest first.
    pub fn query(&self, filter: &Filter) -> Result<Vec<Row>, RecordError> {
        let mut sql = format!("SELECT {ROW_COLUMNS} FROM events WHERE 1 = 1");
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
            args.push(rule.clone().into());
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

    /// Rows with an id above `after`, oldest first (`audit export`).
    pub fn rows_after(&self, after: i64) -> Result<Vec<Row>, RecordError> {
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT {ROW_COLUMNS} FROM events WHERE id > ?1 ORDER BY id"
            ))
            .map_err(|e| self.err(&e))?;
        let raw = st
            .query_map([after], raw_row)
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.err(&e))?;
        raw.into_iter().map(|r| r.into_row(&self.path)).collect()
    }
}
