//! Wrappers and payloads → the commands that really run: `sudo -E env X=1 timeout 5 ssh …`
//! is `ssh …`; `bash -c '…'`, `eval …`, `sh <<EOF`, `find -exec`, `xargs` and interpreters'
//! inline code hold commands of their own.

mod find;
mod interpreter;
#[cfg(test)]
mod interpreter_tests;
mod shell;
mod sinks;
mod wrapper;
#[cfg(test)]
mod wrapper_tests;
mod xargs;

use crate::argv::{self, Arg, base_name};
use crate::rules::{Rules, WrapperKind};
use crate::shell::{Command, UNKNOWN};
use find::{fd_exec, find_exec};
pub use interpreter::*;
pub use shell::runs_nothing;
use shell::{file_text, stdin_text};
pub use wrapper::directory as wrapper_directory;
use xargs::xargs;

/// What a command comes to once its wrappers are taken off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A program runs with these words (program first).
    Run(Command),
    /// Shell source that will be parsed and run: a payload.
    Shell {
        source: String,
        depth: usize,
        env: Vec<(String, String)>,
    },
    /// The program word cannot be known statically.
    UnknownProgram(Command),
    /// A shell runs code from its input that cannot be known (`curl … | base64 -d | bash`).
    UnknownCode(Command),
    /// A wrapper another wrapper runs (`nice env -C DIR …`): checked as a command typed
    /// alone is before its wrapper is taken off (the steps after it are what it runs).
    Wrapper(Command),
    /// What one more reading of a wrapper's words runs, where an option the wrapper's table
    /// does not know may take the next word or not: judged as a speculative reading is
    /// (decision 0053), so it refuses only where it reaches the mesh (decision 0063).
    Speculative(Vec<Step>),
}

/// Wrappers taken off one command, at most, over all its readings.
const MAX_WRAPPERS: usize = 64;

/// Takes wrappers off `command` and lists what runs.
pub fn unwrap(rules: &Rules, command: Command, out: &mut Vec<Step>) {
    let mut budget = MAX_WRAPPERS;
    unwrap_within(rules, command, out, &mut budget, false);
}

/// `unwrap` for a command a wrapper runs (`find -exec`, `xargs`): a wrapper it begins with
/// is checked as typed too.
fn unwrap_run(rules: &Rules, command: Command, out: &mut Vec<Step>) {
    let mut budget = MAX_WRAPPERS;
    unwrap_within(rules, command, out, &mut budget, true);
}

