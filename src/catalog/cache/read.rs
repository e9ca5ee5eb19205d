//! Reading the cache: the header checked on open, each bucket probed with positioned reads.

use super::checksum::Checksum;
use super::codec::*;
use super::stamp::*;
use super::write::*;
use super::{DIR_ENTRY, FORMAT, MAGIC, Memo, Miss, PREFIX, TABLES, TOOLS_TAG, Table};
use crate::catalog::Cidr;
use crate::catalog::index::{Index, ModuleEntry, Patterns, Ranges, ToolEntry};
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

/// Reads up to this many bytes without asking the file's size first: a bucket or a header.
const SMALL_READ: usize = 64 * 1024;
/// Bytes of verified records one view keeps: a refusal's lookups fit many times over; a
/// scan of every key (a glob) reads on past it without keeping more.
const MEMO_BYTES: usize = 256 * 1024;

#[cfg(unix)]
pub(crate) fn read_at(file: &File, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    // A damaged file's lengths can say anything (a header of 4 GiB): past a small read, the
    // buffer is allocated only for bytes the file holds. Lookups stay one read each.
    if len > SMALL_READ {
        let size = file.metadata()?.len();
        if offset.checked_add(len as u64).is_none_or(|end| end > size) {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
    }
    let mut buf = vec![0; len];
    file.read_exact_at(&mut buf, offset)?;
    Ok(buf)
}

#[cfg(not(unix))]
pub(crate) fn read_at(_: &File, _: u64, _: usize) -> std::io::Result<Vec<u8>> {
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
    /// Records already read and verified: a refusal looks up the same buckets for its
    /// decision, its message and its "instead" ranking. Only whole, checked records are
    /// kept, so a damaged one is read (and found broken) every time, as without it. Kept
    /// in memory rather than mapped: a file cut short under a mapping would kill the hook.
    memo: Mutex<Memo>,
}

/// Opens the cache at `cache` for the catalog at `catalog`, if it is whole and current;
/// `seen`: the catalog's metadata if the caller took it before reading any of it.
pub(crate) fn open(
    cache: &Path,
    catalog: &Path,
    seen: Option<&std::fs::Metadata>,
) -> Result<View, Miss> {
    let file = File::open(cache).map_err(|_| Miss::Absent)?;
    let prefix = read_at(&file, 0, PREFIX as usize).map_err(|_| Miss::Corrupt)?;
    let mut d = Dec { buf: &prefix };
    if d.take(8) != Some(MAGIC) || d.u32() != Some(FORMAT) {
        return Err(Miss::Corrupt);
    }
    let header_len = d.u32().ok_or(Miss::Corrupt)?;
    let header = read_at(&file, PREFIX, header_len as usize).map_err(|_| Miss::Corrupt)?;
    if Checksum::new().bytes(&header).finish()[..] != *d.take(8).ok_or(Miss::Corrupt)? {
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
    let current = stamps_seen(catalog, seen).map_err(|_| Miss::Stale)?;
    if current != stored {
        return Err(Miss::Stale);
    }
    if racy {
        let sources = crate::catalog::read_sources(catalog).map_err(|_| Miss::Stale)?;
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
    let modes = crate::catalog::Modes::decoded(&d.strs().ok_or(Miss::Corrupt)?);
    let modes = modes.ok_or(Miss::Corrupt)?;
    let sources = d.strs().ok_or(Miss::Corrupt)?;
    let machines = d.strs().ok_or(Miss::Corrupt)?;
    if sources.len() != machines.len() {
        return Err(Miss::Corrupt);
    }
    let patterns = Patterns::new(sources.into_iter().zip(machines).collect());
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
            patterns,
            modes,
        },
        machine_count,
        body,
        body_len,
        tables,
        tools,
        broken: AtomicBool::new(false),
        all_tools: OnceLock::new(),
        memo: Mutex::new(Memo::sized()),
    })
}

/// Rewrites the cache with its racy mark cleared (the header's first byte).
pub(crate) fn restamp(cache: &Path, file: &File) -> std::io::Result<()> {
    let len = file.metadata()?.len() as usize;
    let mut bytes = read_at(file, 0, len)?;
    let header_len = u32::from_le_bytes(bytes[12..16].try_into().expect("four bytes")) as usize;
    let header = PREFIX as usize..PREFIX as usize + header_len;
    if header.end > bytes.len() {
        return Err(std::io::ErrorKind::InvalidData.into());
    }
    bytes[header.start] = 0;
    let sum = Checksum::new().bytes(&bytes[header]).finish();
    bytes[16..PREFIX as usize].copy_from_slice(&sum);
    replace(cache, &bytes)
}

