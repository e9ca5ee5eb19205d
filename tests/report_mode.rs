//! Report-only mode (decision 0060): set in the catalog for the whole mesh, a rule family or a
//! module; a refusal there passes and is recorded as a would-refuse row in the same chain; the
//! guard's own protection and the override's rules are always enforced.

mod common;

use common::{Scratch, bash_event, call_env, example_catalog, strs, with_paths};
use serde_json::Value;

/// A scratch directory with the example catalog plus `extra`, and `module_mode` set on the
/// `gateway` module when given.
fn setup(name: &str, extra: &str, gateway_mode: Option<&str>) -> Scratch {
    let dir = Scratch::new(name);
    let mut text = std::fs::read_to_string(example_catalog()).unwrap();
    if let Some(mode) = gateway_mode {
        text = text.replacen(
            "name       = \"gateway\"",
            &format!("name       = \"gateway\"\nmode       = \"{mode}\""),
            1,
        );
    }
    text.push_str(extra);
    // A hook takes its system log from the catalog, never its environment (decision 0059).
    text.push_str("\n[record]\nsyslog = \"none\"\n");
    dir.write("catalog.toml", &text);
    dir
}

fn env(dir: &Scratch) -> Vec<(&'static str, String)> {
    vec![
        (
            "MESH_GUARD_CATALOG",
            dir.path("catalog.toml").display().to_string(),
        ),
        ("MESH_GUARD_DB", dir.path("audit.db").display().to_string()),
        ("MESH_GUARD_SYSLOG", "none".to_string()),
    ]
}

/// The hook's command line, its paths on it as `install` writes them.
fn hook_args(dir: &Scratch) -> Vec<String> {
    with_paths(&dir.path("catalog.toml"), &dir.path("audit.db"), &["hook"])
}

/// The hook's exit for a Bash command.
fn hook(dir: &Scratch, command: &str) -> common::Output {
    call_env(&strs(&hook_args(dir)), &[], &bash_event(command))
}

/// Every recorded row, oldest first, as `audit --format json` gives them.
fn rows(dir: &Scratch) -> Vec<Value> {
    let out = call_env(&["audit", "--format", "json"], &env(dir), b"");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut rows: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    rows.reverse();
    rows
}

#[test]
fn a_rule_family_in_report_passes_and_is_recorded_while_another_is_enforced() {
    let dir = setup(
        "report-rule",
        "\n[mode]\nmesh-container = \"report\"\n",
        None,
    );
    let reported = hook(&dir, "docker logs -f mesh-controller");
    assert_eq!(reported.code, 0, "{}", reported.stdout);
    assert_eq!(reported.stdout, "", "a pass answers nothing");
    let enforced = hook(&dir, "ssh atlas uptime");
    assert_eq!(enforced.code, 2);

    let rows = rows(&dir);
    assert_eq!(rows.len(), 2, "{rows:#?}");
    let row = &rows[0];
    assert_eq!(row["kind"], "would-refuse");
    assert_eq!(row["rule"], "mesh-container");
    assert_eq!(row["target"], "mesh-controller");
    assert_eq!(row["tools"], serde_json::json!(["logs"]));
    assert_eq!(row["command"], "docker logs -f mesh-controller");
    let message = row["reason"].as_str().unwrap();
    assert!(message.contains("mesh logs controller"), "{message}");
    assert!(message.contains("Nothing else is disabled"), "{message}");
    assert_eq!(rows[1]["kind"], "refusal");

    // `audit --kind` filters them.
    let only = call_env(
        &["audit", "--kind", "would-refuse", "--format", "json"],
        &env(&dir),
        b"",
    );
    let only: Vec<Value> = serde_json::from_str(&only.stdout).unwrap();
    assert_eq!(only.len(), 1);
    assert_eq!(only[0]["kind"], "would-refuse");
    let table = call_env(&["audit", "--kind", "would-refuse"], &env(&dir), b"");
    assert!(table.stdout.contains("would-refuse"), "{}", table.stdout);
    assert!(!table.stdout.contains("ssh atlas"), "{}", table.stdout);
}

