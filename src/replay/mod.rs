//! Agents' session transcripts, found where each agent keeps them and read line by line in
//! bounded memory, for `mesh-guard replay` (decision 0061). The formats: `transcript`; the
//! counting and its forms: `tally`.

pub mod tally;
pub mod transcript;

use crate::hook::Agent;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use transcript::{FileState, Found};

/// A line longer than this is skipped unread (and counted as damaged): commands are short,
/// the long lines are tool outputs. It bounds the memory a transcript can make replay use.
pub const MAX_LINE: usize = 8 * 1024 * 1024;

/// Where an agent keeps its transcripts, and which files there are transcripts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub agent: Agent,
    pub dir: PathBuf,
}

/// The agents' own transcript directories under `home`, as each CLI places them (a variable
/// that moves an agent's home is followed: `var` reads the environment).
pub fn default_sources(home: &Path, var: impl Fn(&str) -> Option<PathBuf>) -> Vec<Source> {
    let under = |variable: &str, default: &str| var(variable).unwrap_or_else(|| home.join(default));
    vec![
        Source {
            agent: Agent::Claude,
            dir: under("CLAUDE_CONFIG_DIR", ".claude").join("projects"),
        },
        Source {
            agent: Agent::Codex,
            dir: under("CODEX_HOME", ".codex").join("sessions"),
        },
        Source {
            agent: Agent::Gemini,
            dir: home.join(".gemini/tmp"),
        },
        Source {
            agent: Agent::Copilot,
            dir: under("COPILOT_HOME", ".copilot").join("session-state"),
        },
    ]
}

/// Whether `path` is a transcript of `agent` by its name, in that agent's directory (any
/// agent's: `*.jsonl`).
fn named_like(agent: Option<Agent>, path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let jsonl = name.ends_with(".jsonl");
    match agent {
        Some(Agent::Codex) => jsonl && name.starts_with("rollout-"),
        Some(Agent::Gemini) => jsonl && name.starts_with("session-"),
        Some(Agent::Copilot | Agent::CopilotClaudeStyle) => name == "events.jsonl",
        Some(Agent::Claude | Agent::Cursor) | None => jsonl,
    }
}

/// What the walk meets: a transcript to read, or an entry it cannot read, with why.
pub enum Met<'a> {
    Transcript(&'a Path),
    Unreadable(&'a Path, String),
}

/// Every transcript under `path` in sorted order, given to `each` one at a time: the file
/// itself, or the `*.jsonl` files under a directory (only those `agent` names so, in an
/// agent's own directory). Only regular files are transcripts: a FIFO, a device or a socket
/// is never opened (one would block or never end), and is named when given or named like a
/// transcript. Every entry that cannot be read is named: a directory that cannot be listed,
/// a link that loops, a link back to a directory the walk is in. Links to directories are
/// followed, each directory read once. Returns how many transcripts it gave.
pub fn walk(path: &Path, agent: Option<Agent>, each: &mut dyn FnMut(Met)) -> u64 {
    let mut walk = Walk {
        agent,
        read: std::collections::HashSet::new(),
        open: Vec::new(),
        found: 0,
        each,
    };
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => walk.dir(path, &meta),
        Ok(meta) => walk.file(path, &meta, true),
        Err(e) => (walk.each)(Met::Unreadable(path, cannot(&e))),
    }
    walk.found
}

struct Walk<'f> {
    agent: Option<Agent>,
    /// Directories read, by device and inode: each is read once.
    read: std::collections::HashSet<(u64, u64)>,
    /// The directories the walk is in, outermost first: a link back to one is a loop.
    open: Vec<((u64, u64), PathBuf)>,
    found: u64,
    each: &'f mut dyn FnMut(Met),
}

