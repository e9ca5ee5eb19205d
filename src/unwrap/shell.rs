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