#[test]
fn would_refuse_rows_are_in_the_chain_and_audit_verify_finds_one_edited() {
    let dir = setup("report-chain", "\n[mode]\ndefault = \"report\"\n", None);
    assert_eq!(hook(&dir, "ssh atlas uptime").code, 0);
    assert_eq!(hook(&dir, "docker restart mesh-gateway").code, 0);
    let verify = call_env(&["audit", "verify"], &env(&dir), b"");
    assert_eq!(verify.code, 0, "{}", verify.stdout);
    assert!(
        verify.stdout.contains("intact: 2 rows"),
        "{}",
        verify.stdout
    );

    rusqlite::Connection::open(dir.path("audit.db"))
        .unwrap()
        .execute(
            "UPDATE events SET command = 'ls' WHERE kind = 'would-refuse' AND id = 1",
            [],
        )
        .unwrap();
    let verify = call_env(&["audit", "verify"], &env(&dir), b"");
    assert_eq!(verify.code, 1, "{}", verify.stdout);
    assert!(verify.stdout.contains("row 1"), "{}", verify.stdout);
}

#[test]
fn the_whole_mesh_in_report_except_a_module_that_is_enforced() {
    let dir = setup(
        "report-module",
        "\n[mode]\ndefault = \"report\"\n",
        Some("enforce"),
    );
    // atlas belongs to controller and metrics, which say nothing: the whole mesh's mode.
    assert_eq!(hook(&dir, "ssh atlas uptime").code, 0);
    assert_eq!(hook(&dir, "journalctl -u mesh-controller").code, 0);
    // gateway's container, unit and machines are enforced.
    assert_eq!(hook(&dir, "docker logs mesh-gateway").code, 2);
    assert_eq!(hook(&dir, "systemctl restart mesh-gateway").code, 2);
    assert_eq!(hook(&dir, "ssh orion uptime").code, 2);
    let kinds: Vec<String> = rows(&dir)
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["kind"].as_str().unwrap(),
                r["target"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "would-refuse atlas",
            "would-refuse mesh-controller",
            "refusal mesh-gateway",
            "refusal mesh-gateway",
            "refusal orion",
        ]
    );
}

#[test]
fn a_module_in_report_under_an_enforced_mesh() {
    let dir = setup("report-one-module", "", Some("report"));
    assert_eq!(hook(&dir, "docker logs mesh-gateway").code, 0);
    assert_eq!(hook(&dir, "docker logs mesh-controller").code, 2);
    // vega is gateway's and metrics'; metrics says nothing, so it is under the whole mesh's
    // enforce: a machine is reported only when every module on it is (decision 0071).
    assert_eq!(hook(&dir, "ssh vega uptime").code, 2);
}

/// A catalog with `mode = "report"` on one module alone.
fn one_module_in_report(name: &str, module: &str, text: &str) -> Scratch {
    let dir = Scratch::new(name);
    let needle = format!("name       = \"{module}\"");
    assert!(text.contains(&needle), "{module}");
    let text = text.replacen(&needle, &format!("{needle}\nmode       = \"report\""), 1);
    dir.write(
        "catalog.toml",
        &format!("{text}\n[record]\nsyslog = \"none\"\n"),
    );
    dir
}

#[test]
fn a_module_in_report_does_not_put_its_neighbours_on_a_shared_machine_in_report() {
    let example = std::fs::read_to_string(example_catalog()).unwrap();
    let dir = one_module_in_report("report-shared", "controller", &example);
    // atlas runs controller (report) and metrics (enforced by the whole mesh's default).
    for command in [
        "ssh atlas journalctl -u node-exporter",
        "DOCKER_HOST=ssh://atlas docker logs node-exporter",
        "ssh atlas uptime",
        "docker logs node-exporter",
    ] {
        let out = hook(&dir, command);
        assert_eq!(out.code, 2, "{command}: {}", out.stdout);
    }
    // What reaches controller alone is reported.
    assert_eq!(hook(&dir, "docker logs mesh-controller").code, 0);
    assert_eq!(hook(&dir, "journalctl -u mesh-controller").code, 0);
    // check says which module decided.
    let out = call_env(&["check", "--json", "ssh atlas uptime"], &env(&dir), b"");
    let json: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["mode"], "enforce", "{json}");
    assert_eq!(json["mode_module"], "metrics", "{json}");
    let out = call_env(&["check", "ssh atlas uptime"], &env(&dir), b"");
    assert!(
        out.stdout.contains("decided by module `metrics`"),
        "{}",
        out.stdout
    );

    // Where controller is alone on atlas, a command that names metrics' container or unit
    // there still reaches metrics: the module it reaches decides.
    let alone = example.replace(
        "machines   = [\"atlas\", \"orion\", \"vega\", \"lyra\"]",
        "machines   = [\"orion\", \"vega\", \"lyra\"]",
    );
    assert_ne!(alone, example);
    let dir = one_module_in_report("report-alone", "controller", &alone);
    assert_eq!(hook(&dir, "ssh atlas uptime").code, 0);
    for command in [
        "ssh atlas journalctl -u node-exporter",
        "DOCKER_HOST=ssh://atlas docker logs node-exporter",
        "ssh atlas 'systemctl restart node-exporter.service'",
    ] {
        let out = hook(&dir, command);
        assert_eq!(out.code, 2, "{command}: {}", out.stdout);
    }
    let kinds: Vec<String> = rows(&dir)
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["kind"].as_str().unwrap(),
                r["target"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "would-refuse atlas",
            "refusal atlas",
            "refusal atlas",
            "refusal atlas"
        ]
    );
}

