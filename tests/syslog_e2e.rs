//! The record's copy through a real rsyslogd (issue 17): refusals and an override run through the
//! hook with the catalog's `[record] syslog = "unix:<socket>"`, each event arrives with its row's hash, and after
//! the newest row is deleted `audit verify --log` exits 1 and names it.
//!
//! Needs `rsyslogd` (Debian package `rsyslog`, installed by `.ci/run`). Without it the test says so
//! loudly, and fails when `MESH_GUARD_E2E_REQUIRED=1`.

mod common;
use common::*;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn rsyslogd() -> Option<PathBuf> {
    ["/usr/sbin/rsyslogd", "/sbin/rsyslogd", "/usr/bin/rsyslogd"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// Kills the rsyslogd it started when the test ends, however it ends.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(bin: &Path, dir: &Scratch, socket: &Path, files: &[(&Path, Option<&str>)]) -> Daemon {
    let mut conf = format!(
        "global(workDirectory=\"{}\")\nmodule(load=\"imuxsock\" SysSock.Use=\"off\")\n\
         input(type=\"imuxsock\" Socket=\"{}\")\n",
        dir.0.display(),
        socket.display()
    );
    for (file, template) in files {
        match template {
            Some(t) => conf.push_str(&format!(
                "*.* action(type=\"omfile\" File=\"{}\" Template=\"{t}\")\n",
                file.display()
            )),
            None => conf.push_str(&format!(
                "*.* action(type=\"omfile\" File=\"{}\")\n",
                file.display()
            )),
        }
    }
    let conf_path = dir.write("rsyslog.conf", &conf);
    let child = Command::new(bin)
        .args(["-n", "-f"])
        .arg(&conf_path)
        .arg("-i")
        .arg(dir.path("rsyslogd.pid"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start rsyslogd");
    let daemon = Daemon(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "rsyslogd made no socket");
        std::thread::sleep(Duration::from_millis(20));
    }
    daemon
}

fn wait_for(file: &Path, lines: usize) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        if text.lines().filter(|l| l.contains("mesh-guard")).count() >= lines
            || Instant::now() > deadline
        {
            return text;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn rsyslog_receives_every_row_and_verify_log_names_the_deleted_one() {
    let Some(bin) = rsyslogd() else {
        let why = "rsyslogd not installed (apt-get install rsyslog)";
        if std::env::var("MESH_GUARD_E2E_REQUIRED").as_deref() == Ok("1") {
            panic!("syslog e2e: {why} and MESH_GUARD_E2E_REQUIRED=1");
        }
        eprintln!("\nsyslog e2e: {why} — test NOT run\n");
        return;
    };
    let dir = Scratch::new("syslog-e2e");
    let socket = dir.path("log.sock");
    let default_file = dir.path("messages");
    let rfc5424_file = dir.path("messages.5424");
    let _daemon = start(
        &bin,
        &dir,
        &socket,
        &[
            (&default_file, None),
            (&rfc5424_file, Some("RSYSLOG_SyslogProtocol23Format")),
        ],
    );
    // The operator's catalog names the system log the hooks forward to (a hook reads no
    // variable for it), and beside it the operator's allowed_signers.
    let op = common::grant::Operator::new("syslog-grant");
    let catalog = std::fs::read_to_string(&op.catalog).unwrap();
    std::fs::write(
        &op.catalog,
        format!(
            "{catalog}\n[record]\nsyslog = \"unix:{}\"\n",
            socket.display()
        ),
    )
    .unwrap();
    let granted = op.grant(&["--reason", "incident 42"]);
    let db = dir.path("rec/audit.db");
    let hook = with_paths(&op.catalog, &db, &["hook"]);
    for command in [
        "ssh atlas uptime",
        "docker logs mesh-controller",
        "journalctl -u mesh-controller",
    ] {
        let out = run_env(&strs(&hook), &[], &bash_event(command));
        assert_eq!(out.code, 2, "{}", out.stderr);
    }
    let out = run_env(
        &strs(&hook),
        &[("MESH_GUARD_OVERRIDE", granted)],
        &bash_event("ssh atlas uptime"),
    );
    assert_eq!(out.code, 0, "the override was not honoured: {}", out.stderr);
    let env = vec![
        (
            "MESH_GUARD_CATALOG",
            op.catalog.to_string_lossy().into_owned(),
        ),
        ("MESH_GUARD_DB", db.to_string_lossy().into_owned()),
        ("MESH_GUARD_SYSLOG", format!("unix:{}", socket.display())),
    ];

    let conn = Connection::open(&db).unwrap();
    let rows: Vec<(i64, String, String)> = conn
        .prepare("SELECT id, kind, lower(hex(hash)) FROM events ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    drop(conn);
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[3].1, "override");
    for file in [&default_file, &rfc5424_file] {
        let text = wait_for(file, rows.len());
        for (id, kind, hash) in &rows {
            assert!(
                text.lines()
                    .any(|l| l.contains(hash) && l.contains(&format!("id={id}"))
                        || l.contains(hash) && l.contains(&format!("id=\"{id}\""))),
                "row {id} ({kind}, {hash}) did not arrive in {}:\n{text}",
                file.display()
            );
        }
        let verify = run_env(
            &["audit", "verify", "--log", &file.to_string_lossy()],
            &env,
            b"",
        );
        assert_eq!(verify.code, 0, "{}{}", verify.stdout, verify.stderr);
    }

    // The newest row deleted, the sequence lowered and the anchor deleted too: only the
    // system log's copy still knows.
    let conn = Connection::open(&db).unwrap();
    conn.execute("DELETE FROM events WHERE id = 4", []).unwrap();
    conn.execute(
        "UPDATE sqlite_sequence SET seq = 3 WHERE name = 'events'",
        [],
    )
    .unwrap();
    drop(conn);
    std::fs::remove_file(dir.path("rec/audit.db.anchor")).unwrap();
    for file in [&default_file, &rfc5424_file] {
        let verify = run_env(
            &["audit", "verify", "--log", &file.to_string_lossy()],
            &env,
            b"",
        );
        assert_eq!(verify.code, 1, "{}", verify.stdout);
        assert!(
            verify.stdout.contains("row 4 (override"),
            "{}",
            verify.stdout
        );
    }
}
