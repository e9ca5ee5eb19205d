//! One decision: shell source × rules × catalog → pass, or a refusal with its facts.
//!
//! The walk first collects, without the catalog, every place a guarded program names a
//! target; only if there is one is the catalog read (so a command with no guarded program
//! passes even when the catalog is broken, and costs no file read).

pub mod target;

use crate::argv::{self, Arg, base_name};
use crate::catalog::{Catalog, LazyCatalog, MeshObject};
use crate::protect;
use crate::rules::{Program, Role, Rules};
use crate::shell::{self, Command, Script, Stdin, UNKNOWN};
use crate::unwrap::{Step, unwrap};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Commands longer than this are refused unread: nothing legitimate an agent types is this
/// long, and the bound keeps every answer fast.
pub const MAX_SOURCE_BYTES: usize = 256 * 1024;
/// Payloads inside payloads (`bash -c "ssh x 'sh -c …'"`) past this depth are refused.
pub const MAX_PAYLOAD_DEPTH: usize = 8;

pub const OVERRIDE_VAR: &str = "MESH_GUARD_OVERRIDE";

/// Stable rule ids, in hook output, `check --json` and the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    RemoteAccess,
    RemoteDaemon,
    MeshContainer,
    MeshUnit,
    Override,
    Unverifiable,
    SelfProtection,
    FailClosed,
}

impl Rule {
    pub fn id(self) -> &'static str {
        match self {
            Rule::RemoteAccess => "remote-access",
            Rule::RemoteDaemon => "remote-daemon",
            Rule::MeshContainer => "mesh-container",
            Rule::MeshUnit => "mesh-unit",
            Rule::Override => "self-override",
            Rule::Unverifiable => "unverifiable",
            Rule::SelfProtection => "self-protection",
            Rule::FailClosed => "fail-closed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
// One decision is made per process: its size does not matter, its shape does.
#[allow(clippy::large_enum_variant)]
pub enum Decision {
    Pass(PassReason),
    Refuse(Refusal),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PassReason {
    /// No program the guard knows reaches anything of the mesh.
    NotMesh,
    /// `git_user@forge`: the forge's git account.
    ForgeAccount { account: String },
}

/// The facts of a refusal; `message` renders them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub rule: Rule,
    /// The command that is refused, as it runs once wrappers are off (program first).
    pub command: Vec<String>,
    /// What it reaches, in words: "mesh machine `atlas`".
    pub reaches: String,
    /// How: "over ssh", "through the container engine".
    pub over: String,
    /// The name it reaches (`atlas`, `mesh-controller`).
    pub target: String,
    pub object: Option<MeshObject>,
    /// The command's shape, for "one must be created": `docker inspect <container>`.
    pub shape: String,
    /// The machine the command reaches, when it says, for filling usages.
    pub machine: Option<String>,
    /// The command it carries for the target to run (ssh's remote command, `docker exec`'s
    /// command), for filling `<command>`.
    pub inner: Option<String>,
    /// What could not be known or checked (unverifiable, fail-closed).
    pub detail: String,
}

impl Refusal {
    pub fn plain(rule: Rule, command: &str, detail: impl Into<String>) -> Refusal {
        Refusal {
            rule,
            command: vec![command.to_string()],
            reaches: String::new(),
            over: String::new(),
            target: String::new(),
            object: None,
            shape: String::new(),
            machine: None,
            inner: None,
            detail: detail.into(),
        }
    }
}

pub use crate::protect::Protected;

pub struct Guard<'a> {
    pub rules: &'a Rules,
    pub catalog: &'a LazyCatalog,
    pub protected: &'a Protected,
}

/// A place where a guarded program names a target, found before the catalog is read.
#[derive(Debug, Clone)]
struct Candidate {
    role: Role,
    value: String,
    command: Vec<String>,
    over: String,
    shape: String,
    user: Option<String>,
    inner: Option<String>,
}

#[derive(Default)]
struct Walk {
    candidates: Vec<Candidate>,
    unknown_programs: Vec<Vec<String>>,
    unparsable: Vec<String>,
    /// Every word met, for "does the command name a mesh object".
    words: Vec<String>,
    refusal: Option<Refusal>,
    incomplete: Option<String>,
    /// Variables of the script being walked (innermost payload last): every value each
    /// was assigned anywhere in it, the environment its commands may see.
    scopes: Vec<std::rc::Rc<HashMap<String, Vec<String>>>>,
    /// A guarded program runs: the catalog must be read (and valid), even where no target
    /// was found (`docker build .` with a broken catalog is refused, as the contract says).
    guarded: bool,
    /// Where the command has `cd`'d to, for the paths after it.
    cwd: Option<PathBuf>,
    /// The command has `cd`'d somewhere that cannot be known (`cd "$X"`, `cd -` with an
    /// unknown `OLDPWD`): its relative paths could be anywhere.
    cwd_unknown: bool,
    /// Where `cd -` goes: `None` until a `cd` of the command's own sets it.
    oldpwd: Option<Option<PathBuf>>,
    /// Links the command itself creates (`ln -s ~/.claude x`), with what they point to:
    /// a path through one is not known from its text.
    links: Vec<(PathBuf, String)>,
    /// How many remote commands (`ssh host '…'`) the walk is inside. There, a container's
    /// or unit's name is the remote machine's business: only machines it reaches count.
    remote: usize,
}

impl Walk {
    /// The values a command may see for `name`: its own prefix assignments, then every
    /// value the enclosing script assigned.
    fn env_values<'a>(
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

impl Guard<'_> {
    pub fn decide(&self, source: &str) -> Decision {
        if source.len() > MAX_SOURCE_BYTES {
            return Decision::Refuse(Refusal::plain(
                Rule::Unverifiable,
                &source[..source.floor_char_boundary(80)],
                format!(
                    "the command is longer than {} KiB, too long to check",
                    MAX_SOURCE_BYTES / 1024
                ),
            ));
        }
        let mut walk = Walk::default();
        // `$HOME` is what bash would expand it to: the session's home, as the hook sees it.
        let known: HashMap<String, Vec<String>> = self
            .protected
            .home
            .iter()
            .map(|h| ("HOME".to_string(), vec![h.to_string_lossy().into_owned()]))
            .collect();
        match shell::parse(source, 0, &known) {
            Ok(script) => self.script(script, &mut walk),
            Err(_) => walk.unparsable.push(source.to_string()),
        }
        if let Some(refusal) = walk.refusal {
            return Decision::Refuse(refusal);
        }
        if let Some(why) = walk.incomplete {
            return Decision::Refuse(Refusal::plain(Rule::Unverifiable, source, why));
        }
        let quick_pass = walk.candidates.is_empty()
            && !walk.guarded
            && walk.unknown_programs.is_empty()
            && walk
                .unparsable
                .iter()
                .all(|text| !self.mentions_guarded_program(text));
        if quick_pass && walk.unparsable.is_empty() {
            return Decision::Pass(PassReason::NotMesh);
        }
        let catalog = match self.catalog.get() {
            Ok(catalog) => catalog,
            Err(_) => {
                return Decision::Refuse(Refusal::plain(
                    Rule::FailClosed,
                    source,
                    "the mesh catalog is missing or invalid, so a command that runs a guarded program cannot be checked",
                ));
            }
        };
        self.judge(catalog, source, walk)
    }

