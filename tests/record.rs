//! The record through its public API: what a row holds, concurrent writers, tampering, and the
//! ways a database can refuse to be written.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mesh_guard::record::{Breach, Event, Filter, Kind, RecordError, Store, Verification};
use rusqlite::Connection;

fn event(kind: Kind, session: &str, command: &str, time_ms: i64) -> Event {
    Event {
        time_ms,
        kind,
        agent: "claude".into(),
        session_id: session.into(),
        tool_use_id: "toolu_01".into(),
        cwd: "/home/ops/work".into(),
        user: "ops".into(),
        host: "seat-1".into(),
        command: command.into(),
        rule: mesh_guard::rule::Rule::RemoteAccess.into(),
        target: "atlas".into(),
        tools: vec!["mesh exec atlas".into(), "mesh logs controller".into()],
        shape: String::new(),
        reason: String::new(),
        scope: String::new(),
        signer: String::new(),
        grant_expires: String::new(),
    }
}

fn db(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("data").join("mesh-guard").join("audit.db")
}

/// A store holding `n` refusals, ids 1..=n.
fn store_with(dir: &tempfile::TempDir, n: i64) -> (Store, PathBuf) {
    let path = db(dir);
    let mut store = Store::open(&path).unwrap();
    for i in 1..=n {
        let id = store
            .append(&event(Kind::Refusal, "s", &format!("ssh atlas n{i}"), i))
            .unwrap();
        assert_eq!(id, i);
    }
    (store, path)
}

fn broken(id: i64, breach: Breach) -> Verification {
    Verification::Broken { id, breach }
}

#[test]
fn a_refusal_leaves_one_row_with_all_its_fields() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let mut store = Store::open(&path).unwrap();
    assert!(path.exists(), "parents and file are created");
    let mut e = event(
        Kind::Refusal,
        "9f1c2d3e-aaaa",
        "ssh atlas 'journalctl -u x'\nhostname",
        1_764_496_800_123,
    );
    e.shape = "ssh <machine> journalctl".into();
    e.reason = "reason, with \"quotes\"".into();
    let id = store.append(&e).unwrap();
    let rows = store.query(&Filter::default()).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].id, id);
    assert_eq!(rows[0].event, e);
    assert_eq!(rows[0].hash.len(), 64);
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 1 });

    let mode: String = Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn event_now_fills_time_user_and_host() {
    let before = mesh_guard::record::now_ms();
    let e = Event::now(Kind::SessionStart);
    assert!(e.time_ms >= before && e.time_ms - before < 60_000);
    assert_eq!(e.kind, Kind::SessionStart);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    if !host.trim().is_empty() {
        assert_eq!(e.host, host.trim());
    }
    if let Ok(user) = std::env::var("USER").or_else(|_| std::env::var("LOGNAME")) {
        assert_eq!(e.user, user);
    }
}

#[test]
fn kinds_have_stable_names() {
    for (k, s) in [
        (Kind::Refusal, "refusal"),
        (Kind::Override, "override"),
        (Kind::OverrideAttempt, "override-attempt"),
        (Kind::SessionStart, "session-start"),
    ] {
        assert_eq!(k.to_string(), s);
        assert_eq!(s.parse::<Kind>(), Ok(k));
    }
    assert!("Refusal".parse::<Kind>().is_err());
}

#[test]
fn sixty_four_threads_appending_at_once_leave_sixty_four_rows_and_an_intact_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let barrier = std::sync::Barrier::new(64);
    std::thread::scope(|s| {
        for t in 0..64 {
            let (path, barrier) = (&path, &barrier);
            s.spawn(move || {
                // Each thread opens its own connection, as each hook process does.
                barrier.wait();
                let mut store = Store::open(path).unwrap();
                store
                    .append(&event(Kind::Refusal, &format!("t{t}"), "ssh atlas", t))
                    .unwrap();
            });
        }
    });
    let store = Store::open(&path).unwrap();
    assert_eq!(store.query(&Filter::default()).unwrap().len(), 64);
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 64 });
}