/// `unwrap`, taking off at most `budget` wrappers, counted over every reading.
/// `inner`: `command` is run by a wrapper already taken off.
fn unwrap_within(
    rules: &Rules,
    mut command: Command,
    out: &mut Vec<Step>,
    budget: &mut usize,
    mut inner: bool,
) {
    // Each turn takes one wrapper off; a word list only shrinks, so this ends. Each turn
    // also reads the rest of the words, so past a bound (`sudo sudo … ssh`, thousands deep)
    // the program is not looked for: it cannot be known, which is what the caller is told.
    // The bound is shared with the readings a wrapper's unknown options make, so
    // `sudo -Z sudo -Z …` does not double the work at each wrapper.
    while *budget > 0 {
        *budget -= 1;
        let Some(first) = command.words.first() else {
            return;
        };
        if first.contains(UNKNOWN) {
            out.push(Step::UnknownProgram(command));
            return;
        }
        let program = base_name(first).to_string();
        let args: Vec<String> = command.words[1..].to_vec();
        let wrapper = rules.wrapper(&program);
        // `ionice env -C DIR rm F`, `nice tmux setenv …`: a wrapper run by a wrapper is a
        // command as if typed, checked before it is taken off.
        if wrapper.is_some() && inner {
            out.push(Step::Wrapper(command.clone()));
        }
        inner = true;
        if let Some(wrapper) = wrapper {
            match wrapper.kind {
                // `systemd-run -H atlas PROGRAM`: a wrapper that is also a guarded program
                // is checked as itself too.
                WrapperKind::Prefix if rules.program(&program).is_some() => {
                    out.push(Step::Run(command.clone()));
                }
                WrapperKind::Prefix => {}
                WrapperKind::Find => return find_exec(rules, &command, wrapper, &args, out),
                WrapperKind::Fd => return fd_exec(rules, &command, wrapper, &args, out),
                WrapperKind::Xargs | WrapperKind::Parallel => {
                    return xargs(rules, command, wrapper, &args, out);
                }
            }
            // `xterm -geometry 80x24 -e PROGRAM…`: where the option is, the program begins.
            if !wrapper.command_option.is_empty() {
                match args.iter().position(|a| wrapper.command_option.contains(a)) {
                    // `xfce4-terminal -e 'CMD ARGS'`: one word is a command line.
                    Some(at) if args.len() == at + 2 => {
                        out.push(payload(&command, args[at + 1].clone()));
                        return;
                    }
                    Some(at) => {
                        command.words = args[at + 1..].to_vec();
                        continue;
                    }
                    None => return,
                }
            }
            // One scan of the wrapper's own words; where it is not sure how one of them
            // reads, every other reading runs too, speculative (decision 0063).
            let syntax = wrapper::syntax(wrapper);
            let scanned = argv::scan(&syntax, &args);
            for valued in argv::readings(&argv::ambiguous(&syntax, &scanned)) {
                if *budget == 0 {
                    break;
                }
                *budget -= 1;
                let scanned = argv::scan_as(&syntax, &args, &valued);
                let mut steps = Vec::new();
                if let Some(next) = wrapper::take_off(wrapper, &command, &scanned, &mut steps) {
                    unwrap_within(rules, next, &mut steps, budget, true);
                }
                out.push(Step::Speculative(steps));
            }
            match wrapper::take_off(wrapper, &command, &scanned, out) {
                Some(next) => {
                    command = next;
                    continue;
                }
                None => return,
            }
        }
        if program == "eval" {
            out.push(payload(&command, args.join(" ")));
            return;
        }
        if program == "source" || program == "." {
            // `source /dev/stdin <<< 'CMD'`: the text fed to it is the script.
            let script = match args.first().map(String::as_str) {
                Some("/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0") => stdin_text(&command),
                Some(path) => file_text(&command, path),
                None => None,
            };
            if let Some(text) = script {
                out.push(payload(&command, text));
            }
            out.push(Step::Run(command));
            return;
        }
        if let Some(shell) = rules.shell(&program) {
            if runs_nothing(&shell.syntax, &args) {
                out.push(Step::Run(command));
                return;
            }
            let scanned = argv::scan(&shell.syntax, &args);
            let has_command_flag = scanned.iter().any(|a| matches!(a, Arg::Option { name, .. } if name.len() == 2 && name.ends_with(shell.command_flag)));
            let mut ops = argv::operands(&scanned);
            if has_command_flag {
                if let Some(source) = ops.next() {
                    let mut step = payload(&command, source.to_string());
                    if shell.positional
                        && let Step::Shell { env, .. } = &mut step
                    {
                        env.extend(positional(&program, &shell.syntax, &args, source));
                    }
                    out.push(step);
                }
            } else {
                let reads_stdin = scanned
                    .iter()
                    .any(|a| matches!(a, Arg::Option { name, .. } if name == "-s"));
                let ops_first = if reads_stdin { Some("-") } else { ops.next() };
                let script = match ops_first {
                    // No script file (or `-s`, `-`, `/dev/stdin`): the shell runs its input.
                    None | Some("-" | "/dev/stdin") => stdin_text(&command),
                    // A script the command itself wrote: `bash <(echo …)`, `echo … > s.sh; sh s.sh`.
                    Some(path) => file_text(&command, path),
                };
                match script {
                    Some(text) if reads_stdin && shell.positional => {
                        let mut step = payload(&command, text);
                        if let Step::Shell { env, .. } = &mut step {
                            env.extend(shell::stdin_positional(&program, &shell.syntax, &args));
                        }
                        out.push(step);
                    }
                    Some(text) => out.push(payload(&command, text)),
                    None if reads_input(&command, ops_first) => {
                        out.push(Step::UnknownCode(command.clone()));
                    }
                    None => {}
                }
            }
            out.push(Step::Run(command));
            return;
        }
        if let Some(interpreter) = rules.interpreter(&program) {
            if let Some(code) = interpreter_code(interpreter, &command, &args) {
                code_steps(interpreter, &command, &code, out);
            }
            out.push(Step::Run(command));
            return;
        }
        out.push(Step::Run(command));
        return;
    }
    // The last wrapper taken off may have been the last word: nothing runs, as below the bound.
    if !command.words.is_empty() {
        out.push(Step::UnknownProgram(command));
    }
}

/// A shell that reads its script from an input whose content cannot be known (a pipe from
/// a program the walk cannot compute, bytes that are not text).
fn reads_input(command: &Command, script: Option<&str>) -> bool {
    matches!(script, None | Some("-" | "/dev/stdin"))
        && matches!(
            command.stdin,
            crate::shell::Stdin::Unknown | crate::shell::Stdin::Bytes(_)
        )
}

fn payload(command: &Command, source: String) -> Step {
    Step::Shell {
        source,
        depth: command.depth + 1,
        env: command.env.clone(),
    }
}

/// A `-c` script's `$0`, `$1`, …, `$@`, `$*`, `$#`: the words after the command string,
/// where the shell's options end at it (bash stops reading options at its first operand);
/// none when that is not where the string is.
fn positional(
    program: &str,
    syntax: &crate::rules::Syntax,
    args: &[String],
    source: &str,
) -> Vec<(String, String)> {
    let operands = operands_after_options(syntax, args);
    let Some((first, rest)) = operands.split_first() else {
        return Vec::new();
    };
    if first != source {
        return Vec::new();
    }
    match rest.split_first() {
        Some((zero, params)) => shell::parameters(zero, params),
        None => shell::parameters(program, &[]),
    }
}

/// Whether a variable is one of a script's positional parameters (`0`, `1`, `@`, `#`).
pub fn is_positional(name: &str) -> bool {
    matches!(name, "@" | "*" | "#")
        || (!name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()))
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// A wrapper's operands: where its options end, the program begins.
fn operands_after_options(syntax: &crate::rules::Syntax, args: &[String]) -> Vec<String> {
    let stop = crate::rules::Syntax {
        stop_at_operand: true,
        ..syntax.clone()
    };
    argv::operands(&argv::scan(&stop, args))
        .map(str::to_string)
        .collect()
}

fn with_words(command: &Command, words: Vec<String>) -> Command {
    Command {
        words,
        depth: command.depth + 1,
        ..command.clone()
    }
}
