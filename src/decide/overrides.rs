//! Case 4: a command may not grant itself the operator's override.

use super::*;

impl Guard<'_> {
    /// Case 4: a command may not grant itself the operator's override.
    pub(super) fn override_attempt(&self, command: &Command) -> Option<Refusal> {
        // A word `NAME=VALUE` assigns only where the program reads assignments from its
        // words (`env`, `sudo`, any wrapper, the declaration builtins); to `grep` it is data.
        let program = command.words.first().map(|p| base_name(p)).unwrap_or("");
        let assigns = self.rules.wrapper(program).is_some()
            || matches!(
                program,
                "export" | "declare" | "typeset" | "readonly" | "local"
            );
        let assignment = format!("{OVERRIDE_VAR}=");
        let sets = command.env.iter().any(|(name, _)| name == OVERRIDE_VAR)
            || (assigns
                && command
                    .words
                    .iter()
                    .skip(1)
                    .any(|w| w.starts_with(&assignment)));
        // Planted for the sessions to come: written into a startup file, or set in a
        // session manager's environment.
        let written_text = command
            .words
            .iter()
            .skip(1)
            .any(|w| protect::assigns_guard_variable(w))
            || matches!(&command.stdin, Stdin::Text(t) if protect::assigns_guard_variable(t));
        let edits = matches!(
            program,
            "tee" | "sed" | "dd" | "install" | "cp" | "mv" | "ln" | "perl"
        );
        let into_startup_file = command.writes.iter().any(|w| protect::is_startup_file(w))
            || (edits
                && command
                    .words
                    .iter()
                    .skip(1)
                    .any(|w| protect::is_startup_file(w)));
        let plants =
            (written_text && into_startup_file) || protect::sets_future_environment(&command.words);
        (sets || plants).then(|| Refusal::plain(Rule::Override, &shown(command), Why::SetsOverride))
    }
}

/// A command as the message shows it: its words, and the assignments it makes
/// (`export MESH_GUARD_OVERRIDE=x`, whose words alone are `export`).
pub(super) fn shown(command: &Command) -> String {
    let mut parts: Vec<String> = command
        .env
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    if command.words.first().is_some_and(|w| {
        matches!(
            w.as_str(),
            "export" | "declare" | "typeset" | "readonly" | "local"
        )
    }) {
        parts.insert(0, command.words[0].clone());
        parts.extend(command.words[1..].iter().cloned());
    } else {
        parts.extend(command.words.iter().cloned());
    }
    parts.join(" ")
}
