//! Bounded reads of files the command will use. Every read ends quickly: only regular files,
//! opened non-blocking (a FIFO swapped in after the type check cannot stall the hook), at most
//! [`MAX_FILE_BYTES`] each and [`MAX_FILES`] per [`Reader`].

use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Files (and directory listings) one reader opens; a hook call uses one reader.
pub const MAX_FILES: usize = 64;
/// Entries one directory listing may hold before the glob is given up as unknown.
pub const MAX_DIR_ENTRIES: usize = 1024;

/// What reading one path gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    Text(String),
    /// No such file: the program would find nothing either.
    Absent,
    /// Present but not readable within the bounds (too large, not a regular file, binary,
    /// no permission, budget spent): its content is unknown.
    Unreadable,
}

/// Files the parsers may ask for. [`Reader`] reads the disk; tests give text from memory.
pub trait Files {
    fn read(&mut self, path: &str) -> Read;
    /// Paths matching a `glob(3)`-style pattern (`*`, `?`), sorted as glob sorts them, or
    /// `None` when the match cannot be listed exactly.
    fn glob(&mut self, pattern: &str) -> Option<Vec<String>>;
}

#[derive(Debug)]
pub struct Reader {
    budget: usize,
}

impl Default for Reader {
    fn default() -> Self {
        Reader { budget: MAX_FILES }
    }
}

impl Reader {
    fn spend(&mut self) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        true
    }

    fn list(&mut self, dir: &Path) -> Option<Vec<String>> {
        if !self.spend() {
            return None;
        }
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Some(vec![]),
            Err(_) => return None,
        };
        let mut names = Vec::new();
        for entry in entries {
            let name = entry.ok()?.file_name().into_string().ok()?;
            names.push(name);
            if names.len() > MAX_DIR_ENTRIES {
                return None;
            }
        }
        names.sort();
        Some(names)
    }
}

impl Files for Reader {
    fn read(&mut self, path: &str) -> Read {
        if !self.spend() {
            return Read::Unreadable;
        }
        read_bounded(Path::new(path))
    }

    fn glob(&mut self, pattern: &str) -> Option<Vec<String>> {
        if !pattern.starts_with('/') || pattern.contains('[') {
            return None;
        }
        let mut found = vec![PathBuf::from("/")];
        for part in pattern.split('/').filter(|part| !part.is_empty()) {
            let mut next = Vec::new();
            for base in &found {
                if !part.contains(['*', '?']) {
                    next.push(base.join(part));
                    continue;
                }
                for name in self.list(base)? {
                    // glob(3) does not let a wildcard match a leading dot.
                    if !name.starts_with('.') && crate::ondisk::pattern::wildcard(part, &name) {
                        next.push(base.join(name));
                    }
                }
            }
            found = next;
        }
        let found: Vec<String> = found
            .into_iter()
            .filter(|path| pattern.contains(['*', '?']) || path.exists())
            .map(|path| path.to_string_lossy().into_owned())
            .collect();
        Some(found)
    }
}

/// Reads one file within the bounds, following symlinks as the program would.
pub fn read_bounded(path: &Path) -> Read {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if matches!(error.kind(), std::io::ErrorKind::NotFound) => return Read::Absent,
        Err(error) if error.raw_os_error() == Some(libc::ENOTDIR) => return Read::Absent,
        Err(_) => return Read::Unreadable,
    };
    if !metadata.is_file() || metadata.len() > MAX_FILE_BYTES {
        return Read::Unreadable;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path);
    let Ok(file) = file else {
        return Read::Unreadable;
    };
    // The path may have changed between the check and the open.
    let size = match file.metadata() {
        Ok(opened) if opened.is_file() => opened.len(),
        _ => return Read::Unreadable,
    };
    let Ok(bytes) = read_up_to(&file, size, MAX_FILE_BYTES + 1) else {
        return Read::Unreadable;
    };
    if bytes.len() as u64 > MAX_FILE_BYTES
        || bytes.len() as u64 > MAX_FILE_BYTES
        || bytes.contains(&0)
    {
        return Read::Unreadable;
    }
    match String::from_utf8(bytes) {
        Ok(text) => Read::Text(text),
        Err(_) => Read::Unreadable,
    }
}