    fn script(&self, script: Script, walk: &mut Walk) {
        if let Some(why) = script.incomplete {
            walk.incomplete.get_or_insert(why);
        }
        walk.words.extend(script.mentioned);
        walk.scopes.push(std::rc::Rc::new(script.variables));
        for command in script.commands {
            self.command(command, walk);
        }
        walk.scopes.pop();
    }

    fn command(&self, command: Command, walk: &mut Walk) {
        walk.words.extend(command.words.iter().cloned());
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
            let dir = self.protected.expand_tilde(&dir);
            walk.cwd_unknown |= dir.contains(UNKNOWN);
            walk.cwd = Some(self.protected.resolve(&dir, walk.cwd.as_deref()));
        }
        let mut steps = Vec::new();
        unwrap(self.rules, command, &mut steps);
        for step in steps {
            match step {
                Step::Run(command) => {
                    // Wrappers off (`env`, `sudo`, `find -exec`, `xargs`): the program that
                    // really runs is checked as if typed alone.
                    if walk.refusal.is_none() {
                        walk.refusal = self
                            .override_attempt(&command)
                            .or_else(|| self.self_protection(&command, walk));
                    }
                    self.note_links(&command, walk);
                    self.transports(&command, walk);
                    self.invocation(&command, walk);
                }
                Step::UnknownProgram(command) => walk.unknown_programs.push(command.words),
                Step::Shell { source, depth, env } => self.payload(&source, depth, &env, walk),
            }
        }
        (walk.cwd, walk.cwd_unknown) = outer_cwd;
    }

