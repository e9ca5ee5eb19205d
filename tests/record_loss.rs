//! An event the record cannot take is not lost (issue 39, decision 0072): with a read-only
//! record, a full file system and a locked database, a would-refuse and a refusal each reach
//! the system log whole, marked not recorded; the stderr line names the cause; the next
//! write's gap row carries what was lost.
//!
//! The system log is a real datagram socket the test listens on (`[record] syslog =
//! "unix:…"`). The read-only and full file systems are a small tmpfs mounted in a private
//! mount namespace (`unshare --mount`, needs root), so nothing of the machine's mounts
//! changes; without root or `unshare` those two say so loudly and return.

mod common;

use common::{BIN, Scratch, bash_event, call_env, example_catalog, strs, with_paths};
use serde_json::Value;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The would-refuse (mesh-container in report mode) and the refusal the tests send.
const REPORTED: &str = "docker logs mesh-controller --tail 5";
const REFUSED: &str = "ssh atlas 'cat /etc/hostname'";

struct Setup {
    dir: Scratch,
    catalog: PathBuf,
    log: UnixDatagram,
}

fn setup(name: &str) -> Setup {
    let dir = Scratch::new(name);
    let socket = dir.path("log.sock");
    let log = UnixDatagram::bind(&socket).unwrap();
    log.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let mut text = std::fs::read_to_string(example_catalog()).unwrap();
    text.push_str(&format!(
        "\n[mode]\nmesh-container = \"report\"\n\n[record]\nsyslog = \"unix:{}\"\n",
        socket.display()
    ));
    let catalog = dir.write("catalog.toml", &text);
    Setup { dir, catalog, log }
}

impl Setup {
    /// Every message the log holds now.
    fn drain(&self) -> Vec<String> {
        self.log.set_nonblocking(true).unwrap();
        let mut out = Vec::new();
        let mut buf = vec![0u8; 256 * 1024];
        while let Ok(n) = self.log.recv(&mut buf) {
            out.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
        self.log.set_nonblocking(false).unwrap();
        out
    }

    fn rows(&self, db: &Path) -> Vec<Value> {
        let args = with_paths(&self.catalog, db, &["audit", "--format", "json"]);
        let out = call_env(&strs(&args), &[], b"");
        assert_eq!(out.code, 0, "{}", out.stderr);
        let mut rows: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
        rows.reverse();
        rows
    }
}

/// The lost event's copy in the log: whole, no id or hash, marked not recorded.
fn assert_whole_in_log(messages: &[String], kind: &str, command: &str, cause: &str) -> String {
    let shown = command.replace('"', "\\\"");
    let message = messages
        .iter()
        .find(|m| m.contains(&format!("command=\"{shown}\"")))
        .unwrap_or_else(|| panic!("{command} is not in the log: {messages:#?}"));
    for field in [
        "recorded=\"no\"".to_string(),
        format!("kind=\"{kind}\""),
        "session=\"sess-1\"".into(),
        "agent=\"claude\"".into(),
        "tool_use_id=\"toolu_1\"".into(),
        format!("not_recorded=\"{cause}"),
        " not-recorded lost=".into(),
    ] {
        assert!(message.contains(&field), "{field} in {message}");
    }
    assert!(
        !message.contains(" id=\""),
        "an unrecorded event has no row id: {message}"
    );
    if kind == "would-refuse" {
        assert!(message.contains("rule=\"mesh-container\""), "{message}");
        assert!(message.contains("target=\"mesh-controller\""), "{message}");
        assert!(message.contains("tools=\"[\\\"logs\\\"\\]\""), "{message}");
    } else {
        assert!(message.contains("rule=\"remote-access\""), "{message}");
        assert!(message.contains("target=\"atlas\""), "{message}");
    }
    let at = message.find("lost=\"").unwrap() + 6;
    message[at..at + 16].to_string()
}

/// The gap row written before `after`: names every lost event whole, by its key.
fn assert_gap_names(rows: &[Value], lost: &[(String, &str, &str)], cause: &str) {
    let gap = rows
        .iter()
        .find(|r| r["kind"] == "gap")
        .unwrap_or_else(|| panic!("no gap row: {rows:#?}"));
    let reason = gap["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!("{} event(s) could not be recorded", lost.len())),
        "{reason}"
    );
    let noted: Vec<Value> = reason
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(noted.len(), lost.len(), "{reason}");
    for ((key, kind, command), note) in lost.iter().zip(&noted) {
        assert_eq!(note["lost"], key.as_str(), "{note}");
        assert_eq!(note["kind"], *kind, "{note}");
        assert_eq!(note["command"], *command, "{note}");
        assert_eq!(note["session"], "sess-1", "{note}");
        assert_eq!(note["cause"], cause, "{note}");
        assert_eq!(note["system_log"], "sent", "{note}");
        assert!(!note["rule"].as_str().unwrap().is_empty(), "{note}");
    }
}

/// Runs in a private mount namespace with a 128 KiB tmpfs at `mnt`: `fault` breaks the record
/// at `mnt/rec/audit.db` (made by one hook first), the two hooks run, `mend` repairs it, a
/// third hook writes and the rows are printed. Gives the two hooks' stderr and exits, and the
/// rows. `None` where the namespace cannot be had.
fn in_namespace(s: &Setup, fault: &str, mend: &str) -> Option<(String, Vec<i32>, Vec<Value>)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("NOT CHECKED: mounting a tmpfs needs root");
        return None;
    }
    let mnt = s.dir.path("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let db = mnt.join("rec/audit.db");
    let events = s.dir.path("events");
    std::fs::create_dir_all(&events).unwrap();
    for (name, command) in [
        ("first", "ssh orion uptime"),
        ("a", REPORTED),
        ("b", REFUSED),
        ("after", "ssh vega uptime"),
    ] {
        std::fs::write(events.join(name), bash_event(command)).unwrap();
    }
    let hook = "\"$BIN\" --catalog \"$CATALOG\" --db \"$DB\" hook";
    let script = format!(
        "set -u
mount -t tmpfs -o size=128k tmpfs \"$MNT\" || exit 99
{hook} < \"$EV/first\" > /dev/null 2>&1
{fault}
{hook} < \"$EV/a\" > /dev/null 2> \"$OUT/a.err\"; echo $? > \"$OUT/a.code\"
{hook} < \"$EV/b\" > /dev/null 2> \"$OUT/b.err\"; echo $? > \"$OUT/b.code\"
{mend}
{hook} < \"$EV/after\" > /dev/null 2>&1
\"$BIN\" --catalog \"$CATALOG\" --db \"$DB\" audit --format json > \"$OUT/rows.json\"
"
    );
    let status = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .env("BIN", BIN)
        .env("CATALOG", &s.catalog)
        .env("DB", &db)
        .env("MNT", &mnt)
        .env("EV", &events)
        .env("OUT", s.dir.path(""))
        .status();
    match status {
        Ok(st) if st.code() == Some(99) => {
            eprintln!("NOT CHECKED: no tmpfs could be mounted here");
            return None;
        }
        Ok(st) => assert!(st.success(), "{st}"),
        Err(e) => {
            eprintln!("NOT CHECKED: unshare: {e}");
            return None;
        }
    }
    let read = |name: &str| std::fs::read_to_string(s.dir.path(name)).unwrap();
    let stderr = format!("{}{}", read("a.err"), read("b.err"));
    let codes = ["a.code", "b.code"]
        .map(|f| read(f).trim().parse().unwrap())
        .to_vec();
    let mut rows: Vec<Value> = serde_json::from_str(&read("rows.json")).unwrap();
    rows.reverse();
    Some((stderr, codes, rows))
}

