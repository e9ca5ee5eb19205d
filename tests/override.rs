//! The operator's override and the record, through the hook (contract: the override, the record).

mod common;
use common::*;
use rusqlite::Connection;

fn env(dir: &Scratch, db: &std::path::Path, reason: Option<&str>) -> Vec<(&'static str, String)> {
    let _ = dir;
    let mut env = vec![
        (
            "MESH_GUARD_CATALOG",
            example_catalog().to_string_lossy().into_owned(),
        ),
        ("MESH_GUARD_DB", db.to_string_lossy().into_owned()),
    ];
    if let Some(reason) = reason {
        env.push(("MESH_GUARD_OVERRIDE", reason.to_string()));
    }
    env
}

fn rows(db: &std::path::Path) -> Vec<(String, String, String, String, String, String)> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT kind, session_id, tool_use_id, command, rule, reason FROM events ORDER BY id",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn a_refusal_leaves_one_row_with_the_contract_fields() {
    let dir = Scratch::new("refusal-row");
    let db = dir.path("audit.db");
    let out = run_env(
        &["hook"],
        &env(&dir, &db, None),
        &bash_event("docker logs mesh-gateway"),
    );
    assert_eq!(out.code, 2);
    let rows = rows(&db);
    assert_eq!(
        rows,
        vec![(
            "refusal".into(),
            "sess-1".into(),
            "toolu_1".into(),
            "docker logs mesh-gateway".into(),
            "mesh-container".into(),
            String::new()
        )]
    );
    let conn = Connection::open(&db).unwrap();
    let (agent, cwd, target, tools, time): (String, String, String, String, i64) = conn
        .query_row(
            "SELECT agent, cwd, target, tools, time_ms FROM events",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap();
    assert_eq!(
        (agent.as_str(), cwd.as_str(), target.as_str()),
        ("claude", "/tmp", "mesh-gateway")
    );
    assert!(tools.contains("logs"), "the tools named: {tools}");
    assert!(time > 1_700_000_000_000, "UTC milliseconds: {time}");
}

#[test]
fn an_override_passes_only_after_its_row_is_written() {
    let dir = Scratch::new("override");
    let db = dir.path("audit.db");
    let out = run_env(
        &["hook"],
        &env(&dir, &db, Some("incident 4711")),
        &bash_event("ssh atlas uptime"),
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);
    let rows = rows(&db);
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].0.as_str(), rows[0].4.as_str(), rows[0].5.as_str()),
        ("override", "remote-access", "incident 4711")
    );
    // An empty reason is no override.
    let out = run_env(
        &["hook"],
        &env(&dir, &db, Some("  ")),
        &bash_event("ssh atlas uptime"),
    );
    assert_eq!(out.code, 2);
}

