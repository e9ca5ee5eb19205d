//! A refusal's `Why` in words: the clause after "mesh-guard refused `…`:".

use crate::decide::{OVERRIDE_VAR, Refusal, Why};

/// "its target `"$H"` cannot be known before it runs", "it changes the guard's own files …".
pub fn clause(why: &Why) -> String {
    match why {
        Why::Reaches => String::new(),
        Why::ArgumentOf(program) => format!(
            "it is an argument of `{program}`, a program mesh-guard does not know, which may run it"
        ),
        Why::UnknownProgram(program) => {
            format!("its program `{program}` cannot be known before it runs")
        }
        Why::UnknownCode(what) => format!("{what} cannot be known before it runs"),
        Why::UnknownTarget(value) => format!("its target `{value}` cannot be known before it runs"),
        Why::Unparsable => "part of it cannot be parsed as a shell command".into(),
        Why::UnparsableGuarded => "part of it cannot be parsed as a shell command, and it mentions a program the guard checks".into(),
        Why::TooLong { kib } => format!("the command is longer than {kib} KiB, too long to check"),
        Why::Incomplete(limit) => limit.clone(),
        Why::PluginOff => operators("it turns the guard's plugin off"),
        Why::AgentVariable(name) => {
            operators(&format!("it starts an agent with {name} set by the command"))
        }
        Why::AgentConfigMoved(name) => operators(&format!(
            "it starts an agent with {name} moved, away from the settings that hold the guard's hooks"
        )),
        Why::AgentSettingsOff => {
            operators("it starts an agent with settings that switch the guard's hooks off")
        }
        Why::AgentWithoutSettings => {
            operators("it starts an agent without the settings that hold the guard's hooks")
        }
        Why::AgentHooksAway => operators("it starts an agent with its hooks configured away"),
        Why::GuardSubcommand(subcommand) => operators(&format!(
            "it runs `mesh-guard {subcommand}`, which destroys or rewrites the guard's record or changes how the guard is installed"
        )),
        Why::OpensRecord => {
            "it opens the guard's audit record with another client; those are the operator's".into()
        }
        Why::ChangesGuardFiles => "it changes the guard's own files (its catalog, rules, record, binary or plugin) or the agent's hook settings; those are the operator's".into(),
        Why::SetsOverride => format!("it sets {OVERRIDE_VAR} or another of the guard's variables, which only the operator may set, in the environment a session starts with"),
        Why::WritesOverride => format!("it writes {OVERRIDE_VAR} or another of the guard's variables into a file a session starts from; only the operator may set them"),
        Why::Broken(broken) => super::setup::reason(broken),
        Why::Internal(what) => what.clone(),
    }
}

fn operators(what: &str) -> String {
    format!("{what}; that is the operator's to do")
}

/// One line for `check` and the record: why, and what it reaches.
pub fn reason(r: &Refusal) -> String {
    let why = clause(&r.why);
    if let Why::ArgumentOf(_) = r.why {
        return format!("it reaches {} {}; {why}", r.reaches, super::over_phrase(r));
    }
    if r.reaches.is_empty() {
        why
    } else if why.is_empty() {
        format!("it reaches {} {}", r.reaches, super::over_phrase(r))
            .trim_end()
            .to_string()
    } else {
        format!("{why}; it names {}", r.reaches)
    }
}
