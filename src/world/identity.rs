//! A file is the guard's by what it is, not by the name it is written through (decision
//! 0070): a hard link to a guard file is the guard file. Only a file with more than one name
//! can be written through another, so only such a file asks which the guard's are.

use super::World;
use std::collections::HashSet;
use std::path::Path;

/// Past this many entries under the guard's directories the look stops, and a file with
/// several names is taken for one of the guard's (it may be).
const MAX_ENTRIES: usize = 4096;
/// How deep under a guard directory files are looked for.
const MAX_DEPTH: usize = 8;

/// The device and inode of every guard file that has more than one name.
#[derive(Debug, Clone, Default)]
pub(super) struct Identities {
    linked: HashSet<(u64, u64)>,
    /// Whether every file under the guard's directories was looked at.
    complete: bool,
}

impl World {
    /// Whether `path` (links followed) is a file with other names, one of which is the
    /// guard's: writing it writes the guard's file.
    pub(super) fn is_guard_file_by_identity(&self, path: &Path) -> bool {
        let Some((id, links)) = identity(path) else {
            return false;
        };
        if links < 2 {
            return false;
        }
        let known = self.identities.get_or_init(|| self.linked_guard_files());
        known.linked.contains(&id) || !known.complete
    }

    fn linked_guard_files(&self) -> Identities {
        let mut found = Identities {
            complete: true,
            ..Identities::default()
        };
        let mut budget = MAX_ENTRIES;
        let mut seen_dirs: HashSet<(u64, u64)> = HashSet::new();
        for path in self.all_paths() {
            visit(path, 0, &mut budget, &mut seen_dirs, &mut found);
        }
        found
    }
}

fn visit(
    path: &Path,
    depth: usize,
    budget: &mut usize,
    seen_dirs: &mut HashSet<(u64, u64)>,
    found: &mut Identities,
) {
    if *budget == 0 {
        found.complete = false;
        return;
    }
    *budget -= 1;
    // Below the top, links are not followed: a link in a guard directory is its own entry.
    let meta = if depth == 0 {
        std::fs::metadata(path)
    } else {
        std::fs::symlink_metadata(path)
    };
    let Ok(meta) = meta else {
        return;
    };
    let (id, links) = id_of(&meta);
    if meta.is_file() {
        if links > 1 {
            found.linked.insert(id);
        }
        return;
    }
    if !meta.is_dir() || !seen_dirs.insert(id) {
        return;
    }
    if depth >= MAX_DEPTH {
        found.complete = false;
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        visit(&entry.path(), depth + 1, budget, seen_dirs, found);
        if !found.complete && *budget == 0 {
            return;
        }
    }
}

/// A file's device and inode, and how many names it has; `None` for what is not a
/// regular file (or is not there).
fn identity(path: &Path) -> Option<((u64, u64), u64)> {
    let meta = std::fs::metadata(path).ok()?;
    meta.is_file().then(|| id_of(&meta))
}

fn id_of(meta: &std::fs::Metadata) -> ((u64, u64), u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        ((meta.dev(), meta.ino()), meta.nlink())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        ((0, 0), 1)
    }
}
