//! Cursor's wire format: its own events (`beforeShellExecution`, `preToolUse`, …) and a
//! `permission` answer with a message for the user and one for the agent.

use super::{Action, EventError, Tools, claude, command_of, tool_call};
use serde_json::Value;

/// Cursor's generic `preToolUse`.
const TOOLS: Tools = Tools {
    name: "tool_name",
    input: "tool_input",
    shell: &["Shell"],
    writers: &["Write", "Edit", "Delete"],
};

pub(super) fn action(json: &Value) -> Result<Action, EventError> {
    match json.get("hook_event_name").and_then(Value::as_str) {
        Some("beforeShellExecution") => command_of(Some(json), "beforeShellExecution"),
        Some("preToolUse") => tool_call(json, &TOOLS),
        Some("beforeMCPExecution" | "beforeReadFile") => Ok(Action::Other),
        _ => Err(EventError::NotACursorEvent),
    }
}

/// Cursor names the session a conversation; older events say `session_id`.
pub(super) fn session_id(json: &Value) -> Option<String> {
    json.get("conversation_id")
        .and_then(Value::as_str)
        .map(str::to_string)
}

pub(super) fn deny(message: &str) -> Value {
    serde_json::json!({ "permission": "deny", "user_message": message, "agent_message": message })
}

/// Cursor's `sessionStart` reads `additional_context`; Claude's form is kept beside it for
/// a Cursor that runs the hook from Claude Code's settings.
pub(super) fn session_start(context: &str) -> String {
    let mut answer: Value =
        serde_json::from_str(&claude::session_start(context)).unwrap_or_else(|_| Value::Null);
    if let Some(map) = answer.as_object_mut() {
        map.insert("additional_context".into(), Value::String(context.into()));
    }
    answer.to_string()
}
