//! Golden refusals (issue 14): one whole refusal per rule and per kind of fill, as the
//! agent receives it (the message, and the hook's JSON answer), against the unseen mesh
//! (`tests/corpus/unseen/catalog.toml`). `UPDATE_GOLDEN=1 cargo test --test golden`
//! rewrites `tests/golden/*.txt` and `*.json`; review the diff before committing it.
//! Issue 30 adds the `reel` mesh (`tests/golden/reel/`): a case for each placeholder kind
//! and for each way a fill went wrong, and the other surfaces (`search`, MCP `mesh_search`,
//! `instead-of`, the session-start table) held to the refusal's own tools.

mod common;
use common::*;
use std::path::{Path, PathBuf};

/// name, command, catalog (`None`: the unseen mesh's), rules directory.
const CASES: &[(&str, &str, Option<&str>, Option<&str>)] = &[
    (
        "remote-access-quoted",
        "ssh build 'cd /srv/app && make'",
        None,
        None,
    ),
    (
        "remote-access-words",
        "ssh -p 2222 build make -C /srv/app -j4",
        None,
        None,
    ),
    (
        "remote-access-ranked-on-remote",
        "ssh build 'sudo journalctl -u ci-runner -n 200'",
        None,
        None,
    ),
    (
        "remote-access-unknown-value",
        "ssh api \"ls -la $APP_DIR\"",
        None,
        None,
    ),
    (
        "remote-access-module-tool",
        "ssh cache \"redis-cli info memory\"",
        None,
        None,
    ),
    (
        "remote-access-copy",
        "scp build.tar backup:/tmp/",
        None,
        None,
    ),
    (
        "remote-daemon",
        "DOCKER_HOST=ssh://api docker logs prometheus",
        None,
        None,
    ),
    (
        "mesh-container-payload",
        "docker exec redis sh -c 'redis-cli info; redis-cli ping'",
        None,
        None,
    ),
    (
        "mesh-container-optional-left-out",
        "docker logs prometheus",
        None,
        None,
    ),
    (
        "mesh-container-one-must-be-created",
        "docker kill nginx",
        None,
        None,
    ),
    (
        "mesh-unit-own-module",
        "systemctl start restic-backup.service",
        None,
        None,
    ),
    ("mesh-unit-alias", "service redis restart", None, None),
    (
        "unverifiable-names-the-tool",
        "arr=(build db); ssh \"${arr[$i]}\" uptime",
        None,
        None,
    ),
    (
        "self-override",
        "export MESH_GUARD_OVERRIDE=because",
        None,
        None,
    ),
    (
        "broken-catalog",
        "ssh build uptime",
        Some("tests/golden/broken-catalog.toml"),
        None,
    ),
    (
        "broken-rules",
        "ssh build uptime",
        None,
        Some("tests/golden/broken-rules"),
    ),
    // Issue 30: everything the command determines is filled, on the `reel` mesh, whose
    // modules name their machines by alias, in another case, by pattern, or not at all.
    (
        "reel-unit-module-over-ssh",
        "ssh ops@bastion journalctl -u reel-web -n 100",
        Some(REEL),
        None,
    ),
    (
        "reel-unit-module-machine-option",
        "journalctl -M render -u reel-transcode",
        Some(REEL),
        None,
    ),
    (
        "reel-unit-module-named-in-another-case",
        "ssh render.reel.lan journalctl -u reel-transcode.service",
        Some(REEL),
        None,
    ),
    (
        "reel-module-without-machines",
        "ssh encoder journalctl -u reel-ingest",
        Some(REEL),
        None,
    ),
    (
        "reel-jump-host-is-not-the-destination",
        "ssh -J bastion render nvidia-smi",
        Some(REEL),
        None,
    ),
    (
        "reel-proxyjump-is-not-the-destination",
        "ssh -o ProxyJump=ops@bastion:22 render.reel.lan nvidia-smi",
        Some(REEL),
        None,
    ),
    (
        "reel-jump-to-elsewhere-has-no-tool",
        "scp -J bastion cut.mp4 cdn.example.com:/in/",
        Some(REEL),
        None,
    ),
    (
        "reel-blame-the-command-that-reaches",
        "export DOCKER_HOST=ssh://root@encoder; docker logs -f ffmpeg-worker",
        Some(REEL),
        None,
    ),
    (
        "reel-pattern-machine-container",
        "docker -H ssh://gpu-07 stop ffmpeg-worker",
        Some(REEL),
        None,
    ),
    (
        "reel-pattern-machine-unit",
        "systemctl -H gpu-03 status reel-queue",
        Some(REEL),
        None,
    ),
    (
        "reel-unit-in-an-option-value",
        "journalctl --machine=render --unit=reel-transcode.service",
        Some(REEL),
        None,
    ),
    (
        "reel-unit-and-container-of-one-name",
        "systemctl --host=ops status reel-web",
        Some(REEL),
        None,
    ),
    (
        "reel-daemon-carries-the-command",
        "DOCKER_HOST=ssh://encoder docker exec ffmpeg-worker ls /out",
        Some(REEL),
        None,
    ),
    (
        "reel-kind-machine-command",
        "ssh -p 2222 ops 'cd /srv/reel && git pull'",
        Some(REEL),
        None,
    ),
    (
        "reel-kind-module",
        "docker logs reel-ingest",
        Some(REEL),
        None,
    ),
    (
        "reel-kind-module-of-its-own-tool",
        "docker exec -it minio sh",
        Some(REEL),
        None,
    ),
    (
        "reel-kind-container",
        "docker restart reel-nginx",
        Some(REEL),
        None,
    ),
    (
        "reel-kind-unit",
        "ssh vault systemctl start reel-archive.timer",
        Some(REEL),
        None,
    ),
    (
        "reel-kind-source-path",
        "scp cut.mp4 render:/srv/in/",
        Some(REEL),
        None,
    ),
    (
        "reel-kind-other-stays",
        "ssh vault restic restore latest",
        Some(REEL),
        None,
    ),
];