    /// `exec 3<>/dev/tcp/atlas/22`: bash itself connects to the host a redirection names.
    fn device_sockets(&self, command: &Command, walk: &mut Walk) {
        for path in command.writes.iter().filter(|w| shell::is_socket_path(w)) {
            let host = path.split('/').nth(3).unwrap_or_default().to_string();
            let cx = Context {
                command,
                over: "bash's /dev/tcp".into(),
                shape: vec![],
                user: None,
                inner: None,
            };
            self.candidate(Role::Host, host, &cx, "/dev/tcp/<machine>".into(), walk);
        }
    }

    /// `GIT_SSH_COMMAND="ssh -J atlas"`: a variable another program runs as its transport.
    fn transports(&self, command: &Command, walk: &mut Walk) {
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

    fn payload(&self, source: &str, depth: usize, env: &[(String, String)], walk: &mut Walk) {
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
            vars.entry(name.clone()).or_default().push(value.clone());
        }
        match shell::parse(source, depth, &vars) {
            Ok(script) => self.script(script, walk),
            Err(_) => walk.unparsable.push(source.to_string()),
        }
    }

    /// Case 4: a command may not grant itself the operator's override.
    fn override_attempt(&self, command: &Command) -> Option<Refusal> {
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
        (sets || plants).then(|| Refusal {
            detail: format!("it sets {OVERRIDE_VAR} or another of the guard's variables, which only the operator may set, in the environment a session starts with"),
            ..Refusal::plain(Rule::Override, &shown(command), "")
        })
    }

    /// The directory a wrapper runs its program in, when it says (`env -C DIR`).
    fn wrapper_directory(&self, command: &Command) -> Option<String> {
        let wrapper = self.rules.wrapper(base_name(command.words.first()?))?;
        option_values(&command.words[1..], &wrapper.chdir_option).pop()
    }

    /// `cd DIR`, a bare `cd` (home), `cd -` (where the command was before), `cd "$X"`
    /// (unknown): where the command's relative paths resolve from next.
    fn change_directory(&self, command: &Command, walk: &mut Walk) {
        let Some(program) = command.words.first().map(String::as_str) else {
            return;
        };
        if !matches!(program, "cd" | "pushd" | "popd" | "chdir") {
            return;
        }
        let here = (!walk.cwd_unknown).then(|| walk.cwd.clone().or(self.protected.cwd.clone()));
        let dir = command.words[1..]
            .iter()
            .find(|w| !matches!(w.as_str(), "-L" | "-P" | "-e" | "-@" | "--"));
        let next: Option<PathBuf> = match (program, dir.map(String::as_str)) {
            ("popd", _) => None,
            (_, None) => self.protected.home.clone(),
            (_, Some("-")) => walk.oldpwd.clone().flatten(),
            (_, Some(dir)) => {
                let dir = self.protected.expand_tilde(dir);
                let base = walk.cwd.clone();
                (!dir.contains(UNKNOWN) && (!walk.cwd_unknown || dir.starts_with('/')))
                    .then(|| self.protected.resolve(&dir, base.as_deref()))
            }
        };
        walk.oldpwd = Some(here.flatten());
        walk.cwd_unknown = next.is_none();
        walk.cwd = next;
    }

    /// `ln -s TARGET LINK`: the link, for the paths written through it later.
    fn note_links(&self, command: &Command, walk: &mut Walk) {
        let words = &command.words;
        if words.first().map(|p| base_name(p)) != Some("ln") {
            return;
        }
        let operands: Vec<&String> = words[1..].iter().filter(|w| !w.starts_with('-')).collect();
        let (Some(target), Some(link)) = (operands.first(), operands.last()) else {
            return;
        };
        let mut path = self
            .protected
            .resolve(&self.protected.expand_tilde(link), walk.cwd.as_deref());
        if operands.len() == 1 || link.ends_with('/') || path.is_dir() {
            path.push(base_name(target));
        }
        walk.links.push((path, target.to_string()));
    }

