//! The operator's override and the record, through the hook (contract: the override, the record).

mod common;
use common::grant;
use common::*;
use rusqlite::Connection;

/// The hook's command line as `install` writes it: its paths are never its environment's.
fn hook_args(db: &std::path::Path, command: &'static str) -> Vec<String> {
    vec![
        "--catalog".into(),
        example_catalog().to_string_lossy().into_owned(),
        "--db".into(),
        db.to_string_lossy().into_owned(),
        command.into(),
    ]
}

fn hook(
    db: &std::path::Path,
    command: &'static str,
    env: &[(&str, String)],
    stdin: &[u8],
) -> Output {
    let args = hook_args(db, command);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_env(&args, env, stdin)
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
    let out = hook(&db, "hook", &[], &bash_event("docker logs mesh-gateway"));
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

/// The signer's key fingerprint and the grant's expiry, as recorded on each row.
fn grant_columns(db: &std::path::Path) -> Vec<(String, String, String)> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT kind, signer, grant_expires FROM events ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn fingerprint(public_key: &std::path::Path) -> String {
    let out = std::process::Command::new("ssh-keygen")
        .arg("-lf")
        .arg(public_key)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    text.split_whitespace().nth(1).unwrap().to_string()
}

#[test]
fn an_operators_signed_grant_passes_only_after_its_row_is_written() {
    let op = grant::Operator::new("grant-honoured");
    let before = grant::now_ms();
    let granted = op.grant(&["--reason", "incident 4711", "--for", "1h"]);
    assert!(
        granted.starts_with("mg1.")
            && granted
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)),
        "a grant survives a shell and an environment unquoted: {granted}"
    );
    let out = op.hook(Some(&granted), "ssh atlas uptime");
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);
    let rows = rows(&op.db);
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].0.as_str(), rows[0].4.as_str(), rows[0].5.as_str()),
        ("override", "remote-access", "incident 4711")
    );
    let (_, signer, expires) = &grant_columns(&op.db)[0];
    assert_eq!(signer, &fingerprint(&op.key.with_extension("pub")));
    let expires_ms = mesh_guard::time::parse_time(expires, 0).unwrap();
    assert!(
        (before + 3_600_000 - 2_000..=grant::now_ms() + 3_600_000).contains(&expires_ms),
        "{expires}"
    );
    // The chain holds the grant's columns.
    let verify = run_env(
        &["--db", op.db.to_str().unwrap(), "audit", "verify"],
        &[],
        b"",
    );
    assert_eq!(verify.code, 0, "{}", verify.stdout);
    Connection::open(&op.db)
        .unwrap()
        .execute(
            "UPDATE events SET grant_expires = '2099-01-01T00:00:00Z'",
            [],
        )
        .unwrap();
    let verify = run_env(
        &["--db", op.db.to_str().unwrap(), "audit", "verify"],
        &[],
        b"",
    );
    assert_eq!(
        verify.code, 1,
        "a lengthened grant is an edit: {}",
        verify.stdout
    );
    // A command that passes anyway records nothing and verifies nothing.
    let out = op.hook(Some("not even a grant"), "ls -la");
    assert_eq!(out.code, 0);
    assert_eq!(self::rows(&op.db).len(), 1);
}

