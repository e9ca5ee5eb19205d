//! Many rows at once: a big record grown quickly, for the benchmarks and the tests of scale
//! (`benches/audit_scale.rs`), through the same insert and chain link as every append.

use rusqlite::TransactionBehavior;

use super::{Event, RecordError, Store, anchor, chain, chain_ends, gap, insert};

/// Rows per transaction: one sync each.
const BATCH: usize = 10_000;

impl Store {
    /// Appends `events` in order, in transactions of [`BATCH`] rows, and anchors the chain as
    /// `append` does; nothing is forwarded. Returns the last row's id.
    #[doc(hidden)]
    pub fn append_bulk(
        &mut self,
        events: impl IntoIterator<Item = Event>,
    ) -> Result<i64, RecordError> {
        let path = self.path.clone();
        let err = |e: rusqlite::Error| RecordError::from_sqlite(&path, &e);
        let mut events = events.into_iter().peekable();
        let mut last = None;
        while events.peek().is_some() {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(err)?;
            let ends = chain_ends(&tx).map_err(err)?;
            let mut prev = ends.head.unwrap_or_else(|| chain::GENESIS.to_vec());
            for (id, e) in (ends.next..).zip(events.by_ref().take(BATCH)) {
                prev = insert(&tx, &path, id, &e, &prev, "")?.to_vec();
                last = Some((ends.first.unwrap_or(ends.next), id, chain::hex(&prev)));
            }
            tx.commit().map_err(err)?;
        }
        let Some((first, id, hash)) = last else {
            return Ok(0);
        };
        let anchor = anchor::Anchor {
            id,
            count: u64::try_from(id - first + 1).unwrap_or(0),
            hash,
        };
        let _ = anchor.write(&anchor::path_for(&self.path));
        let _ = anchor.write(&gap::side_path(&self.path, "anchor"));
        Ok(id)
    }
}
