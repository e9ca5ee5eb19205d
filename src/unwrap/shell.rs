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
