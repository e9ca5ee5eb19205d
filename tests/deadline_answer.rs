//! The deadline's refusal is fixed at build time (src/deadline/answer.rs); rendered the
//! normal way it must give the same bytes, for every agent protocol. (Here rather than in the
//! module: rendering needs `app`, which disarms the deadline, and the two would import each
//! other.)

use mesh_guard::deadline::answer::{MESSAGE, STDERR, stdout};
use mesh_guard::hook::Agent;

/// Every variant; `stdout`'s match makes a new one choose its answer, and it belongs here.
const EVERY_AGENT: [Agent; 6] = [
    Agent::Claude,
    Agent::Codex,
    Agent::Gemini,
    Agent::Copilot,
    Agent::CopilotClaudeStyle,
    Agent::Cursor,
];

#[test]
fn the_fixed_answers_are_the_rendered_refusal() {
    let message = mesh_guard::app::fail_closed("the check took too long");
    assert_eq!(
        MESSAGE, message,
        "the deadline's message renders differently now: update `message!` in src/deadline/answer.rs to the right-hand side"
    );
    assert_eq!(STDERR, format!("{message}\n"));
    for agent in EVERY_AGENT {
        let rendered = format!("{}\n", mesh_guard::hook::deny(agent, &message));
        assert_eq!(
            stdout(agent),
            rendered,
            "{agent:?}'s deny answer renders differently now: update its constant in src/deadline/answer.rs to the right-hand side"
        );
    }
}
