//! The compiled catalog cache: the validated index written to one file, keyed by the
//! catalog's files, so that a hook does not parse a large catalog on every call.
//!
//! A hook opens the file and probes it with positioned reads (`pread`): a 100k-machine
//! catalog is never read whole nor deserialized, a lookup costs two small reads. Layout
//! (little-endian), see docs/decisions/0006-catalog-cache.md:
//!
//! ```text
//! prefix  magic "MGIDX\0\0\n" | format u32 | header length u32 | SHA-256 of the header
//! header  racy u8 | crate version | catalog path | content SHA-256 | file stamps
//!         | body length | domains, networks, forge | counts | table positions
//! body    per table: a directory of buckets (offset u64, length u32, check 8 bytes),
//!         then the buckets; then the tools' directory and records
//! ```
//!
//! Trust: the header's checksum is verified on open, each bucket's on every read. Any
//! mismatch, short read or undecodable entry marks the view broken, and the decision is
//! made again from the catalog itself (`LazyCatalog::recover`): a damaged cache costs
//! time, never a wrong pass.

use super::index::{Index, ModuleEntry, Ranges, ToolEntry};
use super::{Cidr, Source};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const MAGIC: &[u8; 8] = b"MGIDX\0\0\n";
/// Bump on any change to the layout or to what an entry means.
const FORMAT: u32 = 3;
const PREFIX: u64 = 8 + 4 + 4 + 32;
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

/// What identifies one catalog file's content without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stamp {
    path: Vec<u8>,
    fields: [i64; 7],
}

impl Stamp {
    pub(super) fn changed_since(&self, now: SystemTime) -> bool {
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
pub(super) fn stamps(catalog: &Path) -> std::io::Result<Vec<Stamp>> {
    let files = super::files(catalog).map_err(|e| std::io::Error::other(e.message))?;
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
fn stamp_fields(meta: &std::fs::Metadata) -> [i64; 7] {
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
fn stamp_fields(meta: &std::fs::Metadata) -> [i64; 7] {
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

fn path_bytes(path: &Path) -> Vec<u8> {
    path.to_string_lossy().into_owned().into_bytes()
}

/// The SHA-256 of the catalog's files: their paths and contents, in order.
pub(super) fn content_hash(sources: &[Source]) -> [u8; 32] {
    let mut hash = Sha256::new();
    for source in sources {
        let path = path_bytes(&source.path);
        hash.update((path.len() as u64).to_le_bytes());
        hash.update(&path);
        hash.update((source.text.len() as u64).to_le_bytes());
        hash.update(source.text.as_bytes());
    }
    hash.finalize().into()
}

fn fnv1a(bytes: &[u8]) -> u64 {
    // A fixed hash, unlike std's: the file is read by other processes and builds.
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn check(tag: u8, index: u64, bytes: &[u8]) -> [u8; 8] {
    let mut hash = Sha256::new();
    hash.update([tag]);
    hash.update(index.to_le_bytes());
    hash.update(bytes);
    let digest = hash.finalize();
    digest[..8].try_into().expect("eight bytes")
}

// ---- encoding ---------------------------------------------------------------------------

#[derive(Default)]
struct Enc(Vec<u8>);

impl Enc {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v);
    }
    fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }
    fn strs(&mut self, v: &[String]) {
        self.u32(v.len() as u32);
        v.iter().for_each(|s| self.str(s));
    }
}

struct Dec<'a> {
    buf: &'a [u8],
}

impl<'a> Dec<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.buf.len() {
            return None;
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("four bytes")))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("eight bytes")))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn str(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }
    fn strs(&mut self) -> Option<Vec<String>> {
        let n = self.u32()?;
        // Each string takes at least its length: a corrupt count cannot allocate much.
        (0..n).map(|_| self.str()).collect::<Option<Vec<_>>>()
    }
}

fn encode_tool(tool: &ToolEntry) -> Vec<u8> {
    let mut e = Enc::default();
    e.str(&tool.name);
    e.str(&tool.usage);
    e.strs(&tool.replaces);
    match &tool.module {
        Some(m) => {
            e.u8(1);
            e.str(m);
        }
        None => e.u8(0),
    }
    e.0
}

