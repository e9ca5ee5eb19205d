//! A write that failed leaves a note outside the record's directory (which may be missing or
//! unwritable), and the next write that succeeds records a `gap` row from it.
//!
//! The note sits in the temporary directory, keyed by the database path and the user: the agent
//! could delete it too; the system log holds the events themselves (decision 0011).

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::sha256::Sha256;

use super::{Event, RecordError};

/// At most this much of the notes is carried into the gap row.
const MAX_NOTE: usize = 4096;

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

/// Notes that `event` could not be recorded. Best effort: this runs when things are failing.
pub(crate) fn note(db: &Path, event: &Event, error: &RecordError) {
    let line = format!(
        "{} {} not recorded ({}): {}\n",
        crate::time::format_time(event.time_ms, true),
        event.kind,
        event.rule,
        error
    );
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(super::anchor::O_NOFOLLOW)
        .open(note_path(db))
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// The notes waiting to be recorded, if any.
pub(crate) fn pending(db: &Path) -> Option<String> {
    let text = std::fs::read_to_string(note_path(db)).ok()?;
    if text.trim().is_empty() {
        return None;
    }
    let count = text.lines().count();
    let mut kept: String = text.chars().take(MAX_NOTE).collect();
    if kept.len() < text.len() {
        kept.push('…');
    }
    Some(format!(
        "{count} event(s) could not be recorded before this row:\n{}",
        kept.trim_end()
    ))
}

pub(crate) fn clear(db: &Path) {
    let _ = std::fs::remove_file(note_path(db));
}
