//! `mesh-guard hook --agent …` against each agent CLI's own event shapes (tests/agents/<agent>/,
//! shaped as in docs/agents/): the refusal in that agent's deny format, a pass, other tools,
//! malformed input, auto-detection and the record's `agent` column.

mod common;

use std::path::{Path, PathBuf};

use common::Output as Run;
use serde_json::{Value, json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(root().join("tests/agents").join(path)).unwrap()
}

fn mesh_guard(args: &[&str], db: &Path, stdin: &[u8]) -> Run {
    let catalog = root().join("examples/catalog.toml");
    let args = common::with_paths(&catalog, db, args);
    common::call(&common::strs(&args), &[], stdin)
}

fn hook(agent: &str, db: &Path, event: &[u8]) -> Run {
    mesh_guard(&["hook", "--agent", agent], db, event)
}

/// The message an agent receives for `ssh atlas uptime`, as `check --json` states it.
fn ssh_atlas_message() -> String {
    let dir = tempfile::tempdir().unwrap();
    let run = mesh_guard(
        &["check", "--json", "ssh atlas uptime"],
        &dir.path().join("a.db"),
        b"",
    );
    assert_eq!(run.code, 1, "check should refuse ssh atlas: {}", run.stderr);
    let object: Value = serde_json::from_str(&run.stdout).unwrap();
    let message = object["message"].as_str().unwrap().to_string();
    assert!(message.contains("mesh exec atlas"), "{message}");
    message
}

/// Each agent's refusal, exactly as docs/agents/hook-spec.md gives it.
fn claude_deny(m: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": m}})
}
fn gemini_deny(m: &str) -> Value {
    json!({"decision": "deny", "reason": m})
}
fn copilot_deny(m: &str) -> Value {
    json!({"permissionDecision": "deny", "permissionDecisionReason": m})
}
fn cursor_deny(m: &str) -> Value {
    json!({"permission": "deny", "user_message": m, "agent_message": m})
}

/// Every fixture that proposes `ssh atlas uptime`: (--agent, fixture, the deny it answers,
/// the record's agent column).
type Deny = fn(&str) -> Value;
const REFUSALS: &[(&str, &str, Deny, &str)] = &[
    ("claude", "claude/shell-refuse.json", claude_deny, "claude"),
    ("codex", "codex/shell-refuse.json", claude_deny, "codex"),
    ("gemini", "gemini/shell-refuse.json", gemini_deny, "gemini"),
    (
        "copilot",
        "copilot/shell-refuse.json",
        copilot_deny,
        "copilot",
    ),
    (
        "copilot",
        "copilot/shell-refuse-args-object.json",
        copilot_deny,
        "copilot",
    ),
    (
        "copilot",
        "copilot/shell-refuse-pascalcase.json",
        claude_deny,
        "copilot",
    ),
    ("cursor", "cursor/shell-refuse.json", cursor_deny, "cursor"),
    (
        "cursor",
        "cursor/shell-refuse-pretooluse.json",
        cursor_deny,
        "cursor",
    ),
];

const AGENTS: &[&str] = &["claude", "codex", "gemini", "copilot", "cursor"];

fn assert_refused(run: &Run, expected: &Value, what: &str) {
    assert_eq!(run.code, 2, "{what}: exit code; stderr {}", run.stderr);
    assert!(
        run.stdout.ends_with('\n') && run.stdout.trim_end().lines().count() == 1,
        "{what}: stdout must be one line of JSON: {:?}",
        run.stdout
    );
    let answer: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{what}: stdout is not JSON ({e}): {:?}", run.stdout));
    assert_eq!(&answer, expected, "{what}: the deny JSON");
    let message = expected
        .pointer("/hookSpecificOutput/permissionDecisionReason")
        .or_else(|| expected.get("reason"))
        .or_else(|| expected.get("permissionDecisionReason"))
        .or_else(|| expected.get("agent_message"))
        .and_then(Value::as_str)
        .unwrap();
    // Codex and Gemini only block an exit 2 whose stderr is non-empty, and read it as the reason.
    assert_eq!(
        run.stderr.lines().next(),
        Some(message),
        "{what}: the message on stderr"
    );
}

