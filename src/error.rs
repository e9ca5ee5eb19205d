//! What goes wrong in a command, as its user reads it, and the exit codes, named in one
//! place. The record keeps its own `RecordError` (its `Display` never shows a path's bytes).

use std::fmt;

/// The exit codes of the contract's table. What "no" means depends on the command's
/// question; 2 is an error everywhere, and the hook's refusal, which every agent blocks on.
pub mod exit {
    /// Pass; valid; found; intact; done.
    pub const OK: i32 = 0;
    /// The answer is no: `check` refuses, `audit verify` finds a break, the catalog is
    /// invalid, `search` finds no tool, a policy case fails, `doctor` finds what stops the guard.
    pub const NO: i32 = 1;
    /// A usage, configuration or input error: nothing could be answered.
    pub const ERROR: i32 = 2;
    /// The hook's refusal (and its fail-closed answers): exit 2 blocks in every agent.
    pub const REFUSE: i32 = 2;
    /// A panic outside the command's own catch (the argument parser's): std's code for it.
    pub const PANIC: i32 = 101;
}

/// An error a command reports and stops on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The rules in force (built-in and `--rules`) cannot be read.
    Rules(crate::rules::RulesError),
    /// The catalog cannot be read or is invalid: each problem names its file and line.
    Catalog(Vec<String>),
    /// What the command was given cannot be read.
    Input(InputError),
}

/// Why what a command was given cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    /// A command to look at that does not split into shell words (an open quote).
    NotShellWords,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::NotShellWords => f.write_str("the command is not valid shell words"),
        }
    }
}

impl std::error::Error for InputError {}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Rules(_) | Error::Catalog(_) | Error::Input(_) => exit::ERROR,
        }
    }

    /// The first problem, without the `error: ` prefix: what a refusal tells the operator.
    pub fn first_problem(&self) -> String {
        match self {
            Error::Rules(why) => why.to_string(),
            Error::Input(why) => why.to_string(),
            Error::Catalog(problems) => problems.first().cloned().unwrap_or_default(),
        }
    }
}

/// One `error: …` line per problem, as the commands print them on stderr.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Rules(why) => write!(f, "error: {why}"),
            Error::Input(why) => write!(f, "error: {why}"),
            Error::Catalog(problems) => {
                for (i, problem) in problems.iter().enumerate() {
                    let sep = if i == 0 { "" } else { "\n" };
                    write!(f, "{sep}error: {problem}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Error {}
