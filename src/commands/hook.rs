//! `mesh-guard hook`: one event in, one answer out (the pipeline).

use crate::app::{decide, fail_closed, load_rules, message_for, refuse};
use crate::config::Paths;
use crate::decide::{Decision, PassReason, Refusal, Rule, Why};
use crate::error::exit;
use crate::hook::{self, Action, AgentChoice};
use crate::message;
use std::path::PathBuf;

/// Past this, stdin is not read further and the event is refused.
pub(crate) const MAX_EVENT_BYTES: u64 = 8 * 1024 * 1024;

pub fn run(paths: &Paths, choice: AgentChoice, hints: message::Hints) -> i32 {
    // Lets the tests prove that a panic becomes a refusal; absent from release builds.
    if cfg!(debug_assertions) && crate::io::var_os("MESH_GUARD_DEBUG_PANIC").is_some() {
        panic!("panic requested by MESH_GUARD_DEBUG_PANIC");
    }
    let fallback_agent = choice.fallback();
    let input = match read_event() {
        Ok(input) => input,
        Err(why) => return refuse(fallback_agent, &fail_closed(why), None),
    };
    let event = match hook::parse(choice, &input) {
        Ok(event) => event,
        Err(why) => return refuse(fallback_agent, &fail_closed(&why), None),
    };
    let rules = match load_rules(paths) {
        Ok(rules) => rules,
        Err(error) => {
            let shown = match &event.action {
                Action::Shell { command } => command.clone(),
                Action::WriteFile { path, .. } => format!("write {path}"),
                Action::Other => String::new(),
            };
            let refusal = Refusal::plain(
                Rule::FailClosed,
                &shown,
                Why::Broken(crate::decide::Broken::Rules(error.first_problem())),
            );
            let message = message::render(&refusal, &[]);
            return crate::session::answer_refusal(paths, &event, &refusal, &[], &message);
        }
    };
    let catalog = paths.lazy_catalog();
    let cwd = Some(PathBuf::from(&event.cwd)).filter(|p| p.is_absolute());
    let command = match &event.action {
        Action::Shell { command } => command.clone(),
        Action::WriteFile { path, content } => {
            return match write_refusal(paths, path, content, cwd) {
                Some(refusal) => {
                    let message = message::render(&refusal, &[]);
                    crate::session::answer_refusal(paths, &event, &refusal, &[], &message)
                }
                None => exit::OK,
            };
        }
        Action::Other => return exit::OK,
    };
    let outcome = decide(paths, &rules, &catalog, &command, cwd);
    match &outcome.decision {
        Decision::Pass(PassReason::Reported(refusal)) => crate::session::answer_reported(
            paths,
            &event,
            refusal,
            &outcome.instead,
            &message_for(&outcome, hints),
        ),
        Decision::Pass(_) => exit::OK,
        Decision::Refuse(refusal) => crate::session::answer_refusal(
            paths,
            &event,
            refusal,
            &outcome.instead,
            &message_for(&outcome, hints),
        ),
    }
}

/// Stdin, whole and bounded: the event, or why it could not be read.
fn read_event() -> Result<Vec<u8>, &'static str> {
    // Someone trying the hook by hand would otherwise face a silent, waiting terminal.
    if crate::io::stdin_is_terminal() {
        errln!(
            "mesh-guard hook: waiting for a hook event (JSON) on stdin; end it with Ctrl-D. Try `mesh-guard check COMMAND` to decide a command by hand."
        );
    }
    let mut input = Vec::new();
    let read = crate::io::read_in(MAX_EVENT_BYTES + 1, &mut input);
    if read.is_err() {
        return Err("the hook input could not be read");
    }
    if input.len() as u64 > MAX_EVENT_BYTES {
        return Err("the hook input is larger than 8 MiB");
    }
    Ok(input)
}

/// A file-writing tool may not set the override or change the guard's own files.
pub(crate) fn write_refusal(
    paths: &Paths,
    path: &str,
    content: &str,
    cwd: Option<PathBuf>,
) -> Option<Refusal> {
    let protected = paths.protected(cwd);
    if protected.covers(path, None) {
        return Some(Refusal::plain(
            Rule::SelfProtection,
            &format!("write {path}"),
            Why::ChangesGuardFiles,
        ));
    }
    // The guard's variables written where a session starts from (a README may say them).
    // Only a try: what a session starts with cannot override unsigned (decision 0059).
    let resolved = protected.resolve(path, None);
    let startup = crate::protect::is_startup_file(path)
        || crate::protect::is_startup_file(&resolved.to_string_lossy());
    (startup && crate::protect::assigns_guard_variable(content)).then(|| {
        Refusal::plain(
            Rule::Override,
            &format!("write {path}"),
            Why::WritesOverride,
        )
    })
}
