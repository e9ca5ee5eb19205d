//! Writing the cache: the index's tables, bucketed, written atomically (a temporary file
//! renamed over the old one).

use super::checksum::Checksum;
use super::codec::*;
use super::stamp::*;
use super::{DIR_ENTRY, FORMAT, MAGIC, PREFIX, TOOLS_TAG, Table};
use crate::catalog::Cidr;
use crate::catalog::index::Index;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// A hash table: a directory of `count` buckets, then the buckets, appended to `body`.
/// Returns where the directory starts (in the body) and the bucket count.
pub(crate) fn write_table(
    body: &mut Vec<u8>,
    tag: u8,
    mut entries: Vec<(&str, Vec<u8>)>,
) -> (u64, u64) {
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
pub(crate) fn write_records(
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

/// Writes the cache for `index` atomically: a temporary file in the same directory,
/// renamed over the old one, so a reader sees the old file or the new, never a mix, and
/// two hooks rebuilding at once each leave a whole file (the last rename wins).
pub(crate) fn write(
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
    h.strs(&index.ranges.modes.encoded());
    let (sources, machines): (Vec<String>, Vec<String>) =
        index.ranges.patterns.list.iter().cloned().unzip();
    h.strs(&sources);
    h.strs(&machines);
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
    file.extend_from_slice(&Checksum::new().bytes(&h.0).finish());
    file.extend_from_slice(&h.0);
    file.extend_from_slice(&body);
    replace(cache, &file)
}

/// Writes `bytes` to a fresh temporary file beside `path`, then renames it over `path`.
pub(crate) fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
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