    /// The guard's own catalog, rules, record and plugin are not the agent's to change,
    /// nor may an agent it starts run without the guard.
    fn self_protection(&self, command: &Command, walk: &Walk) -> Option<Refusal> {
        if let Some(why) = self.agent_without_guard(command, walk) {
            return Some(Refusal {
                detail: format!("it {why}; that is the operator's to do"),
                target: "mesh-guard".into(),
                ..Refusal::plain(Rule::SelfProtection, &shown(command), "")
            });
        }
        if self.protected.paths.is_empty() {
            return None;
        }
        let program = command.words.first().map(|p| base_name(p)).unwrap_or("");
        let mut targets: Vec<(String, Reach)> = command
            .writes
            .iter()
            .map(|w| (w.clone(), Reach::Whole))
            .collect();
        let mut code: Vec<String> = Vec::new();
        let args = command.words.get(1..).unwrap_or_default();
        if let Some(writer) = self.rules.writer(program) {
            targets.extend(self.written(writer, args, walk));
            if writer.code_operands {
                code.extend(args.iter().cloned());
            }
            if writer.stdin_script
                && let Stdin::Text(text) = &command.stdin
            {
                code.push(text.clone());
            }
        }
        if let Some(interpreter) = self.rules.interpreter(program) {
            code.extend(crate::unwrap::interpreter_code(interpreter, command, args));
            // `python3 fix.py ~/.claude/settings.json`: the script is handed the file.
            code.extend(args.iter().cloned());
        }
        let hit = targets
            .iter()
            .find(|(w, reach)| self.writes_guard_file(w, reach, walk))
            .map(|(w, _)| w.clone())
            .or_else(|| {
                code.iter()
                    .find_map(|c| self.code_names_guard_file(c, walk))
            });
        let hit = hit?;
        let what = if program.starts_with("sqlite") || program == "litecli" {
            "opens the guard's audit record with another client"
        } else {
            "changes the guard's own files (its catalog, rules, record, binary or plugin) or the agent's hook settings"
        };
        Some(Refusal {
            detail: format!("it {what}; those are the operator's"),
            target: base_name(&hit.replace(UNKNOWN, "…")).to_string(),
            ..Refusal::plain(Rule::SelfProtection, &shown(command), "")
        })
    }

    /// The words a writer changes, as its rule says.
    fn written(
        &self,
        writer: &crate::rules::Writer,
        args: &[String],
        walk: &Walk,
    ) -> Vec<(String, Reach)> {
        let runs_writer = args.iter().enumerate().any(|(i, a)| {
            writer.runs_on_found.contains(a)
                && args
                    .get(i + 1)
                    .is_some_and(|p| self.rules.writer(base_name(p)).is_some())
        });
        if !writer.only_with.is_empty()
            && !runs_writer
            && !args.iter().any(|a| writer.only_with.contains(a))
        {
            return Vec::new();
        }
        if !writer.runs_on_found.is_empty() || !writer.name_tests.is_empty() {
            // The starting points come before the first option (`find DIR… -name X …`).
            let names = option_values(args, &writer.name_tests);
            return args
                .iter()
                .take_while(|a| !a.starts_with(['-', '(', '!']))
                .map(|dir| (dir.clone(), Reach::Named(names.clone())))
                .collect();
        }
        let target = option_values(args, &writer.target_options).pop();
        let values: Vec<usize> = args
            .iter()
            .enumerate()
            .filter(|(_, a)| writer.target_options.contains(a))
            .map(|(i, _)| i + 1)
            .collect();
        let words: Vec<String> = args
            .iter()
            .enumerate()
            .filter(|(i, _)| !values.contains(i))
            .map(|(_, w)| {
                writer
                    .value_prefixes
                    .iter()
                    .find_map(|p| w.strip_prefix(p.as_str()))
                    .unwrap_or(w)
                    .to_string()
            })
            .filter(|w| !w.starts_with('-'))
            .collect();
        if !writer.into_directory || (words.len() < 2 && target.is_none()) {
            let reach = || {
                if writer.exact {
                    Reach::Exact
                } else {
                    Reach::Whole
                }
            };
            return words.into_iter().map(|w| (w, reach())).collect();
        }
        let (destination, sources) = match &target {
            Some(dir) => (dir, words.as_slice()),
            None => words.split_last().expect("two words or more"),
        };
        let mut out: Vec<(String, Reach)> = Vec::new();
        let into_directory = target.is_some()
            || destination.ends_with('/')
            || sources.len() > 1
            || self
                .protected
                .resolve(
                    &self.protected.expand_tilde(destination),
                    walk.cwd.as_deref(),
                )
                .is_dir();
        if into_directory {
            // `cp -r evil/mesh-guard ~/.config/` writes `~/.config/mesh-guard`.
            out.push((destination.clone(), Reach::Exact));
            for source in sources {
                // `rsync -a evil/ DIR`, `cp -r evil/. DIR`: the contents land in DIR itself.
                if source.ends_with('/') || source.ends_with("/.") {
                    out.push((destination.clone(), Reach::Contents));
                    continue;
                }
                let name = base_name(source.trim_end_matches('/'));
                out.push((
                    format!("{}/{name}", destination.trim_end_matches('/')),
                    Reach::Tree,
                ));
            }
        } else {
            out.push((destination.clone(), Reach::Whole));
        }
        if !writer.reads_sources {
            out.extend(sources.iter().map(|s| (s.clone(), Reach::Whole)));
        }
        out
    }

