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
        match shell::parse(source, 0, &HashMap::new()) {
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
        if command
            .words
            .first()
            .is_some_and(|w| w == "cd" || w == "pushd")
            && let Some(dir) = command
                .words
                .get(1)
                .filter(|d| !d.contains(UNKNOWN) && !d.starts_with('-'))
        {
            let base = walk.cwd.clone();
            walk.cwd = Some(self.protected.resolve(dir, base.as_deref()));
        }
        if walk.refusal.is_none() {
            walk.refusal = self
                .override_attempt(&command)
                .or_else(|| self.self_protection(&command, walk.cwd.as_deref()));
        }
        let mut steps = Vec::new();
        unwrap(self.rules, command, &mut steps);
        for step in steps {
            match step {
                Step::Run(command) => {
                    self.transports(&command, walk);
                    self.invocation(&command, walk);
                }
                Step::UnknownProgram(command) => walk.unknown_programs.push(command.words),
                Step::Shell { source, depth, env } => self.payload(&source, depth, &env, walk),
            }
        }
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

    /// The guard's own catalog, rules, record and plugin are not the agent's to change.
    fn self_protection(&self, command: &Command, cwd: Option<&Path>) -> Option<Refusal> {
        if protect::disables_plugin(&command.words) {
            return Some(Refusal {
                detail: "it turns the guard's plugin off; that is the operator's to do".into(),
                target: "mesh-guard".into(),
                ..Refusal::plain(Rule::SelfProtection, &shown(command), "")
            });
        }
        if self.protected.paths.is_empty() {
            return None;
        }
        let program = command.words.first().map(|p| base_name(p)).unwrap_or("");
        let writers = [
            "rm",
            "mv",
            "cp",
            "tee",
            "truncate",
            "shred",
            "unlink",
            "rmdir",
            "ln",
            "chmod",
            "chown",
            "install",
            "dd",
            "touch",
            "rsync",
            "sqlite3",
            "sqlite",
            "sqlitebrowser",
            "litecli",
            "sed",
            "perl",
            "vi",
            "vim",
            "nano",
            "emacs",
            "ed",
        ];
        let mut touched = command.writes.clone();
        if writers.contains(&program) {
            touched.extend(
                command
                    .words
                    .iter()
                    .skip(1)
                    .map(|w| w.strip_prefix("of=").unwrap_or(w).to_string()),
            );
        }
        let hit = touched.iter().find(|w| self.protected.covers(w, cwd))?;
        let what = if program.starts_with("sqlite") || program == "litecli" {
            "opens the guard's audit record with another client"
        } else {
            "changes the guard's own files (its catalog, rules, record, binary or plugin) or the agent's hook settings"
        };
        Some(Refusal {
            detail: format!("it {what}; those are the operator's"),
            target: base_name(hit).to_string(),
            ..Refusal::plain(Rule::SelfProtection, &shown(command), "")
        })
    }

    pub fn is_protected(&self, word: &str) -> bool {
        self.protected.covers(word, None)
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
            Some((
                words.clone(),
                format!(
                    "its program `{}` cannot be known before it runs",
                    words[0].replace(UNKNOWN, "…")
                ),
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
