//! The compiled catalog cache: the validated index written to one file, keyed by the
//! catalog's files, so that a hook does not parse a large catalog on every call.
//!
//! A hook opens the file and probes it with positioned reads (`pread`): a 100k-machine
//! catalog is never read whole nor deserialized, a lookup costs two small reads. Layout
//! (little-endian), see docs/decisions/0006-catalog-cache.md:
//!
//! ```text
//! prefix  magic "MGIDX\0\0\n" | format u32 | header length u32 | checksum of the header
//! header  racy u8 | crate version | catalog path | content SHA-256 | file stamps
//!         | body length | domains, networks, forge, syslog, modes, machine patterns | counts
//!         | table positions
//! body    per table: a directory of buckets (offset u64, length u32, check 8 bytes),
//!         then the buckets; then the tools' directory and records
//! ```
//!
//! Trust: the header's checksum is verified on open, each bucket's on every read (against
//! damage: `checksum`, decision 0049). Any
//! mismatch, short read or undecodable entry marks the view broken, and the decision is
//! made again from the catalog itself (`LazyCatalog::recover`): a damaged cache costs
//! time, never a wrong pass.

mod checksum;
mod codec;
mod read;
mod stamp;
mod write;

pub(crate) use read::*;
pub(crate) use stamp::*;
pub(crate) use write::*;

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::path::{Path, PathBuf};
use std::time::Duration;

const MAGIC: &[u8; 8] = b"MGIDX\0\0\n";
/// Bump on any change to the layout or to what an entry means.
const FORMAT: u32 = 7;
const PREFIX: u64 = 8 + 4 + 4 + 8;
const DIR_ENTRY: u64 = 8 + 4 + 8;
/// A file changed this recently may change again within the same timestamp tick (file
/// times are coarse), so its stamp alone does not prove the content: such a cache is
/// marked racy and checked by content until the file is older (git's "racy clean" rule).
const RACY: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Table {
    Machines = 0,
    Containers = 1,
    Units = 2,
    Modules = 3,
    ToolWords = 4,
}
const TABLES: usize = 5;
/// The check tag of the tools' directory, after the tables'.
const TOOLS_TAG: u8 = TABLES as u8;

/// Why a cache was not used; every one leads to loading the catalog and rewriting it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    Absent,
    Stale,
    Corrupt,
}

/// Where the cache of the catalog at `catalog` lives in `dir`: one file per catalog path,
/// so that two catalogs used in turn do not keep rebuilding one file.
pub fn file_for(dir: &Path, catalog: &Path) -> PathBuf {
    let absolute = std::path::absolute(catalog).unwrap_or_else(|_| catalog.to_path_buf());
    dir.join(format!(
        "catalog-{:016x}.idx",
        fnv1a(&path_bytes(&absolute))
    ))
}

/// Records a refusal reads (its decision and its ranking) without the table growing.
const MEMO_RECORDS: usize = 64;

/// Records already read and verified by a view (see `View::record`).
#[derive(Debug, Default)]
struct Memo {
    bytes: usize,
    records: HashMap<(u8, u64, u64), Vec<u8>, BuildHasherDefault<KeyHasher>>,
}

impl Memo {
    fn sized() -> Memo {
        Memo {
            bytes: 0,
            records: HashMap::with_capacity_and_hasher(MEMO_RECORDS, Default::default()),
        }
    }
}

/// The memo's keys are offsets in our own file, not chosen by anyone who could aim at
/// collisions: a multiply-rotate hash instead of std's SipHash, which was a tenth of a
/// refusal's ranking with the table's growth.
#[derive(Debug, Default)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.write_u64(u64::from(b)));
    }

    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
