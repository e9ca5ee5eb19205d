//! The walk: scripts, commands, payloads and `cd`, collecting where a guarded program
//! names a target (before the catalog is read). The files a command reads (`xargs … <
//! hosts.txt`, `for h in $(cat hosts.txt)`, `parallel … :::: hosts.txt`) are read only where
//! it runs a guarded or unknown program, through the world's disk (bounded), and the command
//! walked again with their text, so their lines are the values, exactly.

mod cd;
pub(super) mod flow;

use super::program::carried;
use super::{Candidate, Context, Guard, MAX_PAYLOAD_DEPTH, Refusal};
use crate::argv::base_name;
use crate::rules::Role;
use crate::shell::{self, Command, Script, Stdin, UNKNOWN};
use crate::unwrap::{Step, unwrap};
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

/// The walk's state: what it has found so far, and where the command stands.
#[derive(Default)]
pub(super) struct Walk {
    pub(super) candidates: Vec<Candidate>,
    /// The docker context the command has selected so far (`docker context use X`).
    pub(super) engine_context: Option<String>,
    /// Docker contexts the command has created so far, with their `--docker` endpoint
    /// (`docker context create X --docker host=ssh://atlas`): a later use reaches it.
    pub(super) created_contexts: Vec<(String, String)>,
    pub(super) unknown_programs: Vec<Vec<String>>,
    /// Commands that run code that cannot be known (a shell reading an unknown input, a
    /// recipe not read), with that code in words.
    pub(super) unknown_code: Vec<(Vec<String>, String)>,
    /// The recipes being walked, innermost last: the runner's command as written and the
    /// recipe in words ("`deploy` in package.json"), for the refusal to say what it read.
    pub(super) reading: Vec<(String, String)>,
    /// Files the command reads whose text it did not give (`< hosts.txt`), as written.
    pub(super) inputs: Vec<String>,
    /// Their text, once read from disk: every source of the walk is parsed with it.
    pub(super) read: std::rc::Rc<HashMap<String, String>>,
    pub(super) unparsable: Vec<String>,
    /// Every word met, for "does the command name a mesh object".
    pub(super) words: Vec<String>,
    /// Words that can flow into another command's target (see `flow`).
    pub(super) flows: Vec<String>,
    /// Functions the command defines: a call's arguments flow into the body.
    pub(super) functions: Vec<String>,
    /// Functions a file the command sources defines (`. ./lib.sh`), with their bodies, in
    /// the order met: walked apart from the command, a later call is followed here.
    pub(super) sourced_functions: Vec<(String, crate::ondisk::Value)>,
    pub(super) refusal: Option<Refusal>,
    pub(super) incomplete: Option<String>,
    /// Variables of the script being walked (innermost payload last): every value each
    /// was assigned anywhere in it, the environment its commands may see.
    pub(super) scopes: Vec<std::rc::Rc<HashMap<String, Vec<String>>>>,
    /// A guarded program runs: the catalog must be read (and valid), even where no target
    /// was found (`docker build .` with a broken catalog is refused, as the contract says).
    pub(super) guarded: bool,
    /// Where the command has `cd`'d to, for the paths after it.
    pub(super) cwd: Option<PathBuf>,
    /// The command has `cd`'d somewhere that cannot be known (`cd "$X"`, `cd -` with an
    /// unknown `OLDPWD`): its relative paths could be anywhere.
    pub(super) cwd_unknown: bool,
    /// Where `cd -` goes: `None` until a `cd` of the command's own sets it.
    pub(super) oldpwd: Option<Option<PathBuf>>,
    /// Links the command itself creates (`ln -s ~/.claude x`), with what they point to:
    /// a path through one is not known from its text.
    pub(super) links: Vec<(PathBuf, String)>,
    /// How many remote commands (`ssh host '…'`) the walk is inside. There, a container's
    /// or unit's name is the remote machine's business: only machines it reaches count.
    pub(super) remote: usize,
    /// How many speculative walks (a program's arguments read as a command) the walk is in.
    pub(super) speculative: usize,
    /// Commands `git config` stored (an `!` alias, `core.sshCommand`), with their depth:
    /// nothing runs them then; a later git, or a program that may run git, may.
    pub(super) git_stored: Vec<(String, usize)>,
    /// Walking a command a git setting from the environment runs: the programs in it see
    /// the same environment, and are not read for it again.
    pub(super) in_git_setting: bool,
    /// Walking a suffix of arguments found by `arguments_run`.
    pub(super) in_suffix: bool,
    /// The programs whose arguments are being read, outermost first.
    pub(super) runners: Vec<String>,
    /// Suffixes and shell-code words walked so far, and the words they held.
    pub(super) suffixes: usize,
    pub(super) suffix_words: usize,
}