#[test]
fn one_enforced_target_refuses_the_command_whatever_the_order() {
    let dir = setup(
        "report-mixed",
        "\n[mode]\nmesh-container = \"report\"\n",
        None,
    );
    for command in [
        "docker logs mesh-controller; ssh atlas uptime",
        "ssh atlas uptime; docker logs mesh-controller",
        "docker logs mesh-controller && journalctl -u mesh-controller",
        "docker logs mesh-controller; $PROGRAM atlas",
    ] {
        let out = hook(&dir, command);
        assert_eq!(out.code, 2, "{command}: {}", out.stdout);
    }
    let reported = hook(
        &dir,
        "docker logs mesh-controller; docker inspect mesh-gateway",
    );
    assert_eq!(reported.code, 0);
}

#[test]
fn the_guards_own_protection_and_the_override_rules_are_never_reported() {
    let dir = setup("report-self", "\n[mode]\ndefault = \"report\"\n", None);
    let out = hook(&dir, "export MESH_GUARD_OVERRIDE=mine; ssh atlas uptime");
    assert_eq!(out.code, 2, "{}", out.stdout);
    let catalog = dir.path("catalog.toml").display().to_string();
    let out = hook(&dir, &format!("rm {catalog}"));
    assert_eq!(out.code, 2, "{}", out.stdout);
    let write = serde_json::json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": catalog, "content": "version = 1\n"},
        "tool_use_id": "toolu_2",
    });
    let out = call_env(&strs(&hook_args(&dir)), &[], write.to_string().as_bytes());
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(rows(&dir).iter().all(|r| r["kind"] != "would-refuse"));
}

#[test]
fn audit_missing_counts_would_refuse_rows() {
    let dir = setup(
        "report-missing",
        "\n[mode]\nmesh-container = \"report\"\n",
        None,
    );
    assert_eq!(hook(&dir, "docker kill mesh-controller").code, 0);
    assert_eq!(hook(&dir, "docker kill mesh-gateway").code, 0);
    let out = call_env(&["audit", "missing", "--format", "json"], &env(&dir), b"");
    let missing: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        missing,
        serde_json::json!([{"shape": "docker kill <container>", "refusals": 0, "would_refuse": 2}])
    );
}

#[test]
fn check_and_doctor_say_which_mode_is_in_force_where() {
    let dir = setup(
        "report-check",
        "\n[mode]\nmesh-container = \"report\"\n",
        None,
    );
    let out = call_env(
        &["check", "docker", "logs", "mesh-controller"],
        &env(&dir),
        b"",
    );
    assert_eq!(out.code, 0, "the hook passes it: {}", out.stdout);
    assert!(
        out.stdout
            .starts_with("pass (report mode): would refuse [mesh-container]"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("report for rule mesh-container"),
        "{}",
        out.stdout
    );
    let out = call_env(&["check", "--json", "ssh", "atlas"], &env(&dir), b"");
    assert_eq!(out.code, 1);
    let json: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        (json["decision"].as_str(), json["mode"].as_str()),
        (Some("refuse"), Some("enforce"))
    );
    let out = call_env(
        &["check", "--json", "docker", "logs", "mesh-controller"],
        &env(&dir),
        b"",
    );
    let json: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        (json["decision"].as_str(), json["mode"].as_str()),
        (Some("pass"), Some("report"))
    );
    assert_eq!(json["rule"], "mesh-container");

    let doctor = call_env(&["doctor", "--json"], &env(&dir), b"");
    let json: Value = serde_json::from_str(&doctor.stdout).unwrap();
    assert_eq!(json["enforcement"]["default"], "enforce");
    assert_eq!(json["enforcement"]["rules"]["mesh-container"], "report");
    let text = call_env(&["doctor"], &env(&dir), b"");
    assert!(
        text.stdout
            .contains("mode: enforce for the whole mesh, report for rule mesh-container"),
        "{}",
        text.stdout
    );
}

