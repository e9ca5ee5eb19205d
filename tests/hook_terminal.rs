//! `mesh-guard hook` run by hand in a terminal says what it waits for, and still decides
//! the event it is then given; fed by an agent (a pipe), it says nothing extra (issue 15).

mod common;
use common::*;
use std::io::Write;
use std::process::{Command, Stdio};

const EVENT: &str = r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"docker logs mesh-controller"}}"#;
const WAITING: &str = "mesh-guard hook: waiting for a hook event (JSON) on stdin";

#[test]
fn a_terminal_is_told_what_the_hook_waits_for() {
    // util-linux `script` gives the hook a pseudo-terminal as stdin.
    if Command::new("script").arg("--version").output().is_err() {
        let note = "`script` (util-linux) is not installed: the terminal test cannot run";
        assert!(
            std::env::var_os("MESH_GUARD_E2E_REQUIRED").is_none_or(|v| v != "1"),
            "{note}"
        );
        eprintln!("{note}");
        return;
    }
    let catalog = example_catalog();
    let dir = Scratch::new("hook-tty");
    let line = format!(
        "'{BIN}' --catalog '{}' --db '{}' hook",
        catalog.display(),
        dir.path("a.db").display()
    );
    let mut child = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env_remove("MESH_GUARD_OVERRIDE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("{EVENT}\n").as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(WAITING), "{text}");
    assert!(
        text.contains(r#""permissionDecision":"deny""#),
        "the event is still decided: {text}"
    );
    assert_eq!(out.status.code(), Some(2), "{text}");

    let piped = run(
        &strs(&with_paths(&catalog, &dir.path("b.db"), &["hook"])),
        &[],
        EVENT.as_bytes(),
    );
    assert_eq!(piped.code, 2);
    assert!(!piped.stderr.contains(WAITING), "{}", piped.stderr);
}
