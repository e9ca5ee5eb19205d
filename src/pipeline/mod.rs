//! `mesh-guard hook`, top to bottom: one event in, one [`Answer`] out. `hook` reads the event,
//! parses it, loads the rules and opens the catalog once, decides, settles any override grant
//! (`settle`), records (`record`), and returns the answer, which [`Answer::print`] alone says.

mod record;
mod settle;

pub use record::append;
pub use settle::{grant_in_force, verify_grant, verify_grant_on};

use crate::app::{Outcome, decide, fail_closed, load_rules, message_for};
use crate::catalog::LazyCatalog;
use crate::config::Paths;
use crate::decide::{Broken, Decision, PassReason, Reached, Refusal, Why};
use crate::error::exit;
use crate::hook::{self, Action, Agent, AgentChoice, Event};
use crate::message;
use crate::rule::Rule;
use std::path::PathBuf;

/// Past this, stdin is not read further and the event is refused.
pub(crate) const MAX_EVENT_BYTES: u64 = 8 * 1024 * 1024;

/// What the hook answers an event. Nothing is printed until `print`: the pipeline decides and
/// records, then says it once.
#[derive(Debug, PartialEq, Eq)]
#[must_use]
pub enum Answer {
    /// Nothing of the mesh, or nothing the guard judges: exit 0, silent.
    Pass,
    /// Refused in report-only mode (decision 0060): it runs, its `would-refuse` row is written;
    /// `note` says on stderr that the row could not be.
    Reported { note: Option<String> },
    /// The agent's own denial, the message on stderr (with `note`, for the operator), exit 2.
    Refused {
        agent: Agent,
        message: String,
        note: Option<String>,
    },
    /// The operator's signed grant covers it and its row is durably written: exit 0.
    Overridden,
}

impl Answer {
    /// A refusal with nothing to record: the deadline's, a panic's, an unreadable event's.
    pub fn refused(agent: Agent, message: String) -> Answer {
        Answer::Refused {
            agent,
            message,
            note: None,
        }
    }

    /// Prints the answer in the agent's protocol and gives the exit code.
    pub fn print(self) -> i32 {
        match self {
            Answer::Pass | Answer::Overridden => exit::OK,
            Answer::Reported { note } => {
                if let Some(note) = note {
                    errln!("{note}");
                }
                exit::OK
            }
            Answer::Refused {
                agent,
                message,
                note,
            } => {
                // One answer only: the deadline's refusal may not start while this is written.
                crate::deadline::disarm();
                outln!("{}", hook::deny(agent, &message));
                let _ = crate::io::flush_out();
                errln!("{message}");
                if let Some(note) = note {
                    errln!("{note}");
                }
                exit::REFUSE
            }
        }
    }
}

/// The hook, one way down: read, parse, rules and catalog, decide, settle, record, answer.
pub fn hook(paths: &Paths, choice: AgentChoice, hints: message::Hints) -> Answer {
    // Lets the tests prove that a panic becomes a refusal; absent from release builds.
    if cfg!(debug_assertions) && crate::io::var_os("MESH_GUARD_DEBUG_PANIC").is_some() {
        panic!("panic requested by MESH_GUARD_DEBUG_PANIC");
    }
    // 1. Read and 2. parse: what cannot be read is refused, in the agent's protocol if known.
    let event = match read_and_parse(choice) {
        Ok(event) => event,
        Err(answer) => return answer,
    };
    // 3. The catalog is opened once and read only if the decision or the record needs it.
    let catalog = paths.lazy_catalog();
    // 4. Decide.
    let outcome = decide_event(paths, &catalog, &event);
    answer(paths, &catalog, &event, outcome, hints)
}

/// Steps 1 and 2: the event, or the refusal of what cannot be read. Apart from `hook`, as
/// `answer` is, so that neither's locals stay on the stack under the decision (the deepest
/// the hook's stack goes, its pages touched by every pass).
#[inline(never)]
fn read_and_parse(choice: AgentChoice) -> Result<Event, Answer> {
    let input = read_event().map_err(|why| Answer::refused(choice.fallback(), fail_closed(why)))?;
    hook::parse(choice, &input)
        .map_err(|why| Answer::refused(choice.fallback(), fail_closed(&why.to_string())))
}

