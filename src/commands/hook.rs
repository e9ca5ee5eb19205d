//! `mesh-guard hook`: the pipeline's answer to one event, printed (`crate::pipeline`).

use crate::config::Paths;
use crate::hook::AgentChoice;
use crate::message;

pub fn run(paths: &Paths, choice: AgentChoice, hints: message::Hints) -> i32 {
    crate::pipeline::hook(paths, choice, hints).print()
}