fn assert_passed(run: &Run, what: &str) {
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", ""),
        "{what}: a pass is exit 0 with no output at all"
    );
}

/// Refused with exit 2 and a reason on stderr; the answer never allows.
fn assert_fails_closed(run: &Run, what: &str) {
    assert_eq!(run.code, 2, "{what}: exit code; stdout {:?}", run.stdout);
    assert!(
        run.stderr.contains("mesh-guard"),
        "{what}: stderr must say why: {:?}",
        run.stderr
    );
    assert!(
        !run.stdout.contains("allow"),
        "{what}: stdout {:?}",
        run.stdout
    );
}

#[test]
fn each_agent_gets_its_own_deny_format_with_the_message_on_stderr_and_exit_2() {
    let message = ssh_atlas_message();
    let dir = tempfile::tempdir().unwrap();
    for (agent, path, deny, _) in REFUSALS {
        let run = hook(agent, &dir.path().join("a.db"), &fixture(path));
        assert_refused(&run, &deny(&message), &format!("--agent {agent} {path}"));
    }
}

#[test]
fn auto_detection_answers_each_fixture_as_its_agent_would_be_answered() {
    let message = ssh_atlas_message();
    let dir = tempfile::tempdir().unwrap();
    for (_, path, deny, _) in REFUSALS {
        let run = hook("auto", &dir.path().join("a.db"), &fixture(path));
        assert_refused(&run, &deny(&message), &format!("--agent auto {path}"));
    }
    // auto is the default.
    let run = mesh_guard(
        &["hook"],
        &dir.path().join("a.db"),
        &fixture("gemini/shell-refuse.json"),
    );
    assert_refused(&run, &gemini_deny(&message), "hook (no --agent), gemini");
}

#[test]
fn a_harmless_shell_command_passes_silently_for_every_agent() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    for agent in AGENTS {
        let path = format!("{agent}/shell-pass.json");
        assert_passed(
            &hook(agent, &db, &fixture(&path)),
            &format!("--agent {agent}"),
        );
        assert_passed(&hook("auto", &db, &fixture(&path)), &format!("auto {path}"));
    }
    assert!(!db.exists(), "a pass must not be recorded");
}

#[test]
fn tools_other_than_the_shell_pass_for_every_agent() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    for agent in AGENTS {
        let path = format!("{agent}/other-tool.json");
        assert_passed(
            &hook(agent, &db, &fixture(&path)),
            &format!("--agent {agent}"),
        );
        assert_passed(&hook("auto", &db, &fixture(&path)), &format!("auto {path}"));
    }
    // Cursor's generic preToolUse for a non-shell tool.
    let read = json!({"conversation_id": "c1", "hook_event_name": "preToolUse", "tool_name": "Read",
        "tool_input": {"file_path": "/home/dev/project/ssh-atlas.md"}, "tool_use_id": "t1", "cwd": "/home/dev/project"});
    assert_passed(
        &hook("cursor", &db, read.to_string().as_bytes()),
        "cursor preToolUse Read",
    );
}