const CHILD_DB: &str = "MESH_GUARD_TEST_CHILD_DB";

/// Not a test of its own: the body of each process `sixty_four_processes...` starts.
#[test]
fn child_appends_one_refusal() {
    let Some(path) = std::env::var_os(CHILD_DB).map(PathBuf::from) else {
        return;
    };
    let go = path.with_extension("go");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !go.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut store = Store::open(&path).unwrap();
    let e = event(
        Kind::Refusal,
        &std::process::id().to_string(),
        "ssh atlas",
        0,
    );
    store.append(&e).unwrap();
    // As the hook does (decision 0042): the exit, not a close, releases the connection, while
    // the other processes are still writing.
    store.leave_to_exit();
}

#[test]
fn sixty_four_processes_appending_at_once_leave_sixty_four_rows_and_an_intact_chain() {
    if std::env::var_os(CHILD_DB).is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..64)
        .map(|_| {
            Command::new(&exe)
                .args(["child_appends_one_refusal", "--exact", "--quiet"])
                .env(CHILD_DB, &path)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    // Released together, so they also race to create, switch to WAL and migrate the file.
    std::fs::write(path.with_extension("go"), "").unwrap();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let store = Store::open(&path).unwrap();
    let rows = store.query(&Filter::default()).unwrap();
    assert_eq!(rows.len(), 64);
    let mut sessions: Vec<_> = rows.iter().map(|r| r.event.session_id.clone()).collect();
    sessions.sort();
    sessions.dedup();
    assert_eq!(sessions.len(), 64, "one row from each process");
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 64 });
}

fn raw(path: &Path) -> Connection {
    Connection::open(path).unwrap()
}

#[test]
fn editing_a_row_is_found_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store_with(&dir, 5);
    raw(&path)
        .execute("UPDATE events SET command = 'ls' WHERE id = 3", [])
        .unwrap();
    assert_eq!(store.verify().unwrap(), broken(3, Breach::Edited));
}

#[test]
fn editing_a_hash_or_a_type_is_found_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store_with(&dir, 5);
    raw(&path)
        .execute("UPDATE events SET time_ms = 'x' WHERE id = 4", [])
        .unwrap();
    assert_eq!(store.verify().unwrap(), broken(4, Breach::Edited));
    raw(&path)
        .execute("UPDATE events SET hash = zeroblob(32) WHERE id = 2", [])
        .unwrap();
    assert_eq!(store.verify().unwrap(), broken(2, Breach::Edited));
}

#[test]
fn a_walk_over_many_batches_names_the_first_break_wherever_it_falls() {
    // `verify` reads rows in batches of 256 that a second thread hashes: a break on either side
    // of a batch's edge, or far past the batches first in flight, is named as in a short record.
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let mut store = Store::open(&path).unwrap();
    let command = |i: i64| format!("ssh atlas n{i}");
    store
        .append_bulk((1..=1300).map(|i| event(Kind::Refusal, "s", &command(i), i)))
        .unwrap();
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 1300 });
    for id in [1, 256, 257, 512, 513, 1299, 1300] {
        let set = |text: &str| {
            raw(&path)
                .execute(
                    "UPDATE events SET command = ?1 WHERE id = ?2",
                    rusqlite::params![text, id],
                )
                .unwrap()
        };
        set("ls");
        assert_eq!(store.verify().unwrap(), broken(id, Breach::Edited), "{id}");
        set(&command(id));
    }
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 1300 });
    // A stored hash of another length than SHA-256's.
    raw(&path)
        .execute("UPDATE events SET hash = X'01' WHERE id = 900", [])
        .unwrap();
    assert_eq!(store.verify().unwrap(), broken(900, Breach::Edited));
    raw(&path)
        .execute("DELETE FROM events WHERE id = 600", [])
        .unwrap();
    assert_eq!(store.verify().unwrap(), broken(601, Breach::DeletedBefore));
}