fn decode_tool(bytes: &[u8]) -> Option<ToolEntry> {
    let mut d = Dec { buf: bytes };
    let (name, usage, replaces) = (d.str()?, d.str()?, d.strs()?);
    let module = match d.u8()? {
        0 => None,
        1 => Some(d.str()?),
        _ => return None,
    };
    d.buf.is_empty().then_some(ToolEntry {
        name,
        usage,
        replaces,
        module,
    })
}

/// A hash table: a directory of `count` buckets, then the buckets, appended to `body`.
/// Returns where the directory starts (in the body) and the bucket count.
fn write_table(body: &mut Vec<u8>, tag: u8, mut entries: Vec<(&str, Vec<u8>)>) -> (u64, u64) {
    // In key order, not the maps' random one: the same catalog gives the same file.
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let count = (entries.len() as u64 / 2).max(1).next_power_of_two();
    let mut buckets = vec![Enc::default(); count as usize];
    for (key, value) in &entries {
        let b = &mut buckets[(fnv1a(key.as_bytes()) & (count - 1)) as usize];
        b.str(key);
        b.bytes(value);
    }
    write_records(body, tag, buckets.into_iter().map(|b| b.0))
}

/// A directory of records (offset, length, check), then the records; see `write_table`.
fn write_records(
    body: &mut Vec<u8>,
    tag: u8,
    records: impl ExactSizeIterator<Item = Vec<u8>>,
) -> (u64, u64) {
    let count = records.len() as u64;
    let dir = body.len() as u64;
    body.resize(body.len() + (count * DIR_ENTRY) as usize, 0);
    for (i, record) in records.enumerate() {
        let at = body.len() as u64;
        let entry = dir as usize + i * DIR_ENTRY as usize;
        body[entry..entry + 8].copy_from_slice(&at.to_le_bytes());
        body[entry + 8..entry + 12].copy_from_slice(&(record.len() as u32).to_le_bytes());
        body[entry + 12..entry + 20].copy_from_slice(&check(tag, i as u64, &record));
        body.extend_from_slice(&record);
    }
    (dir, count)
}

impl Clone for Enc {
    fn clone(&self) -> Self {
        Enc(self.0.clone())
    }
}

/// Writes the cache for `index` atomically: a temporary file in the same directory,
/// renamed over the old one, so a reader sees the old file or the new, never a mix, and
/// two hooks rebuilding at once each leave a whole file (the last rename wins).
pub(super) fn write(
    cache: &Path,
    catalog: &Path,
    stamps: &[Stamp],
    content: [u8; 32],
    index: &Index,
) -> std::io::Result<()> {
    let mut body = Vec::new();
    let module_name = |m: &usize| index.modules[*m].name.as_bytes().to_vec();
    let tables = [
        write_table(
            &mut body,
            Table::Machines as u8,
            index
                .machine_by_name
                .iter()
                .map(|(k, &i)| (k.as_str(), index.machines[i].as_bytes().to_vec()))
                .collect(),
        ),
        write_table(
            &mut body,
            Table::Containers as u8,
            index
                .module_by_container
                .iter()
                .map(|(k, m)| (k.as_str(), module_name(m)))
                .collect(),
        ),
        write_table(
            &mut body,
            Table::Units as u8,
            index
                .module_by_unit
                .iter()
                .map(|(k, m)| (k.as_str(), module_name(m)))
                .collect(),
        ),
        write_table(
            &mut body,
            Table::Modules as u8,
            index
                .module_by_name
                .iter()
                .map(|(k, &m)| {
                    let mut e = Enc::default();
                    e.strs(&index.modules[m].machines);
                    (k.as_str(), e.0)
                })
                .collect(),
        ),
        write_table(
            &mut body,
            Table::ToolWords as u8,
            index
                .tool_words
                .iter()
                .map(|(k, ids)| {
                    let mut e = Enc::default();
                    e.u32(ids.len() as u32);
                    ids.iter().for_each(|&id| e.u32(id));
                    (k.as_str(), e.0)
                })
                .collect(),
        ),
    ];
    let (tools_dir, tool_count) = write_records(
        &mut body,
        TOOLS_TAG,
        index
            .tools
            .iter()
            .map(encode_tool)
            .collect::<Vec<_>>()
            .into_iter(),
    );

    let now = SystemTime::now();
    let mut h = Enc::default();
    h.u8(u8::from(stamps.iter().any(|s| s.changed_since(now))));
    h.str(env!("CARGO_PKG_VERSION"));
    h.bytes(&path_bytes(catalog));
    h.0.extend_from_slice(&content);
    h.u32(stamps.len() as u32);
    for s in stamps {
        h.bytes(&s.path);
        s.fields.iter().for_each(|&f| h.u64(f as u64));
    }
    h.u64(body.len() as u64);
    h.strs(&index.ranges.domains);
    h.strs(
        &index
            .ranges
            .networks
            .iter()
            .map(Cidr::to_string)
            .collect::<Vec<_>>(),
    );
    match &index.ranges.forge {
        Some((machine, user)) => {
            h.u8(1);
            h.str(machine);
            h.str(user);
        }
        None => h.u8(0),
    }
    match &index.ranges.syslog {
        Some(target) => {
            h.u8(1);
            h.str(target);
        }
        None => h.u8(0),
    }
    h.u64(index.machines.len() as u64);
    for (dir, count) in tables {
        h.u64(dir);
        h.u64(count);
    }
    h.u64(tools_dir);
    h.u64(tool_count);

    let mut file = Vec::with_capacity(PREFIX as usize + h.0.len() + body.len());
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(&FORMAT.to_le_bytes());
    file.extend_from_slice(&(h.0.len() as u32).to_le_bytes());
    file.extend_from_slice(&Sha256::digest(&h.0));
    file.extend_from_slice(&h.0);
    file.extend_from_slice(&body);
    replace(cache, &file)
}

