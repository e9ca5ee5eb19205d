//! A write that failed leaves a note outside the record's directory (which may be missing or
//! unwritable), and the next write that succeeds records a `gap` row from it: the lost events
//! whole, bounded (decision 0072).
//!
//! The note sits in the user's runtime directory (else the temporary one), keyed by the
//! database path and the user: the agent can delete it, so it is not the evidence. The system
//! log is: every lost event goes there whole, marked not recorded, with the key the gap row
//! names it by, and `audit verify --log` reports a lost event no gap row names.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::sha256::Sha256;

use super::{Event, RecordError};

/// The gap row carries at most this many lost events whole (each field cut at
/// [`MAX_FIELD`] bytes); past them it counts the rest by kind. The system log has every one
/// in full.
pub const MAX_LOST_ROWS: usize = 32;
/// A lost event's field is cut at this many bytes in the gap row (a command can be megabytes).
pub const MAX_FIELD: usize = 4096;
/// Past this size the note keeps only each further event's time, kind and key: the notes of
/// a record that stays unwritable for days stay small.
const MAX_NOTE_FILE: u64 = 1024 * 1024;

fn note_path(db: &Path) -> PathBuf {
    side_path(db, "gap")
}

/// A small file of `what` about the record at `db`, kept outside its directory (which an agent
/// can hide or replace whole): in the user's runtime directory `/run/user/UID`, else `/tmp`,
/// named by the user and a digest of the database's absolute path.
pub(crate) fn side_path(db: &Path, what: &str) -> PathBuf {
    let absolute = std::path::absolute(db).unwrap_or_else(|_| db.to_path_buf());
    let digest = Sha256::digest(absolute.as_os_str().as_encoded_bytes());
    let key = super::chain::hex(&digest[..8]);
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    // The user's runtime directory is private to them; the shared temporary directory is the
    // fallback, where the note is opened without following links (below). Fixed places, not
    // XDG_RUNTIME_DIR or TMPDIR: no variable moves the record's side files (decision 0059).
    let base = Some(PathBuf::from(format!("/run/user/{uid}")))
        .filter(|d| d.is_dir())
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    base.join(format!("mesh-guard-{what}-{uid}-{key}"))
}

/// The key of a lost event, which its system-log copy (`LOST`) and its gap row both carry:
/// 16 hex digits of a digest of its time, kind, session, tool call and command.
pub(crate) fn lost_key(event: &Event) -> String {
    let mut text = Vec::new();
    for part in [
        event.time_ms.to_string().as_str(),
        event.kind.as_str(),
        &event.session_id,
        &event.tool_use_id,
        &event.command,
    ] {
        text.extend_from_slice(&(part.len() as u64).to_le_bytes());
        text.extend_from_slice(part.as_bytes());
    }
    super::chain::hex(&Sha256::digest(&text)[..8])
}

/// `text` cut at `max` bytes on a character boundary, the cut marked.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Notes that `event` could not be recorded (`cause`, `error`), and whether the system log
/// took it (`forwarded`): one JSON line, the whole row, for the gap row the next write adds.
/// Best effort: this runs when things are failing.
pub(crate) fn note(
    db: &Path,
    event: &Event,
    error: &RecordError,
    cause: &str,
    forwarded: &Result<(), super::forward::ForwardError>,
) {
    let path = note_path(db);
    let small = std::fs::symlink_metadata(&path).map_or(true, |m| m.len() < MAX_NOTE_FILE);
    let key = lost_key(event);
    let time = crate::time::format_time(event.time_ms, true);
    let line = if small {
        let f = |t: &str| cut(t, MAX_FIELD);
        serde_json::json!({
            "time": time, "kind": event.kind.as_str(), "lost": key,
            "cause": cause, "error": error.to_string(),
            "system_log": match forwarded { Ok(()) => "sent".to_string(), Err(e) => format!("not sent: {e}") },
            "agent": f(&event.agent), "session": f(&event.session_id),
            "tool_use_id": f(&event.tool_use_id), "cwd": f(&event.cwd),
            "command": f(&event.command), "rule": f(event.rule.as_str()), "target": f(&event.target),
            "tools": event.tools.iter().map(|t| f(t)).collect::<Vec<_>>(),
            "shape": f(&event.shape), "scope": f(&event.scope), "reason": f(&event.reason),
        })
    } else {
        serde_json::json!({"time": time, "kind": event.kind.as_str(), "lost": key, "cause": cause})
    };
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(super::anchor::O_NOFOLLOW)
        .open(path)
    {
        let _ = f.write_all(format!("{line}\n").as_bytes());
    }
}

/// The notes waiting to be recorded, as the gap row's reason: a first line that counts them,
/// then the first [`MAX_LOST_ROWS`] events whole, one JSON object a line, then the others
/// counted by kind.
pub(crate) fn pending(db: &Path) -> Option<String> {
    use std::io::BufRead;
    let file = std::fs::File::open(note_path(db)).ok()?;
    let mut kept = Vec::new();
    let mut rest: std::collections::BTreeMap<String, u64> = Default::default();
    let mut count = 0u64;
    // Bounded as it is read: a note is at most about MAX_NOTE_FILE plus one line.
    for line in std::io::BufReader::new(file)
        .split(b'\n')
        .map_while(Result::ok)
    {
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        count += 1;
        if kept.len() < MAX_LOST_ROWS {
            kept.push(cut(text, 16 * MAX_FIELD));
        } else {
            let kind = serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .and_then(|v| v["kind"].as_str().map(str::to_string))
                .unwrap_or_else(|| "unknown".into());
            *rest.entry(kind).or_default() += 1;
        }
    }
    if count == 0 {
        return None;
    }
    let mut out = format!(
        "{count} event(s) could not be recorded before this row (the system log has each whole, marked RECORDED=no, by its key `lost`):"
    );
    for line in kept {
        out.push('\n');
        out.push_str(&line);
    }
    if !rest.is_empty() {
        let counted: Vec<String> = rest.iter().map(|(k, n)| format!("{n} {k}")).collect();
        out.push_str(&format!(
            "\n… and {} more, not kept here (past {MAX_LOST_ROWS}): {}",
            count - MAX_LOST_ROWS as u64,
            counted.join(", ")
        ));
    }
    Some(out)
}

/// What one line of a gap row's reason (after its first) says of the lost events.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Accounted {
    /// One event, whole, by its key.
    Named(String),
    /// Events past the row's bound, counted by kind.
    Counted(Vec<(String, u64)>),
    Nothing,
}

/// Reads a line [`pending`] wrote.
pub(crate) fn accounted(line: &str) -> Accounted {
    if let Ok(note) = serde_json::from_str::<serde_json::Value>(line) {
        return match note["lost"].as_str() {
            Some(key) => Accounted::Named(key.to_ascii_lowercase()),
            None => Accounted::Nothing,
        };
    }
    let Some((_, counts)) = line
        .strip_prefix("… and ")
        .and_then(|rest| rest.rsplit_once("): "))
    else {
        return Accounted::Nothing;
    };
    Accounted::Counted(
        counts
            .split(", ")
            .filter_map(|c| {
                let (n, kind) = c.split_once(' ')?;
                Some((kind.to_string(), n.parse().ok()?))
            })
            .collect(),
    )
}

pub(crate) fn clear(db: &Path) {
    let _ = std::fs::remove_file(note_path(db));
}