#[test]
fn an_override_that_cannot_be_recorded_is_not_honoured() {
    let dir = Scratch::new("override-unrecordable");
    // A database path under a regular file cannot be created, even by root.
    let blocker = dir.write("not-a-dir", "");
    let db = blocker.join("audit.db");
    let out = run_env(
        &["hook"],
        &env(&dir, &db, Some("incident")),
        &bash_event("ssh atlas uptime"),
    );
    assert_eq!(out.code, 2);
    let message = claude_denial(&out.stdout);
    assert!(
        message.contains("override") && message.contains("not honoured"),
        "{message}"
    );
    // Without an override, the refusal still refuses, and says on stderr it was not recorded.
    let out = run_env(
        &["hook"],
        &env(&dir, &db, None),
        &bash_event("ssh atlas uptime"),
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("not recorded") && out.stderr.contains("directory"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_self_granted_override_is_refused_and_recorded_as_an_attempt() {
    let dir = Scratch::new("self-override");
    let db = dir.path("audit.db");
    for command in [
        "MESH_GUARD_OVERRIDE=1 ssh atlas",
        "export MESH_GUARD_OVERRIDE=x; ssh atlas",
        "env MESH_GUARD_OVERRIDE=y ls",
        "echo 'export MESH_GUARD_OVERRIDE=z' >> ~/.bashrc",
    ] {
        let out = run_env(&["hook"], &env(&dir, &db, None), &bash_event(command));
        assert_eq!(out.code, 2, "{command}");
        assert!(
            claude_denial(&out.stdout).contains("only they can override"),
            "{command}"
        );
    }
    assert!(
        rows(&db)
            .iter()
            .all(|r| r.0 == "override-attempt" && r.4 == "self-override")
    );
    // The operator's own override does not cover it.
    let out = run_env(
        &["hook"],
        &env(&dir, &db, Some("ops")),
        &bash_event("MESH_GUARD_OVERRIDE=1 ls"),
    );
    assert_eq!(out.code, 2);
}

#[test]
fn session_start_records_an_override_session_and_gives_the_table() {
    let dir = Scratch::new("session-start");
    let db = dir.path("audit.db");
    let input =
        br#"{"session_id":"s-9","hook_event_name":"SessionStart","source":"startup","cwd":"/tmp"}"#;
    let out = run_env(
        &["session-start"],
        &env(&dir, &db, Some("maintenance window")),
        input,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(json["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let context = json["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains(
            "| `ssh <machine> journalctl` | `mesh logs <module> [--machine <machine>]` | logs |"
        ),
        "{context}"
    );
    let rows = rows(&db);
    assert_eq!(
        (rows[0].0.as_str(), rows[0].1.as_str(), rows[0].5.as_str()),
        ("session-start", "s-9", "maintenance window")
    );
    // Without an override nothing is recorded.
    let quiet = dir.path("quiet.db");
    let out = run_env(&["session-start"], &env(&dir, &quiet, None), input);
    assert_eq!(out.code, 0);
    assert!(!quiet.exists());
}

#[test]
fn concurrent_hooks_lose_no_row() {
    let dir = Scratch::new("concurrent");
    let db = dir.path("audit.db");
    let env = env(&dir, &db, None);
    let handles: Vec<_> = (0..64)
        .map(|i| {
            let env = env.clone();
            std::thread::spawn(move || {
                run_env(&["hook"], &env, &bash_event(&format!("ssh atlas echo {i}"))).code
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), 2);
    }
    assert_eq!(rows(&db).len(), 64);
    let verify = run_env(
        &["audit", "verify"],
        &[("MESH_GUARD_DB", db.to_string_lossy().into_owned())],
        b"",
    );
    assert_eq!(verify.code, 0, "{}", verify.stdout);
    assert!(verify.stdout.contains("64 rows"), "{}", verify.stdout);
}

#[test]
fn audit_reads_back_in_every_format_and_verify_names_an_edited_row() {
    let dir = Scratch::new("audit-formats");
    let db = dir.path("audit.db");
    for command in [
        "ssh atlas uptime",
        "docker kill mesh-controller",
        "journalctl -u mesh-postgres",
    ] {
        run_env(&["hook"], &env(&dir, &db, None), &bash_event(command));
    }
    let db_env = [("MESH_GUARD_DB", db.to_string_lossy().into_owned())];
    let json = run_env(&["audit", "--format", "json"], &db_env, b"");
    let list: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 3);
    assert_eq!(
        list[0]["command"], "journalctl -u mesh-postgres",
        "newest first"
    );
    let csv = run_env(
        &[
            "audit", "--format", "csv", "--kind", "refusal", "--limit", "2",
        ],
        &db_env,
        b"",
    );
    assert_eq!(
        csv.stdout.lines().count(),
        3,
        "header and two rows: {}",
        csv.stdout
    );
    let table = run_env(
        &["audit", "--since", "1h"],
        &[
            ("MESH_GUARD_DB", db.to_string_lossy().into_owned()),
            ("COLUMNS", "200".into()),
        ],
        b"",
    );
    assert!(
        table.stdout.contains("docker kill mesh-controller"),
        "{}",
        table.stdout
    );
    let missing = run_env(&["audit", "missing"], &db_env, b"");
    assert!(
        missing.stdout.contains("docker kill <container>"),
        "{}",
        missing.stdout
    );
    Connection::open(&db)
        .unwrap()
        .execute("UPDATE events SET command = 'ls' WHERE id = 2", [])
        .unwrap();
    let verify = run_env(&["audit", "verify"], &db_env, b"");
    assert_eq!(verify.code, 1);
    assert!(verify.stdout.contains("row 2"), "{}", verify.stdout);
}