/// Each grant the guard must not honour: the command is refused, the message says why in
/// one line before the usual refusal, and the attempt is recorded.
#[test]
fn each_bad_grant_is_refused_with_its_reason_and_recorded() {
    let op = grant::Operator::new("grant-refused");
    let now = grant::now_ms();
    let host = grant::host();
    let stranger = op.dir.path("stranger_key");
    grant::keygen(&stranger);
    let valid = op.grant(&["--reason", "incident 4711"]);
    let other_message = grant::message("", &host, now, now + 3_600_000);
    let other = op.sign(&op.key, "mesh-guard-override", &other_message);
    // The message of one grant with the signature of another.
    let spliced = format!(
        "mg1.{}.{}",
        other.split('.').nth(1).unwrap(),
        valid.split('.').nth(2).unwrap()
    );
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "unsigned",
            "incident 4711".into(),
            "it is not a signed grant",
        ),
        (
            "malformed",
            "mg1.bm90IGEgZ3JhbnQ".into(),
            "the grant is malformed",
        ),
        (
            "not allowed",
            op.sign(&stranger, "mesh-guard-override", &other_message),
            "but its key is not in allowed_signers",
        ),
        (
            "expired",
            op.sign(
                &op.key,
                "mesh-guard-override",
                &grant::message("", &host, now - 7_200_000, now - 3_600_000),
            ),
            "it expired at",
        ),
        (
            "not yet valid",
            op.sign(
                &op.key,
                "mesh-guard-override",
                &grant::message("", &host, now + 3_600_000, now + 7_200_000),
            ),
            "it is not valid until",
        ),
        (
            "another host",
            op.grant(&["--reason", "x", "--host", "elsewhere.example"]),
            "it is for the host elsewhere.example, not this one",
        ),
        (
            "another namespace",
            op.sign(&op.key, "git", &other_message),
            "it was signed for `git`",
        ),
        (
            "changed after signing",
            spliced,
            "its signature does not verify",
        ),
        (
            "too long a life",
            op.sign(
                &op.key,
                "mesh-guard-override",
                &grant::message("", &host, now, now + 25 * 3_600_000),
            ),
            "more than 24 hours",
        ),
    ];
    for (name, bad, why) in &cases {
        let out = op.hook(Some(bad), "ssh atlas uptime");
        assert_eq!(out.code, 2, "{name}: {}", out.stdout);
        let message = claude_denial(&out.stdout);
        let first_line = message.split(". ").next().unwrap();
        assert!(
            message.starts_with("The operator's override was not honoured: ")
                && first_line.contains(why)
                && !message.contains('\n'),
            "{name}: {message}"
        );
        assert!(
            message.contains("mesh "),
            "the usual refusal follows: {message}"
        );
    }
    let recorded = rows(&op.db);
    assert_eq!(recorded.len(), cases.len());
    for ((name, _, why), row) in cases.iter().zip(&recorded) {
        assert_eq!(row.0, "override-attempt", "{name}");
        assert!(row.5.contains(why), "{name}: {}", row.5);
    }
    // A grant good but for its signature keeps no signer; one that verified keeps it.
    let columns = grant_columns(&op.db);
    assert_eq!(columns[2].1, "", "not allowed");
    assert!(
        columns[3].1.starts_with("SHA256:"),
        "expired: {:?}",
        columns[3]
    );
    assert!(!columns[3].2.is_empty(), "its expiry: {:?}", columns[3]);
    // The valid grant still passes.
    assert_eq!(op.hook(Some(&valid), "ssh atlas uptime").code, 0);
}

#[test]
fn the_allowed_signers_line_decides_and_a_file_others_may_write_allows_no_one() {
    let only_git = grant::Operator::with_options("grant-git-only", "namespaces=\"git\"");
    let granted = only_git.grant(&["--reason", "x"]);
    let out = only_git.hook(Some(&granted), "ssh atlas uptime");
    assert!(
        claude_denial(&out.stdout).contains("does not allow the namespace mesh-guard-override"),
        "{}",
        out.stdout
    );
    let ca = grant::Operator::with_options("grant-ca", "cert-authority");
    let granted = ca.grant(&["--reason", "x"]);
    let out = ca.hook(Some(&granted), "ssh atlas uptime");
    assert!(
        claude_denial(&out.stdout).contains("cert-authority"),
        "{}",
        out.stdout
    );
    let later = grant::Operator::with_options("grant-later", "valid-after=\"20990101Z\"");
    let granted = later.grant(&["--reason", "x"]);
    let out = later.hook(Some(&granted), "ssh atlas uptime");
    assert!(
        claude_denial(&out.stdout).contains("valid-after"),
        "{}",
        out.stdout
    );

    let op = grant::Operator::new("grant-writable");
    let granted = op.grant(&["--reason", "x"]);
    let signers = op.catalog.with_file_name("allowed_signers");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&signers, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = op.hook(Some(&granted), "ssh atlas uptime");
    assert!(
        claude_denial(&out.stdout).contains(
            "allowed_signers beside the catalog is writable by its group or others (mode 666)"
        ),
        "{}",
        out.stdout
    );
    std::fs::remove_file(&signers).unwrap();
    let out = op.hook(Some(&granted), "ssh atlas uptime");
    assert!(
        claude_denial(&out.stdout).contains("no readable allowed_signers file"),
        "{}",
        out.stdout
    );
}