    /// Whether writing `word` writes a guard file, from where the command is.
    fn writes_guard_file(&self, word: &str, reach: &Reach, walk: &Walk) -> bool {
        let protected = self.protected;
        let word = protected.expand_tilde(word);
        let cwd = walk.cwd.as_deref();
        if let Some((target, rest)) = self.through_created_link(&word, walk) {
            // Past a link the command made, the text does not say where the path goes.
            let unknown = format!("{UNKNOWN}/{rest}");
            let pointed = protected
                .resolve(&target, None)
                .join(&rest)
                .to_string_lossy()
                .into_owned();
            return protected.covers(&unknown, None)
                || target.contains(UNKNOWN)
                || protected.covers(&pointed, None);
        }
        let relative = !word.starts_with('/') && !word.starts_with(UNKNOWN);
        if walk.cwd_unknown && relative {
            return protected.covers_anywhere(&word);
        }
        match reach {
            Reach::Exact => protected.is_or_under(&word, cwd),
            Reach::Whole => protected.covers(&word, cwd),
            Reach::Contents => {
                protected.is_or_under(&word, cwd)
                    || protected.is_guard_parent(&protected.resolve(&word, cwd))
            }
            Reach::Tree => {
                protected.covers(&word, cwd) || protected.would_hold(&protected.resolve(&word, cwd))
            }
            Reach::Named(names) if names.is_empty() => protected.covers(&word, cwd),
            Reach::Named(names) => {
                protected.is_or_under(&word, cwd)
                    || protected.holds_named(&protected.resolve(&word, cwd), names)
            }
        }
    }

    /// When `word`, from where the command is, goes through a link the command created:
    /// the link's target (absolute, against the link's directory) and the rest of the path.
    fn through_created_link(&self, word: &str, walk: &Walk) -> Option<(String, String)> {
        if walk.links.is_empty() || word.contains(UNKNOWN) {
            return None;
        }
        let base = walk.cwd.clone().or(self.protected.cwd.clone())?;
        let raw = if word.starts_with('/') {
            PathBuf::from(word)
        } else {
            base.join(word)
        };
        let parts: Vec<_> = raw.components().collect();
        let mut prefix = PathBuf::new();
        for (i, part) in parts.iter().enumerate() {
            prefix.push(part);
            let here = protect::lexical(&prefix);
            if let Some((link, target)) = walk.links.iter().find(|(l, _)| *l == here) {
                let rest: PathBuf = parts[i + 1..].iter().collect();
                let target = self.protected.expand_tilde(target);
                let target = if target.starts_with('/') || target.starts_with(UNKNOWN) {
                    target
                } else {
                    link.parent()
                        .unwrap_or(Path::new("/"))
                        .join(target)
                        .to_string_lossy()
                        .into_owned()
                };
                return Some((target, rest.to_string_lossy().into_owned()));
            }
        }
        None
    }