/// Steps 5 and 6, and the answer: a pass is answered at once; a refusal (or a reported one)
/// is settled and recorded.
#[inline(never)]
fn answer(
    paths: &Paths,
    catalog: &LazyCatalog,
    event: &Event,
    outcome: Outcome,
    hints: message::Hints,
) -> Answer {
    let message = message_for(&outcome, hints);
    let Outcome {
        decision,
        reached,
        instead,
        ..
    } = outcome;
    let answered = Answered {
        paths,
        catalog,
        event,
    };
    match decision {
        Decision::Pass(PassReason::Reported(refusal)) => {
            // 6. Record: a would-refuse row; the command runs either way.
            answered.reported(&refusal, &instead, &message)
        }
        Decision::Pass(_) => Answer::Pass,
        // 5. Settle any grant and 6. record: the refusal or the override.
        Decision::Refuse(refusal) => answered.refused(&refusal, &reached, &instead, message),
    }
}

/// What answering one event needs past its decision: where to record, the catalog's handle
/// (already read if the decision read it: the record's system log is its setting), the event.
pub(crate) struct Answered<'a> {
    pub paths: &'a Paths,
    pub catalog: &'a LazyCatalog,
    pub event: &'a Event,
}

/// The event's decision against the rules, loaded once (a broken rules file refuses every
/// event): a shell command walked; a file a tool writes checked against the guard's files;
/// anything else passes.
fn decide_event(paths: &Paths, catalog: &LazyCatalog, event: &Event) -> Outcome {
    let rules = match load_rules(paths) {
        // A hook is one process per event: the entries it read are left to the exit, not
        // freed one by one (each drop's code is pages a pass would touch for nothing). Run
        // in-process, as the tests run it, each event's rules stay allocated.
        Ok(rules) => std::mem::ManuallyDrop::new(rules),
        Err(error) => return rules_broken(&error, event),
    };
    let cwd = Some(PathBuf::from(&event.cwd)).filter(|p| p.is_absolute());
    match &event.action {
        Action::Shell { command } => decide(paths, &rules, catalog, command, cwd),
        Action::WriteFile { path, content } => written(paths, path, content, cwd),
        Action::Other => passed(),
    }
}

/// Every event refused: the rules cannot be loaded. Apart from `decide_event`, whose frame
/// is on the stack under a command's whole walk, as `written` is.
#[cold]
#[inline(never)]
fn rules_broken(error: &crate::error::Error, event: &Event) -> Outcome {
    let broken = Broken::Rules(error.first_problem());
    let shown = record::shown_command(event);
    refused(Refusal::plain(
        Rule::FailClosed,
        &shown,
        Why::Broken(broken),
    ))
}

/// A file a tool writes, checked against the guard's files.
#[inline(never)]
fn written(paths: &Paths, path: &str, content: &str, cwd: Option<PathBuf>) -> Outcome {
    match write_refusal(paths, path, content, cwd) {
        Some(refusal) => refused(refusal),
        None => passed(),
    }
}

/// A refusal decided before any walk: no tools to name, no targets reached.
fn refused(refusal: Refusal) -> Outcome {
    let message = message::render(&refusal, &[]);
    Outcome {
        decision: Decision::Refuse(refusal),
        reached: Reached::default(),
        instead: Vec::new(),
        message,
    }
}

fn passed() -> Outcome {
    Outcome {
        decision: Decision::Pass(PassReason::NotMesh),
        reached: Reached::default(),
        instead: Vec::new(),
        message: String::new(),
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
    let world = paths.world(cwd);
    if world.covers(path, None) {
        return Some(Refusal::plain(
            Rule::SelfProtection,
            &format!("write {path}"),
            Why::ChangesGuardFiles,
        ));
    }
    // The guard's variables written where a session starts from (a README may say them).
    // Only a try: what a session starts with cannot override unsigned (decision 0059).
    let resolved = world.resolve(path, None);
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

/// The answer to a panic inside the hook.
pub fn internal_error_message() -> String {
    fail_closed("mesh-guard failed inside (an internal error)")
}
