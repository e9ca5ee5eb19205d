//! The deadline's refusal as constants, one per agent protocol: rendering it on every call
//! (the message, then the agent's JSON) cost every hook call the work and the page faults of
//! code a pass never otherwise runs, for an answer that is almost never given.
//! tests/deadline_answer.rs renders it the normal way and fails when the two differ.

use crate::hook::Agent;

/// The message, as a macro so that `concat!` can build the answers from it.
macro_rules! message {
    () => {
        "Decided by mesh-guard, not an error: do not retry or work round it. Tell the operator: mesh-guard could not check the proposed command: the check took too long; it refuses what it cannot check. Nothing else is disabled: other commands and tools still work."
    };
}

/// `app::fail_closed("the check took too long")`.
pub const MESSAGE: &str = message!();

/// What the refusal writes to stderr.
pub const STDERR: &str = concat!(message!(), "\n");

/// `hook::deny` for Claude's protocol, which Codex and Copilot's Claude-style configuration share.
const CLAUDE: &str = concat!(
    r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":""#,
    message!(),
    "\"}}\n"
);
const GEMINI: &str = concat!(r#"{"decision":"deny","reason":""#, message!(), "\"}\n");
const COPILOT: &str = concat!(
    r#"{"permissionDecision":"deny","permissionDecisionReason":""#,
    message!(),
    "\"}\n"
);
const CURSOR: &str = concat!(
    r#"{"permission":"deny","user_message":""#,
    message!(),
    r#"","agent_message":""#,
    message!(),
    "\"}\n"
);

/// What the refusal writes to stdout for `agent`: `hook::deny`'s line.
pub fn stdout(agent: Agent) -> &'static str {
    match agent {
        Agent::Claude | Agent::Codex | Agent::CopilotClaudeStyle => CLAUDE,
        Agent::Gemini => GEMINI,
        Agent::Copilot => COPILOT,
        Agent::Cursor => CURSOR,
    }
}