/// The `reel` mesh of issue 30.
const REEL: &str = "tests/golden/reel/catalog.toml";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The answer with this checkout's path written `<repo>`, so the files hold no host path.
fn portable(text: &str) -> String {
    text.replace(&*repo().to_string_lossy(), "<repo>")
}

fn check_golden(path: &Path, got: &str, failures: &mut Vec<String>) {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(path, got).unwrap();
        return;
    }
    match std::fs::read_to_string(path) {
        Ok(want) if want == got => {}
        Ok(want) => failures.push(format!(
            "{}:\n  want: {want}\n  got:  {got}",
            path.display()
        )),
        Err(_) => failures.push(format!(
            "{} is missing: run UPDATE_GOLDEN=1 cargo test --test golden",
            path.display()
        )),
    }
}

#[test]
fn refusals_match_their_golden_texts() {
    let dir = Scratch::new("golden");
    let home = repo().join("tests/corpus/unseen/fixtures/home-plain");
    let mut failures = Vec::new();
    for (name, command, catalog, rules) in CASES {
        let catalog = repo().join(catalog.unwrap_or("tests/corpus/unseen/catalog.toml"));
        let env = vec![("HOME", home.to_string_lossy().into_owned())];
        let rules = rules.map(|r| repo().join(r).to_string_lossy().into_owned());
        let mut args = with_paths(&catalog, &dir.path(&format!("{name}.db")), &[]);
        if let Some(rules) = &rules {
            args.extend(["--rules".to_string(), rules.clone()]);
        }
        args.push("hook".into());
        let out = run_env(&strs(&args), &env, &bash_event(command));
        assert_eq!(
            out.code, 2,
            "{name}: {command} must be refused: {}",
            out.stderr
        );
        let message = claude_denial(&out.stdout);
        assert!(
            message.chars().count() < 1000,
            "{name}: {} characters",
            message.chars().count()
        );
        assert!(
            !message.chars().any(char::is_control),
            "{name}: a control character in {message:?}"
        );
        assert_eq!(
            out.stderr.lines().next(),
            Some(message.as_str()),
            "{name}: the same message on stderr"
        );
        let golden = repo().join("tests/golden");
        check_golden(
            &golden.join(format!("{name}.txt")),
            &format!("{}\n", portable(&message)),
            &mut failures,
        );
        check_golden(
            &golden.join(format!("{name}.json")),
            &portable(&out.stdout),
            &mut failures,
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The record's `reason` says what the operator must fix, as the message does.
#[test]
fn a_broken_setup_is_recorded_with_its_reason() {
    let dir = Scratch::new("golden-record");
    let catalog = repo().join("tests/golden/broken-catalog.toml");
    let db = dir.path("a.db");
    let out = run(
        &strs(&with_paths(&catalog, &db, &["hook"])),
        &[],
        &bash_event("ssh build uptime"),
    );
    assert_eq!(out.code, 2);
    let message = claude_denial(&out.stdout);
    let out = run(
        &["audit", "--format", "json"],
        &[("MESH_GUARD_DB", &db)],
        b"",
    );
    let rows: serde_json::Value = serde_json::from_str(&out.stdout).expect(&out.stdout);
    let reason = rows[0]["reason"].as_str().unwrap_or_default().to_string();
    assert!(reason.contains("broken-catalog.toml:5"), "{reason}");
    assert!(message.contains(&reason), "{message} / {reason}");
}

/// `session-start` warns the operator (stderr) and tells the agent to tell them.
#[test]
fn session_start_warns_when_the_catalog_is_broken() {
    let dir = Scratch::new("golden-session");
    let catalog = repo().join("tests/golden/broken-catalog.toml");
    let db = dir.path("a.db");
    let out = run(
        &strs(&with_paths(&catalog, &db, &["session-start"])),
        &[],
        b"{}",
    );
    assert_eq!(out.code, 0);
    assert!(
        out.stderr.contains("mesh-guard's catalog cannot be used")
            && out.stderr.contains("broken-catalog.toml:5"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains("tell the operator"), "{}", out.stdout);
}

/// The first tool a refusal names: its usage, between the first pair of backquotes.
fn first_usage(message: &str) -> Option<&str> {
    let rest = message
        .strip_prefix(mesh_guard::message::DECISION)?
        .strip_prefix(" Use the mesh's own tool instead: `")?;
    rest.split('`').next()
}

/// `search`, MCP `mesh_search` and the refusal answer each `reel` case with the same tools,
/// filled the same: one ranking, one fill (issue 30). `search`'s text is golden too.
#[test]
fn every_surface_names_the_refusals_tools() {
    let dir = Scratch::new("golden-surfaces");
    let catalog = repo().join(REEL);
    let env = vec![
        ("MESH_GUARD_CATALOG", catalog.to_string_lossy().into_owned()),
        (
            "MESH_GUARD_DB",
            dir.path("a.db").to_string_lossy().into_owned(),
        ),
        (
            "HOME",
            repo()
                .join("tests/corpus/unseen/fixtures/home-plain")
                .to_string_lossy()
                .into_owned(),
        ),
    ];
    let mut failures = Vec::new();
    for (name, command, _, _) in CASES.iter().filter(|c| c.2 == Some(REEL)) {
        let hook = with_paths(&catalog, &dir.path("a.db"), &["hook"]);
        let refused = call_env(&strs(&hook), &env, &bash_event(command));
        let message = claude_denial(&refused.stdout);
        let searched = call_env(&["search", command], &env, b"");
        check_golden(
            &repo().join(format!("tests/golden/reel/{name}.search.txt")),
            &searched.stdout,
            &mut failures,
        );
        let usages: Vec<&str> = searched
            .stdout
            .lines()
            .filter_map(|l| l.split('\t').next())
            .collect();
        assert_eq!(
            first_usage(&message),
            usages.first().copied().filter(|_| searched.code == 0),
            "{name}: the refusal and `search` name the same first tool\n{message}\n{}",
            searched.stdout
        );
        let json = call_env(&["search", "--json", command], &env, b"");
        let json: serde_json::Value = serde_json::from_str(&json.stdout).expect(&json.stdout);
        let request = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "mesh_search", "arguments": {"command": command}}});
        let mcp = call_env(&["mcp"], &env, format!("{request}\n").as_bytes());
        let answer: serde_json::Value = serde_json::from_str(mcp.stdout.trim()).expect(&mcp.stdout);
        assert_eq!(
            answer["result"]["structuredContent"]["tools"], json["tools"],
            "{name}: MCP `mesh_search` answers as `search --json`"
        );
    }
    let table = call_env(&["instead-of"], &env, b"");
    check_golden(
        &repo().join("tests/golden/reel/instead-of.md"),
        &table.stdout,
        &mut failures,
    );
    let session_start = with_paths(&catalog, &dir.path("a.db"), &["session-start"]);
    let start = call_env(&strs(&session_start), &env, b"{}");
    check_golden(
        &repo().join("tests/golden/reel/session-start.json"),
        &start.stdout,
        &mut failures,
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
