//! Retention: rows before a time pruned, the chain kept verifiable.

use super::{Event, Kind, RecordError, Row, Store, anchor, chain, forward, gap};
use rusqlite::{OptionalExtension, TransactionBehavior, params};

impl Store {
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
            crate::time::format_time(before_ms, true)
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
}