#[test]
fn records_that_end_at_a_batch_edge_verify_whole_and_name_their_lost_end() {
    for n in [0, 255, 256, 257, 512] {
        let dir = tempfile::tempdir().unwrap();
        let path = db(&dir);
        let mut store = Store::open(&path).unwrap();
        store
            .append_bulk((1..=n).map(|i| event(Kind::Refusal, "s", &format!("n{i}"), i)))
            .unwrap();
        assert_eq!(
            store.verify().unwrap(),
            Verification::Intact { rows: n as u64 },
            "{n}"
        );
        if n > 0 {
            raw(&path)
                .execute("DELETE FROM events WHERE id = ?1", [n])
                .unwrap();
            assert_eq!(
                store.verify().unwrap(),
                broken(n, Breach::DeletedAtEnd),
                "{n}"
            );
        }
    }
}

#[test]
fn views_read_every_row_in_order_and_stop_where_asked() {
    // Every row in order, newest or oldest first; a view that stops early; a row that cannot
    // be read.
    use std::ops::ControlFlow;
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let mut store = Store::open(&path).unwrap();
    store
        .append_bulk((1..=1300).map(|i| event(Kind::Refusal, "s", &format!("n{i}"), i)))
        .unwrap();
    let ids = |stop: usize, after: Option<i64>| {
        let mut seen = Vec::new();
        let each = |r: &mesh_guard::record::Row| {
            assert_eq!(r.event.command, format!("n{}", r.id));
            seen.push(r.id);
            if seen.len() == stop {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let read = match after {
            None => store.each_row(&Filter::default(), each),
            Some(after) => store.each_row_after(after, each),
        };
        (read.map_err(|e| e.to_string()), seen)
    };
    assert_eq!(ids(usize::MAX, None), (Ok(()), (1..=1300).rev().collect()));
    assert_eq!(ids(usize::MAX, Some(0)), (Ok(()), (1..=1300).collect()));
    assert_eq!(
        ids(usize::MAX, Some(1044)),
        (Ok(()), (1045..=1300).collect())
    );
    for stop in [1, 256, 257, 700] {
        assert_eq!(
            ids(stop, None),
            (Ok(()), (1..=1300).rev().take(stop).collect())
        );
    }
    // A row that cannot be read: the rows before it are shown, then the error, unless the view
    // stopped before it.
    raw(&path)
        .execute("UPDATE events SET tools = 'x' WHERE id = 700", [])
        .unwrap();
    let (read, seen) = ids(usize::MAX, None);
    assert!(read.is_err(), "{read:?}");
    assert_eq!(seen, (701..=1300).rev().collect::<Vec<_>>());
    assert_eq!(ids(600, None), (Ok(()), (701..=1300).rev().collect()));
    let (read, seen) = ids(usize::MAX, Some(0));
    assert!(read.is_err(), "{read:?}");
    assert_eq!(seen, (1..700).collect::<Vec<_>>());
}

#[test]
fn deleting_a_row_is_found_and_the_next_one_named() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store_with(&dir, 5);
    raw(&path)
        .execute("DELETE FROM events WHERE id = 3", [])
        .unwrap();
    assert_eq!(store.verify().unwrap(), broken(4, Breach::DeletedBefore));
}

#[test]
fn deleting_the_newest_row_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store_with(&dir, 5);
    raw(&path)
        .execute("DELETE FROM events WHERE id = 5", [])
        .unwrap();
    assert_eq!(store.verify().unwrap(), broken(5, Breach::DeletedAtEnd));
}

