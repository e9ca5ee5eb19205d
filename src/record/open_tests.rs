//! Tests of how the record is opened: the SQLite it is built with, the pragmas a hook's
//! connection runs under, the switch to WAL.

use super::tests::{header_says_wal, sample, write_schema_1};
use super::*;
/// The repository's `.cargo/config.toml` builds SQLite without what the record never uses
/// (decision 0047). Builds from this checkout (tests, `cargo install --path .`) read it; when
/// this fails, the configuration no longer reaches libsqlite3-sys's build and every refusal
/// pays for registering full-text search, R-tree and dbstat again.
#[test]
fn sqlite_is_built_without_the_extensions_the_record_never_uses() {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    let options: Vec<String> = conn
        .prepare("PRAGMA compile_options")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for unused in [
        "ENABLE_FTS3",
        "ENABLE_FTS5",
        "ENABLE_RTREE",
        "ENABLE_DBSTAT_VTAB",
    ] {
        assert!(
            !options.iter().any(|o| o == unused),
            "{unused} is compiled in: {options:?}"
        );
    }
    for wanted in [
        "DEFAULT_MEMSTATUS=0",
        "OMIT_LOAD_EXTENSION",
        "OMIT_JSON",
        "DEFAULT_PCACHE_INITSZ=0",
    ] {
        assert!(
            options.iter().any(|o| o == wanted),
            "{wanted} is missing: {options:?}"
        );
    }
}

fn pragma<T: rusqlite::types::FromSql>(store: &Store, name: &str) -> T {
    store
        .conn
        .pragma_query_value(None, name, |r| r.get(0))
        .unwrap()
}

/// A hook's connection syncs the log on every commit (`synchronous = FULL`) and is in WAL mode,
/// on a new file and on one already in WAL mode.
#[test]
fn the_hooks_connection_syncs_every_commit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    assert!(!header_says_wal(&path));
    for round in 0..2 {
        let mut store = Store::open(&path).unwrap();
        store
            .append(&sample(Kind::Refusal, &format!("ssh atlas {round}")))
            .unwrap();
        assert_eq!(
            pragma::<i64>(&store, "synchronous"),
            2,
            "FULL, round {round}"
        );
        assert_eq!(pragma::<String>(&store, "journal_mode"), "wal");
        assert!(header_says_wal(&path), "round {round}");
    }
}

/// A database in rollback-journal mode (as schema 1's tests and tools leave one) says so in
/// its header and is switched to WAL by the pragma; the header says WAL afterwards.
#[test]
fn a_rollback_journal_database_is_switched_to_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    write_schema_1(&path, &[sample(Kind::Refusal, "ssh atlas uptime")]);
    assert!(!header_says_wal(&path));
    let store = Store::open(&path).unwrap();
    assert_eq!(pragma::<String>(&store, "journal_mode"), "wal");
    assert!(header_says_wal(&path));
    // Switched back by hand, the header says so again, and the next open switches it anew.
    drop(store);
    let conn = Connection::open(&path).unwrap();
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "DELETE", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete");
    drop(conn);
    assert!(!header_says_wal(&path));
    let store = Store::open(&path).unwrap();
    assert_eq!(pragma::<String>(&store, "journal_mode"), "wal");
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 1 });
}
