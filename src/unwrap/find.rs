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
    let reading = crate::shell::find_reading(args);
    let mut i = 0;
    while i < args.len() {
        if wrapper.command_option.contains(&args[i]) {
            let end = args[i + 1..]
                .iter()
                .position(|a| a == ";" || a == "+")
                .map_or(args.len(), |p| i + 1 + p);
            // `-exec`: `{}` is a path that begins with a start point, never an option;
            // `-execdir` puts `./NAME` in another directory, which is not known.
            let under_starts = matches!(args[i].as_str(), "-exec" | "-ok");
            let founds: Vec<String> = if under_starts {
                reading
                    .starts
                    .iter()
                    .map(|s| crate::shell::found_under(s))
                    .collect()
            } else {
                vec![UNKNOWN.to_string()]
            };
            for found in founds {
                let words: Vec<String> = args[i + 1..end]
                    .iter()
                    .map(|a| a.replace("{}", &found))
                    .collect();
                let mut run = with_words(command, words);
                if under_starts && reading.regular_files {
                    run.regular_files = run
                        .words
                        .iter()
                        .filter(|w| w.contains(&found))
                        .cloned()
                        .collect();
                }
                unwrap_run(rules, run, out);
            }
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
