//! The stamp: which catalog files, at what size, time and content, the cache was built from.

use super::RACY;
use super::checksum::Checksum;
use crate::catalog::Source;
use crate::sha256::Sha256;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// What identifies one catalog file's content without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) path: Vec<u8>,
    pub(crate) fields: [i64; 7],
}

impl Stamp {
    pub(crate) fn changed_since(&self, now: SystemTime) -> bool {
        let newest = self.fields[3].max(self.fields[5]);
        let now = now
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(i64::MAX);
        newest >= now - RACY.as_secs() as i64
    }
}

/// The stamps of the catalog's files, in the order `load` reads them. Taken before the
/// files are read, so a change made while reading leaves a stamp that no longer matches.
pub(crate) fn stamps(catalog: &Path) -> std::io::Result<Vec<Stamp>> {
    stamps_seen(catalog, None)
}

/// Like `stamps`, with the catalog's metadata as already taken by the caller (before
/// anything of it was read): a one-file catalog is then stamped without asking again.
pub(crate) fn stamps_seen(
    catalog: &Path,
    seen: Option<&std::fs::Metadata>,
) -> std::io::Result<Vec<Stamp>> {
    let taken;
    let meta = match seen {
        Some(meta) => meta,
        None => {
            taken = std::fs::metadata(catalog)?;
            &taken
        }
    };
    // Anything but a folder is the catalog's one file (`catalog::files`).
    if !meta.is_dir() {
        return Ok(vec![Stamp {
            path: path_bytes(catalog),
            fields: stamp_fields(meta),
        }]);
    }
    let files = crate::catalog::files(catalog).map_err(|e| std::io::Error::other(e.message))?;
    files
        .iter()
        .map(|path| {
            let meta = std::fs::metadata(path)?;
            Ok(Stamp {
                path: path_bytes(path),
                fields: stamp_fields(&meta),
            })
        })
        .collect()
}

#[cfg(unix)]
pub(crate) fn stamp_fields(meta: &std::fs::Metadata) -> [i64; 7] {
    use std::os::unix::fs::MetadataExt;
    [
        meta.dev() as i64,
        meta.ino() as i64,
        meta.size() as i64,
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
    ]
}

#[cfg(not(unix))]
pub(crate) fn stamp_fields(meta: &std::fs::Metadata) -> [i64; 7] {
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .unwrap_or_default();
    [
        0,
        0,
        meta.len() as i64,
        modified.as_secs() as i64,
        modified.subsec_nanos() as i64,
        modified.as_secs() as i64,
        0,
    ]
}

pub(crate) fn path_bytes(path: &Path) -> Vec<u8> {
    path.to_string_lossy().into_owned().into_bytes()
}

/// The SHA-256 of the catalog's files: their paths and contents, in order.
pub(crate) fn content_hash(sources: &[Source]) -> [u8; 32] {
    let mut hash = Sha256::new();
    for source in sources {
        let path = path_bytes(&source.path);
        hash.update((path.len() as u64).to_le_bytes());
        hash.update(&path);
        hash.update((source.text.len() as u64).to_le_bytes());
        hash.update(source.text.as_bytes());
    }
    hash.finalize()
}

pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    // A fixed hash, unlike std's: the file is read by other processes and builds.
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A bucket's check: its table's tag and its number, then its bytes, so a bucket read from
/// the wrong place fails as a damaged one does.
pub(crate) fn check(tag: u8, index: u64, bytes: &[u8]) -> [u8; 8] {
    Checksum::new()
        .word(u64::from(tag))
        .word(index)
        .bytes(bytes)
        .finish()
}

// ---- encoding ---------------------------------------------------------------------------