/// At most `limit` bytes of an open file whose `fstat` said `size`: a buffer of that size
/// (plus one, to see the end) makes a file one read and the read that sees its end, where
/// a buffer grown from empty took one read per doubling. A file that grew since is still
/// read on, up to `limit`.
pub fn read_up_to(mut file: &std::fs::File, size: u64, limit: u64) -> std::io::Result<Vec<u8>> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let first = usize::try_from(size).map_or(limit, |size| size.saturating_add(1).min(limit));
    let mut bytes = vec![0; first];
    let mut filled = 0;
    loop {
        if filled == bytes.len() {
            if bytes.len() >= limit {
                break;
            }
            let grown = bytes.len().saturating_mul(2).clamp(4096, limit);
            bytes.resize(grown, 0);
        }
        match file.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    bytes.truncate(filled);
    Ok(bytes)
}

/// The text of a script run by path (`bash x.sh`, `./x.sh`, `source x.sh`), relative paths
/// taken from `cwd`; `None` when it is absent or cannot be read within the bounds (the caller
/// then judges the script unknown).
pub fn read_script(path: &str, cwd: &Path) -> Option<String> {
    match read_bounded(&cwd.join(path)) {
        Read::Text(text) => Some(text),
        Read::Absent | Read::Unreadable => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_text_files_are_read_and_everything_else_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.sh");
        std::fs::write(&path, "ssh db\n").unwrap();
        assert_eq!(read_bounded(&path), Read::Text("ssh db\n".into()));
        assert_eq!(read_script("x.sh", dir.path()).as_deref(), Some("ssh db\n"));
        assert_eq!(read_bounded(&dir.path().join("none")), Read::Absent);
        assert_eq!(read_bounded(&path.join("below")), Read::Absent);
        assert_eq!(read_bounded(dir.path()), Read::Unreadable);
        std::fs::write(dir.path().join("bin"), b"\x7fELF\0\0").unwrap();
        assert_eq!(read_bounded(&dir.path().join("bin")), Read::Unreadable);
        let big = vec![b'a'; MAX_FILE_BYTES as usize + 1];
        std::fs::write(dir.path().join("big"), big).unwrap();
        assert_eq!(read_bounded(&dir.path().join("big")), Read::Unreadable);
    }

    #[test]
    fn a_sized_read_stops_at_the_limit_and_follows_a_file_that_grew() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![b'a'; 10_000]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // The size told is stale (the file grew after its fstat): the read goes on.
        assert_eq!(read_up_to(&file, 10, 1 << 20).unwrap().len(), 10_000);
        let file = std::fs::File::open(&path).unwrap();
        assert_eq!(read_up_to(&file, 10_000, 101).unwrap().len(), 101);
        let file = std::fs::File::open(&path).unwrap();
        assert_eq!(read_up_to(&file, 0, 0).unwrap().len(), 0);
        std::fs::write(&path, "").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        assert!(read_up_to(&file, 0, 5).unwrap().is_empty());
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        assert_eq!(read_bounded(&fifo), Read::Unreadable);
        // A symlink is followed, as the program would: to a FIFO still refused.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        assert_eq!(read_bounded(&link), Read::Unreadable);
        assert_eq!(read_script("link", dir.path()), None);
        assert_eq!(read_bounded(Path::new("/dev/zero")), Read::Unreadable);
    }

    #[test]
    fn the_budget_bounds_the_number_of_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "x").unwrap();
        let mut reader = Reader::default();
        let path = path.to_str().unwrap();
        for _ in 0..MAX_FILES {
            assert_eq!(reader.read(path), Read::Text("x".into()));
        }
        assert_eq!(reader.read(path), Read::Unreadable);
    }

    #[test]
    fn glob_lists_sorted_matches_without_dot_files() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b", "a", ".hidden", "c.conf"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let base = dir.path().to_str().unwrap();
        let mut reader = Reader::default();
        let all = reader.glob(&format!("{base}/*")).unwrap();
        let names: Vec<_> = all.iter().map(|p| p.rsplit('/').next().unwrap()).collect();
        assert_eq!(names, ["a", "b", "c.conf"]);
        assert_eq!(reader.glob(&format!("{base}/?.conf")).unwrap().len(), 1);
        assert_eq!(reader.glob(&format!("{base}/none/*")).unwrap().len(), 0);
        assert_eq!(reader.glob(&format!("{base}/a")).unwrap().len(), 1);
        assert_eq!(reader.glob(&format!("{base}/[ab]")), None);
    }
}
