//! One decision: shell source × rules × catalog × the command's world → pass, or a refusal
//! with its facts.
//!
//! The walk first collects, without the catalog, every place a guarded program names a
//! target; only if there is one is the catalog read (so a command with no guarded program
//! passes even when the catalog is broken, and costs no file read). One event through it:
//! [`Guard::judged`] (`judge.rs`) → `walk/` (the shell walked, command by command) →
//! `program/` (a guarded program's arguments: its candidate targets) → [`target`] (a word in
//! its role to a mesh object) → back in `judge.rs`, the verdict. Beside the flow, `disk/`
//! (what the disk says a command runs or reaches, asked through the world) and
//! `self_protection/` (what a command may not do to the guard). The world (working
//! directory, home, environment, disk, the guard's files) is [`Guard::world`], built by the
//! boundary: nothing here reads the file system or the environment itself.

mod disk;
mod judge;
mod program;
mod self_protection;
pub mod target;
mod walk;

use walk::Walk;

use crate::argv::{self, Arg, base_name};
use crate::catalog::{LazyCatalog, MeshObject};
use crate::rule::Rule;
use crate::rules::{Role, Rules};
use crate::shell::{self, Command, Stdin, UNKNOWN, is_known};
use crate::world::World;
use std::collections::HashMap;
use std::path::PathBuf;

/// Commands longer than this are refused unread: nothing legitimate an agent types is this
/// long, and the bound keeps every answer fast.
pub const MAX_SOURCE_BYTES: usize = 256 * 1024;
/// Payloads inside payloads (`bash -c "ssh x 'sh -c …'"`) past this depth are refused.
pub const MAX_PAYLOAD_DEPTH: usize = 8;

pub const OVERRIDE_VAR: &str = "MESH_GUARD_OVERRIDE";

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
    /// It would be refused, and the catalog sets what it reaches to report-only mode: it
    /// passes, and the hook records the refusal it would have been (decision 0060).
    Reported(Box<Refusal>),
}

/// The guard's own setup is broken: the operator's to fix, never the agent's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Broken {
    /// The catalog is missing or invalid: its first error, naming its file (and line).
    Catalog(String),
    /// A rules file is invalid: its first error, naming its file.
    Rules(String),
}

/// Why a command is refused, beyond the object it reaches: typed here, said by `message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// Nothing beyond the mesh object it reaches and how (the mesh rules).
    Reaches,
    /// What reaches the mesh is an argument of this program, whose grammar the guard does
    /// not know: it may run its arguments, so they are checked as commands.
    ArgumentOf(String),
    /// Its program cannot be known before it runs (as written).
    UnknownProgram(String),
    /// The code a program runs cannot be known before it runs, in words: "the code `bash`
    /// reads on its input", "what `deploy` in pyproject.toml runs".
    UnknownCode(String),
    /// A target cannot be known before it runs (as written).
    UnknownTarget(String),
    /// Part of it cannot be parsed as a shell command.
    Unparsable,
    /// Part of it cannot be parsed, and it mentions a program the guard checks.
    UnparsableGuarded,
    /// Longer than the guard reads.
    TooLong { kib: usize },
    /// The walk reached one of its limits (the limit, in the walk's words).
    Incomplete(String),
    /// It turns the guard's plugin off.
    PluginOff,
    /// It starts an agent with a guard variable it sets itself.
    AgentVariable(String),
    /// It starts an agent with its configuration moved away from the guard's hooks.
    AgentConfigMoved(String),
    /// It starts an agent with settings that switch the guard's hooks off.
    AgentSettingsOff,
    /// It starts an agent without the settings that hold the guard's hooks.
    AgentWithoutSettings,
    /// It starts an agent with its hooks configured away.
    AgentHooksAway,
    /// It runs one of the guard's own subcommands that are the operator's (`audit prune`).
    GuardSubcommand(String),
    /// It opens the guard's audit record with another client.
    OpensRecord,
    /// It changes the guard's own files or the agent's hook settings.
    ChangesGuardFiles,
    /// It sets the override (or another guard variable) for a session.
    SetsOverride,
    /// A file tool writes the override into a file a session starts from.
    WritesOverride,
    /// The guard's setup is broken: the operator's to fix.
    Broken(Broken),
    /// What went wrong before a decision could be made (the command layer's words).
    Internal(String),
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
    /// command), word for word as the agent wrote it, for filling `<command>`.
    pub inner: Vec<String>,
    /// The commands that carried command runs once a shell has parsed it and wrappers are
    /// off (`ssh atlas 'sudo journalctl -u x'` runs `journalctl -u x`), for ranking.
    pub runs: Vec<Vec<String>>,
    /// The program's family, as the rules name it (`nerdctl` → `docker`, `docker-compose`
    /// → `docker compose`): the command is ranked as the family's program too.
    pub family: Vec<String>,
    /// Commands that do what this one does to its target, ranked as written with the target
    /// after them: a D-Bus call to systemd (`busctl call … RestartUnit s x.service`) is
    /// `systemctl restart x.service`.
    pub equivalent: Vec<Vec<String>>,
    /// The operands the refused program was given (options off), for `<source>`, `<path>`.
    pub operands: Vec<String>,
    /// Each word of `command` holding an unknown part, with the text the agent wrote.
    pub written: Vec<(String, String)>,
    /// `command` is one piece of source text, shown as written, not words to quote.
    pub verbatim: bool,
    /// A target that cannot be known, as written (`"$H"`), and what it would have to be
    /// to reach the mesh (`machine`): the refusal names the tool for that case.
    pub unknown: Option<(String, String)>,
    /// The target is a host the connection only passes through (`ssh -J atlas elsewhere`):
    /// what the command runs, it runs on another machine.
    pub hop: bool,
    /// Why, beyond what it reaches: what could not be known or checked, what it changes.
    pub why: Why,
    /// The command came from a recipe a task runner reads from a file: the runner's
    /// command as written and the recipe in words (`npm run deploy`, "`deploy` in
    /// package.json").
    pub read_from: Option<(String, String)>,
}