/// Writes `bytes` to a fresh temporary file beside `path`, then renames it over `path`.
fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    let written = std::fs::write(&temp, bytes).and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

// ---- reading ----------------------------------------------------------------------------

#[cfg(unix)]
fn read_at(file: &File, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0; len];
    file.read_exact_at(&mut buf, offset)?;
    Ok(buf)
}

#[cfg(not(unix))]
fn read_at(_: &File, _: u64, _: usize) -> std::io::Result<Vec<u8>> {
    // Positioned reads are what make the cache cheap; elsewhere the catalog is parsed.
    Err(std::io::ErrorKind::Unsupported.into())
}

/// An open cache file: the header in memory, every table probed on demand.
#[derive(Debug)]
pub struct View {
    file: File,
    ranges: Ranges,
    machine_count: usize,
    body: u64,
    body_len: u64,
    tables: [(u64, u64); TABLES],
    tools: (u64, u64),
    broken: AtomicBool,
    all_tools: OnceLock<Vec<ToolEntry>>,
}

/// Opens the cache at `cache` for the catalog at `catalog`, if it is whole and current.
pub(super) fn open(cache: &Path, catalog: &Path) -> Result<View, Miss> {
    let file = File::open(cache).map_err(|_| Miss::Absent)?;
    let prefix = read_at(&file, 0, PREFIX as usize).map_err(|_| Miss::Corrupt)?;
    let mut d = Dec { buf: &prefix };
    if d.take(8) != Some(MAGIC) || d.u32() != Some(FORMAT) {
        return Err(Miss::Corrupt);
    }
    let header_len = d.u32().ok_or(Miss::Corrupt)?;
    let header = read_at(&file, PREFIX, header_len as usize).map_err(|_| Miss::Corrupt)?;
    if Sha256::digest(&header)[..] != *d.take(32).ok_or(Miss::Corrupt)? {
        return Err(Miss::Corrupt);
    }
    let mut d = Dec { buf: &header };
    let racy = d.u8().ok_or(Miss::Corrupt)? != 0;
    if d.str().as_deref() != Some(env!("CARGO_PKG_VERSION"))
        || d.bytes() != Some(&path_bytes(catalog)[..])
    {
        return Err(Miss::Stale);
    }
    let content: [u8; 32] = d
        .take(32)
        .ok_or(Miss::Corrupt)?
        .try_into()
        .map_err(|_| Miss::Corrupt)?;
    let count = d.u32().ok_or(Miss::Corrupt)?;
    let mut stored = Vec::new();
    for _ in 0..count {
        let path = d.bytes().ok_or(Miss::Corrupt)?.to_vec();
        let mut fields = [0i64; 7];
        for f in &mut fields {
            *f = d.u64().ok_or(Miss::Corrupt)? as i64;
        }
        stored.push(Stamp { path, fields });
    }
    let current = stamps(catalog).map_err(|_| Miss::Stale)?;
    if current != stored {
        return Err(Miss::Stale);
    }
    if racy {
        let sources = super::read_sources(catalog).map_err(|_| Miss::Stale)?;
        if content_hash(&sources) != content {
            return Err(Miss::Stale);
        }
        // The content is what the cache was built from; once the files are old enough
        // their stamps alone will prove it, so later calls need not read them.
        if !current.iter().any(|s| s.changed_since(SystemTime::now())) {
            let _ = restamp(cache, &file);
        }
    }
    let body_len = d.u64().ok_or(Miss::Corrupt)?;
    let body = PREFIX + u64::from(header_len);
    if file.metadata().map(|m| m.len()).ok() != Some(body + body_len) {
        return Err(Miss::Corrupt);
    }
    let domains = d.strs().ok_or(Miss::Corrupt)?;
    let networks = d
        .strs()
        .ok_or(Miss::Corrupt)?
        .iter()
        .map(|n| n.parse::<Cidr>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| Miss::Corrupt)?;
    let forge = match d.u8() {
        Some(0) => None,
        Some(1) => Some((d.str().ok_or(Miss::Corrupt)?, d.str().ok_or(Miss::Corrupt)?)),
        _ => return Err(Miss::Corrupt),
    };
    let syslog = match d.u8() {
        Some(0) => None,
        Some(1) => Some(d.str().ok_or(Miss::Corrupt)?),
        _ => return Err(Miss::Corrupt),
    };
    let machine_count = d.u64().ok_or(Miss::Corrupt)? as usize;
    let mut tables = [(0, 0); TABLES];
    for t in &mut tables {
        *t = (d.u64().ok_or(Miss::Corrupt)?, d.u64().ok_or(Miss::Corrupt)?);
        if !t.1.is_power_of_two() {
            return Err(Miss::Corrupt);
        }
    }
    let tools = (d.u64().ok_or(Miss::Corrupt)?, d.u64().ok_or(Miss::Corrupt)?);
    if !d.buf.is_empty() {
        return Err(Miss::Corrupt);
    }
    Ok(View {
        file,
        ranges: Ranges {
            domains,
            networks,
            forge,
            syslog,
        },
        machine_count,
        body,
        body_len,
        tables,
        tools,
        broken: AtomicBool::new(false),
        all_tools: OnceLock::new(),
    })
}

