//! Agents' session transcripts, found where each agent keeps them and read line by line in
//! bounded memory, for `mesh-guard replay` (decision 0061). The formats: `transcript`; the
//! counting and its forms: `tally`.

pub mod tally;
pub mod transcript;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use transcript::{FileState, Found};

/// A line longer than this is skipped unread (and counted as damaged): commands are short,
/// the long lines are tool outputs. It bounds the memory a transcript can make replay use.
pub const MAX_LINE: usize = 8 * 1024 * 1024;

/// Where an agent keeps its transcripts, and which files there are transcripts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub agent: &'static str,
    pub dir: PathBuf,
}

/// The agents' own transcript directories under `home`, as each CLI places them (a variable
/// that moves an agent's home is followed: `var` reads the environment).
pub fn default_sources(home: &Path, var: impl Fn(&str) -> Option<PathBuf>) -> Vec<Source> {
    let under = |variable: &str, default: &str| var(variable).unwrap_or_else(|| home.join(default));
    vec![
        Source {
            agent: "claude",
            dir: under("CLAUDE_CONFIG_DIR", ".claude").join("projects"),
        },
        Source {
            agent: "codex",
            dir: under("CODEX_HOME", ".codex").join("sessions"),
        },
        Source {
            agent: "gemini",
            dir: home.join(".gemini/tmp"),
        },
        Source {
            agent: "copilot",
            dir: under("COPILOT_HOME", ".copilot").join("session-state"),
        },
    ]
}

/// Whether `path` is a transcript of `agent` by its name, in that agent's directory.
fn named_like(agent: &str, path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let jsonl = name.ends_with(".jsonl");
    match agent {
        "codex" => jsonl && name.starts_with("rollout-"),
        "gemini" => jsonl && name.starts_with("session-"),
        "copilot" => name == "events.jsonl",
        _ => jsonl,
    }
}

/// Every transcript under `path` in sorted order, given to `each` one at a time: the file
/// itself, or the `*.jsonl` files under a directory (only those `agent` names so, in an
/// agent's own directory). Symbolic links to directories are not followed (no loops).
pub fn walk(path: &Path, agent: Option<&str>, each: &mut dyn FnMut(&Path)) -> std::io::Result<()> {
    if !std::fs::metadata(path)?.is_dir() {
        each(path);
        return Ok(());
    }
    let mut entries: Vec<(PathBuf, bool)> = std::fs::read_dir(path)?
        .filter_map(Result::ok)
        .map(|e| (e.path(), e.file_type().is_ok_and(|t| t.is_dir())))
        .collect();
    entries.sort();
    for (entry, is_dir) in entries {
        if is_dir {
            // A directory that cannot be read is left out, as `find` would go on.
            let _ = walk(&entry, agent, each);
        } else if named_like(agent.unwrap_or("any"), &entry) {
            each(&entry);
        }
    }
    Ok(())
}

/// What reading one transcript came to.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Read1 {
    /// Some line was of a transcript this reads.
    pub recognised: bool,
    /// Lines that were not JSON, or too long.
    pub damaged: u64,
}

/// Reads the transcript at `path` line by line, giving each shell command to `each`.
pub fn read(path: &Path, each: &mut dyn FnMut(Found)) -> std::io::Result<Read1> {
    read_from(std::fs::File::open(path)?, each)
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