#[test]
fn override_grant_refuses_what_it_cannot_sign_and_warns_of_what_will_not_be_honoured() {
    let op = grant::Operator::new("grant-command");
    for (args, why) in [
        (&["--reason", "x", "--for", "25h"][..], "at most 24h"),
        (&["--reason", "x", "--for", "soon"][..], "a span"),
        (
            &["--reason", "x", "--rule", "self-protection"][..],
            "no rule",
        ),
        (&["--reason", " "][..], "reason"),
    ] {
        let out = op.grant_command(args);
        assert_eq!(out.code, 2, "{args:?}");
        assert!(out.stderr.contains(why), "{args:?}: {}", out.stderr);
    }
    std::fs::write(op.catalog.with_file_name("allowed_signers"), "").unwrap();
    let out = op.grant_command(&["--reason", "x"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("will not honour this grant")
            && out.stderr.contains("not in allowed_signers"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_override_that_cannot_be_recorded_is_not_honoured() {
    let op = grant::Operator::new("override-unrecordable");
    let granted = op.grant(&["--reason", "incident"]);
    // A database path under a regular file cannot be created, even by root.
    let blocker = op.dir.write("not-a-dir", "");
    let db = blocker.join("audit.db");
    let run = |env: &[(&str, String)]| {
        run_env(
            &[
                "--catalog",
                op.catalog.to_str().unwrap(),
                "--db",
                db.to_str().unwrap(),
                "hook",
            ],
            env,
            &bash_event("ssh atlas uptime"),
        )
    };
    let out = run(&[("MESH_GUARD_OVERRIDE", granted.clone())]);
    assert_eq!(out.code, 2);
    let message = claude_denial(&out.stdout);
    assert!(
        message.contains("override") && message.contains("not honoured"),
        "{message}"
    );
    // Without an override, the refusal still refuses, and says on stderr it was not recorded.
    let out = run(&[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("not recorded") && out.stderr.contains("directory"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_self_granted_override_is_refused_and_recorded_as_an_attempt() {
    let op = grant::Operator::new("self-override");
    for command in [
        "MESH_GUARD_OVERRIDE=1 ssh atlas",
        "export MESH_GUARD_OVERRIDE=x; ssh atlas",
        "env MESH_GUARD_OVERRIDE=y ls",
        "echo 'export MESH_GUARD_OVERRIDE=z' >> ~/.bashrc",
    ] {
        let out = op.hook(None, command);
        assert_eq!(out.code, 2, "{command}");
        assert!(
            claude_denial(&out.stdout).contains("only they can override"),
            "{command}"
        );
    }
    assert!(
        rows(&op.db)
            .iter()
            .all(|r| r.0 == "override-attempt" && r.4 == "self-override")
    );
    // The operator's own grant does not cover it.
    let granted = op.grant(&["--reason", "ops"]);
    let out = op.hook(Some(&granted), "MESH_GUARD_OVERRIDE=1 ls");
    assert_eq!(out.code, 2);
}

#[test]
fn session_start_records_a_granted_session_and_an_unsigned_one_as_an_attempt() {
    let op = grant::Operator::new("session-start");
    let granted = op.grant(&["--reason", "maintenance window", "--machine", "atlas"]);
    let input =
        br#"{"session_id":"s-9","hook_event_name":"SessionStart","source":"startup","cwd":"/tmp"}"#;
    let start = |db: &std::path::Path, grant: Option<&str>| {
        run_env(
            &[
                "--catalog",
                op.catalog.to_str().unwrap(),
                "--db",
                db.to_str().unwrap(),
                "session-start",
            ],
            &grant
                .map(|g| ("MESH_GUARD_OVERRIDE", g.to_string()))
                .into_iter()
                .collect::<Vec<_>>(),
            input,
        )
    };
    let out = start(&op.db, Some(&granted));
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
    let rows = rows(&op.db);
    assert_eq!(
        (rows[0].0.as_str(), rows[0].1.as_str(), rows[0].5.as_str()),
        ("session-start", "s-9", "maintenance window")
    );
    assert!(grant_columns(&op.db)[0].1.starts_with("SHA256:"));
    // A plain reason is recorded as an attempt, and the operator reads why.
    let out = start(&op.db, Some("maintenance window"));
    assert_eq!(out.code, 0);
    assert!(out.stderr.contains("not a signed grant"), "{}", out.stderr);
    assert_eq!(self::rows(&op.db)[1].0, "override-attempt");
    // Without an override nothing is recorded.
    let quiet = op.dir.path("quiet.db");
    let out = start(&quiet, None);
    assert_eq!(out.code, 0);
    assert!(!quiet.exists());
}

#[test]
fn concurrent_hooks_lose_no_row() {
    let dir = Scratch::new("concurrent");
    let db = dir.path("audit.db");
    let handles: Vec<_> = (0..64)
        .map(|i| {
            let db = db.clone();
            std::thread::spawn(move || {
                hook(
                    &db,
                    "hook",
                    &[],
                    &bash_event(&format!("ssh atlas echo {i}")),
                )
                .code
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
        hook(&db, "hook", &[], &bash_event(command));
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

/// `doctor` says who may sign, and warns when an allowed signer's private key lies
/// unencrypted where the agent's user can read it; a key with a passphrase is no warning.
#[test]
fn doctor_names_who_may_sign_and_an_unencrypted_signers_key_the_agent_can_read() {
    let op = grant::Operator::new("doctor-signers");
    let home = op.dir.path("agent-home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let locked = home.join(".ssh/id_locked");
    let status = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "a passphrase", "-f"])
        .arg(&locked)
        .status()
        .unwrap();
    assert!(status.success());
    let signers = op.catalog.with_file_name("allowed_signers");
    let mut text = std::fs::read_to_string(&signers).unwrap();
    text.push_str(&format!(
        "bob {}",
        std::fs::read_to_string(locked.with_extension("pub")).unwrap()
    ));
    std::fs::write(&signers, text).unwrap();
    let doctor = || {
        let out = run_env(
            &[
                "--catalog",
                op.catalog.to_str().unwrap(),
                "doctor",
                "--json",
            ],
            &[("HOME", home.to_string_lossy().into_owned())],
            b"",
        );
        let report: serde_json::Value = serde_json::from_str(&out.stdout).expect(&out.stdout);
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{} {}",
                    f["level"].as_str().unwrap(),
                    f["what"].as_str().unwrap()
                )
            })
            .collect::<Vec<_>>()
    };
    let findings = doctor();
    let fingerprint = fingerprint(&op.key.with_extension("pub"));
    assert!(
        findings
            .iter()
            .any(|f| f.starts_with("ok may sign override grants: alice@ops")
                && f.contains(&fingerprint)),
        "{findings:#?}"
    );
    assert!(
        findings
            .iter()
            .any(|f| f.starts_with("ok may sign override grants: bob")),
        "{findings:#?}"
    );
    assert!(
        !findings.iter().any(|f| f.contains("unencrypted")),
        "{findings:#?}"
    );
    std::fs::copy(&op.key, home.join(".ssh/id_ed25519")).unwrap();
    let findings = doctor();
    assert!(
        findings.iter().any(|f| f
            .starts_with("warn the private key of an allowed signer lies unencrypted at")
            && f.contains("id_ed25519")),
        "{findings:#?}"
    );
}
