//! What an agent can plant for the next session changes nothing (decision 0059): the override
//! is honoured only when the operator signed it, whatever file put a value into the session's
//! environment, and no variable chooses a hook's catalog, record, system log or binary. No
//! file is scanned to know it: these cases plant values the way a startup file would, and
//! the hook never looks at the file.

mod common;
use common::grant;
use common::*;
use rusqlite::Connection;
use std::path::Path;

fn kinds_and_reasons(db: &Path) -> Vec<(String, String)> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT kind, reason FROM events ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Whatever file set it (a settings file's `env`, `.envrc`, `~/.tmux.conf`, a name built to
/// dodge a scan), a plain override reaches the hook as a plain value: unsigned, refused, and
/// recorded as an attempt. A grant the agent copied from its session is good only until its
/// expiry, and never on another host.
#[test]
fn a_planted_plain_override_or_a_copied_expired_grant_is_refused_and_recorded() {
    let op = grant::Operator::new("planted");
    let now = grant::now_ms();
    let expired = op.sign(
        &op.key,
        "mesh-guard-override",
        &grant::message("", &grant::host(), now - 7_200_000, now - 60_000),
    );
    let elsewhere = op.grant(&["--reason", "x", "--host", "build-9.example"]);
    for (planted, why) in [
        ("1", "not a signed grant"),
        ("incident 4711", "not a signed grant"),
        ("mg1.", "malformed"),
        (expired.as_str(), "expired"),
        (elsewhere.as_str(), "for the host build-9.example"),
    ] {
        let out = op.hook(Some(planted), "ssh atlas uptime");
        assert_eq!(out.code, 2, "{planted}");
        let message = claude_denial(&out.stdout);
        assert!(message.contains(why), "{planted}: {message}");
    }
    let rows = kinds_and_reasons(&op.db);
    assert_eq!(rows.len(), 5);
    assert!(
        rows.iter().all(|(kind, reason)| kind == "override-attempt"
            && reason.starts_with("override not honoured")),
        "{rows:?}"
    );
    // Ordinary work passes under a planted value: it is not even looked at.
    for command in ["ls -la", "cargo build", "cat ~/.bashrc", "git status"] {
        assert_eq!(op.hook(Some("1"), command).code, 0, "{command}");
    }
    assert_eq!(kinds_and_reasons(&op.db).len(), 5);
}

/// The account's home comes from the user database: `HOME`, `XDG_*` and the guard's own
/// variables, set in a session's environment, point a hook nowhere. Here each names an empty
/// catalog (which would let every command pass) and a record the agent could erase.
#[test]
fn home_xdg_and_the_guards_variables_do_not_move_a_hooks_files() {
    let dir = Scratch::new("planted-paths");
    let planted = dir.path("agent");
    for catalog in [
        "agent/.config/mesh-guard/catalog.toml",
        "agent/xdg/mesh-guard/catalog.toml",
        "agent/empty.toml",
    ] {
        dir.write(catalog, "version = 1\n");
    }
    let socket = dir.path("agent/log.sock");
    let log = std::os::unix::net::UnixDatagram::bind(&socket).unwrap();
    log.set_nonblocking(true).unwrap();
    let env: Vec<(&str, String)> = vec![
        ("HOME", planted.to_string_lossy().into_owned()),
        (
            "XDG_CONFIG_HOME",
            dir.path("agent/xdg").to_string_lossy().into_owned(),
        ),
        (
            "XDG_DATA_HOME",
            dir.path("agent/data").to_string_lossy().into_owned(),
        ),
        (
            "XDG_RUNTIME_DIR",
            dir.path("agent/run").to_string_lossy().into_owned(),
        ),
        (
            "MESH_GUARD_CATALOG",
            dir.path("agent/empty.toml").to_string_lossy().into_owned(),
        ),
        (
            "MESH_GUARD_DB",
            dir.path("agent/audit.db").to_string_lossy().into_owned(),
        ),
        (
            "MESH_GUARD_RULES",
            dir.path("agent/rules").to_string_lossy().into_owned(),
        ),
        ("MESH_GUARD_SYSLOG", format!("unix:{}", socket.display())),
    ];
    // The record is given on the command line, so this test writes none of the real
    // account's files; the catalog is left to the default, the account's.
    let db = dir.path("operator/audit.db");
    let out = run_env(
        &["--db", db.to_str().unwrap(), "hook"],
        &env,
        &bash_event("ssh atlas uptime"),
    );
    let home = std::fs::read_to_string("/etc/passwd")
        .unwrap()
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() > 5 && f[2] == unsafe { libc::getuid() }.to_string())
        .map(|f| f[5].to_string())
        .expect("this user in /etc/passwd");
    let default = Path::new(&home).join(".config/mesh-guard/catalog.toml");
    let message = if out.code == 2 {
        claude_denial(&out.stdout)
    } else {
        String::new()
    };
    assert!(
        !message.contains(planted.to_str().unwrap()),
        "no planted path: {message}"
    );
    if !default.exists() {
        assert_eq!(out.code, 2, "the account's catalog is missing: fail closed");
        assert!(
            message.contains(default.to_str().unwrap()),
            "the account's catalog, not a planted one: {message}"
        );
    }
    assert!(!dir.path("agent/audit.db").exists(), "no planted record");
    assert!(!dir.path("agent/data").exists());
    let mut buf = [0u8; 4096];
    assert!(
        log.recv(&mut buf).is_err(),
        "nothing sent to the planted log"
    );
    // A session-start under the same environment: the same.
    let out = run_env(
        &["--db", db.to_str().unwrap(), "session-start"],
        &env,
        br#"{"session_id":"s"}"#,
    );
    assert_eq!(out.code, 0);
    assert!(
        !out.stderr.contains(planted.to_str().unwrap()),
        "{}",
        out.stderr
    );
    assert!(!dir.path("agent/audit.db").exists());
}

