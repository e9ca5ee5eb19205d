//! One decision and its answer, shared by the commands that decide (hook, check, test,
//! mcp): the decision, the tools to use instead, the message, and the refusal's exit.

use crate::catalog::{self, Catalog, LazyCatalog};
use crate::config::Paths;
use crate::decide::{Decision, Guard, Reached, Refusal};
use crate::error::Error;
use crate::instead::{self, Suggestion};
use crate::message;
use crate::rule::Rule;
use crate::rules::Rules;
use crate::world::World;
use std::path::PathBuf;

/// A decision and everything the answer needs.
pub struct Outcome {
    pub decision: Decision,
    /// For a refusal, the targets its walk found: what a scoped override counts.
    pub reached: Reached,
    pub instead: Vec<Suggestion>,
    pub message: String,
}

pub(crate) fn hints(mcp: bool) -> message::Hints {
    message::Hints { mcp_search: mcp }
}

/// The outcome's message as an agent with `hints` reads it.
pub(crate) fn message_for(outcome: &Outcome, hints: message::Hints) -> String {
    match outcome.decision.refusal() {
        Some(refusal) if hints.mcp_search => message::render_for(refusal, &outcome.instead, hints),
        _ => outcome.message.clone(),
    }
}

/// Decides one shell command against the rules and the catalog at `paths`.
pub fn decide(
    paths: &Paths,
    rules: &Rules,
    catalog: &LazyCatalog,
    source: &str,
    cwd: Option<PathBuf>,
) -> Outcome {
    // The command's world, once for the event: a second decision reads the same.
    let world = paths.world(cwd);
    let outcome = decide_once(rules, catalog, source, &world);
    // A cache that failed under the decision may have answered "not of the mesh": decide
    // again from the catalog itself (or refuse, if it cannot be read).
    if catalog.recover() {
        decide_once(rules, catalog, source, &world)
    } else {
        outcome
    }
}

/// Not inlined: `decide` calls it twice, and each inlined copy would keep its own room in
/// a frame that is on the stack under the whole walk.
#[inline(never)]
fn decide_once(rules: &Rules, catalog: &LazyCatalog, source: &str, world: &World) -> Outcome {
    let guard = Guard {
        rules,
        catalog,
        world,
    };
    let judged = guard.judged(source);
    let decision = judged.decision;
    // A refusal only reported (decision 0060) is ranked and said as well: the record keeps
    // the tools it would have named and the message the agent would have read.
    let (instead, message) = match decision.refusal() {
        Some(refusal) => said(catalog, refusal),
        None => (Vec::new(), String::new()),
    };
    Outcome {
        decision,
        reached: judged.reached,
        instead,
        message,
    }
}

/// A refusal's mesh tools and its message. Not inlined: the ranking's locals would stay on
/// the stack under every decision's walk, the deepest the hook goes.
#[inline(never)]
fn said(catalog: &LazyCatalog, refusal: &Refusal) -> (Vec<Suggestion>, String) {
    let instead = match catalog.get() {
        Ok(c) => instead::for_refusal(c, refusal, 3),
        _ => Vec::new(),
    };
    let message = message::render(refusal, &instead);
    (instead, message)
}

/// The refusal for what went wrong before a decision could be made.
pub fn fail_closed(detail: &str) -> String {
    let why = crate::decide::Why::Internal(detail.to_string());
    message::render(&Refusal::plain(Rule::FailClosed, "", why), &[])
}

pub(crate) fn load_rules(paths: &Paths) -> Result<Rules, Error> {
    Rules::load(paths.rules.as_deref()).map_err(Error::Rules)
}

pub(crate) fn load_catalog(paths: &Paths) -> Result<Catalog, Error> {
    catalog::load(&paths.catalog)
        .map_err(|errors| Error::Catalog(errors.iter().map(ToString::to_string).collect()))
}