/// An event that names a shell tool but whose command cannot be read, per agent.
fn broken_shell_events() -> Vec<(&'static str, Value)> {
    vec![
        (
            "claude",
            json!({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": {}}),
        ),
        (
            "claude",
            json!({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": {"command": ["ssh", "atlas"]}}),
        ),
        (
            "codex",
            json!({"hook_event_name": "PreToolUse", "turn_id": "t", "tool_name": "Bash", "tool_input": {"cmd": "ssh atlas"}}),
        ),
        (
            "gemini",
            json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {"command": 7}}),
        ),
        (
            "gemini",
            json!({"hook_event_name": "BeforeTool", "tool_input": {"command": "ssh atlas"}}),
        ),
        (
            "copilot",
            json!({"sessionId": "s", "toolName": "bash", "toolArgs": "{\"command\": \"ssh atlas"}),
        ),
        ("copilot", json!({"sessionId": "s", "toolName": "bash"})),
        (
            "cursor",
            json!({"conversation_id": "c", "hook_event_name": "beforeShellExecution", "cwd": "/"}),
        ),
        (
            "cursor",
            json!({"conversation_id": "c", "hook_event_name": "preToolUse", "tool_name": "Shell", "tool_input": {}}),
        ),
        // Cursor's fields but no event name: what would it be?
        (
            "cursor",
            json!({"conversation_id": "c", "cursor_version": "1.7.2", "command": "ssh atlas uptime"}),
        ),
    ]
}

#[test]
fn malformed_input_is_refused_for_every_agent() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let garbage: &[(&str, &[u8])] = &[
        ("empty", b""),
        ("whitespace", b"  \n"),
        ("not JSON", b"ssh atlas uptime"),
        (
            "truncated JSON",
            b"{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\"",
        ),
        ("a JSON array", b"[1,2]"),
        ("a JSON string", b"\"ssh atlas\""),
        ("not UTF-8", b"{\"command\":\"ssh \xff atlas\"}"),
    ];
    for agent in AGENTS.iter().chain(&["auto"]) {
        for (what, bytes) in garbage {
            assert_fails_closed(
                &hook(agent, &db, bytes),
                &format!("--agent {agent}, {what}"),
            );
        }
    }
    for (agent, event) in broken_shell_events() {
        let bytes = event.to_string();
        assert_fails_closed(
            &hook(agent, &db, bytes.as_bytes()),
            &format!("--agent {agent} {event}"),
        );
        assert_fails_closed(
            &hook("auto", &db, bytes.as_bytes()),
            &format!("auto {event}"),
        );
    }
}

#[test]
fn auto_refuses_what_it_cannot_recognise() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let unknown = [
        json!({"foo": 1}),
        json!({}),
        // A shell command, but from no protocol mesh-guard knows: it must not pass unseen.
        json!({"tool": "bash", "command": "ssh atlas uptime"}),
        json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ssh atlas uptime"}}),
        json!({"hook_event_name": "AfterTool", "tool_name": "run_shell_command", "tool_input": {"command": "ls"}}),
        json!({"hook_event_name": "afterShellExecution", "command": "ls"}),
    ];
    for event in unknown {
        let run = hook("auto", &db, event.to_string().as_bytes());
        assert_fails_closed(&run, &format!("auto {event}"));
        assert!(
            run.stderr.contains("not an event"),
            "auto {event}: {}",
            run.stderr
        );
    }
}

#[test]
fn an_explicit_agent_refuses_another_agents_event_rather_than_misread_it() {
    // Read as Claude's, a Gemini event has no Bash tool and would pass; read as Gemini's,
    // a Claude event has no run_shell_command. Both would let `ssh atlas` through.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let mismatched = [
        ("claude", "gemini/shell-refuse.json"),
        ("claude", "copilot/shell-refuse.json"),
        ("codex", "gemini/shell-refuse.json"),
        ("codex", "cursor/shell-refuse.json"),
        ("gemini", "claude/shell-refuse.json"),
        ("gemini", "cursor/shell-refuse.json"),
        ("copilot", "gemini/shell-refuse.json"),
        ("copilot", "cursor/shell-refuse-pretooluse.json"),
        ("cursor", "claude/shell-refuse.json"),
        ("cursor", "copilot/shell-refuse.json"),
    ];
    for (agent, path) in mismatched {
        let run = hook(agent, &db, &fixture(path));
        assert_fails_closed(&run, &format!("--agent {agent} {path}"));
        assert!(
            run.stderr.contains(&format!("--agent {agent}")),
            "--agent {agent} {path}: {}",
            run.stderr
        );
    }
    // Nor does a mismatched harmless event pass.
    assert_fails_closed(
        &hook("gemini", &db, &fixture("claude/shell-pass.json")),
        "gemini, a claude pass",
    );
}

