//! The engine context a command selects, in program order: `docker context use X` writes
//! the client's configuration, so every docker command after it, in the same command line
//! and whatever subshell, runs against X unless it names its own daemon.

use crate::argv::{self, base_name};
use crate::decide::{Guard, Walk};
use crate::shell::Command;

/// What a docker command names of its own daemon, before the configuration's current context.
const OWN_DAEMON_OPTIONS: [&str; 4] = ["-H", "--host", "-c", "--context"];
const OWN_DAEMON_ENV: [&str; 2] = ["DOCKER_HOST", "DOCKER_CONTEXT"];

impl Guard<'_> {
    /// A later docker command with no daemon of its own gets the selected context
    /// (`--context X`, unknown when the selection was); returns whether `command` itself
    /// selects one, so what it names ranks after the commands that use it.
    pub(in crate::decide) fn engine_context(&self, command: &mut Command, walk: &mut Walk) -> bool {
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
        if let ["context", verb @ ("create" | "update"), ..] = operands.as_slice() {
            if walk.speculative == 0
                && let Some(at) = command.words.iter().position(|w| w == verb)
                && let Some(created) = created_context(&command.words[at + 1..])
            {
                walk.created_contexts.push(created);
            }
            return false;
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
        self.created_context_endpoint(command, walk);
        false
    }

    /// A context this command line created, used by name (`--context X`, `DOCKER_CONTEXT=X`,
    /// or selected before): its endpoint is the daemon, written in as `-H`, so it is judged
    /// as a daemon named on the command line is.
    fn created_context_endpoint(&self, command: &mut Command, walk: &Walk) {
        if walk.created_contexts.is_empty() {
            return;
        }
        let Some(spec) = self.rules.program(base_name(&command.words[0])) else {
            return;
        };
        let scanned = argv::scan(&spec.syntax, &command.words[1..]);
        let named = scanned.iter().rev().find_map(|a| match a {
            argv::Arg::Option { name, value } if matches!(name.as_str(), "-c" | "--context") => {
                value.clone()
            }
            _ => None,
        });
        let from_env = || {
            let own = command
                .env
                .iter()
                .rev()
                .find(|(n, _)| n == "DOCKER_CONTEXT");
            own.map(|(_, v)| vec![v.clone()]).or_else(|| {
                walk.scopes
                    .last()
                    .and_then(|s| s.get("DOCKER_CONTEXT").cloned())
            })
        };
        let names = named.map(|n| vec![n]).or_else(from_env).unwrap_or_default();
        let mut hosts = Vec::new();
        for name in &names {
            for (created, endpoint) in &walk.created_contexts {
                // A name that cannot be known may be any context the command created.
                if created == name || name.contains(crate::shell::UNKNOWN) {
                    hosts.push(endpoint_host(endpoint));
                }
            }
        }
        for host in hosts {
            command.words.insert(1, host);
            command.words.insert(1, "-H".into());
        }
    }
}

/// `NAME --docker ENDPOINT` (and the other options of `docker context create`, docker/cli
/// 28's `context create --help`): the context's name and its docker endpoint, if it has one.
fn created_context(words: &[String]) -> Option<(String, String)> {
    const VALUED: [&str; 5] = [
        "--description",
        "--from",
        "--kubernetes",
        "--default-stack-orchestrator",
        "--docker",
    ];
    let mut name = None;
    let mut endpoint = None;
    let mut rest = words.iter();
    while let Some(word) = rest.next() {
        if let Some(value) = word.strip_prefix("--docker=") {
            endpoint = Some(value.to_string());
        } else if word == "--docker" {
            endpoint = rest.next().cloned();
        } else if VALUED.contains(&word.as_str()) {
            rest.next();
        } else if word.starts_with('-') {
        } else if name.is_none() {
            name = Some(word.clone());
        }
    }
    Some((name?, endpoint?))
}

/// The daemon an endpoint names: its `host=` (`host=ssh://atlas,ca=…`); the endpoint as it
/// is when it cannot be known, so the use stays unknown.
fn endpoint_host(endpoint: &str) -> String {
    endpoint
        .split(',')
        .find_map(|pair| pair.strip_prefix("host="))
        .unwrap_or(endpoint)
        .to_string()
}
