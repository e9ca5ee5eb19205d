//! The hook entries `install` writes for each agent: the pre-tool hook that decides, and the
//! session-start hook that hands the model the "instead of" table before its first command
//! (docs/agents/<agent>.md shows each as its page documents it).

use serde_json::{Value, json};

/// The tools whose calls Claude's PreToolUse hook sees: the shell and the file writers.
pub const MATCHER: &str = "Bash|Write|Edit|MultiEdit|NotebookEdit";

/// The hook command: any failure but a refusal is turned into one (docs/agents/hook-spec.md),
/// in words that say it is the guard's decision (a bare `|| exit 2` left Claude Code showing
/// the model "Segmentation fault" alone).
fn fail_closed_command(prefix: &str, agent: &str) -> String {
    const WORDS: &str = "Decided by mesh-guard, not an error: do not retry or work round it. Tell the operator: mesh-guard could not run (exit $s), so it refuses every command until it can.";
    if agent == "copilot" {
        // Copilot shows the model only "hook exited with code 2" unless stdout carries the
        // deny answer: the reason goes there too.
        return format!(
            "{prefix} hook --agent {agent} || {{ s=$?; [ \"$s\" -eq 2 ] || {{ m=\"{WORDS}\"; echo \"$m\" >&2; printf '{{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"%s\"}}\\n' \"$m\"; }}; exit 2; }}"
        );
    }
    format!(
        "{prefix} hook --agent {agent} || {{ s=$?; [ \"$s\" -eq 2 ] || echo \"{WORDS}\" >&2; exit 2; }}"
    )
}

/// The session-start command: it never blocks a session (a start hook's failure only loses
/// the table), so it needs no fail-closed tail.
fn session_command(prefix: &str, agent: &str) -> String {
    format!("{prefix} session-start --agent {agent}")
}

/// The entries `install` adds for `agent`: (event, entry), and the file's format version
/// where the agent wants one.
pub(crate) fn entries(agent: &str, prefix: &str) -> (Vec<(&'static str, Value)>, Option<u64>) {
    let command = fail_closed_command(prefix, agent);
    let start = session_command(prefix, agent);
    match agent {
        "gemini" => (
            vec![
                (
                    "BeforeTool",
                    json!({"matcher": "*", "hooks": [{
                        "name": "mesh-guard", "type": "command", "command": command,
                        "timeout": 30000, "description": "Refuses shell commands aimed at the mesh",
                    }]}),
                ),
                (
                    "SessionStart",
                    json!({"hooks": [{
                        "name": "mesh-guard-session-start", "type": "command", "command": start,
                        "timeout": 30000, "description": "The mesh tools to use instead of ssh and kin",
                    }]}),
                ),
            ],
            None,
        ),
        "codex" => (
            vec![
                (
                    "PreToolUse",
                    json!({"matcher": "*", "hooks": [{
                        "type": "command", "command": command, "timeout": 30, "statusMessage": "mesh-guard",
                    }]}),
                ),
                (
                    "SessionStart",
                    json!({"hooks": [{
                        "type": "command", "command": start, "timeout": 30, "statusMessage": "mesh-guard",
                    }]}),
                ),
            ],
            None,
        ),
        "copilot" => (
            vec![
                (
                    "preToolUse",
                    json!({"type": "command", "bash": command, "timeoutSec": 30}),
                ),
                (
                    "sessionStart",
                    json!({"type": "command", "bash": start, "timeoutSec": 30}),
                ),
            ],
            Some(1),
        ),
        "cursor" => (
            vec![
                (
                    "beforeShellExecution",
                    json!({"command": command, "timeout": 30, "failClosed": true}),
                ),
                (
                    "preToolUse",
                    json!({"matcher": "Write|Delete", "command": command, "timeout": 30, "failClosed": true}),
                ),
                ("sessionStart", json!({"command": start, "timeout": 30})),
            ],
            Some(1),
        ),
        _ => (
            vec![
                (
                    "PreToolUse",
                    json!({"matcher": MATCHER, "hooks": [{
                        "type": "command",
                        "command": command,
                    }]}),
                ),
                (
                    "SessionStart",
                    json!({"hooks": [{
                        "type": "command",
                        "command": format!("{prefix} session-start --agent claude || exit 2"),
                    }]}),
                ),
            ],
            None,
        ),
    }
}