#[test]
fn the_claude_configuration_also_guards_copilot_and_cursor_which_run_its_hooks() {
    // Copilot CLI and Cursor both run the hooks in .claude/settings.json, with their own payloads.
    let message = ssh_atlas_message();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let run = hook(
        "claude",
        &db,
        &fixture("copilot/shell-refuse-pascalcase.json"),
    );
    assert_refused(&run, &claude_deny(&message), "claude, copilot PascalCase");
    let run = hook(
        "claude",
        &db,
        &fixture("cursor/shell-refuse-pretooluse.json"),
    );
    assert_refused(&run, &cursor_deny(&message), "claude, cursor preToolUse");
    assert_eq!(
        agents_recorded(&db),
        ["copilot", "cursor"],
        "the record names who asked"
    );
}

#[test]
fn copilot_tool_arguments_are_read_as_an_object_or_a_json_string_in_both_payloads() {
    let message = ssh_atlas_message();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let args = json!({"command": "ssh atlas uptime"});
    let events = [
        (
            json!({"sessionId": "s", "cwd": "/", "toolName": "bash", "toolArgs": args.to_string()}),
            copilot_deny as Deny,
        ),
        (
            json!({"sessionId": "s", "cwd": "/", "toolName": "powershell", "toolArgs": args}),
            copilot_deny,
        ),
        (
            json!({"hook_event_name": "PreToolUse", "session_id": "s", "timestamp": "2026-10-20T10:00:00.000Z",
                "cwd": "/", "tool_name": "Bash", "tool_input": args.to_string()}),
            claude_deny,
        ),
    ];
    for (event, deny) in events {
        let run = hook("copilot", &db, event.to_string().as_bytes());
        assert_refused(&run, &deny(&message), &format!("copilot {event}"));
    }
}

fn agents_recorded(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT agent FROM events ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn the_record_says_which_agent_asked() {
    for (choice, label) in [("auto", "auto-detected"), ("explicit", "--agent")] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("audit.db");
        for (agent, path, _, _) in REFUSALS {
            let agent = if choice == "auto" { "auto" } else { agent };
            assert_eq!(hook(agent, &db, &fixture(path)).code, 2, "{path}");
        }
        let expected: Vec<&str> = REFUSALS.iter().map(|r| r.3).collect();
        assert_eq!(agents_recorded(&db), expected, "{label}");
        // And the session, cwd and tool use id come from each agent's own field names.
        let conn = rusqlite::Connection::open(&db).unwrap();
        let rows: Vec<(String, String, String, String, String)> = conn
            .prepare("SELECT agent, session_id, cwd, tool_use_id, command FROM events ORDER BY id")
            .unwrap()
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let sessions: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
        assert_eq!(
            sessions,
            [
                "8f0e6c1a-2b3d-4e5f-9a0b-1c2d3e4f5a6b",
                "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b",
                "3c9f1e2a-7b4d-4a6e-9f10-2b3c4d5e6f70",
                "b7e2c1d4-5f6a-4b8c-9d0e-1f2a3b4c5d6e",
                "b7e2c1d4-5f6a-4b8c-9d0e-1f2a3b4c5d6e",
                "b7e2c1d4-5f6a-4b8c-9d0e-1f2a3b4c5d6e",
                "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
                "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
            ],
            "{label}"
        );
        let tool_use_ids: Vec<&str> = rows.iter().map(|r| r.3.as_str()).collect();
        assert_eq!(
            tool_use_ids,
            [
                "toolu_01ABCDEFGHJKMNPQRSTUVWXY",
                "call_5Xb2kQm8RtVw3Yz7",
                "",
                "",
                "",
                "",
                "",
                "abc123"
            ],
            "{label}"
        );
        for row in &rows {
            assert_eq!(row.2, "/home/dev/project", "{label} cwd {row:?}");
            assert_eq!(row.4, "ssh atlas uptime", "{label} command {row:?}");
        }
    }
}