/// Rewrites the cache with its racy mark cleared (the header's first byte).
fn restamp(cache: &Path, file: &File) -> std::io::Result<()> {
    let len = file.metadata()?.len() as usize;
    let mut bytes = read_at(file, 0, len)?;
    let header_len = u32::from_le_bytes(bytes[12..16].try_into().expect("four bytes")) as usize;
    let header = PREFIX as usize..PREFIX as usize + header_len;
    if header.end > bytes.len() {
        return Err(std::io::ErrorKind::InvalidData.into());
    }
    bytes[header.start] = 0;
    let digest = Sha256::digest(&bytes[header]);
    bytes[16..48].copy_from_slice(&digest);
    replace(cache, &bytes)
}

impl View {
    pub(super) fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Relaxed)
    }

    pub(super) fn ranges(&self) -> &Ranges {
        &self.ranges
    }

    pub(super) fn machine_count(&self) -> usize {
        self.machine_count
    }

    /// Marks the view broken and answers "nothing": the caller decides again without it.
    fn broke<T>(&self) -> Option<T> {
        self.broken.store(true, Ordering::Relaxed);
        None
    }

    /// Record `index` of a directory at `dir` (in the body), its check verified.
    fn record(&self, tag: u8, dir: u64, index: u64) -> Option<Vec<u8>> {
        let entry = read_at(
            &self.file,
            self.body + dir + index * DIR_ENTRY,
            DIR_ENTRY as usize,
        )
        .ok()
        .or_else(|| self.broke())?;
        let mut d = Dec { buf: &entry };
        let (at, len) = (d.u64()?, u64::from(d.u32()?));
        // A damaged offset or length must not send the read (or its allocation) anywhere.
        if at.checked_add(len).is_none_or(|end| end > self.body_len) {
            return self.broke();
        }
        let bytes = read_at(&self.file, self.body + at, len as usize)
            .ok()
            .or_else(|| self.broke())?;
        if check(tag, index, &bytes)[..] != *d.take(8)? {
            return self.broke();
        }
        Some(bytes)
    }

    fn find(&self, table: Table, key: &str) -> Option<Vec<u8>> {
        let (dir, count) = self.tables[table as usize];
        let bucket = self.record(table as u8, dir, fnv1a(key.as_bytes()) & (count - 1))?;
        let mut d = Dec { buf: &bucket };
        while !d.buf.is_empty() {
            let (Some(k), Some(v)) = (d.bytes(), d.bytes()) else {
                return self.broke();
            };
            if k == key.as_bytes() {
                return Some(v.to_vec());
            }
        }
        None
    }

    pub(super) fn string(&self, table: Table, key: &str) -> Option<String> {
        let value = self.find(table, key)?;
        String::from_utf8(value).ok().or_else(|| self.broke())
    }

    pub(super) fn module(&self, name: &str) -> Option<ModuleEntry> {
        let value = self.find(Table::Modules, name)?;
        let machines = Dec { buf: &value }.strs().or_else(|| self.broke())?;
        Some(ModuleEntry {
            name: name.to_string(),
            machines,
        })
    }

    pub(super) fn tool_ids(&self, word: &str) -> Vec<u32> {
        let Some(value) = self.find(Table::ToolWords, word) else {
            return Vec::new();
        };
        let mut d = Dec { buf: &value };
        let ids = d
            .u32()
            .and_then(|n| (0..n).map(|_| d.u32()).collect::<Option<Vec<_>>>());
        ids.or_else(|| self.broke()).unwrap_or_default()
    }

    pub(super) fn tool(&self, id: u32) -> Option<ToolEntry> {
        if u64::from(id) >= self.tools.1 {
            return self.broke();
        }
        let bytes = self.record(TOOLS_TAG, self.tools.0, u64::from(id))?;
        decode_tool(&bytes).or_else(|| self.broke())
    }

    pub(super) fn tools(&self) -> &[ToolEntry] {
        self.all_tools.get_or_init(|| {
            (0..self.tools.1 as u32)
                .map_while(|id| self.tool(id))
                .collect()
        })
    }
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

