//! Copilot CLI's own wire format: the only camelCase event (`toolName`, `toolArgs`, whose
//! arguments may be a JSON string), answered with `permissionDecision`.

use super::{Tools, claude};
use serde_json::Value;

pub(super) const TOOLS: Tools = Tools {
    name: "toolName",
    input: "toolArgs",
    shell: &["bash", "powershell"],
    writers: &["create", "edit", "apply_patch"],
};

/// The event's field that names the session.
pub(super) const SESSION_ID: &str = "sessionId";

pub(super) fn deny(message: &str) -> Value {
    serde_json::json!({ "permissionDecision": "deny", "permissionDecisionReason": message })
}

/// Claude's form, which every agent is given at SessionStart today.
pub(super) fn session_start(context: &str) -> String {
    claude::session_start(context)
}
