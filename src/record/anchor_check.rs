//! What an anchor says of the record: intact, behind, or gone.

use super::{anchor, gap};
use std::fmt;
use std::path::{Path, PathBuf};

/// The local anchor compared with the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnchorCheck {
    /// The row the anchor names is there with the anchored hash.
    Holds(anchor::Anchor),
    /// No anchor file: a record written before anchors, or one whose anchor was deleted.
    Missing,
    /// The anchor file is there and says nothing.
    Unreadable(anchor::AnchorError),
    /// The anchored row is gone: the newest rows were deleted.
    RowGone(anchor::Anchor),
    /// The anchored row holds another hash: the chain was rewritten.
    Differs(anchor::Anchor),
}

impl fmt::Display for AnchorCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnchorCheck::Holds(a) => write!(f, "the anchor (row {}, {} rows) holds", a.id, a.count),
            AnchorCheck::Missing => f.write_str(
                "the local anchor is missing (deleted, or never written by this version)",
            ),
            AnchorCheck::Unreadable(e) => write!(f, "the local anchor cannot be read: {e}"),
            AnchorCheck::RowGone(a) => write!(
                f,
                "broken at row {}: the anchor records rows up to {} ({} rows), the database ends before it: rows deleted from the end",
                a.id, a.id, a.count
            ),
            AnchorCheck::Differs(a) => write!(
                f,
                "broken at row {}: its hash is not the anchored {}: the chain was rewritten",
                a.id, a.hash
            ),
        }
    }
}

/// Where the second anchor of the record at `db` is kept (outside its directory).
pub fn second_anchor_path(db: &Path) -> PathBuf {
    gap::side_path(db, "anchor")
}
