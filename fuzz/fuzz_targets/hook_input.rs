//! Bytes as a hook event → parse → decide. Never panics; a parse error is a refusal upstream.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use mesh_guard::hook::{self, Action, AgentChoice};

fuzz_target!(|data: &[u8]| {
    for choice in [AgentChoice::Auto, AgentChoice::Claude] {
        if let Ok(event) = hook::parse(choice, data) {
            if let Action::Shell { command } = &event.action {
                common::decide(command);
            }
        }
    }
    // The same bytes as the command of a well-formed event.
    if let Ok(text) = std::str::from_utf8(data) {
        let event = serde_json::json!({"session_id": "f", "cwd": "/", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": text}});
        if let Ok(event) = hook::parse(AgentChoice::Claude, event.to_string().as_bytes()) {
            if let Action::Shell { command } = &event.action {
                common::decide(command);
            }
        }
    }
});
