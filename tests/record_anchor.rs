//! The record's anchors (issue 11's layer 3, issue 17): `audit verify` is not fooled by deleting
//! the newest rows or the whole file; each row is forwarded to the system log, and
//! `audit verify --log` names what the database lost; prune, export and file modes.

mod common;
use common::grant;
use common::*;
use rusqlite::Connection;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::Path;

fn env(db: &Path, syslog: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "MESH_GUARD_CATALOG",
            example_catalog().to_string_lossy().into_owned(),
        ),
        ("MESH_GUARD_DB", db.to_string_lossy().into_owned()),
        ("MESH_GUARD_SYSLOG", syslog.to_string()),
    ]
}

/// The example catalog sending the record's copy to `syslog`, beside the record's
/// directory: a hook takes the target from its catalog, never its environment.
fn catalog_for(db: &Path, syslog: &str) -> std::path::PathBuf {
    let base = std::fs::read_to_string(example_catalog()).unwrap();
    let path = db.parent().unwrap().parent().unwrap().join("catalog.toml");
    std::fs::write(&path, format!("{base}\n[record]\nsyslog = {syslog:?}\n")).unwrap();
    path
}

fn hook(db: &Path, syslog: &str, command: &str) -> Output {
    let args = with_paths(&catalog_for(db, syslog), db, &["hook"]);
    run_env(&strs(&args), &[], &bash_event(command))
}

fn refuse(db: &Path, syslog: &str, command: &str) {
    let out = hook(db, syslog, command);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(!out.stderr.contains("not recorded"), "{}", out.stderr);
}

fn verify(db: &Path, log: Option<&Path>) -> Output {
    let mut args = vec!["audit", "verify"];
    let log = log.map(|l| l.to_string_lossy().into_owned());
    if let Some(l) = &log {
        args.extend(["--log", l]);
    }
    run_env(&args, &env(db, "none"), b"")
}

/// Deletes the newest row and lowers `sqlite_sequence` to match, as a careful forger would.
fn delete_newest(db: &Path) -> i64 {
    let conn = Connection::open(db).unwrap();
    let id: i64 = conn
        .query_row("SELECT MAX(id) FROM events", [], |r| r.get(0))
        .unwrap();
    conn.execute("DELETE FROM events WHERE id = ?1", [id])
        .unwrap();
    conn.execute(
        "UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'events'",
        [id - 1],
    )
    .unwrap();
    id
}

