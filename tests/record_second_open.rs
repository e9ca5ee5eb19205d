//! A second open of the record in one process must not drop the first connection's locks.
//! POSIX drops every lock a process holds on a file when any descriptor of it closes; an open
//! that read the database file through a descriptor of its own (as a header check once did)
//! left a connection the process already held without its SHARED lock, while SQLite, which
//! shares one file's locks between a process's connections, believed it still had it. Another
//! program's close then took itself for the last connection, checkpointed and deleted the log,
//! and the rows committed afterwards went to an unlinked log.

use std::process::Command;

use mesh_guard::record::{Event, Kind, Store};

fn event(command: &str) -> Event {
    Event {
        time_ms: 1_764_496_800_000,
        kind: Kind::Refusal,
        agent: "claude".into(),
        session_id: "s".into(),
        tool_use_id: "t".into(),
        cwd: "/w".into(),
        user: "ops".into(),
        host: "h".into(),
        command: command.into(),
        rule: mesh_guard::rule::Rule::RemoteAccess.into(),
        target: "atlas".into(),
        tools: vec![],
        shape: String::new(),
        reason: String::new(),
        scope: String::new(),
        signer: String::new(),
        grant_expires: String::new(),
    }
}

#[test]
fn a_second_open_in_a_process_keeps_the_first_connections_lock() {
    let Ok(out) = Command::new("python3")
        .arg("-c")
        .arg("import sqlite3")
        .output()
    else {
        panic!("this test needs python3 with its sqlite3 module, as the other program");
    };
    assert!(out.status.success());
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("audit.db");
    let mut first = Store::open(&db).unwrap();
    first.append(&event("ssh atlas 1")).unwrap();
    // The same process opens the record again while `first` is open.
    let mut second = Store::open(&db).unwrap();
    // Another program reads the record and closes, as an operator's tool would.
    let status = Command::new("python3")
        .arg("-c")
        .arg(
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); \
             c.execute('select count(*) from events').fetchall(); c.close()",
        )
        .arg(&db)
        .status()
        .unwrap();
    assert!(status.success());
    let id = second.append(&event("ssh atlas 2")).unwrap();
    drop(second);
    drop(first);
    let fresh = Store::open(&db).unwrap();
    let rows = fresh.rows_after(0).unwrap();
    assert_eq!(
        rows.len(),
        2,
        "append returned {id:?} but the row is gone: the other program deleted the log"
    );
}
