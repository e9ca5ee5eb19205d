//! The local anchor: the newest row's id and hash and the row count, kept in a small file beside
//! the database (`audit.db.anchor`), so deleting the newest rows, or the whole database file,
//! shows at `audit verify` even when `sqlite_sequence` is lowered to match.
//!
//! It is written after each commit: a crash between the two leaves the anchor one row behind,
//! which still describes a prefix of the chain, so it never reports a sound record broken. The
//! agent's user can delete this file too; the system-log copy is the anchor it cannot reach
//! (docs/decisions/0011-local-anchor.md).

use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Fixed length, written in place at offset 0: one write of less than a sector, never truncated
/// first, so a reader sees the old line or the new one.
/// Linux's `O_NOFOLLOW`: another user's link planted at the note's name in a shared temporary
/// directory must not make the hook append to the file it points at.
#[cfg(all(target_os = "linux", any(target_arch = "aarch64", target_arch = "arm")))]
pub(crate) const O_NOFOLLOW: i32 = 0x8000;
#[cfg(all(
    target_os = "linux",
    not(any(target_arch = "aarch64", target_arch = "arm"))
))]
pub(crate) const O_NOFOLLOW: i32 = 0x20000;
#[cfg(not(target_os = "linux"))]
pub(crate) const O_NOFOLLOW: i32 = 0;

const LINE: usize = 160;
const MAGIC: &str = "mesh-guard-anchor 1";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    pub id: i64,
    pub count: u64,
    /// Lower-case hex.
    pub hash: String,
}

/// Where the anchor of the database at `db` lives.
pub fn path_for(db: &Path) -> PathBuf {
    let mut name = db.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".anchor");
    db.with_file_name(name)
}

impl Anchor {
    fn line(&self) -> Vec<u8> {
        let mut s = format!(
            "{MAGIC} id={} count={} hash={}\n",
            self.id, self.count, self.hash
        )
        .into_bytes();
        s.resize(LINE.max(s.len()), b' ');
        // The padding sits after the newline; readers stop at the first line.
        s
    }

    fn parse(text: &str) -> Option<Anchor> {
        let rest = text.lines().next()?.strip_prefix(MAGIC)?;
        let mut id = None;
        let mut count = None;
        let mut hash = None;
        for word in rest.split_whitespace() {
            match word.split_once('=')? {
                ("id", v) => id = v.parse().ok(),
                ("count", v) => count = v.parse().ok(),
                ("hash", v) if v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    hash = Some(v.to_string())
                }
                _ => return None,
            }
        }
        Some(Anchor {
            id: id?,
            count: count?,
            hash: hash?,
        })
    }

    /// Writes the anchor (created 0600), without waiting for the disk: every reader on the host
    /// sees it at once through the page cache, and a crash can only leave an older anchor, which
    /// still names a row of the chain. The fsync measured 3.8 ms a row (benches/record.rs), as
    /// much as the commit itself, for no case an attacker can bring about.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(O_NOFOLLOW)
            .open(path)?;
        file.write_all_at(&self.line(), 0)
    }

    /// Writes the anchor and waits for the disk (`audit prune`, run by hand).
    pub fn write_durably(&self, path: &Path) -> std::io::Result<()> {
        self.write(path)?;
        std::fs::File::open(path)?.sync_data()
    }

    /// The anchor at `path`: `Ok(None)` when there is none, `Err` when it cannot be read or
    /// does not parse (which verification reports, rather than trusting).
    pub fn read(path: &Path) -> Result<Option<Anchor>, AnchorError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Anchor::parse(&text)
                .map(Some)
                .ok_or_else(|| AnchorError::NotAnAnchor(path.to_path_buf())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(AnchorError::Unreadable {
                path: path.to_path_buf(),
                cause: e.to_string(),
            }),
        }
    }
}

/// Why an anchor file says nothing. The OS's words are kept as text, so that an
/// [`super::AnchorCheck`] that carries this stays comparable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnchorError {
    /// The file is there and is not an anchor line.
    NotAnAnchor(PathBuf),
    /// The file is there and cannot be read.
    Unreadable { path: PathBuf, cause: String },
}

impl std::fmt::Display for AnchorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnchorError::NotAnAnchor(path) => {
                write!(f, "{} is not a mesh-guard anchor", path.display())
            }
            AnchorError::Unreadable { path, cause } => write!(f, "{}: {cause}", path.display()),
        }
    }
}

impl std::error::Error for AnchorError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_junk() {
        let a = Anchor {
            id: 7,
            count: 7,
            hash: "ab".repeat(32),
        };
        let line = String::from_utf8(a.line()).unwrap();
        assert_eq!(line.len(), LINE);
        assert_eq!(Anchor::parse(&line), Some(a));
        assert_eq!(
            Anchor::parse("mesh-guard-anchor 1 id=1 count=1 hash=zz"),
            None
        );
        assert_eq!(Anchor::parse(""), None);
    }

    #[test]
    fn sits_beside_the_database() {
        assert_eq!(
            path_for(Path::new("/d/audit.db")),
            Path::new("/d/audit.db.anchor")
        );
    }
}