fn hashes(db: &Path) -> Vec<(i64, String)> {
    let conn = Connection::open(db).unwrap();
    let mut st = conn
        .prepare("SELECT id, lower(hex(hash)) FROM events ORDER BY id")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn deleting_the_newest_row_with_the_sequence_lowered_is_found_by_the_anchor() {
    let dir = Scratch::new("anchor-newest");
    let db = dir.path("rec/audit.db");
    for _ in 0..3 {
        refuse(&db, "none", "ssh atlas uptime");
    }
    assert_eq!(verify(&db, None).code, 0, "{}", verify(&db, None).stdout);
    let gone = delete_newest(&db);
    let out = verify(&db, None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout.contains(&format!("row {gone}")),
        "{}",
        out.stdout
    );
}

#[test]
fn deleting_the_database_file_is_found_by_the_anchor() {
    let dir = Scratch::new("anchor-file");
    let db = dir.path("rec/audit.db");
    refuse(&db, "none", "ssh atlas uptime");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let out = verify(&db, None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout.contains("database file is gone"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_rewritten_chain_differs_from_its_anchor() {
    let dir = Scratch::new("anchor-rewrite");
    let db = dir.path("rec/audit.db");
    refuse(&db, "none", "ssh atlas uptime");
    refuse(&db, "none", "ssh atlas uptime");
    // Replacing the file by a fresh record with as many rows: each row sound, the anchor not.
    let other = dir.path("other/audit.db");
    refuse(&other, "none", "ssh atlas hostname");
    refuse(&other, "none", "ssh atlas hostname");
    // The record is the database and its write-ahead log, kept between hooks (decision 0026):
    // the newest rows are in the log, so the swap takes both.
    for suffix in ["", "-wal"] {
        let from = format!("{}{suffix}", other.display());
        let to = format!("{}{suffix}", db.display());
        std::fs::copy(&from, &to).unwrap();
    }
    let _ = std::fs::remove_file(format!("{}-shm", db.display()));
    let out = verify(&db, None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.contains("rewritten"), "{}", out.stdout);
}

#[test]
fn an_unwritable_record_says_so_and_the_next_write_records_the_gap() {
    let dir = Scratch::new("anchor-gap");
    let db = dir.path("rec/audit.db");
    refuse(&db, "none", "ssh atlas uptime");
    // Hide the directory behind a file: even root cannot write under it.
    let hidden = dir.path("rec.hidden");
    std::fs::rename(dir.path("rec"), &hidden).unwrap();
    std::fs::write(dir.path("rec"), "").unwrap();
    let out = hook(&db, "none", "ssh atlas uptime");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("not recorded"), "{}", out.stderr);
    std::fs::remove_file(dir.path("rec")).unwrap();
    std::fs::rename(&hidden, dir.path("rec")).unwrap();
    refuse(&db, "none", "ssh atlas uptime");
    let conn = Connection::open(&db).unwrap();
    let kinds: Vec<String> = conn
        .prepare("SELECT kind FROM events ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(kinds, ["refusal", "gap", "refusal"]);
    // The gap row and the refusal are written in one append, their ids picked by the guard
    // (decision 0041): consecutive, each linked to the one before.
    assert_eq!(
        hashes(&db).iter().map(|(id, _)| *id).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(verify(&db, None).code, 0);
}

#[test]
fn each_row_is_forwarded_with_its_hash_and_verify_log_names_the_deleted_one() {
    let dir = Scratch::new("forward-unix");
    let db = dir.path("rec/audit.db");
    let socket = dir.path("log.sock");
    let server = UnixDatagram::bind(&socket).unwrap();
    server
        .set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let target = format!("unix:{}", socket.display());
    for cmd in [
        "ssh atlas uptime",
        "docker logs mesh-controller",
        "ssh atlas w",
    ] {
        refuse(&db, &target, cmd);
    }
    let mut log = String::new();
    let mut buf = vec![0u8; 65536];
    for _ in 0..3 {
        let n = server.recv(&mut buf).unwrap();
        log.push_str(&String::from_utf8_lossy(&buf[..n]));
        log.push('\n');
    }
    for (id, hash) in hashes(&db) {
        assert!(
            log.contains(&format!("id=\"{id}\"")) && log.contains(&hash),
            "row {id} {hash} not in\n{log}"
        );
    }
    let file = dir.write("syslog.txt", &log);
    assert_eq!(verify(&db, Some(&file)).code, 0);
    let gone = delete_newest(&db);
    let out = verify(&db, Some(&file));
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout.contains(&format!("row {gone} ")),
        "{}",
        out.stdout
    );
    // The anchor deleted too: the log still names the row.
    std::fs::remove_file(dir.path("rec/audit.db.anchor")).unwrap();
    let out = verify(&db, Some(&file));
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains(&format!("row {gone} ")),
        "{}",
        out.stdout
    );
}

#[test]
fn an_unreachable_log_is_noted_in_the_row_and_the_refusal_still_refuses() {
    let dir = Scratch::new("forward-down");
    let db = dir.path("rec/audit.db");
    let target = format!("unix:{}", dir.path("nobody.sock").display());
    refuse(&db, &target, "ssh atlas uptime");
    let conn = Connection::open(&db).unwrap();
    let note: String = conn
        .query_row("SELECT syslog FROM events", [], |r| r.get(0))
        .unwrap();
    assert!(note.contains("unreachable"), "{note}");
    // An override is still honoured: the SQLite row is what it waits for.
    let op = grant::Operator::new("forward-down-grant");
    let granted = op.grant(&["--reason", "incident"]);
    let catalog = std::fs::read_to_string(&op.catalog).unwrap();
    std::fs::write(
        &op.catalog,
        format!("{catalog}\n[record]\nsyslog = {target:?}\n"),
    )
    .unwrap();
    let out = op.hook(Some(&granted), "ssh atlas uptime");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let conn = Connection::open(&op.db).unwrap();
    let (kind, note): (String, String) = conn
        .query_row("SELECT kind, syslog FROM events", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(kind, "override");
    assert!(note.contains("unreachable"), "{note}");
}

#[test]
fn prune_leaves_a_checkpoint_that_keeps_verify_and_the_log_whole() {
    let dir = Scratch::new("prune");
    let db = dir.path("rec/audit.db");
    let socket = dir.path("log.sock");
    let server = UnixDatagram::bind(&socket).unwrap();
    server.set_nonblocking(true).unwrap();
    let target = format!("unix:{}", socket.display());
    for _ in 0..3 {
        refuse(&db, &target, "ssh atlas uptime");
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    let cut = chrono_free_now();
    refuse(&db, &target, "ssh atlas w");
    let mut e = env(&db, &target);
    e.push(("MESH_GUARD_SYSLOG", target.clone()));
    let out = run_env(&["audit", "prune", "--before", &cut], &e, b"");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("pruned 3 rows"), "{}", out.stdout);
    let mut log = String::new();
    let mut buf = vec![0u8; 65536];
    while let Ok(n) = server.recv(&mut buf) {
        log.push_str(&String::from_utf8_lossy(&buf[..n]));
        log.push('\n');
    }
    let file = dir.write("syslog.txt", &log);
    let out = verify(&db, Some(&file));
    assert_eq!(out.code, 0, "{}", out.stdout);
    // A log that did not see the prune does not excuse the rows it took.
    let unseen: String = log
        .lines()
        .filter(|l| !l.contains("checkpoint"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(unseen.len() < log.len());
    let out = verify(&db, Some(&dir.write("unseen.txt", &unseen)));
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout.contains("row 1 (refusal") && out.stdout.contains("not in the database"),
        "{}",
        out.stdout
    );
    let out = run_env(
        &["audit", "export", "--format", "jsonl", "--after", "3"],
        &env(&db, "none"),
        b"",
    );
    assert_eq!(out.code, 0);
    let lines: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["id"], 4);
    assert_eq!(lines[0]["command"], "ssh atlas w");
}

/// RFC 3339 for now, to the millisecond, without a date crate.
fn chrono_free_now() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    mesh_guard::audit::format_time(ms, true)
}

#[test]
fn the_record_is_private_to_its_user() {
    let dir = Scratch::new("modes");
    let db = dir.path("fresh/audit.db");
    refuse(&db, "none", "ssh atlas uptime");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir.path("fresh")), 0o700);
    for f in ["audit.db", "audit.db-wal", "audit.db.anchor"] {
        let p = dir.path(&format!("fresh/{f}"));
        if p.exists() {
            assert_eq!(mode(&p), 0o600, "{f}");
        }
    }
    // A record left world-readable is narrowed at the next write.
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    refuse(&db, "none", "ssh atlas uptime");
    assert_eq!(mode(&db), 0o600);
}

#[test]
fn the_catalog_record_table_sets_forwarding_and_rejects_unknown_keys() {
    let dir = Scratch::new("catalog-record");
    let base = std::fs::read_to_string(example_catalog()).unwrap();
    let good = dir.write(
        "good.toml",
        &format!("{base}\n[record]\nsyslog = \"udp://127.0.0.1:514\"\n"),
    );
    let catalog = mesh_guard::catalog::load(&good).unwrap();
    assert_eq!(catalog.syslog(), Some("udp://127.0.0.1:514"));
    for bad in [
        "[record]\nsyslog = \"udp://127.0.0.1:514\"\nspool = \"/x\"\n",
        "[record]\nsyslog = \"carrier-pigeon\"\n",
    ] {
        let file = dir.write("bad.toml", &format!("{base}\n{bad}"));
        let errors = mesh_guard::catalog::load(&file).unwrap_err();
        assert!(errors.iter().any(|e| e.line.is_some()), "{bad}: {errors:?}");
    }
}

#[test]
fn the_catalog_target_is_used_whatever_the_hooks_environment_says() {
    let dir = Scratch::new("catalog-target");
    let socket = dir.path("log.sock");
    let server = UnixDatagram::bind(&socket).unwrap();
    server
        .set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let base = std::fs::read_to_string(example_catalog()).unwrap();
    let catalog = dir.write(
        "catalog.toml",
        &format!("{base}\n[record]\nsyslog = \"unix:{}\"\n", socket.display()),
    );
    let db = dir.path("rec/audit.db");
    let out = run_env(
        &strs(&with_paths(&catalog, &db, &["hook"])),
        // The hook's environment chooses nothing (decision 0059).
        &[("MESH_GUARD_SYSLOG", "none".into())],
        &bash_event("ssh atlas uptime"),
    );
    assert_eq!(out.code, 2);
    let mut buf = vec![0u8; 65536];
    let n = server.recv(&mut buf).unwrap();
    let event = String::from_utf8_lossy(&buf[..n]);
    let (_, hash) = hashes(&db).pop().unwrap();
    assert!(event.contains(&hash), "{event}");
}

#[test]
fn a_stream_socket_receives_newline_framed_events() {
    use std::io::Read;
    let dir = Scratch::new("forward-stream");
    let socket = dir.path("stream.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let db = dir.path("rec/audit.db");
    refuse(
        &db,
        &format!("unix:{}", socket.display()),
        "ssh atlas uptime",
    );
    let (mut conn, _) = listener.accept().unwrap();
    let mut text = String::new();
    conn.read_to_string(&mut text).unwrap();
    let (id, hash) = hashes(&db).pop().unwrap();
    assert!(text.ends_with('\n'), "{text}");
    assert!(
        text.contains(&hash) && text.contains(&format!("id=\"{id}\"")),
        "{text}"
    );
}

#[test]
fn udp_and_tcp_targets_receive_the_event() {
    use std::io::Read;
    let dir = Scratch::new("forward-net");
    let db = dir.path("rec/audit.db");
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    refuse(
        &db,
        &format!("udp://{}", udp.local_addr().unwrap()),
        "ssh atlas uptime",
    );
    let mut buf = vec![0u8; 65536];
    let n = udp.recv(&mut buf).unwrap();
    let (_, hash) = hashes(&db).pop().unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).contains(&hash));

    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    refuse(
        &db,
        &format!("tcp://{}", tcp.local_addr().unwrap()),
        "ssh atlas uptime",
    );
    let (mut conn, _) = tcp.accept().unwrap();
    let mut text = String::new();
    conn.read_to_string(&mut text).unwrap();
    let (_, hash) = hashes(&db).pop().unwrap();
    // RFC 6587 octet counting: the length, a space, exactly that many bytes.
    let (len, msg) = text.split_once(' ').unwrap();
    assert_eq!(len.parse::<usize>().unwrap(), msg.len());
    assert!(msg.contains(&hash), "{msg}");
}

