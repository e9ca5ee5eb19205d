//! Who can read the record: refused commands can hold secrets (a token in a `curl` header, a
//! password in a connection string), so the database, its WAL and shared-memory files and its
//! anchor are 0600, in a 0700 directory when the guard creates it.

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The record's own files: the database, SQLite's companions and the anchor.
fn files(db: &Path) -> Vec<PathBuf> {
    let with = |suffix: &str| {
        let mut name = db.file_name().map(|n| n.to_os_string()).unwrap_or_default();
        name.push(suffix);
        db.with_file_name(name)
    };
    vec![
        db.to_path_buf(),
        with("-wal"),
        with("-shm"),
        super::anchor::path_for(db),
    ]
}

fn dir_of(db: &Path) -> Option<&Path> {
    db.parent().filter(|d| !d.as_os_str().is_empty())
}

/// Creates the directory (0700) and the database file (0600) if missing, so SQLite's WAL and
/// shared-memory files, which copy the database's mode, start private too; narrows the files of
/// an existing record that are wider. A directory the operator chose is left as it is (it may be
/// shared): [`mode_findings`] reports it.
pub(crate) fn prepare(db: &Path) -> Result<(), PrepareError> {
    // One `stat` of the directory and one of the database serve both the creation and the
    // narrowing (each hook runs this): what is created here is private already.
    if let Some(dir) = dir_of(db) {
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => {
                if meta.permissions().mode() & 0o077 != 0 && holds_only_the_guards(dir, db) {
                    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
                }
            }
            _ => std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|cause| PrepareError {
                    dir: dir.to_path_buf(),
                    cause,
                })?,
        }
    }
    for f in files(db) {
        match std::fs::metadata(&f) {
            Ok(meta) if meta.permissions().mode() & 0o077 != 0 => {
                let _ = std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600));
            }
            Ok(_) => {}
            // A concurrent hook may create it first; either way it ends up 0600.
            Err(_) if f == db => {
                let _ = std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .mode(0o600)
                    .open(&f);
            }
            Err(_) => {}
        }
    }
    Ok(())
}

/// The record's directory could not be made.
#[derive(Debug)]
pub(crate) struct PrepareError {
    dir: std::path::PathBuf,
    cause: std::io::Error,
}

impl std::fmt::Display for PrepareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "creating {}: {}", self.dir.display(), self.cause)
    }
}

impl std::error::Error for PrepareError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.cause)
    }
}

/// Whether everything in `dir` is the record's or the catalog cache beside it: then the
/// directory is the guard's own (made by it, or by an earlier step of the same hook) and can be
/// narrowed without taking anything from anyone.
fn holds_only_the_guards(dir: &Path, db: &Path) -> bool {
    let Some(stem) = db.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().all(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        name.starts_with(stem) || name == "catalog-cache"
    })
}

/// Files of the record that others than its owner can read or write, for `doctor`: each says
/// what it is and its mode.
pub fn mode_findings(db: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(dir) = dir_of(db)
        && let Ok(meta) = std::fs::metadata(dir)
        && meta.permissions().mode() & 0o077 != 0
    {
        out.push(format!(
            "{} has mode {:o}: other users can list the record's files (0700 expected)",
            dir.display(),
            meta.permissions().mode() & 0o7777
        ));
    }
    for f in files(db) {
        if let Ok(meta) = std::fs::metadata(&f)
            && meta.permissions().mode() & 0o077 != 0
        {
            out.push(format!(
                "{} has mode {:o}: refused commands can hold secrets (0600 expected)",
                f.display(),
                meta.permissions().mode() & 0o7777
            ));
        }
    }
    out
}
