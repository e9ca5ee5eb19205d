//! What the command will use from disk (issue 13, item 5), asked through
//! [`crate::world::Disk`] only once a command is known to need it: a shell or `source`
//! running a script file, a script run by path, `make`, and `docker`/`podman` with no daemon
//! on the command line. A command of no such program reads nothing. Beside it: `make`, task
//! runners' `recipes`, ssh's configuration (`ssh_route`) and compose projects (`compose`).

mod compose;
mod make;
mod recipes;
mod ssh_route;

use super::*;
use crate::ondisk::Value;
use crate::ondisk::podman::{Endpoint, Flags};
use crate::world::Definition;

impl Guard<'_> {
    /// The directory the command's relative paths start from: where it has `cd`'d, else the
    /// session's; `None` where a `cd` of its own went somewhere that cannot be known.
    pub(super) fn known_cwd(&self, walk: &Walk) -> Option<std::path::PathBuf> {
        if walk.cwd_unknown {
            return None;
        }
        walk.cwd.clone().or_else(|| self.world.cwd.clone())
    }

    /// The command as it will run, with what the disk says: a script's commands are walked as
    /// a payload; a container engine's endpoint is written into the command (`-H URL`), so
    /// the daemon is judged, and its containers are that daemon's.
    pub(super) fn with_disk(&self, mut command: Command, walk: &mut Walk) -> Command {
        let Some(disk) = self.world.disk.clone() else {
            return command;
        };
        let Some(first) = command.words.first().cloned() else {
            return command;
        };
        let program = base_name(&first).to_string();
        let cwd = self.known_cwd(walk);
        let args = command.words[1..].to_vec();
        let script = if program == "source" || program == "." {
            args.first().map(|p| (p.clone(), 1))
        } else if let Some(shell) = self.rules.shell(&program) {
            // Only the options before the script are the shell's: `bash s.sh -n` runs `s.sh`.
            let stop = crate::rules::Syntax {
                stop_at_operand: true,
                ..shell.syntax.clone()
            };
            let scanned = argv::scan(&stop, &args);
            let runs_other = crate::unwrap::runs_nothing(&shell.syntax, &args)
                || scanned.iter().any(|a| {
                    matches!(a, Arg::Option { name, .. }
                        if name.len() == 2 && (name.ends_with(shell.command_flag) || name == "-s"))
                });
            let mut operands = argv::operands(&scanned);
            match operands.next() {
                Some(path) if !runs_other && path != "-" => {
                    let at = command.words.iter().position(|w| w == path).unwrap_or(0);
                    Some((path.to_string(), at + 1))
                }
                _ => None,
            }
        } else if first.contains('/') && self.rules.program(&program).is_none() {
            Some((first.clone(), 1))
        } else {
            None
        };
        if let Some((path, rest)) = script
            && is_known(&path)
            && !command.files.iter().any(|(p, _)| *p == path)
            && let Some(cwd) = &cwd
            && let Some(text) = disk.script(&path, cwd)
            && runs_as_shell(&text)
        {
            // The script's positional parameters are the words after it.
            let params = &command.words[rest.min(command.words.len())..];
            let env = positional_parameters(params);
            self.payload(&text, command.depth + 1, &env, walk);
            if program == "source" || program == "." {
                self.note_sourced(&text, walk);
            }
        }
        // `echo 'f() {…}' > lib.sh; . ./lib.sh`: a file the command wrote, walked by unwrap.
        if (program == "source" || program == ".")
            && let Some(path) = args.first()
            && let Some((_, text)) = command.files.iter().find(|(p, _)| p == path)
        {
            let text = text.clone();
            self.note_sourced(&text, walk);
        }
        // `python3 deploy.py`: the file is the interpreter's code, read as `-c CODE` is.
        if let Some(interpreter) = self.rules.interpreter(&program)
            && let Some(path) = crate::unwrap::script_operand(interpreter, &args)
            && is_known(&path)
            && !command.files.iter().any(|(p, _)| *p == path)
            && let Some(cwd) = &cwd
            && let Some(code) = disk.script(&path, cwd)
        {
            let mut steps = Vec::new();
            crate::unwrap::code_steps(interpreter, &command, &code, &mut steps);
            for step in steps {
                if let crate::unwrap::Step::Shell { source, depth, env } = step {
                    self.payload(&source, depth, &env, walk);
                }
            }
        }
        if program == "make"
            && let Some(cwd) = &cwd
        {
            self.make(&args, cwd, disk.as_ref(), command.depth, walk);
        }
        self.engine_endpoint(&mut command, &program, disk.as_ref(), walk);
        command
    }

    /// `docker ps` with no `-H`: the endpoint of `DOCKER_HOST`, `--context`, `DOCKER_CONTEXT`
    /// or the current context; `podman` in remote mode likewise.
    fn engine_endpoint(
        &self,
        command: &mut Command,
        program: &str,
        disk: &dyn crate::world::Disk,
        walk: &mut Walk,
    ) {
        let docker = matches!(program, "docker" | "docker-compose");
        let podman = matches!(program, "podman" | "podman-remote");
        if !docker && !podman {
            return;
        }
        let args = &command.words[1..];
        let given = |names: &[&str]| {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            option_values(args, &names).pop()
        };
        if given(&["-H", "--host"]).is_some() {
            return;
        }
        // Commands that reach no daemon: the context store itself.
        let first_operand = args.iter().find(|a| !a.starts_with('-'));
        if first_operand.is_some_and(|a| a == "context") {
            return;
        }
        let own_env = command.env.clone();
        let own = move |name: &str| {
            own_env
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        let endpoint = if docker {
            let context = given(&["--context", "-c"]);
            // An endpoint that cannot be known adds nothing: the command's container names
            // stay candidates, as for the local engine.
            match disk.docker(&own, context.as_deref()) {
                Value::Known(url) => Some(url),
                Value::Unknown => None,
            }
        } else {
            let url = given(&["--url"]);
            let connection = given(&["--connection", "-c"]);
            let flags = Flags {
                remote: program == "podman-remote" || args.iter().any(|a| a == "--remote"),
                url: url.as_deref(),
                connection: connection.as_deref(),
            };
            match disk.podman(&own, &flags) {
                Endpoint::Local => None,
                Endpoint::Url(url) => Some(url),
                // The daemon is unknown; the default connection's host flows into it.
                Endpoint::IfRemoteBuild(url) => {
                    walk.flows.push(url);
                    Some(UNKNOWN.to_string())
                }
                Endpoint::Unknown => None,
            }
        };
        // The local socket is what the command already says: nothing to add.
        if let Some(url) =
            endpoint.filter(|u| !u.starts_with("unix://") && !u.starts_with("npipe://"))
        {
            command.words.insert(1, url);
            command.words.insert(1, "-H".into());
        }
    }
}