/// The launcher runs a binary from its fixed places only: `MESH_GUARD_BIN` and `PATH`,
/// which a settings file's `env` could set to a program that passes everything, are not
/// read.
#[test]
fn the_launcher_runs_no_binary_a_variable_names() {
    let dir = Scratch::new("planted-bin");
    let fake = dir.write("agent/bin/mesh-guard", "#!/bin/sh\nexit 0\n");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let missing = dir.path("usr/local/bin/mesh-guard");
    let launcher = launcher_looking_in(&dir, &[&missing]);
    let run = || {
        let mut child = std::process::Command::new("/bin/sh")
            .arg(&launcher)
            .args(["hook", "--agent", "claude"])
            .env("MESH_GUARD_BIN", &fake)
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", fake.parent().unwrap().display()),
            )
            .env("HOME", dir.path("agent"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(&bash_event("ssh atlas uptime"))
            .unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, stdout) = run();
    assert_eq!(code, Some(2), "the planted binary was not run: {stdout}");
    assert!(claude_denial(&stdout).contains("not installed"), "{stdout}");
}

/// The launcher takes the account's home from the user database with the system's own tools:
/// a `getent` (or `id`, `awk`) planted earlier on the session's `PATH` cannot hand it a home
/// whose `~/.cargo/bin` holds a binary that passes everything.
#[test]
fn the_launcher_asks_no_tool_on_the_sessions_path_for_the_home() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Scratch::new("planted-getent");
    let marker = dir.path("fake-ran");
    let fake = dir.write(
        "fake-home/.cargo/bin/mesh-guard",
        &format!("#!/bin/sh\ntouch {}\nexit 0\n", marker.display()),
    );
    let lie = format!(
        "#!/bin/sh\necho \"x:x:0:0::{}:/bin/sh\"\n",
        dir.path("fake-home").display()
    );
    for tool in ["getent", "awk"] {
        dir.write(&format!("planted/{tool}"), &lie);
    }
    dir.write("planted/id", "#!/bin/sh\necho 0\n");
    for file in [
        fake.clone(),
        dir.path("planted/getent"),
        dir.path("planted/awk"),
        dir.path("planted/id"),
    ] {
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let launcher = launcher_looking_in(&dir, &[Path::new("~/.cargo/bin/mesh-guard")]);
    let out = std::process::Command::new("/bin/sh")
        .arg(&launcher)
        .args(["hook", "--agent", "claude"])
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", dir.path("planted").display()),
        )
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        !marker.exists(),
        "the launcher ran the binary under a home a planted tool gave: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}