/// Where a cache that is current by its stamps says something else than the catalog
/// (`mesh-guard catalog check`): a name missing or answered differently, other ranges, a
/// different count of machines or tools. A forged cache would pass mesh names; the hook
/// trusts a current one, so the check compares every name the catalog holds.
pub(super) fn disagreement(view: &View, index: &Index) -> Option<String> {
    let machines = index
        .machine_by_name
        .iter()
        .find(|(k, i)| view.string(Table::Machines, k).as_deref() != Some(&index.machines[**i]));
    if let Some((name, _)) = machines {
        return Some(format!(
            "machine `{name}` is not answered as the catalog says"
        ));
    }
    for (table, map, what) in [
        (Table::Containers, &index.module_by_container, "container"),
        (Table::Units, &index.module_by_unit, "unit"),
    ] {
        if let Some((name, _)) = map
            .iter()
            .find(|(k, m)| view.string(table, k).as_deref() != Some(&index.modules[**m].name))
        {
            return Some(format!(
                "{what} `{name}` is not answered as the catalog says"
            ));
        }
    }
    if let Some(module) = index
        .modules
        .iter()
        .find(|m| view.module(&m.name).as_ref() != Some(*m))
    {
        return Some(format!(
            "module `{}` is not answered as the catalog says",
            module.name
        ));
    }
    if format!("{:?}", view.ranges()) != format!("{:?}", index.ranges) {
        return Some("its mesh domains, networks or forge differ from the catalog's".into());
    }
    if view.machine_count() != index.machines.len() || view.tools() != index.tools.as_slice() {
        return Some("its machines or tools differ from the catalog's".into());
    }
    if let Some((word, _)) = index
        .tool_words
        .iter()
        .find(|(w, ids)| view.tool_ids(w) != **ids)
    {
        return Some(format!(
            "the tools found by `{word}` differ from the catalog's"
        ));
    }
    view.is_broken()
        .then(|| "a part of it does not match its own checksum".to_string())
}