#[test]
fn inserting_a_row_in_the_middle_is_found_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store_with(&dir, 5);
    let conn = raw(&path);
    // Make room after row 2, then slip in a row that claims to follow it.
    conn.execute_batch(
        "UPDATE events SET id = id + 1000 WHERE id > 2;
         UPDATE events SET id = id - 999 WHERE id > 1000;
         INSERT INTO events (id, time_ms, kind, agent, session_id, tool_use_id, cwd, user, host,
             command, rule, target, tools, shape, reason, format, prev_hash, hash)
         SELECT 3, time_ms, kind, agent, session_id, tool_use_id, cwd, user, host,
             'harmless', rule, target, tools, shape, reason, format, hash, randomblob(32)
         FROM events WHERE id = 2;",
    )
    .unwrap();
    assert_eq!(store.verify().unwrap(), broken(3, Breach::Inserted));
}

#[test]
fn appending_after_tampering_keeps_the_break_visible() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, path) = store_with(&dir, 3);
    raw(&path)
        .execute("DELETE FROM events WHERE id = 3", [])
        .unwrap();
    store
        .append(&event(Kind::Refusal, "s", "ssh atlas", 9))
        .unwrap();
    assert_eq!(store.verify().unwrap(), broken(4, Breach::DeletedBefore));
}

fn ids(path: &Path) -> Vec<i64> {
    let conn = raw(path);
    let mut st = conn.prepare("SELECT id FROM events ORDER BY id").unwrap();
    st.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn highest_handed_out(path: &Path) -> i64 {
    raw(path)
        .query_row(
            "SELECT seq FROM sqlite_sequence WHERE name = 'events'",
            [],
            |r| r.get(0),
        )
        .unwrap()
}

/// The guard picks each row's id itself (decision 0041), as AUTOINCREMENT would: a row deleted
/// by hand does not give its id to the next row (which would hide the deletion from `verify`),
/// and `sqlite_sequence` keeps up with the ids written.
#[test]
fn ids_only_grow_after_the_newest_row_is_deleted_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, path) = store_with(&dir, 5);
    assert_eq!(highest_handed_out(&path), 5);
    raw(&path)
        .execute("DELETE FROM events WHERE id = 5", [])
        .unwrap();
    let next = store
        .append(&event(Kind::Refusal, "s", "ssh atlas", 6))
        .unwrap();
    assert_eq!(next, 6, "id 5 was handed out already");
    assert_eq!(ids(&path), [1, 2, 3, 4, 6]);
    assert_eq!(highest_handed_out(&path), 6);
    assert_eq!(store.verify().unwrap(), broken(6, Breach::DeletedBefore));
    // Twice over, from a fresh connection, as each hook opens one.
    raw(&path)
        .execute("DELETE FROM events WHERE id >= 4", [])
        .unwrap();
    drop(store);
    let mut store = Store::open(&path).unwrap();
    let next = store
        .append(&event(Kind::Refusal, "s", "ssh atlas", 7))
        .unwrap();
    assert_eq!(next, 7);
    assert_eq!(ids(&path), [1, 2, 3, 7]);
    assert_eq!(store.verify().unwrap(), broken(7, Breach::DeletedBefore));
}

/// Pruning replaces old rows by a checkpoint row that keeps the newest pruned id; appends after
/// it continue above every id ever written, and the chain verifies throughout, also when the
/// checkpoint is all that is left.
#[test]
fn ids_only_grow_across_prunes_and_the_chain_still_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, path) = store_with(&dir, 5);
    let mut off = mesh_guard::record::forward::Link::Off;
    let (checkpoint, pruned) = store.prune(4, &mut off).unwrap().unwrap();
    assert_eq!((checkpoint.id, pruned), (3, 3));
    assert_eq!(ids(&path), [3, 4, 5]);
    let next = store
        .append(&event(Kind::Refusal, "s", "ssh atlas", 6))
        .unwrap();
    assert_eq!(next, 6);
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 4 });
    // Everything pruned: the checkpoint row (id 6) is the whole record.
    let (checkpoint, _) = store.prune(100, &mut off).unwrap().unwrap();
    assert_eq!(checkpoint.id, 6);
    assert_eq!(ids(&path), [6]);
    drop(store);
    let mut store = Store::open(&path).unwrap();
    let mut written = Vec::new();
    for t in 200..203 {
        written.push(
            store
                .append(&event(Kind::Refusal, "s", "ssh atlas", t))
                .unwrap(),
        );
    }
    assert_eq!(written, [7, 8, 9]);
    assert_eq!(highest_handed_out(&path), 9);
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 4 });
}