impl Walk<'_> {
    fn file(&mut self, path: &Path, meta: &std::fs::Metadata, given: bool) {
        if meta.is_file() {
            if given || named_like(self.agent, path) {
                self.found += 1;
                (self.each)(Met::Transcript(path));
            }
        } else if given || named_like(self.agent, path) {
            let why = format!("{}, not a regular file: not opened", kind(meta));
            (self.each)(Met::Unreadable(path, why));
        }
    }

    fn dir(&mut self, path: &Path, meta: &std::fs::Metadata) {
        use std::os::unix::fs::MetadataExt;
        let id = (meta.dev(), meta.ino());
        if let Some((_, outer)) = self.open.iter().find(|(open, _)| *open == id) {
            let why = format!("a link back to {}: a loop, not followed", outer.display());
            (self.each)(Met::Unreadable(path, why));
            return;
        }
        if !self.read.insert(id) {
            return;
        }
        let listing = match std::fs::read_dir(path) {
            Ok(listing) => listing,
            Err(e) => {
                let why = format!("the directory cannot be read: {}", cannot(&e));
                (self.each)(Met::Unreadable(path, why));
                return;
            }
        };
        let mut entries = Vec::new();
        for entry in listing {
            match entry {
                Ok(entry) => entries.push(entry.path()),
                Err(e) => {
                    let why = format!("an entry cannot be read: {}", cannot(&e));
                    (self.each)(Met::Unreadable(path, why));
                }
            }
        }
        entries.sort();
        self.open.push((id, path.to_path_buf()));
        for entry in entries {
            // A link is followed to what it names; what it names decides.
            match std::fs::metadata(&entry) {
                Ok(meta) if meta.is_dir() => self.dir(&entry, &meta),
                Ok(meta) => self.file(&entry, &meta, false),
                // A dangling link is no transcript unless named like one; a loop of links
                // could have been anything.
                Err(e)
                    if named_like(self.agent, &entry)
                        || e.raw_os_error() == Some(libc::ELOOP)
                        || e.kind() == std::io::ErrorKind::PermissionDenied =>
                {
                    (self.each)(Met::Unreadable(&entry, cannot(&e)));
                }
                Err(_) => {}
            }
        }
        self.open.pop();
    }
}

/// Which files of a directory are `agent`'s transcripts, for "no transcript in …".
pub fn looked_for(agent: Option<Agent>) -> &'static str {
    match agent {
        Some(Agent::Codex) => "rollout-*.jsonl files, in it and below",
        Some(Agent::Gemini) => "session-*.jsonl files, in it and below",
        Some(Agent::Copilot | Agent::CopilotClaudeStyle) => "events.jsonl files, in it and below",
        Some(Agent::Claude | Agent::Cursor) | None => "*.jsonl files, in it and below",
    }
}

/// What a file that is not a regular one is, for the warning.
fn kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else {
        "not a file"
    }
}

/// An I/O error as the warning says it.
fn cannot(e: &std::io::Error) -> String {
    if e.raw_os_error() == Some(libc::ELOOP) {
        "a loop of symbolic links".to_string()
    } else {
        e.to_string()
    }
}

/// What reading one transcript came to.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Read1 {
    /// Some line was of a transcript this reads.
    pub recognised: bool,
    /// Lines that were not JSON, or too long.
    pub damaged: u64,
}

/// Reads the transcript at `path` line by line, giving each shell command to `each`. Opened
/// without blocking and checked once open: a file swapped for a FIFO or a device after the
/// walk looked is refused, not waited on or read for ever.
pub fn read(path: &Path, each: &mut dyn FnMut(Found)) -> std::io::Result<Read1> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!(
            "{}, not a regular file: not read",
            kind(&meta)
        )));
    }
    read_from(file, each)
}

pub fn read_from(source: impl Read, each: &mut dyn FnMut(Found)) -> std::io::Result<Read1> {
    let mut reader = BufReader::with_capacity(64 * 1024, source);
    let mut state = FileState::default();
    let mut damaged = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
            skip_line(&mut reader)?;
            damaged += 1;
            continue;
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        match serde_json::from_slice::<serde_json::Value>(text) {
            Ok(value) => transcript::commands(&value, &mut state)
                .into_iter()
                .for_each(&mut *each),
            Err(_) => damaged += 1,
        }
    }
    Ok(Read1 {
        recognised: state.recognised,
        damaged,
    })
}

/// Consumes the rest of a line too long to keep.
fn skip_line(reader: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(end) => {
                reader.consume(end + 1);
                return Ok(());
            }
            None => {
                let all = buf.len();
                reader.consume(all);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_past_the_bound_is_skipped_and_the_next_one_read() {
        let long = format!("{{\"x\":\"{}\"}}\n", "a".repeat(MAX_LINE + 10));
        let good = r#"{"type":"assistant","sessionId":"s","message":{"content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ssh atlas"}}]}}"#;
        let text = format!("{long}not json\n{good}\n");
        let mut found = Vec::new();
        let read = read_from(text.as_bytes(), &mut |f| found.push(f)).unwrap();
        assert_eq!(
            read,
            Read1 {
                recognised: true,
                damaged: 2
            }
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].command, "ssh atlas");
    }

    #[test]
    fn the_default_sources_follow_the_agents_variables() {
        let home = Path::new("/h");
        let var = |name: &str| (name == "CODEX_HOME").then(|| PathBuf::from("/c"));
        let dirs: Vec<PathBuf> = default_sources(home, var)
            .into_iter()
            .map(|s| s.dir)
            .collect();
        assert_eq!(
            dirs,
            [
                PathBuf::from("/h/.claude/projects"),
                PathBuf::from("/c/sessions"),
                PathBuf::from("/h/.gemini/tmp"),
                PathBuf::from("/h/.copilot/session-state"),
            ]
        );
    }
}
