//! The walk over the stored links, in id order, one row at a time: it holds the previous row
//! only, and asks about the rows around a break once it found one (decision 0062).

use super::{Breach, GENESIS, Link, StoredHash, Verification, broken};

/// What the walk asks about the rows around a break, once it found one: the chain's usual
/// path needs only the row before, so a walk holds one row however long the chain.
pub(crate) trait Around {
    /// The id of the row right after the newest row before row `before` whose hash is `hash`.
    fn after_row_hashed(&self, hash: &[u8], before: i64) -> Option<i64>;
    /// Whether a row after row `after` links to `prev`.
    fn later_links_to(&self, after: i64, prev: &[u8]) -> bool;
}

/// A walk over the stored links in id order, one at a time, naming the first break.
#[derive(Default)]
pub(crate) struct Walk {
    /// The id and hash of the last row that held.
    previous: Option<(i64, StoredHash)>,
    rows: u64,
}

impl Walk {
    /// Takes the next row; `Some` is the break it shows, and the walk stops there.
    pub(crate) fn step(&mut self, r: Link, around: &dyn Around) -> Option<Verification> {
        if r.checkpoint {
            if self.previous.is_none() {
                self.hold(r);
                return None;
            }
            return Some(broken(r.id, Breach::Inserted));
        }
        let (want_prev, prev_id): (&[u8], i64) = match &self.previous {
            Some((id, hash)) => (hash.as_slice(), *id),
            None => (&GENESIS, 0),
        };
        let linked = r.prev.as_slice() == want_prev;
        let dense = prev_id.checked_add(1) == Some(r.id);
        if r.sound && linked && dense {
            self.hold(r);
            return None;
        }
        // The row links to an older row than its predecessor: whatever stands between them was
        // put there afterwards (the inserted rows may well hash correctly).
        if !linked && let Some(first) = around.after_row_hashed(r.prev.as_slice(), r.id) {
            return Some(broken(first, Breach::Inserted));
        }
        // A later row links to what this one should have: this one was put in afterwards.
        if around.later_links_to(r.id, want_prev) {
            return Some(broken(r.id, Breach::Inserted));
        }
        // A gap in the ids: rows are missing before this one, whether it still links to the
        // deleted row or was appended after the deletion (and links to the row before the gap).
        if !dense && (!linked || r.sound) {
            return Some(broken(r.id, Breach::DeletedBefore));
        }
        if !r.sound {
            return Some(broken(r.id, Breach::Edited));
        }
        // The row itself is consistent but does not follow its predecessor: the predecessor was
        // edited and given a fresh hash.
        Some(match self.previous {
            Some(_) if !linked => broken(prev_id, Breach::Edited),
            _ => broken(r.id, Breach::Edited),
        })
    }

    fn hold(&mut self, r: Link) {
        self.previous = Some((r.id, r.hash));
        self.rows += 1;
    }

    /// The verdict on a chain that held to its last row. `highest_id` is the largest id SQLite
    /// ever handed out, which is how deleting the newest rows shows.
    pub(crate) fn end(self, highest_id: i64) -> Verification {
        let last = self.previous.map_or(0, |(id, _)| id);
        if highest_id > last {
            return broken(last.saturating_add(1), Breach::DeletedAtEnd);
        }
        Verification::Intact { rows: self.rows }
    }
}

/// Walks `links` (in id order) whole: the walk over rows held in memory.
#[cfg(test)]
pub(crate) fn walk(links: &[Link], highest_id: i64) -> Verification {
    struct Held<'a>(&'a [Link]);
    impl Around for Held<'_> {
        fn after_row_hashed(&self, hash: &[u8], before: i64) -> Option<i64> {
            let earlier = self.0.iter().take_while(|l| l.id < before);
            let m = earlier
                .enumerate()
                .filter(|(_, l)| l.hash.as_slice() == hash)
                .last()?
                .0;
            self.0.get(m + 1).map(|l| l.id)
        }
        fn later_links_to(&self, after: i64, prev: &[u8]) -> bool {
            self.0
                .iter()
                .any(|l| l.id > after && l.prev.as_slice() == prev)
        }
    }
    let mut w = Walk::default();
    for l in links {
        if let Some(found) = w.step(l.clone(), &Held(links)) {
            return found;
        }
    }
    w.end(highest_id)
}
