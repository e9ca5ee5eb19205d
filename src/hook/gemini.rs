//! Gemini CLI's wire format: a `BeforeTool` event, answered with `decision`/`reason`.

use super::{Tools, claude};
use serde_json::Value;

pub(super) const TOOLS: Tools = Tools {
    name: "tool_name",
    input: "tool_input",
    shell: &["run_shell_command"],
    writers: &["write_file", "replace"],
};

pub(super) fn deny(message: &str) -> Value {
    serde_json::json!({ "decision": "deny", "reason": message })
}

/// Claude's form, which every agent is given at SessionStart today.
pub(super) fn session_start(context: &str) -> String {
    claude::session_start(context)
}
