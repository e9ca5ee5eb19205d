//! The engine context a command selects, in program order: `docker context use X` writes
//! the client's configuration, so every docker command after it, in the same command line
//! and whatever subshell, runs against X unless it names its own daemon.

use super::{Guard, Walk};
use crate::argv::{self, base_name};
use crate::shell::Command;

/// What a docker command names of its own daemon, before the configuration's current context.
const OWN_DAEMON_OPTIONS: [&str; 4] = ["-H", "--host", "-c", "--context"];
const OWN_DAEMON_ENV: [&str; 2] = ["DOCKER_HOST", "DOCKER_CONTEXT"];

impl Guard<'_> {
    /// A later docker command with no daemon of its own gets the selected context
    /// (`--context X`, unknown when the selection was); returns whether `command` itself
    /// selects one, so what it names ranks after the commands that use it.
    pub(super) fn engine_context(&self, command: &mut Command, walk: &mut Walk) -> bool {
        let Some(first) = command.words.first() else {
            return false;
        };
        let program = base_name(first);
        if !matches!(program, "docker" | "docker-compose") {
            return false;
        }
        let Some(spec) = self.rules.program(program) else {
            return false;
        };
        let scanned = argv::scan(&spec.syntax, &command.words[1..]);
        let operands: Vec<&str> = argv::operands(&scanned).collect();
        if let ["context", "use", name, ..] = operands.as_slice() {
            if walk.speculative == 0 {
                walk.engine_context = Some(name.to_string());
            }
            return true;
        }
        if operands.first() == Some(&"context") {
            return false;
        }
        let own_option = scanned.iter().any(|a| {
            matches!(a, argv::Arg::Option { name, .. } if OWN_DAEMON_OPTIONS.contains(&name.as_str()))
        });
        let own_env = command
            .env
            .iter()
            .any(|(n, _)| OWN_DAEMON_ENV.contains(&n.as_str()))
            || walk.scopes.last().is_some_and(|s| {
                OWN_DAEMON_ENV
                    .iter()
                    .any(|n| s.get(*n).is_some_and(|v| !v.is_empty()))
            });
        if let Some(context) = &walk.engine_context
            && !own_option
            && !own_env
        {
            // An unknown selection (`docker context use "$X"`) stays unknown here too.
            command.words.insert(1, context.clone());
            command.words.insert(1, "--context".into());
        }
        false
    }
}