impl Refusal {
    pub fn plain(rule: Rule, command: &str, why: Why) -> Refusal {
        Refusal {
            rule,
            command: vec![command.to_string()],
            reaches: String::new(),
            over: String::new(),
            target: String::new(),
            object: None,
            shape: String::new(),
            machine: None,
            inner: Vec::new(),
            runs: Vec::new(),
            family: Vec::new(),
            equivalent: Vec::new(),
            operands: Vec::new(),
            written: Vec::new(),
            verbatim: true,
            unknown: None,
            hop: false,
            why,
            read_from: None,
        }
    }
}

/// One decision's inputs: the rules, the catalog (read only if a guarded program names a
/// target), and the command's world (its working directory, home, environment, disk and the
/// guard's own files), built by the boundary and never reached around.
pub struct Guard<'a> {
    pub rules: &'a Rules,
    pub catalog: &'a LazyCatalog,
    pub world: &'a World,
}

/// A place where a guarded program names a target, found before the catalog is read.
#[derive(Debug, Clone)]
struct Candidate {
    role: Role,
    value: String,
    command: Vec<String>,
    /// The command's unknown words, as written.
    command_written: Vec<(String, String)>,
    over: String,
    shape: String,
    user: Option<String>,
    carried: program::carried::Carried,
    /// Found among another program's arguments (`pkexec ssh atlas`): it counts only if it
    /// reaches the mesh, never for what it leaves unknown.
    speculative: bool,
    /// It only selects a route later commands use (`docker context use X`, `export
    /// DOCKER_HOST=…`), or is a host the connection passes through on its way (a jump): the
    /// commands that use it, and the destination, are refused first, for their tools.
    route: bool,
    /// The programs whose arguments it was found in (`mesh exec api -- 'journalctl -u x'`):
    /// under the mesh's own CLI it is the mesh's data (decision 0054).
    runners: Vec<String>,
    /// Found in a recipe a task runner read from a file: the runner's command as written
    /// and the recipe in words.
    read_from: Option<(String, String)>,
}

pub use judge::{Judged, Reached};

impl Guard<'_> {
    pub fn decide(&self, source: &str) -> Decision {
        self.judged(source).decision
    }
}

pub(super) use crate::argv::option_values;

#[derive(Clone)]
pub(super) struct Context<'c> {
    command: &'c Command,
    over: String,
    shape: Vec<String>,
    user: Option<String>,
    carried: program::carried::Carried,
    /// The program works on another machine's daemon or host (`-H`, `DOCKER_HOST`) that is
    /// given: its containers and units are that machine's, judged by the host alone.
    elsewhere: bool,
}