fn check_lost(s: &Setup, stderr: &str, codes: &[i32], rows: &[Value], cause: &str) {
    // The would-refuse passes as designed, the refusal refuses, each unrecorded.
    assert_eq!(codes, [0, 2], "{stderr}");
    assert_eq!(
        stderr
            .matches(&format!("mesh-guard: not recorded ({cause})"))
            .count(),
        2,
        "{stderr}"
    );
    assert!(stderr.contains("the system log has it in full"), "{stderr}");
    let messages = s.drain();
    let a = assert_whole_in_log(&messages, "would-refuse", REPORTED, cause);
    let b = assert_whole_in_log(&messages, "refusal", REFUSED, cause);
    let kinds: Vec<&str> = rows.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["refusal", "gap", "refusal"], "{rows:#?}");
    assert_gap_names(
        rows,
        &[(a, "would-refuse", REPORTED), (b, "refusal", REFUSED)],
        cause,
    );
}

#[test]
fn a_read_only_record_loses_nothing() {
    let s = setup("loss-read-only");
    let Some((stderr, codes, rows)) = in_namespace(
        &s,
        "mount -o remount,ro \"$MNT\"",
        "mount -o remount,rw \"$MNT\"",
    ) else {
        return;
    };
    check_lost(&s, &stderr, &codes, &rows, "read-only");
}

#[test]
fn a_full_file_system_loses_nothing() {
    let s = setup("loss-full");
    let Some((stderr, codes, rows)) = in_namespace(
        &s,
        "dd if=/dev/zero of=\"$MNT/fill\" bs=1k > /dev/null 2>&1",
        "rm \"$MNT/fill\"",
    ) else {
        return;
    };
    check_lost(&s, &stderr, &codes, &rows, "no space");
}

#[test]
fn a_locked_record_loses_nothing() {
    let s = setup("loss-locked");
    let db = s.dir.path("audit.db");
    let hook = |command: &str| {
        let args = with_paths(&s.catalog, &db, &["hook"]);
        call_env(&strs(&args), &[], &bash_event(command))
    };
    assert_eq!(hook("ssh orion uptime").code, 2);
    s.drain();
    // Another writer holds the write lock through both hooks (each waits out its timeout).
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let a = hook(REPORTED);
    let b = hook(REFUSED);
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    assert_eq!(hook("ssh vega uptime").code, 2);
    let stderr = format!("{}{}", a.stderr, b.stderr);
    let rows = s.rows(&db);
    check_lost(&s, &stderr, &[a.code, b.code], &rows, "locked");
    // doctor names the same cause while the lock is held, and says whether the log answers.
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let args = with_paths(&s.catalog, &db, &["doctor"]);
    let doctor = call_env(&strs(&args), &[], b"");
    holder.execute_batch("ROLLBACK").unwrap();
    assert!(
        doctor.stdout.contains("cannot be written now (locked)"),
        "{}",
        doctor.stdout
    );
    assert!(
        doctor.stdout.contains("the system log answers"),
        "{}",
        doctor.stdout
    );
}

#[test]
fn a_record_whose_directory_cannot_be_made_is_named_missing() {
    let s = setup("loss-missing");
    // A file where the record's directory would be: it cannot be made.
    s.dir.write("blocked", "");
    let db = s.dir.path("blocked/rec/audit.db");
    let args = with_paths(&s.catalog, &db, &["hook"]);
    let out = call_env(&strs(&args), &[], &bash_event(REPORTED));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("mesh-guard: not recorded (missing)"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("/blocked"),
        "no host path: {}",
        out.stderr
    );
    assert_whole_in_log(&s.drain(), "would-refuse", REPORTED, "missing");
}