/// A script bash would run itself: no `#!` line, or one naming a POSIX shell.
fn runs_as_shell(text: &str) -> bool {
    let Some(line) = text.strip_prefix("#!") else {
        return true;
    };
    let line = line.lines().next().unwrap_or("");
    let mut words = line.split_whitespace();
    let program = words.next().map(base_name).unwrap_or("");
    let program = if program == "env" {
        words.find(|w| !w.starts_with('-')).unwrap_or("")
    } else {
        program
    };
    matches!(
        program,
        "sh" | "bash" | "dash" | "ksh" | "zsh" | "ash" | "busybox"
    )
}

/// bash's builtins and keywords: never a program on `PATH`, never worth a startup file.
const BUILTINS: [&str; 58] = [
    "cd",
    "export",
    "set",
    "unset",
    "source",
    ".",
    "read",
    "eval",
    "exec",
    "exit",
    "return",
    "shift",
    "alias",
    "unalias",
    "declare",
    "typeset",
    "local",
    "readonly",
    "let",
    "test",
    "[",
    "[[",
    "printf",
    "echo",
    "pwd",
    "pushd",
    "popd",
    "dirs",
    "type",
    "hash",
    "command",
    "builtin",
    "trap",
    "wait",
    "jobs",
    "fg",
    "bg",
    "kill",
    "umask",
    "ulimit",
    "shopt",
    "getopts",
    "times",
    "true",
    "false",
    ":",
    "history",
    "complete",
    "compgen",
    "mapfile",
    "readarray",
    "enable",
    "help",
    "logout",
    "caller",
    "disown",
    "suspend",
    "fc",
];

impl Guard<'_> {
    /// A program that is no rule's, no builtin, no function of the command and not on
    /// `PATH`: the user's startup files may define it (`alias b='ssh build'`). Only then
    /// are they read.
    /// The functions a sourced file defines stay defined in the shell that sourced it.
    pub(super) fn note_sourced(&self, text: &str, walk: &mut Walk) {
        let home = self
            .world
            .home
            .as_ref()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default();
        let scan = crate::ondisk::startup::scan(text, &home);
        walk.sourced_functions.extend(scan.functions);
    }

    /// A call of a function a sourced file defined: its body runs, `$1…` the call's words.
    fn sourced_definition(&self, command: &Command, walk: &mut Walk) -> bool {
        let Some(name) = command.words.first() else {
            return false;
        };
        // The last definition met is the one the call runs; the command's own (`f() {…}`
        // in the same line) are walked where they are called.
        let Some((_, body)) = walk.sourced_functions.iter().rev().find(|(n, _)| n == name) else {
            return false;
        };
        match body.clone() {
            Value::Known(body) => {
                let args = &command.words[1..];
                let env = positional_parameters(args);
                self.payload(&body, command.depth + 1, &env, walk);
            }
            Value::Unknown => walk.unknown_programs.push(command.words.clone()),
        }
        true
    }

    pub(super) fn startup_definition(&self, command: &Command, walk: &mut Walk) {
        if self.sourced_definition(command, walk) {
            return;
        }
        let Some(disk) = self.world.disk.clone() else {
            return;
        };
        let Some(name) = command.words.first() else {
            return;
        };
        let known_elsewhere = name.contains('/')
            || !is_known(name)
            || BUILTINS.contains(&name.as_str())
            || walk.functions.contains(name)
            || self.rules.program(name).is_some()
            || self.rules.wrapper(name).is_some()
            || self.rules.shell(name).is_some()
            || self.rules.interpreter(name).is_some();
        if known_elsewhere || disk.on_path(name) {
            return;
        }
        let args = &command.words[1..];
        match disk.definition(name) {
            Definition::Alias(text) => {
                let quoted: Vec<String> = args
                    .iter()
                    .map(|a| crate::shell::quote::requoted(a))
                    .collect();
                let source = format!("{text} {}", quoted.join(" "));
                self.payload(&source, command.depth + 1, &command.env, walk);
            }
            Definition::Function(body) => {
                let env = positional_parameters(args);
                self.payload(&body, command.depth + 1, &env, walk);
            }
            Definition::Unknown => {
                walk.unknown_programs.push(command.words.clone());
            }
            Definition::None => {}
        }
    }
}

/// The positional parameters a script or function sees: `$1`… from `words`, and `$@`.
fn positional_parameters(words: &[String]) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = words
        .iter()
        .enumerate()
        .map(|(i, w)| ((i + 1).to_string(), w.clone()))
        .collect();
    env.push(("@".into(), words.join(" ")));
    env
}