#[test]
fn query_filters_by_kind_time_session_and_limit_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    for (kind, session, t) in [
        (Kind::SessionStart, "alpha-1", 100),
        (Kind::Refusal, "alpha-1", 200),
        (Kind::Override, "alpha-1", 300),
        (Kind::Refusal, "beta_%", 400),
        (Kind::OverrideAttempt, "beta_%", 500),
    ] {
        store.append(&event(kind, session, "cmd", t)).unwrap();
    }
    let ids = |f: Filter| -> Vec<i64> { store.query(&f).unwrap().iter().map(|r| r.id).collect() };
    assert_eq!(ids(Filter::default()), [5, 4, 3, 2, 1]);
    let kind = |k: &[Kind]| Filter {
        kinds: k.to_vec(),
        ..Filter::default()
    };
    assert_eq!(ids(kind(&[Kind::Refusal])), [4, 2]);
    assert_eq!(ids(kind(&[Kind::OverrideAttempt])), [5]);
    assert_eq!(
        ids(kind(&[Kind::Refusal, Kind::OverrideAttempt])),
        [5, 4, 2]
    );
    assert_eq!(
        ids(Filter {
            since_ms: Some(200),
            until_ms: Some(400),
            ..Filter::default()
        }),
        [4, 3, 2]
    );
    let session = |s: &str| Filter {
        session: Some(s.into()),
        ..Filter::default()
    };
    assert_eq!(ids(session("alpha-1")), [3, 2, 1]);
    assert_eq!(
        ids(session("alpha")),
        [3, 2, 1],
        "a prefix, as the table shows"
    );
    assert_eq!(ids(session("beta_")), [5, 4]);
    assert_eq!(ids(session("b_")), Vec::<i64>::new(), "no LIKE wildcards");
    assert_eq!(
        ids(Filter {
            limit: Some(2),
            ..Filter::default()
        }),
        [5, 4]
    );
}

#[test]
fn missing_counts_refusals_without_tools_by_shape() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    let none = |shape: &str, kind| {
        let mut e = event(kind, "s", "docker inspect c", 1);
        e.tools.clear();
        e.shape = shape.into();
        e
    };
    for e in [
        none("docker inspect <container>", Kind::Refusal),
        none("docker stats <container>", Kind::Refusal),
        none("docker inspect <container>", Kind::Refusal),
        none("docker inspect <container>", Kind::Override),
        event(Kind::Refusal, "s", "ssh atlas", 1),
    ] {
        store.append(&e).unwrap();
    }
    assert_eq!(
        store.missing().unwrap(),
        vec![
            ("docker inspect <container>".to_string(), 2, 0),
            ("docker stats <container>".to_string(), 1, 0),
        ]
    );
}

/// Error texts reach agents; the path must only be in `detail`.
fn assert_safe(err: &RecordError, path: &Path) {
    let shown = err.to_string();
    assert!(!shown.contains('/'), "no path in {shown:?}");
    assert!(err.detail().contains(&path.display().to_string()));
}

#[test]
fn a_read_only_open_refuses_to_append() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store_with(&dir, 1);
    drop(store);
    let mut ro = Store::open_read_only(&path).unwrap();
    assert_eq!(ro.query(&Filter::default()).unwrap().len(), 1);
    assert_eq!(ro.verify().unwrap(), Verification::Intact { rows: 1 });
    let err = ro.append(&event(Kind::Override, "s", "x", 2)).unwrap_err();
    assert!(matches!(err, RecordError::ReadOnly { .. }), "{err:?}");
    assert_safe(&err, &path);
}

