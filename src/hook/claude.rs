//! Claude Code's wire format (docs/agents/): `tool_name`/`tool_input` in, `hookSpecificOutput`
//! out. Copilot CLI's Claude-style payload and Codex read and write the same shapes.

use super::Tools;
use serde_json::Value;

/// Claude Code's tools, and Codex's shell tools, which its Claude-shaped event names.
pub(super) const TOOLS: Tools = Tools {
    name: "tool_name",
    input: "tool_input",
    shell: &["Bash", "shell", "local_shell", "exec_command"],
    writers: &["Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch"],
};

pub(super) fn deny(message: &str) -> Value {
    serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": message,
        }
    })
}

pub(super) fn session_start(context: &str) -> String {
    serde_json::json!({
        "hookSpecificOutput": { "hookEventName": "SessionStart", "additionalContext": context }
    })
    .to_string()
}