impl Guard<'_> {
    /// The walk of a whole command. `xargs … < hosts.txt`: where it runs a guarded or
    /// unknown program, the files it reads are read (bounded) and it is walked again with
    /// their lines.
    pub(super) fn walk_command(&self, source: &str) -> Walk {
        let walk = self.walk_source(source, Rc::default());
        if !walk.inputs.is_empty()
            && !self.quick_pass(&walk)
            && let Some(read) = self.read_inputs(&walk)
        {
            return self.walk_source(source, Rc::new(read));
        }
        walk
    }

    /// The walk of `source`, with the text of the files in `read` known.
    pub(super) fn walk_source(&self, source: &str, read: Rc<HashMap<String, String>>) -> Walk {
        // `$HOME` is what bash would expand it to: the session's home, as the hook sees it.
        let known: HashMap<String, Vec<String>> = self
            .world
            .home
            .iter()
            .map(|h| ("HOME".to_string(), vec![h.to_string_lossy().into_owned()]))
            .collect();
        // Parsed before the walk's state is made: this frame is on the stack under the
        // parser, the deepest the hook goes, and the state is built in `walk_parsed`'s.
        let parsed = shell::parse_reading(source, 0, &known, &read);
        self.walk_parsed(source, parsed, read)
    }

    /// The walk of a parsed source (or of one that could not be parsed).
    #[inline(never)]
    fn walk_parsed(
        &self,
        source: &str,
        parsed: Result<Script, shell::ParseError>,
        read: Rc<HashMap<String, String>>,
    ) -> Walk {
        let mut walk = Walk {
            read,
            ..Walk::default()
        };
        match parsed {
            Ok(script) => self.script(script, &mut walk),
            Err(_) => walk.unparsable.push(source.to_string()),
        }
        walk
    }

    /// Nothing the command runs is guarded, unknown or unreadable: it passes unjudged.
    pub(super) fn quick_pass(&self, walk: &Walk) -> bool {
        walk.candidates.is_empty()
            && !walk.guarded
            && walk.unknown_programs.is_empty()
            && walk.unknown_code.is_empty()
            && walk.unparsable.is_empty()
    }

    /// The text of the files the command reads, by path as written; `None` when none could
    /// be read. A relative path is read from the session's directory only where the
    /// command has not `cd`'d elsewhere.
    pub(super) fn read_inputs(&self, walk: &Walk) -> Option<HashMap<String, String>> {
        let disk = self.world.disk.clone()?;
        let moved = walk.cwd.is_some() || walk.cwd_unknown;
        let mut read = HashMap::new();
        for path in &walk.inputs {
            let full = if path.starts_with('/') {
                PathBuf::from(path)
            } else if moved {
                continue;
            } else {
                self.world.cwd.as_ref()?.join(path)
            };
            if let Some(text) = disk.input(&full) {
                read.insert(path.clone(), text);
            }
        }
        (!read.is_empty()).then_some(read)
    }
}
impl Guard<'_> {
    pub(super) fn script(&self, script: Script, walk: &mut Walk) {
        if let Some(why) = script.incomplete {
            walk.incomplete.get_or_insert(why);
        }
        for path in &script.inputs {
            if !walk.inputs.contains(path) {
                walk.inputs.push(path.clone());
            }
        }
        walk.flows.extend(script.mentioned.iter().cloned());
        walk.functions.extend(script.functions);
        walk.words.extend(script.mentioned);
        walk.scopes.push(std::rc::Rc::new(script.variables));
        for command in script.commands {
            self.command(command, walk);
        }
        walk.scopes.pop();
    }

    pub(super) fn command(&self, command: Command, walk: &mut Walk) {
        walk.words.extend(command.words.iter().cloned());
        walk.note_flows(&command);
        // `H=atlas ssh $H`, `xargs … <<< atlas`: assigned values and text fed to the
        // command are part of what the command names.
        walk.words.extend(
            command
                .env
                .iter()
                .map(|(name, value)| format!("{name}={value}")),
        );
        if let Stdin::Text(text) = &command.stdin {
            walk.words
                .extend(text.split_whitespace().map(str::to_string));
        }
        self.device_sockets(&command, walk);
        self.change_directory(&command, walk);
        if walk.refusal.is_none() {
            walk.refusal = self
                .override_attempt(&command)
                .or_else(|| self.self_protection(&command, walk));
        }
        // `env -C DIR PROGRAM`, `sudo -D DIR PROGRAM`: the program's paths are from DIR.
        let outer_cwd = (walk.cwd.clone(), walk.cwd_unknown);
        if let Some(dir) = self.wrapper_directory(&command) {
            let dir = self.world.expand_tilde(&dir);
            walk.cwd_unknown |= dir.contains(UNKNOWN);
            walk.cwd = Some(self.world.resolve(&dir, walk.cwd.as_deref()));
        }
        let mut steps = Vec::new();
        unwrap(self.rules, command, &mut steps);
        for step in steps {
            self.step(step, walk);
        }
        (walk.cwd, walk.cwd_unknown) = outer_cwd;
    }

    /// One thing a command comes to once its wrappers are off.
    fn step(&self, step: Step, walk: &mut Walk) {
        match step {
            Step::Run(command) => {
                // Wrappers off (`env`, `sudo`, `find -exec`, `xargs`): the program that
                // really runs is checked as if typed alone.
                if walk.refusal.is_none() {
                    walk.refusal = self
                        .override_attempt(&command)
                        .or_else(|| self.self_protection(&command, walk));
                }
                let mut command = command;
                let selects = self.engine_context(&mut command, walk);
                let command = self.with_disk(command, walk);
                self.recipes(&command, walk);
                self.startup_definition(&command, walk);
                self.note_links(&command, walk);
                self.transports(&command, walk);
                self.git_settings_for_any_program(&command, walk);
                self.stored_git_commands(&command, walk);
                let before = walk.candidates.len();
                self.invocation(&command, walk);
                for c in walk.candidates[before..].iter_mut() {
                    c.route |= selects;
                }
                self.arguments_run(&command, walk);
            }
            // `$X ssh atlas`, a crontab line's `*/5 * * * * ssh atlas`: whatever the
            // program is, a guarded program among its words may run.
            Step::UnknownProgram(command) => {
                if walk.refusal.is_none() {
                    walk.refusal = self.unknown_guard_subcommand(&command);
                }
                self.arguments_run(&command, walk);
                if walk.speculative == 0 {
                    walk.unknown_programs.push(command.words);
                }
            }
            Step::Shell { source, depth, env } => self.payload(&source, depth, &env, walk),
            Step::UnknownCode(command) => {
                if walk.speculative == 0 {
                    let program = command
                        .words
                        .first()
                        .map_or(String::new(), |w| base_name(w).replace(UNKNOWN, "…"));
                    let what = format!("the code `{program}` reads on its input");
                    walk.unknown_code.push((command.words, what));
                }
            }
            // `nice env -C DIR rm F`: the inner wrapper's own checks and directory.
            Step::Wrapper(command) => {
                if walk.refusal.is_none() {
                    walk.refusal = self
                        .override_attempt(&command)
                        .or_else(|| self.self_protection(&command, walk));
                }
                if let Some(dir) = self.wrapper_directory(&command) {
                    let dir = self.world.expand_tilde(&dir);
                    walk.cwd_unknown |= dir.contains(UNKNOWN);
                    walk.cwd = Some(self.world.resolve(&dir, walk.cwd.as_deref()));
                }
            }
            // Another reading of a wrapper's words: refused only at the mesh.
            Step::Speculative(steps) => {
                walk.speculative += 1;
                for step in steps {
                    self.step(step, walk);
                }
                walk.speculative -= 1;
            }
        }
    }

    /// `exec 3<>/dev/tcp/atlas/22`: bash itself connects to the host a redirection names.
    pub(super) fn device_sockets(&self, command: &Command, walk: &mut Walk) {
        for path in command.writes.iter().filter(|w| shell::is_socket_path(w)) {
            let host = path.split('/').nth(3).unwrap_or_default().to_string();
            let cx = Context {
                command,
                over: "bash's /dev/tcp".into(),
                shape: vec![],
                user: None,
                carried: carried::Carried::default(),
                elsewhere: false,
            };
            self.candidate(Role::Host, host, &cx, "/dev/tcp/<machine>".into(), walk);
        }
    }

    /// `GIT_SSH_COMMAND="ssh -J atlas"`: a variable another program runs as its transport.
    pub(super) fn transports(&self, command: &Command, walk: &mut Walk) {
        let sources: Vec<String> = command
            .env
            .iter()
            .filter(|(name, _)| self.rules.is_command_env(name))
            .map(|(_, value)| value.clone())
            .collect();
        for source in sources {
            self.payload(&source, command.depth + 1, &[], walk);
        }
    }

    pub(super) fn payload(
        &self,
        source: &str,
        depth: usize,
        env: &[(String, String)],
        walk: &mut Walk,
    ) {
        // Even in a program's arguments: past the depth, what they run is not known.
        if depth > MAX_PAYLOAD_DEPTH {
            walk.incomplete.get_or_insert(format!(
                "it nests shell payloads more than {MAX_PAYLOAD_DEPTH} deep"
            ));
            return;
        }
        // A payload sees the enclosing script's variables and its command's own.
        let mut vars: HashMap<String, Vec<String>> = walk
            .scopes
            .last()
            .map(|s| (**s).clone())
            .unwrap_or_default();
        for (name, value) in env {
            // A `-c` script's `$1` is its own argument, never the enclosing script's.
            if crate::unwrap::is_positional(name) {
                vars.insert(name.clone(), vec![value.clone()]);
            } else {
                vars.entry(name.clone()).or_default().push(value.clone());
            }
        }
        // A payload is a new script: its commands' arguments were not tried by the suffix
        // that holds it (`foo bash -c 'uv run ssh atlas'`).
        let in_suffix = std::mem::take(&mut walk.in_suffix);
        match shell::parse_reading(source, depth, &vars, &walk.read.clone()) {
            Ok(script) => self.script(script, walk),
            Err(_) if walk.speculative > 0 => {}
            Err(_) => walk.unparsable.push(source.to_string()),
        }
        walk.in_suffix = in_suffix;
    }

    /// The directory a wrapper runs its program in, when it says (`env -C DIR`).
    pub(super) fn wrapper_directory(&self, command: &Command) -> Option<String> {
        crate::unwrap::wrapper_directory(self.rules, command)
    }

    /// `cd DIR`, a bare `cd` (home), `cd -` (where the command was before), `cd "$X"`
    /// (unknown): where the command's relative paths resolve from next.
    pub(super) fn change_directory(&self, command: &Command, walk: &mut Walk) {
        let Some(program) = command.words.first().map(String::as_str) else {
            return;
        };
        if !matches!(program, "cd" | "pushd" | "popd" | "chdir") {
            return;
        }
        let here = (!walk.cwd_unknown).then(|| walk.cwd.clone().or(self.world.cwd.clone()));
        let dir = command.words[1..]
            .iter()
            .find(|w| !matches!(w.as_str(), "-L" | "-P" | "-e" | "-@" | "--"));
        let next: Option<PathBuf> = match (program, dir.map(String::as_str)) {
            ("popd", _) => None,
            (_, None) => self.world.home.clone(),
            (_, Some("-")) => walk.oldpwd.clone().flatten(),
            (_, Some(dir)) => self.cd_target(dir, command, walk),
        };
        walk.oldpwd = Some(here.flatten());
        walk.cwd_unknown = next.is_none();
        walk.cwd = next;
    }

    /// `ln -s TARGET LINK`: the link, for the paths written through it later.
    pub(super) fn note_links(&self, command: &Command, walk: &mut Walk) {
        let words = &command.words;
        if words.first().map(|p| base_name(p)) != Some("ln") {
            return;
        }
        let operands: Vec<&String> = words[1..].iter().filter(|w| !w.starts_with('-')).collect();
        let (Some(target), Some(link)) = (operands.first(), operands.last()) else {
            return;
        };
        let mut path = self
            .world
            .resolve(&self.world.expand_tilde(link), walk.cwd.as_deref());
        if operands.len() == 1 || link.ends_with('/') || self.world.is_directory(&path) {
            path.push(base_name(target));
        }
        walk.links.push((path, target.to_string()));
    }
}

impl Walk {
    /// The values a command may see for `name`: its own prefix assignments, then every
    /// value the enclosing script assigned.
    pub(super) fn env_values<'a>(
        &'a self,
        command: &'a Command,
        name: &'a str,
    ) -> impl Iterator<Item = &'a String> {
        let prefix = command
            .env
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v);
        let scoped = self
            .scopes
            .last()
            .and_then(|s| s.get(name))
            .into_iter()
            .flatten();
        prefix.chain(scoped)
    }
}
