//! Codex's wire format: Claude's event (with a `turn_id`), tool names mapped to Claude's,
//! and Claude's answers.

use super::{Tools, claude};
use serde_json::Value;

pub(super) const TOOLS: Tools = claude::TOOLS;

pub(super) fn deny(message: &str) -> Value {
    claude::deny(message)
}

/// Claude's form, which every agent is given at SessionStart today.
pub(super) fn session_start(context: &str) -> String {
    claude::session_start(context)
}