/// Root ignores file modes, so an immutable file stands in for `chmod 0444`: SQLite falls back to
/// a read-only connection and the append must fail cleanly.
#[test]
fn an_unwritable_database_file_makes_append_fail() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store_with(&dir, 1);
    drop(store);
    struct Mutable<'a>(&'a Path);
    impl Drop for Mutable<'_> {
        fn drop(&mut self) {
            let _ = Command::new("chattr").arg("-i").arg(self.0).status();
            let mut perms = std::fs::metadata(self.0).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            let _ = std::fs::set_permissions(self.0, perms);
        }
    }
    let _restore = Mutable(&path);
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&path, perms).unwrap();
    let immutable = Command::new("chattr")
        .arg("+i")
        .arg(&path)
        .status()
        .is_ok_and(|s| s.success());
    let writable = std::fs::OpenOptions::new().write(true).open(&path).is_ok();
    if writable {
        eprintln!("skipped: this user can write a read-only file and chattr is unavailable");
        return;
    }
    let result = Store::open(&path).and_then(|mut s| s.append(&event(Kind::Override, "s", "x", 2)));
    let err = result.unwrap_err();
    assert!(
        matches!(err, RecordError::ReadOnly { .. }),
        "{err:?} (chattr: {immutable})"
    );
    assert_safe(&err, &path);
}

#[test]
fn a_directory_in_the_way_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    std::fs::create_dir(&path).unwrap();
    let err = Store::open(&path).err().unwrap();
    assert_safe(&err, &path);

    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let under_file = file.join("audit.db");
    let err = Store::open(&under_file).err().unwrap();
    assert!(matches!(err, RecordError::Unavailable { .. }), "{err:?}");
    assert_safe(&err, &under_file);
}

#[test]
fn a_file_that_is_not_a_database_is_reported_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    std::fs::write(&path, vec![b'z'; 8192]).unwrap();
    let err = Store::open(&path).err().unwrap();
    assert!(matches!(err, RecordError::Corrupt { .. }), "{err:?}");
    assert_safe(&err, &path);
}

#[test]
fn a_lock_held_past_the_timeout_makes_append_fail() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, path) = store_with(&dir, 1);
    store.set_busy_timeout(Duration::from_millis(100)).unwrap();
    let holder = raw(&path);
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let started = Instant::now();
    let err = store
        .append(&event(Kind::Override, "s", "x", 2))
        .unwrap_err();
    assert!(matches!(err, RecordError::Busy { .. }), "{err:?}");
    assert!(started.elapsed() >= Duration::from_millis(100));
    assert_safe(&err, &path);
    holder.execute_batch("ROLLBACK").unwrap();
    assert_eq!(
        store.append(&event(Kind::Override, "s", "x", 3)).unwrap(),
        2
    );
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 2 });
}

/// Each hook opens the record, appends and closes (decision 0026: no checkpoint on close).
/// The write-ahead log must not grow with the record: every open reads it whole, and an
/// earlier attempt let it reach 26 MB. Every row must still be there and the chain sound.
#[test]
fn the_write_ahead_log_stays_bounded_across_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let mut wal = path.clone().into_os_string();
    wal.push("-wal");
    let mut largest = 0;
    for i in 0..120 {
        let mut store = Store::open(&path).unwrap();
        store
            .append(&event(Kind::Refusal, "s", &format!("ssh atlas {i}"), i))
            .unwrap();
        drop(store);
        largest = largest.max(std::fs::metadata(&wal).map_or(0, |m| m.len()));
    }
    assert!(
        largest < 512 * 1024,
        "the write-ahead log reached {largest} bytes"
    );
    let store = Store::open_read_only(&path).unwrap();
    assert_eq!(store.rows_after(0).unwrap().len(), 120);
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 120 });
}
