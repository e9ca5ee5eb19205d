//! Why the record could not be opened, read or written, told twice: once for the agent, once for the operator.
//!
//! `Display` ends up inside refusal messages, which the contract keeps free of host paths and
//! internal error text; `detail()` adds the path and SQLite's own words for the operator's stderr.

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong with the record; every variant keeps the database path and the underlying cause
/// for [`RecordError::detail`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordError {
    /// The database (or its directory) could not be created or opened.
    Unavailable { path: PathBuf, cause: String },
    /// The database can be read but not written (file mode, read-only open, immutable file).
    ReadOnly { path: PathBuf, cause: String },
    /// Another writer held the lock past the busy timeout.
    Busy { path: PathBuf, cause: String },
    /// The disk (or a size limit) is full.
    Full { path: PathBuf, cause: String },
    /// The file is not a database, or a damaged one, or holds rows this version cannot read.
    Corrupt { path: PathBuf, cause: String },
    /// The file was migrated by a newer mesh-guard; writing to it could break that version's rows.
    NewerSchema {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    /// The file is older than this version and was opened read-only, so it cannot be migrated.
    NeedsMigration {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    /// Any other failure.
    Failed { path: PathBuf, cause: String },
}

impl RecordError {
    /// Sorts a SQLite failure into the variant an operator can act on.
    pub(crate) fn from_sqlite(path: &Path, err: &rusqlite::Error) -> RecordError {
        use rusqlite::ErrorCode as C;
        let path = path.to_path_buf();
        let cause = err.to_string();
        match err.sqlite_error_code() {
            Some(C::ReadOnly) | Some(C::PermissionDenied) => RecordError::ReadOnly { path, cause },
            Some(C::DatabaseBusy) | Some(C::DatabaseLocked) => RecordError::Busy { path, cause },
            Some(C::DiskFull) | Some(C::TooBig) => RecordError::Full { path, cause },
            Some(C::DatabaseCorrupt) | Some(C::NotADatabase) => {
                RecordError::Corrupt { path, cause }
            }
            Some(C::CannotOpen) => RecordError::Unavailable { path, cause },
            _ => RecordError::Failed { path, cause },
        }
    }

    /// The database path this error is about.
    pub fn path(&self) -> &Path {
        match self {
            RecordError::Unavailable { path, .. }
            | RecordError::ReadOnly { path, .. }
            | RecordError::Busy { path, .. }
            | RecordError::Full { path, .. }
            | RecordError::Corrupt { path, .. }
            | RecordError::NewerSchema { path, .. }
            | RecordError::NeedsMigration { path, .. }
            | RecordError::Failed { path, .. } => path,
        }
    }

    /// The text for the operator: the safe text, the database path and the underlying cause.
    pub fn detail(&self) -> String {
        let path = self.path().display();
        match self {
            RecordError::Unavailable { cause, .. }
            | RecordError::ReadOnly { cause, .. }
            | RecordError::Busy { cause, .. }
            | RecordError::Full { cause, .. }
            | RecordError::Corrupt { cause, .. }
            | RecordError::Failed { cause, .. } => format!("{self} ({path}: {cause})"),
            RecordError::NewerSchema { .. } | RecordError::NeedsMigration { .. } => {
                format!("{self} ({path})")
            }
        }
    }
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Unavailable { .. } => f.write_str("the audit record could not be opened"),
            RecordError::ReadOnly { .. } => f.write_str("the audit record is read-only"),
            RecordError::Busy { .. } => {
                f.write_str("the audit record stayed locked by another writer past the timeout")
            }
            RecordError::Full { .. } => f.write_str("the disk holding the audit record is full"),
            RecordError::Corrupt { .. } => f.write_str("the audit record is damaged"),
            RecordError::NewerSchema { found, known, .. } => write!(
                f,
                "the audit record has schema {found}, newer than this mesh-guard knows ({known})"
            ),
            RecordError::NeedsMigration { found, known, .. } => write!(
                f,
                "the audit record has schema {found} and must be upgraded to {known} by a writer first"
            ),
            RecordError::Failed { .. } => f.write_str("the audit record could not be used"),
        }
    }
}

impl std::error::Error for RecordError {}