#[test]
fn a_bad_mode_is_an_error_naming_its_file_and_line() {
    for (extra, line, said) in [
        (
            "[mode]\nself-protection = \"report\"\n",
            4,
            "always enforced",
        ),
        (
            "[mode]\nmesh-unit = \"reprot\"\n",
            4,
            "`reprot` is not a mode: enforce or report",
        ),
        (
            "[mode]\nremote = \"report\"\n",
            4,
            "unknown key `remote` in `[mode]`",
        ),
        (
            "[mode]\ndefault = [\"report\"]\n",
            4,
            "`mode.default` must be a string",
        ),
        (
            "[[module]]\nname = \"m\"\nmode = 1\n",
            5,
            "`module.mode` must be a string",
        ),
        (
            "[[module]]\nname = \"m\"\nmode = \"off\"\n",
            5,
            "`off` is not a mode",
        ),
    ] {
        let dir = Scratch::new("report-bad");
        let path = dir.write("catalog.toml", &format!("version = 1\n\n{extra}"));
        let out = call_env(
            &["catalog", "check"],
            &[("MESH_GUARD_CATALOG", path.display().to_string())],
            b"",
        );
        assert_eq!(out.code, 1, "{extra}");
        let all = format!("{}{}", out.stdout, out.stderr);
        assert!(
            all.contains(&format!("{}:{line}: ", path.display())) && all.contains(said),
            "{extra}: {all}"
        );
    }
    // `[mode]` may appear in only one file of a directory catalog.
    let dir = Scratch::new("report-twice");
    dir.write("c/a.toml", "version = 1\n[mode]\ndefault = \"report\"\n");
    dir.write("c/b.toml", "[mode]\nmesh-unit = \"report\"\n");
    let out = call_env(
        &["catalog", "check"],
        &[("MESH_GUARD_CATALOG", dir.path("c").display().to_string())],
        b"",
    );
    assert_eq!(out.code, 1);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains("b.toml:1: `mode` may appear in only one catalog file"),
        "{all}"
    );
}

#[test]
fn a_would_refuse_row_is_forwarded_to_the_system_log_like_every_row() {
    let dir = setup("report-forward", "\n[mode]\ndefault = \"report\"\n", None);
    let socket = dir.path("log.sock");
    let listener = std::os::unix::net::UnixDatagram::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    let catalog = std::fs::read_to_string(dir.path("catalog.toml")).unwrap();
    dir.write(
        "catalog.toml",
        &catalog.replace(
            "syslog = \"none\"",
            &format!("syslog = \"unix:{}\"", socket.display()),
        ),
    );
    let out = hook(&dir, "ssh atlas uptime");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut buf = vec![0u8; 64 * 1024];
    let n = listener.recv(&mut buf).expect("the row was forwarded");
    let line = String::from_utf8_lossy(&buf[..n]);
    assert!(line.contains("kind=\"would-refuse\""), "{line}");
    let hash = rows(&dir)[0]["hash"].as_str().unwrap().to_string();
    assert!(
        line.contains(&hash),
        "the forwarded event carries the row's hash: {line}"
    );
}

#[test]
fn policy_tests_hold_through_a_rollout_in_report_mode() {
    let dir = setup("report-policy", "\n[mode]\ndefault = \"report\"\n", None);
    let policy = dir.write(
        "policy.toml",
        "[[case]]\ncommand = \"docker logs mesh-controller\"\nexpect = \"refuse\"\ninstead = \"logs\"\n\n\
         [[case]]\ncommand = \"ls\"\nexpect = \"pass\"\n",
    );
    let out = call_env(&["test", &policy.display().to_string()], &env(&dir), b"");
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(out.stdout.contains("2 cases: 2 hold"), "{}", out.stdout);
}
