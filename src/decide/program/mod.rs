//! Programs and their arguments: a guarded program's arguments read against its rules, every
//! target it names (here), read every way its grammar allows (`readings`); any program's
//! arguments read for a guarded program or shell code (`arguments`); the command it carries
//! for its target (`carried`) and the commands equivalent to a call (`equivalent`); the
//! engine context selected in program order (`engine_context`); git's settings from its
//! environment (`git_env`).

mod arguments;
pub(super) mod carried;
mod engine_context;
pub(super) mod equivalent;
mod git_env;
mod readings;

use super::{Candidate, Context, Guard, Walk, target};
use crate::argv::{self, Arg, base_name};
use crate::rules::{Program, Role};
use crate::shell::{Command, UNKNOWN};
impl Guard<'_> {
    /// A guarded program: collect every target its options, environment and operands name.
    pub(super) fn invocation(&self, command: &Command, walk: &mut Walk) {
        let Some(first) = command.words.first() else {
            return;
        };
        let mut program = base_name(first);
        let mut args: Vec<String> = command.words[1..].to_vec();
        let mut script = None;
        let spec = match self.rules.program(program) {
            Some(spec) => spec,
            // `/etc/init.d/nginx restart`: a script of a directory the rules name (`DIR/*`)
            // is that rule's program with the script's name first.
            None => match first.strip_suffix(program).map(|dir| format!("{dir}*")) {
                Some(pattern) if pattern.len() > 2 => {
                    let Some(spec) = self.rules.program(&pattern) else {
                        return;
                    };
                    args.insert(0, program.to_string());
                    script = Some(program.to_string());
                    program = spec.same_as.first().map_or(program, String::as_str);
                    spec
                }
                _ => return,
            },
        };
        walk.guarded |= !spec.only_by_target && walk.speculative == 0;
        let (spec, name) = match spec.same_as.split_first() {
            Some((real, sub)) => match self.rules.program(real) {
                Some(real_spec) => {
                    let mut rewritten = sub.to_vec();
                    rewritten.extend(args);
                    args = rewritten;
                    (real_spec, real.clone())
                }
                None => return,
            },
            // Aliases of one program rank and read as the family's: `nerdctl` is `docker`.
            None => (spec, spec.names.first().cloned().unwrap_or_default()),
        };
        let mut family = match self.rules.program(program) {
            Some(alias) if !alias.same_as.is_empty() => alias.same_as.clone(),
            // `rsh atlas uptime` ranks as `ssh atlas uptime`, as its rules say.
            _ if !spec.ranks_as.is_empty() => vec![spec.ranks_as.clone()],
            // Another client of a protocol that carries a remote command (`dbclient`,
            // `plink`: over ssh, as their rules say) ranks as the protocol's own program.
            _ if spec.over != name
                && self.rules.program(&spec.over).is_some()
                && spec.operands.iter().any(|o| o.role == Role::RemoteCommand) =>
            {
                vec![spec.over.clone()]
            }
            _ => spec.names.first().cloned().into_iter().collect(),
        };
        // `/etc/init.d/nginx reload` ranks as `service nginx reload`.
        family.extend(script);
        let context = Context {
            command,
            over: spec.over.clone(),
            shape: vec![name],
            user: None,
            carried: carried::Carried {
                family,
                ..Default::default()
            },
            elsewhere: false,
        };
        self.program_args(spec, None, &args, context, walk);
    }

    pub(super) fn reading(
        &self,
        spec: &Program,
        parent: Option<&Program>,
        scanned: Vec<Arg>,
        mut cx: Context,
        walk: &mut Walk,
    ) {
        if argv::has(&scanned, &spec.inert) {
            return;
        }
        if !spec.methods.is_empty() {
            cx.carried.equivalent = equivalent::commands(spec, &scanned);
        }
        // What a program with no subcommand here carries is known before its options'
        // targets are: `ssh -o 'HostName x' y uptime` carries `uptime`.
        {
            let operands: Vec<&str> = argv::operands(&scanned).collect();
            let subcommands = if spec.parent_subcommands {
                parent.map(|p| p.subcommand.as_slice()).unwrap_or(&[])
            } else {
                spec.subcommand.as_slice()
            };
            let sub = operands.first().is_some_and(|first| {
                subcommands
                    .iter()
                    .any(|s| s.names.iter().any(|n| n == first))
            });
            if !sub {
                self.carry(spec, &operands, &mut cx.carried, cx.command.depth);
            }
        }
        for arg in &scanned {
            if let Arg::Option { name, value } = arg {
                match spec.options.get(name) {
                    Some(Role::User) => cx.user = value.clone(),
                    Some(Role::SshOption) => {
                        if let Some(user) = value
                            .as_deref()
                            .and_then(|v| target::ssh_option(v))
                            .and_then(|(k, v)| (k == "user").then_some(v))
                        {
                            cx.user = Some(user.to_string());
                        }
                    }
                    _ => {}
                }
            }
        }
        cx.elsewhere |= self.elsewhere(spec, &scanned, cx.command, walk);
        let by_option = walk.candidates.len();
        for arg in &scanned {
            if let Arg::Option { name, value } = arg
                && let Some(&role) = spec.options.get(name)
                && role != Role::Entrypoint
            {
                // An option that says where the program connects is not a shape word:
                // `docker -H x ps` is `docker ps` (the subcommand is added below), as a
                // `replaces` entry would say it. One that names an object is:
                // `journalctl -u <unit>`.
                let kind = role.placeholder();
                let shape = if kind == "machine" {
                    cx.shape.join(" ")
                } else {
                    format!("{} {name} <{kind}>", cx.shape.join(" "))
                };
                self.candidate(role, value.clone().unwrap_or_default(), &cx, shape, walk);
            }
        }
        for (var, role) in &spec.env {
            let values: Vec<String> = walk.env_values(cx.command, var).cloned().collect();
            for value in values {
                let shape = format!("{var}=<{}> {}", role.placeholder(), cx.shape.join(" "));
                self.candidate(*role, value, &cx, shape, walk);
            }
        }
        let operands: Vec<&str> = argv::operands(&scanned).collect();
        let subcommands = if spec.parent_subcommands {
            parent.map(|p| p.subcommand.as_slice()).unwrap_or(&[])
        } else {
            spec.subcommand.as_slice()
        };
        if !subcommands.is_empty()
            && let Some((first, rest)) = operands.split_first()
            && let Some(sub) = subcommands
                .iter()
                .find(|s| s.names.iter().any(|n| n == first))
        {
            let rest: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
            cx.shape.push(first.to_string());
            for found in &mut walk.candidates[by_option..] {
                found.shape = format!("{} {first}", found.shape);
            }
            // What the subcommand carries, the daemon the options name runs: `docker -H x
            // exec c ls` carries `ls` there (issue 30).
            if walk.candidates.len() > by_option {
                let scanned = argv::scan(&sub.syntax, &rest);
                let operands: Vec<&str> = argv::operands(&scanned).collect();
                let mut carried = carried::Carried::default();
                self.carry(sub, &operands, &mut carried, cx.command.depth);
                for found in &mut walk.candidates[by_option..] {
                    if found.carried.inner.is_empty() {
                        found.carried.inner.clone_from(&carried.inner);
                        found.carried.runs.clone_from(&carried.runs);
                    }
                }
            }
            // A nested subcommand table (`docker container logs`) is the parent's.
            let parent = if sub.parent_subcommands {
                parent.or(Some(spec))
            } else {
                Some(spec)
            };
            self.program_args(sub, parent, &rest, cx, walk);
            return;
        }
        // A subcommand the rules do not list (`docker ps`) is still the shape's word.
        if !subcommands.is_empty()
            && let Some(first) = operands.first()
        {
            for found in &mut walk.candidates[by_option..] {
                found.shape = format!("{} {first}", found.shape);
            }
        }
        let mut at = 0;
        for operand in &spec.operands {
            if at >= operands.len() {
                break;
            }
            let taken: Vec<&str> = if operand.rest {
                operands[at..].to_vec()
            } else {
                vec![operands[at]]
            };
            at += taken.len();
            match operand.role {
                Role::RemoteCommand => {
                    let source = taken.join(" ");
                    walk.remote += 1;
                    self.payload(&source, cx.command.depth + 1, &[], walk);
                    walk.remote -= 1;
                }
                Role::Command => {
                    // The image's entrypoint, when the command line gives one, runs the words.
                    let entrypoint = scanned.iter().rev().find_map(|arg| match arg {
                        Arg::Option { name, value }
                            if spec.options.get(name) == Some(&Role::Entrypoint) =>
                        {
                            value.clone()
                        }
                        _ => None,
                    });
                    let nested = Command {
                        words: entrypoint
                            .into_iter()
                            .chain(taken.iter().map(|s| s.to_string()))
                            .collect(),
                        depth: cx.command.depth + 1,
                        ..cx.command.clone()
                    };
                    self.command(nested, walk);
                }
                Role::Ignore => {}
                // `git config NAME VALUE`: each word with the next, as `NAME=VALUE`. A
                // command it stores (`alias.x '!ssh atlas'`, `core.sshCommand`) is data
                // now, walked where a later program may run it (`stored_git_commands`).
                Role::GitConfig => {
                    for pair in taken.windows(2) {
                        let setting = format!("{}={}", pair[0], pair[1]);
                        if let target::GitConfig::Command(source) = target::git_config(&setting) {
                            if walk.speculative == 0 {
                                walk.git_stored
                                    .push((source.to_string(), cx.command.depth + 1));
                            }
                            continue;
                        }
                        let shape = format!("{} <arg>", cx.shape.join(" "));
                        self.candidate(Role::GitConfig, setting, &cx, shape, walk);
                    }
                }
                Role::Verb => cx.shape.extend(taken.iter().map(|s| s.to_string())),
                role => {
                    for value in taken {
                        let mut shape = format!("{} <{}>", cx.shape.join(" "), role.placeholder());
                        // `ssh atlas journalctl …`: the remote program is part of the shape.
                        let remote_follows = spec
                            .operands
                            .get(1)
                            .is_some_and(|o| o.role == Role::RemoteCommand);
                        if remote_follows && let Some(remote) = operands.get(at) {
                            shape = format!("{shape} {}", base_name(remote));
                        }
                        self.candidate(role, value.to_string(), &cx, shape, walk);
                    }
                }
            }
        }
    }

    pub(super) fn candidate(
        &self,
        role: Role,
        value: String,
        cx: &Context,
        shape: String,
        walk: &mut Walk,
    ) {
        if (walk.remote > 0 || cx.elsewhere) && role.is_local_name() {
            return;
        }
        match role {
            Role::GitConfigList | Role::GitConfigCount => {
                return self.git_settings_from_env(role, &value, cx, &shape, walk);
            }
            Role::GitConfig => {
                match target::git_config(&value) {
                    target::GitConfig::Command(source) => {
                        self.payload(source, cx.command.depth + 1, &[], walk);
                    }
                    target::GitConfig::Url(url) => {
                        self.candidate(Role::GitUrl, url.to_string(), cx, shape, walk);
                    }
                    target::GitConfig::Nothing => {}
                }
                return;
            }
            Role::GitUrl => match target::git_url(&value) {
                target::GitUrl::Command(source) => {
                    return self.payload(&source, cx.command.depth + 1, &[], walk);
                }
                target::GitUrl::Local => return,
                target::GitUrl::Remote(_) => {}
            },
            _ => {}
        }
        // Values that are commands in their own right: `rsync -e`, `-o ProxyCommand=`,
        // `-o LocalCommand=`, socat's `EXEC:`.
        if let Some(source) = target::command_in(role, &value) {
            let proxy = role == Role::SshOption
                && target::ssh_option(&value).is_some_and(|(key, _)| key == "proxycommand");
            if proxy {
                self.proxy_command(&source, cx, walk);
            } else {
                self.payload(&source, cx.command.depth + 1, &[], walk);
            }
            if role == Role::Rsh {
                return;
            }
        }
        // `docker compose logs redis`: the local project's service, or the container the
        // project names for it.
        if role == Role::Service
            && let Some(containers) = self.compose_service(&value, cx, walk)
        {
            for name in containers {
                self.candidate(Role::Container, name, cx, shape.clone(), walk);
            }
            return;
        }
        // A D-Bus call's or an engine API request's shape is the command it comes to:
        // `systemctl restart <unit>`, `docker logs <container>`.
        let object = match role {
            Role::DbusWord => Some("unit"),
            Role::Url => target::engine_request(&value).map(|_| "container"),
            _ => None,
        };
        let shape = match (object, cx.carried.equivalent.first()) {
            (Some(object), Some(equivalent)) => format!("{} <{object}>", equivalent.join(" ")),
            (Some(object), None) => format!("{} <{object}>", cx.shape.join(" ")),
            _ => shape,
        };
        // The destination as typed first, then where ssh's configuration sends it
        // (`HostName`, `ProxyJump`): a refusal names what the agent asked for.
        let at = walk.candidates.len();
        walk.candidates.push(Candidate {
            role,
            value: value.clone(),
            command: cx.command.words.clone(),
            command_written: cx.command.written.clone(),
            over: cx.over.clone(),
            shape,
            user: cx.user.clone(),
            carried: cx.carried.clone(),
            speculative: walk.speculative > 0,
            route: false,
            runners: walk.runners.clone(),
            read_from: walk.reading.last().cloned(),
        });
        self.ssh_config(role, &walk.candidates[at].value.clone(), cx, walk);
    }
}

impl Guard<'_> {
    /// Whether the program is pointed at a daemon or host it names (`-H ssh://x`,
    /// `--host=x`, `DOCKER_HOST=tcp://x`), not the local one. An unknown one is not taken
    /// as elsewhere: the local names stay candidates.
    fn elsewhere(&self, spec: &Program, scanned: &[Arg], command: &Command, walk: &Walk) -> bool {
        let remote = |value: &str| {
            let value = value.trim();
            !value.is_empty()
                && !value.contains(UNKNOWN)
                && !value.starts_with("unix://")
                && !value.starts_with("npipe://")
                && !value.starts_with("fd://")
                && !matches!(
                    target::host_word(value),
                    "localhost" | "127.0.0.1" | "::1" | ""
                )
        };
        let by_option = scanned.iter().any(|arg| {
            matches!(arg, Arg::Option { name, value: Some(value) }
                if spec.options.get(name) == Some(&Role::DaemonHost) && remote(value))
        });
        let by_env = spec.env.iter().any(|(var, role)| {
            *role == Role::DaemonHost && {
                let values: Vec<&String> = walk.env_values(command, var).collect();
                !values.is_empty() && values.iter().all(|v| remote(v))
            }
        });
        by_option || by_env
    }
}