impl View {
    pub(crate) fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Relaxed)
    }

    pub(crate) fn ranges(&self) -> &Ranges {
        &self.ranges
    }

    pub(crate) fn machine_count(&self) -> usize {
        self.machine_count
    }

    /// Marks the view broken and answers "nothing": the caller decides again without it.
    pub(crate) fn broke<T>(&self) -> Option<T> {
        self.broken.store(true, Ordering::Relaxed);
        None
    }

    /// Record `index` of a directory at `dir` (in the body), its check verified.
    pub(crate) fn record(&self, tag: u8, dir: u64, index: u64) -> Option<Vec<u8>> {
        let key = (tag, dir, index);
        let kept = self
            .memo
            .lock()
            .ok()
            .and_then(|m| m.records.get(&key).cloned());
        if kept.is_some() {
            return kept;
        }
        let bytes = self.read_record(tag, dir, index)?;
        if let Ok(mut memo) = self.memo.lock()
            && memo.bytes + bytes.len() <= MEMO_BYTES
        {
            memo.bytes += bytes.len();
            memo.records.insert(key, bytes.clone());
        }
        Some(bytes)
    }

    fn read_record(&self, tag: u8, dir: u64, index: u64) -> Option<Vec<u8>> {
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

    pub(crate) fn find(&self, table: Table, key: &str) -> Option<Vec<u8>> {
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

    /// Every key of a table, bucket by bucket (for a glob in a command: rare, and bounded
    /// by the table's size).
    pub(crate) fn keys(&self, table: Table) -> Vec<String> {
        let (dir, count) = self.tables[table as usize];
        let mut keys = Vec::new();
        for index in 0..count {
            let Some(bucket) = self.record(table as u8, dir, index) else {
                return keys;
            };
            let mut d = Dec { buf: &bucket };
            while !d.buf.is_empty() {
                let (Some(k), Some(_)) = (d.bytes(), d.bytes()) else {
                    return self.broke().unwrap_or(keys);
                };
                match String::from_utf8(k.to_vec()) {
                    Ok(k) => keys.push(k),
                    Err(_) => return self.broke().unwrap_or(keys),
                }
            }
        }
        keys.sort();
        keys
    }

    pub(crate) fn string(&self, table: Table, key: &str) -> Option<String> {
        let value = self.find(table, key)?;
        String::from_utf8(value).ok().or_else(|| self.broke())
    }

    pub(crate) fn module(&self, name: &str) -> Option<ModuleEntry> {
        let value = self.find(Table::Modules, name)?;
        let machines = Dec { buf: &value }.strs().or_else(|| self.broke())?;
        Some(ModuleEntry {
            name: name.to_string(),
            machines,
        })
    }

    pub(crate) fn tool_ids(&self, word: &str) -> Vec<u32> {
        let Some(value) = self.find(Table::ToolWords, word) else {
            return Vec::new();
        };
        let mut d = Dec { buf: &value };
        let ids = d
            .u32()
            .and_then(|n| (0..n).map(|_| d.u32()).collect::<Option<Vec<_>>>());
        ids.or_else(|| self.broke()).unwrap_or_default()
    }

    pub(crate) fn tool(&self, id: u32) -> Option<ToolEntry> {
        if u64::from(id) >= self.tools.1 {
            return self.broke();
        }
        let bytes = self.record(TOOLS_TAG, self.tools.0, u64::from(id))?;
        decode_tool(&bytes).or_else(|| self.broke())
    }

    pub(crate) fn tools(&self) -> &[ToolEntry] {
        self.all_tools.get_or_init(|| {
            (0..self.tools.1 as u32)
                .map_while(|id| self.tool(id))
                .collect()
        })
    }
}

/// Where a cache that is current by its stamps says something else than the catalog
/// (`mesh-guard catalog check`): a name missing or answered differently, other ranges, a
/// different count of machines or tools. A forged cache would pass mesh names; the hook
/// trusts a current one, so the check compares every name the catalog holds.
pub(crate) fn disagreement(view: &View, index: &Index) -> Option<String> {
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
        return Some("its mesh domains, networks, forge or modes differ from the catalog's".into());
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
