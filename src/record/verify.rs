//! Verifying the record: the hash chain, the anchors, and what the system log holds.

use super::{
    AnchorCheck, RecordError, Store, Verification, anchor, blob, chain, link, logcheck,
    second_anchor_path,
};
use rusqlite::OptionalExtension;
use std::path::{Path, PathBuf};

impl Store {
    /// Checks the whole chain and names the first broken row.
    pub fn verify(&self) -> Result<Verification, RecordError> {
        let mut st = self
            .conn
            .prepare(concat!(
                "SELECT id, time_ms, ",
                super::row::text_columns!(),
                ", format, prev_hash, hash, scope FROM events ORDER BY id"
            ))
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
}
