//! Scoped overrides through the hook (decision 0015): each term of a signed grant's scope
//! (decision 0058), their combination, the record and the `check` preview.

mod common;
use common::grant;
use common::*;
use rusqlite::Connection;
use std::path::Path;

/// The operator's grant with `scope` (none: the whole session), signed for this host.
fn signed(op: &grant::Operator, scope: Option<&str>) -> String {
    let now = grant::now_ms();
    let message = grant::message(scope.unwrap_or(""), &grant::host(), now, now + 3_600_000)
        .replace("reason: incident 4711", "reason: incident 42");
    op.sign(&op.key, "mesh-guard-override", &message)
}
/// (kind, reason, scope) of every row, oldest first.
fn rows(db: &Path) -> Vec<(String, String, String)> {
    if !db.exists() {
        return Vec::new();
    }
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT kind, reason, scope FROM events ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The hook's exit code for `command` under `scope`, and the rows it left.
fn hook(scope: Option<&str>, command: &str) -> (i32, String, Vec<(String, String, String)>) {
    let op = grant::Operator::new("scope");
    let out = op.hook(Some(&signed(&op, scope)), command);
    let message = if out.code == 2 {
        claude_denial(&out.stdout)
    } else {
        String::new()
    };
    (out.code, message, rows(&op.db))
}

#[test]
fn a_machine_term_covers_that_machine_only() {
    let (code, _, rows) = hook(Some("machine:atlas"), "ssh atlas journalctl -n 20");
    assert_eq!(code, 0);
    assert_eq!(rows[0].0, "override");
    assert_eq!(
        (rows[0].1.as_str(), rows[0].2.as_str()),
        ("incident 42", "machine:atlas"),
        "recorded with its scope"
    );
    let (code, message, rows) = hook(Some("machine:atlas"), "ssh orion uptime");
    assert_eq!(code, 2);
    assert!(
        message.contains("does not cover") && message.contains("machine:atlas"),
        "says what it covers: {message}"
    );
    assert_eq!(rows[0].0, "refusal");
    assert!(
        rows[0].1.contains("does not cover"),
        "the row says so: {}",
        rows[0].1
    );
    assert_eq!(rows[0].2, "machine:atlas", "the row carries the scope");
    // Both machines must be in scope, not only the first the command names.
    let (code, _, _) = hook(Some("machine:atlas"), "ssh atlas uptime; ssh orion uptime");
    assert_eq!(code, 2);
    let (code, _, _) = hook(
        Some("machine:atlas machine:orion"),
        "ssh atlas uptime; ssh orion uptime",
    );
    assert_eq!(code, 0);
}

#[test]
fn a_module_term_covers_its_containers_and_units_not_the_machine() {
    assert_eq!(
        hook(Some("module:controller"), "docker logs mesh-controller").0,
        0
    );
    assert_eq!(
        hook(Some("module:controller"), "journalctl -u mesh-controller").0,
        0
    );
    assert_eq!(
        hook(Some("module:gateway"), "docker logs mesh-controller").0,
        2
    );
    assert_eq!(hook(Some("module:controller"), "ssh atlas uptime").0, 2);
}

#[test]
fn a_rule_term_covers_that_rule_only() {
    assert_eq!(
        hook(Some("rule:mesh-unit"), "journalctl -u mesh-controller").0,
        0
    );
    assert_eq!(
        hook(
            Some("rule:mesh-unit"),
            "ssh atlas journalctl -u mesh-controller"
        )
        .0,
        2
    );
}

#[test]
fn every_kind_of_term_must_hold() {
    let scope = "machine:atlas rule:remote-access";
    assert_eq!(hook(Some(scope), "ssh atlas uptime").0, 0);
    assert_eq!(hook(Some(scope), "ssh orion uptime").0, 2);
    assert_eq!(
        hook(Some("machine:atlas rule:mesh-unit"), "ssh atlas uptime").0,
        2
    );
}

#[test]
fn a_malformed_scope_covers_nothing() {
    for scope in [
        "atlas",
        "machine:",
        "rule:self-protection",
        "until:2999-01-01T00:00:00Z",
        "host:atlas",
    ] {
        let (code, message, rows) = hook(Some(scope), "ssh atlas uptime");
        assert_eq!(code, 2, "{scope:?}");
        assert!(message.contains("malformed"), "{scope:?}: {message}");
        assert_eq!(rows[0].0, "override-attempt", "{scope:?}");
    }
    // Without a scope the override covers the session, as before.
    assert_eq!(hook(None, "ssh orion uptime").0, 0);
}

/// The scope is the grant's: `MESH_GUARD_OVERRIDE_SCOPE`, which set it before grants were
/// signed, is no longer read, so a planted one widens nothing.
#[test]
fn a_scope_variable_beside_the_grant_changes_nothing() {
    let op = grant::Operator::new("scope-variable");
    let granted = signed(&op, Some("machine:atlas"));
    let paths = op.paths();
    let mut args: Vec<&str> = paths.iter().map(String::as_str).collect();
    args.push("hook");
    let out = run_env(
        &args,
        &[
            ("MESH_GUARD_OVERRIDE", granted),
            ("MESH_GUARD_OVERRIDE_SCOPE", "machine:orion".into()),
        ],
        &bash_event("ssh orion uptime"),
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(claude_denial(&out.stdout).contains("it covers `machine:atlas`"));
}

#[test]
fn session_start_records_the_scope() {
    let op = grant::Operator::new("scope-start");
    let paths = op.paths();
    let mut args: Vec<&str> = paths.iter().map(String::as_str).collect();
    args.push("session-start");
    let out = run_env(
        &args,
        &[("MESH_GUARD_OVERRIDE", signed(&op, Some("machine:atlas")))],
        br#"{"session_id":"s","cwd":"/tmp","hook_event_name":"SessionStart"}"#,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        rows(&op.db),
        vec![(
            "session-start".into(),
            "incident 42".into(),
            "machine:atlas".into()
        )]
    );
}

#[test]
fn check_previews_a_scope_before_a_session() {
    let dir = Scratch::new("scope-check");
    let preview = |scope: &str, command: &str| {
        let out = run_env(
            &[
                "check",
                "--json",
                "--override",
                "try",
                "--scope",
                scope,
                "--",
                command,
            ],
            &[
                (
                    "MESH_GUARD_DB",
                    dir.path("audit.db").to_string_lossy().into_owned(),
                ),
                (
                    "MESH_GUARD_CATALOG",
                    example_catalog().to_string_lossy().into_owned(),
                ),
            ],
            b"",
        );
        let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        json["override"]["decision"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(preview("machine:atlas", "ssh atlas uptime"), "pass");
    assert_eq!(preview("machine:atlas", "ssh orion uptime"), "refuse");
    assert_eq!(preview("nonsense", "ssh atlas uptime"), "refuse");
    assert!(!dir.path("audit.db").exists(), "a preview records nothing");
}

#[test]
fn widening_a_recorded_scope_breaks_the_chain() {
    let op = grant::Operator::new("scope-tamper");
    let granted = signed(&op, Some("machine:atlas"));
    assert_eq!(op.hook(Some(&granted), "ssh atlas uptime").code, 0);
    let env = [("MESH_GUARD_DB", op.db.to_string_lossy().into_owned())];
    assert_eq!(run_env(&["audit", "verify"], &env, b"").code, 0);
    let json = run_env(&["audit", "--format", "json"], &env, b"").stdout;
    assert!(
        json.contains("\"scope\": \"machine:atlas\""),
        "audit shows the scope: {json}"
    );
    Connection::open(&op.db)
        .unwrap()
        .execute("UPDATE events SET scope = ''", [])
        .unwrap();
    assert_eq!(run_env(&["audit", "verify"], &env, b"").code, 1);
}

#[test]
fn the_refusal_stays_under_a_thousand_characters_whatever_the_scope() {
    let long: Vec<String> = (0..80)
        .map(|i| format!("machine:host-{i:03}-of-a-long-name"))
        .collect();
    let (code, message, _) = hook(Some(&long.join(" ")), "ssh orion uptime");
    assert_eq!(code, 2);
    assert!(
        message.chars().count() < 1000,
        "{} characters",
        message.chars().count()
    );
    let bad = format!("bogus{}", "x".repeat(5000));
    let (code, message, _) = hook(Some(&bad), "ssh orion uptime");
    assert_eq!(code, 2);
    assert!(message.contains("malformed") && message.chars().count() < 1000);
}
