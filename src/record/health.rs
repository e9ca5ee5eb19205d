//! Why the record cannot be written, in the operator's words: read-only, no space, locked,
//! missing. SQLite's codes alone do not tell them apart (a full disk can come back as an I/O
//! error, a read-only mount as "unable to open"), so the file system is asked too: the hook's
//! stderr line and `doctor` name the same cause.

use super::RecordError;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Below this much free space for the record's user, a write of a row, its log and its anchor
/// may not fit: "no space".
const LOW_SPACE: u64 = 64 * 1024;

/// What stops the record from being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The file system is mounted read-only, or the file or its directory may not be written.
    ReadOnly,
    /// The file system holding it is full.
    NoSpace,
    /// Another writer holds the record's lock.
    Locked,
    /// The record's directory is missing and cannot be made.
    Missing,
    /// The file is damaged, or of a schema this version does not write.
    Damaged,
    /// None of these: SQLite's own words say it.
    Other,
}

impl Cause {
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::ReadOnly => "read-only",
            Cause::NoSpace => "no space",
            Cause::Locked => "locked",
            Cause::Missing => "missing",
            Cause::Damaged => "damaged",
            Cause::Other => "failed",
        }
    }

    /// What the operator does about it, without a host path (the agent reads it too).
    pub fn says(self) -> &'static str {
        match self {
            Cause::ReadOnly => {
                "its file system is read-only or its file or directory is not writable"
            }
            Cause::NoSpace => "the file system holding it has no space left",
            Cause::Locked => "another process held its lock past the timeout",
            Cause::Missing => "its directory is missing and could not be made",
            Cause::Damaged => "the file is damaged or of another schema",
            Cause::Other => "the write failed",
        }
    }
}

/// The cause of `error` at `db`: what SQLite said, checked against the file system.
pub fn cause_of(db: &Path, error: &RecordError) -> Cause {
    match error {
        RecordError::Busy { .. } => return Cause::Locked,
        RecordError::Corrupt { .. }
        | RecordError::NewerSchema { .. }
        | RecordError::NeedsMigration { .. } => return Cause::Damaged,
        _ => {}
    }
    if let Some(found) = look(db) {
        return found;
    }
    match error {
        RecordError::Full { .. } => Cause::NoSpace,
        RecordError::ReadOnly { .. } => Cause::ReadOnly,
        RecordError::Unavailable { .. } => Cause::Missing,
        _ => Cause::Other,
    }
}

/// What the file system says stops a write at `db`, without writing: a missing directory
/// whose nearest existing parent cannot take it, a read-only mount, a full one, a file or
/// directory this user may not write. `None` when nothing does.
pub fn look(db: &Path) -> Option<Cause> {
    let dir = db
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // The nearest directory that exists: the record's, or where it would be made.
    let mut existing = dir;
    while !existing.is_dir() {
        existing = match existing.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(parent) => parent,
            None => return Some(Cause::Missing),
        };
    }
    let blocked = match statvfs(existing) {
        Some((true, _)) => Some(Cause::ReadOnly),
        Some((false, free)) if free < LOW_SPACE => Some(Cause::NoSpace),
        _ if !writable(existing) => Some(Cause::ReadOnly),
        _ => None,
    };
    if existing != dir {
        // The hook makes a missing directory; one it cannot make is missing.
        return blocked.map(|_| Cause::Missing);
    }
    if blocked.is_some() {
        return blocked;
    }
    if db.exists() && !writable(db) {
        return Some(Cause::ReadOnly);
    }
    None
}

/// Whether the file system at `path` is read-only, and the bytes free to this user.
fn statvfs(path: &Path) -> Option<(bool, u64)> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed statvfs is valid; statvfs fills it from a NUL-terminated path.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated and `s` is a valid out-pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    let read_only = s.f_flag & libc::ST_RDONLY != 0;
    Some((
        read_only,
        (s.f_bavail as u64).saturating_mul(s.f_frsize as u64),
    ))
}

/// Whether this process may write `path` (the kernel's answer, which an immutable file or a
/// read-only mount changes even for root).
fn writable(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is NUL-terminated; access only reads it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// Whether the record at `db` can take a write now: what [`look`] finds, or a lock another
/// process holds (tried once more after a moment: a hook's own write is short). For `doctor`.
pub fn probe(db: &Path) -> Result<(), (Cause, String)> {
    if let Some(cause) = look(db) {
        return Err((cause, cause.says().to_string()));
    }
    if !db.is_file() {
        return Ok(());
    }
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = match rusqlite::Connection::open_with_flags(db, flags) {
        Ok(conn) => conn,
        Err(e) => {
            let error = RecordError::from_sqlite(db, &e);
            let cause = cause_of(db, &error);
            return Err((cause, error.detail()));
        }
    };
    let mut last = None;
    for _ in 0..3 {
        // Taken and given back at once: nothing is written.
        match conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK;") {
            Ok(()) => return Ok(()),
            Err(e) => last = Some(e),
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let error = RecordError::from_sqlite(db, &last.expect("tried"));
    Err((cause_of(db, &error), error.detail()))
}

thread_local! {
    /// Whether the system log took the event the last failed write lost: the stderr line
    /// says so. Per thread: in-process callers may run several hooks at once.
    static LOST_FORWARDED: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

pub(crate) fn lost_forwarded(taken: bool) {
    LOST_FORWARDED.with(|c| c.set(Some(taken)));
}

/// The hook's stderr line for an event that could not be recorded: the cause by name, where
/// the event went instead. No host path: the agent reads it too.
pub fn not_recorded_line(db: &Path, error: &RecordError) -> String {
    let cause = cause_of(db, error);
    let log = match LOST_FORWARDED.with(|c| c.take()) {
        Some(true) => "the system log has it in full, marked not recorded",
        Some(false) => "the system log could not be reached either",
        None => "it was sent to the system log",
    };
    format!(
        "mesh-guard: not recorded ({}): {error}: {}; {log}, and the next recorded row will note this gap. Operator: run `mesh-guard doctor`.",
        cause.as_str(),
        cause.says()
    )
}
