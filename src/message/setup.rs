//! A broken setup, said to the operator: the file and its first error. The same sentence
//! is the record's `reason`, and `session-start` warns with it.

use crate::decide::Broken;

/// Past this an error is cut: the whole message stays under 1,000 characters.
const MAX_ERROR_CHARS: usize = 360;

/// "mesh-guard's catalog cannot be used: FILE:LINE: ERROR."
pub fn reason(broken: &Broken) -> String {
    let (what, error) = match broken {
        Broken::Catalog(error) => ("catalog", error),
        Broken::Rules(error) => ("rules", error),
    };
    format!(
        "mesh-guard's {what} cannot be used: {}.",
        one_line(error).trim_end_matches('.')
    )
}

/// The warning `session-start` gives when the catalog cannot be used.
pub fn session_warning(broken: &Broken) -> String {
    format!(
        "mesh-guard: warning: {} Every command that runs a program it guards will be refused until it is fixed (`mesh-guard catalog check` shows every error).",
        reason(broken)
    )
}

/// The context an agent reads at the start of a session whose catalog cannot be used.
pub fn session_context(broken: &Broken) -> String {
    format!(
        "This machine's shell commands are checked by mesh-guard, and its setup is broken: tell the operator. {} Until it is fixed, commands that run ssh, scp, docker, journalctl or systemctl are refused; do not work round this.",
        reason(broken)
    )
}

fn one_line(text: &str) -> String {
    let flat: String = crate::shell::quote::one_line(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if flat.chars().count() <= MAX_ERROR_CHARS {
        return flat;
    }
    let cut: String = flat.chars().take(MAX_ERROR_CHARS - 1).collect();
    format!("{cut}…")
}