#[test]
fn hiding_the_directory_probing_and_restoring_it_shows_at_verify() {
    let dir = Scratch::new("anchor-hide");
    let db = dir.path("rec/audit.db");
    refuse(&db, "none", "ssh atlas uptime");
    refuse(&db, "none", "ssh atlas uptime");
    let hidden = dir.path("rec.hidden");
    std::fs::rename(dir.path("rec"), &hidden).unwrap();
    // The probe lands in a fresh record in a recreated directory...
    refuse(&db, "none", "ssh atlas hostname");
    // ...which is thrown away, and the old directory, its anchor included, put back.
    std::fs::remove_dir_all(dir.path("rec")).unwrap();
    std::fs::rename(&hidden, dir.path("rec")).unwrap();
    let out = verify(&db, None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.contains("second anchor"), "{}", out.stdout);
}

/// The record's files this process holds open.
fn held_open(db: &Path) -> usize {
    let name = db.to_string_lossy().into_owned();
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter(|target| target.to_string_lossy().starts_with(&name))
        .count()
}

/// A hook run in this process (`mesh_guard::run`, as a program embedding the guard would)
/// closes its record: only a hook process leaves the connection to its exit (decision 0042),
/// here no exit would come and each refusal would keep three files open.
#[test]
fn a_hook_run_in_process_closes_its_record() {
    let dir = Scratch::new("in-process-close");
    let db = dir.path("rec/audit.db");
    for _ in 0..3 {
        let args = with_paths(&catalog_for(&db, "none"), &db, &["hook"]);
        let out = call_env(&strs(&args), &[], &bash_event("ssh atlas uptime"));
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(!out.stderr.contains("not recorded"), "{}", out.stderr);
    }
    assert_eq!(hashes(&db).len(), 3);
    assert_eq!(held_open(&db), 0);
}
