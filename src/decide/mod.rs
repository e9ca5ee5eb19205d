//! One decision: shell source × rules × catalog → pass, or a refusal with its facts.
//!
//! The walk first collects, without the catalog, every place a guarded program names a
//! target; only if there is one is the catalog read (so a command with no guarded program
//! passes even when the catalog is broken, and costs no file read).

mod agents;
mod disk;
mod flow;
mod guard_files;
mod judge;
mod overrides;
mod program;
pub mod target;
mod walk;

use crate::argv::{self, Arg, base_name};
use crate::catalog::{Catalog, LazyCatalog, MeshObject};
use crate::protect;
use crate::rules::{Program, Role, Rules};
use crate::shell::{self, Command, Script, Stdin, UNKNOWN, is_known};
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
    /// Words that can flow into another command's target (see `flow`).
    flows: Vec<String>,
    /// Functions the command defines: a call's arguments flow into the body.
    functions: Vec<String>,
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
}

/// Every value the options `names` take: `--settings X` and `--settings=X`.
pub(super) fn option_values(args: &[String], names: &[String]) -> Vec<String> {
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

pub(super) struct Context<'c> {
    command: &'c Command,
    over: String,
    shape: Vec<String>,
    user: Option<String>,
    inner: Option<String>,
    /// The program works on another machine's daemon or host (`-H`, `DOCKER_HOST`) that is
    /// given: its containers and units are that machine's, judged by the host alone.
    elsewhere: bool,
}
