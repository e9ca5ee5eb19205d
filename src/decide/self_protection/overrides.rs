//! Case 4: a command may not grant itself the operator's override.

use crate::argv::base_name;
use crate::decide::{Guard, OVERRIDE_VAR, Refusal, Why};
use crate::protect::{assigns_guard_variable, is_startup_file, names_guard_variable};
use crate::rule::Rule;
use crate::shell::{Command, Stdin};
impl Guard<'_> {
    /// Case 4: a command may not grant itself the operator's override.
    pub(in crate::decide) fn override_attempt(&self, command: &Command) -> Option<Refusal> {
        // A word `NAME=VALUE` assigns only where the program reads assignments from its
        // words (the declaration builtins); to `grep` it is data. A wrapper's assignments
        // (`env X=1`, `sudo X=1`) are read by its table when it is taken off, into the
        // environment of the command it runs, which is checked here in turn.
        let program = command.words.first().map(|p| base_name(p)).unwrap_or("");
        let assigns = self.rules.is_declaration(program);
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
            .any(|w| assigns_guard_variable(w))
            || matches!(&command.stdin, Stdin::Text(t) if assigns_guard_variable(t));
        // Any program that changes the files its words name (rules/self.toml's writers).
        let edits = self.rules.writer(program).is_some();
        let into_startup_file = command.writes.iter().any(|w| is_startup_file(w))
            || (edits && command.words.iter().skip(1).any(|w| is_startup_file(w)));
        let plants = (written_text && into_startup_file)
            || (self.rules.is_environment_setter(program) && names_guard_variable(&command.words));
        (sets || plants)
            .then(|| Refusal::plain(Rule::Override, &self.shown(command), Why::SetsOverride))
    }
}

impl Guard<'_> {
    /// A command as the message shows it: its words, and the assignments it makes
    /// (`export MESH_GUARD_OVERRIDE=x`, whose words alone are `export`).
    pub(in crate::decide) fn shown(&self, command: &Command) -> String {
        let mut parts: Vec<String> = command
            .env
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        if command
            .words
            .first()
            .is_some_and(|w| self.rules.is_declaration(w))
        {
            parts.insert(0, command.words[0].clone());
            parts.extend(command.words[1..].iter().cloned());
        } else {
            parts.extend(command.words.iter().cloned());
        }
        parts.join(" ")
    }
}
