//! `find -exec` and `fd -x`: the command each runs per file.

use super::{Step, unwrap_run, with_words};
use crate::rules::Rules;
use crate::shell::{Command, UNKNOWN};

/// `find … -exec PROGRAM ARGS… ;` (or `+`): the exec options are the wrapper's
/// `command_option` (`-exec`, `-execdir`, `-ok`, `-okdir`).
pub(crate) fn find_exec(
    rules: &Rules,
    command: &Command,
    wrapper: &crate::rules::Wrapper,
    args: &[String],
    out: &mut Vec<Step>,
) {
    let mut i = 0;
    while i < args.len() {
        if wrapper.command_option.contains(&args[i]) {
            let end = args[i + 1..]
                .iter()
                .position(|a| a == ";" || a == "+")
                .map_or(args.len(), |p| i + 1 + p);
            let words: Vec<String> = args[i + 1..end]
                .iter()
                .map(|a| a.replace("{}", UNKNOWN.encode_utf8(&mut [0; 4])))
                .collect();
            unwrap_run(rules, with_words(command, words), out);
            i = end;
        }
        i += 1;
    }
    out.push(Step::Run(command.clone()));
}

/// `fd PATTERN -x PROGRAM ARGS…`: the rest after one of the wrapper's `command_option`
/// (`-x`, `--exec`, `-X`, `--exec-batch`) is a command.
pub(crate) fn fd_exec(
    rules: &Rules,
    command: &Command,
    wrapper: &crate::rules::Wrapper,
    args: &[String],
    out: &mut Vec<Step>,
) {
    if let Some(at) = args.iter().position(|a| wrapper.command_option.contains(a)) {
        unwrap_run(rules, with_words(command, args[at + 1..].to_vec()), out);
    }
    out.push(Step::Run(command.clone()));
}