    /// Interpreter code or SQL that names a guard file (`open('.claude/settings.local.json',
    /// 'w')`, `ATTACH '~/.local/share/mesh-guard/audit.db'`): the code could do anything
    /// with it, so naming it is enough.
    fn code_names_guard_file(&self, code: &str, walk: &Walk) -> Option<String> {
        let pieces = code.split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '\'' | '"'
                        | '`'
                        | '('
                        | ')'
                        | ','
                        | ';'
                        | '['
                        | ']'
                        | '{'
                        | '}'
                        | '<'
                        | '>'
                        | '+'
                )
        });
        for piece in pieces.filter(|p| p.contains('/') || p.starts_with(['.', '~'])) {
            if matches!(piece, "." | ".." | "./" | "../") {
                continue;
            }
            let word = self.protected.expand_tilde(piece);
            if self.writes_guard_file(&word, &Reach::Exact, walk)
                || self
                    .protected
                    .is_guard_parent(&self.protected.resolve(&word, walk.cwd.as_deref()))
            {
                return Some(piece.to_string());
            }
        }
        // `os.path.join(home, '.claude', 'settings.json')`: a guard file's name and its
        // directory's, named apart.
        self.protected.named_in(code)
    }

    /// An agent CLI started, or its plugins changed, so that the guard would not run.
    fn agent_without_guard(&self, command: &Command, walk: &Walk) -> Option<String> {
        let (agent, args) = self.agent_in(&command.words)?;
        if let Some(open) = args.iter().position(|a| agent.plugin_commands.contains(a))
            && args[open..].iter().any(|a| agent.plugin_off.contains(a))
            && args[open..].iter().any(|a| {
                a.starts_with("mesh-guard") || a.contains(UNKNOWN) || a == "--all" || a == "-a"
            })
        {
            return Some("turns the guard's plugin off".into());
        }
        let scoped = walk.scopes.last();
        let set_to = |name: &str| -> Vec<String> {
            let own = command
                .env
                .iter()
                .filter(|(n, _)| n == name)
                .map(|(_, v)| v.clone());
            let script = scoped
                .and_then(|s| s.get(name))
                .into_iter()
                .flatten()
                .cloned();
            own.chain(script).collect()
        };
        for name in protect::GUARD_VARIABLES {
            if !set_to(name).is_empty() {
                return Some(format!("starts an agent with {name} set by the command"));
            }
        }
        for name in &agent.config_env {
            let current = std::env::var(name).ok();
            if set_to(name).iter().any(|v| Some(v) != current.as_ref()) {
                return Some(format!(
                    "starts an agent with {name} moved, away from the settings that hold the guard's hooks"
                ));
            }
        }
        for value in option_values(args, &agent.settings_options) {
            if protect::settings_disable_guard(
                &self.protected.expand_tilde(&value),
                walk.cwd.as_deref().or(self.protected.cwd.as_deref()),
            ) {
                return Some(
                    "starts an agent with settings that switch the guard's hooks off".into(),
                );
            }
        }
        for value in option_values(args, &agent.setting_sources_options) {
            let given: Vec<&str> = value.split(',').map(str::trim).collect();
            if value.contains(UNKNOWN)
                || self
                    .protected
                    .guard_setting_sources()
                    .iter()
                    .any(|s| !given.contains(s))
            {
                return Some(
                    "starts an agent without the settings that hold the guard's hooks".into(),
                );
            }
        }
        for value in option_values(args, &agent.config_options) {
            let key = value
                .split('=')
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            if key.contains("hook") || key.contains(UNKNOWN) {
                return Some("starts an agent with its hooks configured away".into());
            }
        }
        None
    }

    /// The agent CLI a command runs, and its arguments: by its own name, or through a
    /// launcher or interpreter (`npx @anthropic-ai/claude-code`, `node …/claude-code/cli.js`).
    fn agent_in<'w>(&self, words: &'w [String]) -> Option<(&crate::rules::Agent, &'w [String])> {
        // `@anthropic-ai/claude-code@2`, `…/node_modules/@anthropic-ai/claude-code/cli.js`.
        let named = |word: &str| {
            self.rules.agent(strip_version(word)).or_else(|| {
                word.split('/')
                    .find_map(|part| self.rules.agent(strip_version(part)))
            })
        };
        let first = words.first()?;
        if let Some(agent) = self.rules.agent(strip_version(base_name(first))) {
            return Some((agent, &words[1..]));
        }
        self.rules.interpreter(base_name(first))?;
        let at = words[1..].iter().position(|w| !w.starts_with('-'))? + 1;
        named(&words[at]).map(|agent| (agent, &words[at + 1..]))
    }

    fn mentions_guarded_program(&self, text: &str) -> bool {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
            .any(|token| self.rules.is_guarded(token))
    }

    /// A guarded program: collect every target its options, environment and operands name.
    fn invocation(&self, command: &Command, walk: &mut Walk) {
        let Some(first) = command.words.first() else {
            return;
        };
        let program = base_name(first);
        let Some(spec) = self.rules.program(program) else {
            return;
        };
        walk.guarded |= !spec.only_by_target;
        let mut args: Vec<String> = command.words[1..].to_vec();
        let (spec, name) = match spec.same_as.split_first() {
            Some((real, sub)) => match self.rules.program(real) {
                Some(real_spec) => {
                    let mut rewritten = sub.to_vec();
                    rewritten.extend(args);
                    args = rewritten;
                    (real_spec, program.to_string())
                }
                None => return,
            },
            None => (spec, program.to_string()),
        };
        let context = Context {
            command,
            over: spec.over.clone(),
            shape: vec![name],
            user: None,
            inner: None,
        };
        self.program_args(spec, None, &args, context, walk);
    }

    fn program_args(
        &self,
        spec: &Program,
        parent: Option<&Program>,
        args: &[String],
        mut cx: Context,
        walk: &mut Walk,
    ) {
        let scanned = argv::scan(&spec.syntax, args);
        if argv::has(&scanned, &spec.inert) {
            return;
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
        for arg in &scanned {
            if let Arg::Option { name, value } = arg
                && let Some(&role) = spec.options.get(name)
            {
                let shape = format!(
                    "{} {name} <{}>",
                    cx.shape.join(" "),
                    target::placeholder(role)
                );
                self.candidate(role, value.clone().unwrap_or_default(), &cx, shape, walk);
            }
        }
        for (var, role) in &spec.env {
            let values: Vec<String> = walk.env_values(cx.command, var).cloned().collect();
            for value in values {
                let shape = format!(
                    "{var}=<{}> {}",
                    target::placeholder(*role),
                    cx.shape.join(" ")
                );
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
            // A nested subcommand table (`docker container logs`) is the parent's.
            let parent = if sub.parent_subcommands {
                parent.or(Some(spec))
            } else {
                Some(spec)
            };
            self.program_args(sub, parent, &rest, cx, walk);
            return;
        }
        cx.inner = inner_command(spec, &operands);
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
                    let nested = Command {
                        words: taken.iter().map(|s| s.to_string()).collect(),
                        depth: cx.command.depth + 1,
                        ..cx.command.clone()
                    };
                    self.command(nested, walk);
                }
                Role::Ignore => {}
                // `git config NAME VALUE`: each word with the next, as `NAME=VALUE`.
                Role::GitConfig => {
                    for pair in taken.windows(2) {
                        let setting = format!("{}={}", pair[0], pair[1]);
                        let shape = format!("{} <arg>", cx.shape.join(" "));
                        self.candidate(Role::GitConfig, setting, &cx, shape, walk);
                    }
                }
                Role::Verb => cx.shape.extend(taken.iter().map(|s| s.to_string())),
                role => {
                    for value in taken {
                        let mut shape =
                            format!("{} <{}>", cx.shape.join(" "), target::placeholder(role));
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

    fn candidate(&self, role: Role, value: String, cx: &Context, shape: String, walk: &mut Walk) {
        let local_name = matches!(
            role,
            Role::Unit
                | Role::Container
                | Role::Service
                | Role::CopyPath
                | Role::JournalMatch
                | Role::Identifier
                | Role::ContainerFilter
        );
        if walk.remote > 0 && local_name {
            return;
        }
        match role {
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
            self.payload(&source, cx.command.depth + 1, &[], walk);
            if role == Role::Rsh {
                return;
            }
        }
        walk.candidates.push(Candidate {
            role,
            value,
            command: cx.command.words.clone(),
            over: cx.over.clone(),
            shape,
            user: cx.user.clone(),
            inner: cx.inner.clone(),
        });
    }

    /// With the catalog: the first candidate that reaches the mesh is refused.
    /// Every mesh object the command reaches, each as the refusal it would meet. A scoped
    /// override (decision 0015) must cover all of them, not only the first that `decide`
    /// reports: `ssh atlas; ssh orion` under `machine:atlas` is not covered.
    pub fn every_target(&self, source: &str) -> Vec<Refusal> {
        if source.len() > MAX_SOURCE_BYTES {
            return Vec::new();
        }
        let mut walk = Walk::default();
        if let Ok(script) = shell::parse(source, 0, &HashMap::new()) {
            self.script(script, &mut walk);
        }
        let Ok(catalog) = self.catalog.get() else {
            return Vec::new();
        };
        walk.candidates
            .iter()
            .filter_map(
                |c| match target::resolve(catalog, c.role, &c.value, c.user.as_deref()) {
                    target::Resolved::Mesh {
                        object,
                        rule,
                        machine,
                    } => Some(Refusal {
                        reaches: object.describe(),
                        target: object.name().to_string(),
                        object: Some(object),
                        machine,
                        ..Refusal::plain(rule, "", "")
                    }),
                    _ => None,
                },
            )
            .collect()
    }

    fn judge(&self, catalog: &Catalog, source: &str, walk: Walk) -> Decision {
        let mut forge = None;
        let mut unknown = None;
        for c in &walk.candidates {
            match target::resolve(catalog, c.role, &c.value, c.user.as_deref()) {
                target::Resolved::Nothing => {}
                target::Resolved::Unknown => {
                    unknown
                        .get_or_insert_with(|| (c.command.clone(), c.value.replace(UNKNOWN, "…")));
                }
                target::Resolved::Forge(account) => forge = Some(account),
                target::Resolved::Mesh {
                    object,
                    rule,
                    machine,
                } => {
                    return Decision::Refuse(Refusal {
                        rule,
                        command: c.command.clone(),
                        reaches: object.describe(),
                        over: c.over.clone(),
                        target: object.name().to_string(),
                        object: Some(object),
                        shape: c.shape.trim().to_string(),
                        inner: c.inner.clone(),
                        machine,
                        detail: String::new(),
                    });
                }
            }
        }
        // What could not be known matters only where the command names the mesh; the
        // words are looked up (one catalog probe each) only when something is unknown.
        let why = if let Some(words) = walk.unknown_programs.first() {
            let program = words
                .first()
                .map_or(String::new(), |w| w.replace(UNKNOWN, "…"));
            Some((
                words.clone(),
                format!("its program `{program}` cannot be known before it runs"),
            ))
        } else if let Some((command, value)) = unknown {
            Some((
                command,
                format!("its target `{value}` cannot be known before it runs"),
            ))
        } else {
            walk.unparsable.first().map(|text| {
                (
                    vec![text.clone()],
                    "part of it cannot be parsed as a shell command".to_string(),
                )
            })
        };
        if let Some((command, detail)) = why
            && let Some(object) = walk
                .words
                .iter()
                .find_map(|w| names_mesh_object(catalog, w))
        {
            return Decision::Refuse(Refusal {
                reaches: object.describe(),
                target: object.name().to_string(),
                object: Some(object),
                command,
                detail,
                ..Refusal::plain(Rule::Unverifiable, source, "")
            });
        }
        if walk
            .unparsable
            .iter()
            .any(|text| self.mentions_guarded_program(text))
        {
            return Decision::Refuse(Refusal::plain(
                Rule::Unverifiable,
                source,
                "part of it cannot be parsed as a shell command, and it mentions a program the guard checks",
            ));
        }
        match forge {
            Some(account) => Decision::Pass(PassReason::ForgeAccount { account }),
            None => Decision::Pass(PassReason::NotMesh),
        }
    }
}

/// How much of what a written word names is written.
enum Reach {
    /// The file itself (`cp x DIR/`: the directory is not replaced).
    Exact,
    /// The file, or the directory and everything in it (`rm -rf DIR`).
    Whole,
    /// A tree written there, whose files may land where the guard's are or would be
    /// (`cp -r evil/.claude ~/`).
    Tree,
    /// A directory's contents copied into this one (`rsync -a evil/ ~/.claude/`): refused
    /// where a guard file sits directly, not for every directory above one.
    Contents,
    /// What a directory holds whose names match one of these patterns (`find -name`);
    /// everything when there are none.
    Named(Vec<String>),
}

/// `claude-code@2.1.0` → `claude-code` (a package's version; a scope's `@` stays).
fn strip_version(word: &str) -> &str {
    match word.rfind('@') {
        Some(at) if at > 0 => &word[..at],
        _ => word,
    }
}

/// Every value the options `names` take: `--settings X` and `--settings=X`.
fn option_values(args: &[String], names: &[String]) -> Vec<String> {
    let mut values = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        for name in names {
            if arg == name {
                values.extend(args.get(i + 1).cloned());
            } else if let Some(value) = arg
                .strip_prefix(name.as_str())
                .and_then(|r| r.strip_prefix('='))
            {
                values.push(value.to_string());
            }
        }
    }
    values
}

/// The words an operand list gives to a remote or nested command, joined.
fn inner_command(spec: &Program, operands: &[&str]) -> Option<String> {
    let at = spec
        .operands
        .iter()
        .position(|o| matches!(o.role, Role::RemoteCommand | Role::Command))?;
    (at < operands.len()).then(|| operands[at..].join(" "))
}

struct Context<'c> {
    command: &'c Command,
    over: String,
    shape: Vec<String>,
    user: Option<String>,
    inner: Option<String>,
}

/// Whether a word, or a piece of it between separators, names something of the mesh.
fn names_mesh_object(catalog: &Catalog, word: &str) -> Option<MeshObject> {
    word.split(|c: char| {
        c == UNKNOWN
            || c.is_whitespace()
            || matches!(
                c,
                '@' | ':' | '/' | '=' | ',' | '\'' | '"' | ';' | '(' | ')'
            )
    })
    .filter(|piece| !piece.is_empty())
    .find_map(|piece| catalog.object(piece))
}

/// A command as the message shows it: its words, and the assignments it makes
/// (`export MESH_GUARD_OVERRIDE=x`, whose words alone are `export`).
fn shown(command: &Command) -> String {
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
