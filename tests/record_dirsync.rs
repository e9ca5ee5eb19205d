//! The record's write-ahead log is opened without a directory sync when it already exists, and
//! still created with one when it does not (decision 0028). Counted with `strace` over the real
//! hook: without strace the test says so loudly, and fails when `MESH_GUARD_E2E_REQUIRED=1`.

mod common;
use common::*;
use mesh_guard::record::{Store, Verification};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `strace`, or None after saying loudly that the test did not run.
fn strace() -> Option<()> {
    let usable = Command::new("strace")
        .args(["-qq", "-e", "trace=none", "/bin/true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if usable {
        return Some(());
    }
    let message = "record dirsync: strace missing or unable to trace (apt-get install strace) \
                   — the directory-sync test NOT run";
    if std::env::var("MESH_GUARD_E2E_REQUIRED").as_deref() == Ok("1") {
        panic!("{message} (MESH_GUARD_E2E_REQUIRED=1)");
    }
    // Straight to the process's stderr: libtest captures eprintln! of a passing test.
    let _ = writeln!(std::io::stderr(), "\n{message}\n");
    None
}

/// The `fsync`/`fdatasync` calls one run made, as the files they synced.
struct Syncs(Vec<String>);

impl Syncs {
    fn of(&self, path: &Path) -> usize {
        let want = format!("<{}>", path.display());
        self.0.iter().filter(|l| l.contains(&want)).count()
    }
}

/// Runs `mesh-guard ARGS` under strace with the record at `db`; its exit code and syncs.
fn traced(dir: &Scratch, db: &Path, args: &[&str], stdin: &[u8]) -> (i32, Syncs) {
    let log = dir.path("strace.log");
    let mut child = Command::new("strace")
        .args(["-f", "-y", "-qq", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(&log)
        .arg(BIN)
        .args(with_paths(&example_catalog(), db, args))
        .env_remove("MESH_GUARD_RULES")
        .env_remove("MESH_GUARD_OVERRIDE")
        .env_remove("MESH_GUARD_SYSLOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn strace");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let code = child.wait().unwrap().code().unwrap_or(-1);
    let lines = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| l.contains("sync("))
        .map(str::to_string)
        .collect();
    (code, Syncs(lines))
}

fn refusal(dir: &Scratch, db: &Path) -> Syncs {
    let (code, syncs) = traced(dir, db, &["hook"], &bash_event("ssh atlas uptime"));
    assert_eq!(code, 2, "a refusal");
    syncs
}

fn with_suffix(db: &Path, suffix: &str) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// A scratch directory and, in it, the record's directory, database and log, by their
/// resolved paths (strace names files so).
fn record_in(name: &str) -> (Scratch, PathBuf, PathBuf, PathBuf) {
    let scratch = Scratch::new(name);
    let dir = scratch.0.canonicalize().unwrap().join("record");
    let db = dir.join("audit.db");
    let wal = with_suffix(&db, "-wal");
    (scratch, dir, db, wal)
}

/// Empties the log the way decision 0026 tells an operator to: a plain SQLite connection,
/// whose close checkpoints and removes it.
fn empty_the_log(db: &Path, wal: &Path) {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    assert!(
        !wal.exists(),
        "the plain connection's close removed the log"
    );
}

#[test]
fn an_existing_log_is_opened_without_a_directory_sync_and_a_new_one_with_it() {
    if strace().is_none() {
        return;
    }
    let (scratch, dir, db, wal) = record_in("dirsync");

    let first = refusal(&scratch, &db);
    assert!(wal.exists(), "the first hook creates the log");
    assert!(
        first.of(&dir) >= 1,
        "a newly created log has its directory synced: {:?}",
        first.0
    );
    assert!(first.of(&wal) >= 1, "the commit is synced: {:?}", first.0);

    for _ in 0..3 {
        let next = refusal(&scratch, &db);
        assert_eq!(
            next.of(&dir),
            0,
            "the log exists: no directory sync: {:?}",
            next.0
        );
        assert!(
            next.of(&wal) >= 1,
            "the commit is still synced: {:?}",
            next.0
        );
    }

    // The operator empties the log the way decision 0026 says (a plain SQLite connection, whose
    // close checkpoints and removes the log); the next hook creates it again, and syncs its
    // directory again.
    empty_the_log(&db, &wal);
    let again = refusal(&scratch, &db);
    assert!(wal.exists());
    assert!(
        again.of(&dir) >= 1,
        "a log created again has its directory synced: {:?}",
        again.0
    );

    let store = Store::open_read_only(&db).unwrap();
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 5 });
}

/// A reader (`audit`) that finds no log creates one and never syncs anything; the hooks after it
/// skip the directory sync, so the reader's new log must have its name made durable at once.
#[test]
fn a_log_created_by_a_reader_has_its_directory_synced() {
    if strace().is_none() {
        return;
    }
    let (scratch, dir, db, wal) = record_in("dirsync-reader");
    refusal(&scratch, &db);
    empty_the_log(&db, &wal);

    let (code, read) = traced(&scratch, &db, &["audit"], b"");
    assert_eq!(code, 0, "audit reads the record");
    assert!(
        wal.exists(),
        "SQLite's reader creates a missing log (what this test is about)"
    );
    assert!(
        read.of(&dir) >= 1,
        "the reader created the log: its directory is synced: {:?}",
        read.0
    );
    let next = refusal(&scratch, &db);
    assert_eq!(next.of(&dir), 0, "the log exists now: {:?}", next.0);
}
