//! What a shell runs from its input or a script file the command itself wrote.

use crate::shell::{Command, Stdin};

pub(crate) fn stdin_text(command: &Command) -> Option<String> {
    match &command.stdin {
        Stdin::Text(text) => Some(text.clone()),
        Stdin::Bytes(bytes) => crate::shell::shell_text(bytes),
        Stdin::Unknown | Stdin::Inherited => None,
    }
}

/// The content of a file the command itself wrote, if `path` names one.
pub(crate) fn file_text(command: &Command, path: &str) -> Option<String> {
    command
        .files
        .iter()
        .find(|(p, _)| p == path)
        .map(|(_, text)| text.clone())
}

/// Whether a shell's own options make it read its commands and run none: `-n` in any flag
/// group, or `-o noexec` (POSIX `sh`: "read commands but do not execute them"). Only the
/// options before its first operand are the shell's (`bash s.sh -n` runs `s.sh`); an
/// interactive shell ignores `-n` (bash(1)), and a `+` option may turn it off again, so
/// either counts as running.
pub fn runs_nothing(syntax: &crate::rules::Syntax, args: &[String]) -> bool {
    let stop = crate::rules::Syntax {
        stop_at_operand: true,
        ..syntax.clone()
    };
    let scanned = crate::argv::scan(&stop, args);
    let mut noexec = false;
    for arg in &scanned {
        match arg {
            crate::argv::Arg::Option { name, value } => match name.as_str() {
                "-n" => noexec = true,
                "-o" if value.as_deref() == Some("noexec") => noexec = true,
                "-i" | "--interactive" => return false,
                _ => {}
            },
            crate::argv::Arg::Operand(word) if word.starts_with('+') => return false,
            crate::argv::Arg::Operand(_) => break,
        }
    }
    noexec
}

/// A script's `$0`, `$1`…`$9` (unset ones empty), `$@`, `$*` and `$#`.
pub(crate) fn parameters(zero: &str, params: &[String]) -> Vec<(String, String)> {
    let mut env = vec![("0".to_string(), zero.to_string())];
    for i in 1..=params.len().max(9) {
        let value = params.get(i - 1).cloned().unwrap_or_default();
        env.push((i.to_string(), value));
    }
    let split = crate::shell::SPLIT.to_string();
    env.push(("@".into(), params.join(&split)));
    env.push(("*".into(), params.join(" ")));
    env.push(("#".into(), params.len().to_string()));
    env
}

/// `bash -s ARGS <<EOF`: the script comes from the input and every operand, from the
/// first (where a POSIX shell's options end), is a positional parameter; `$0` is the shell.
pub(crate) fn stdin_positional(
    program: &str,
    syntax: &crate::rules::Syntax,
    args: &[String],
) -> Vec<(String, String)> {
    parameters(program, &super::operands_after_options(syntax, args))
}
