//! The command's world, as one value the decision takes as an argument: the working
//! directory its relative paths start from, the home `~` stands for, the hook's own
//! environment (as a lookup), the disk (what the command would read, and what is a
//! directory), and the guard's own files. The boundary (`config::Paths::world`) builds it
//! once per event; the decision core names only this type and the [`Disk`] trait, never
//! `std::env`, `std::fs` or the modules that read them (tests/architecture.rs).
//!
//! It is cheap to build: nothing is read until asked. The guard's files are listed, and their
//! links followed, when a command first writes a file (most write nothing); the disk is read
//! only for a guarded program or a script the command runs.

mod guard_files;
mod identity;

pub use crate::ondisk::disk::{Definition, Disk, EnvLookup, Own, SshRoute};

use crate::protect::{home_of, lexical};
use crate::shell::UNKNOWN;
use std::cell::OnceCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The hook's own environment, as a lookup: the boundary gives the process's, a test its own.
#[derive(Clone)]
pub struct Environment(EnvLookup);

impl Environment {
    /// The process's environment, as the hook inherited it.
    pub fn of_process() -> Environment {
        Environment(Rc::new(|name| crate::io::var(name).ok()))
    }

    /// No variable set (`search`, tests).
    pub fn empty() -> Environment {
        Environment(Rc::new(|_| None))
    }

    /// The lookup itself, for the disk's readers (`OnDisk`).
    pub fn lookup(&self) -> EnvLookup {
        Rc::clone(&self.0)
    }

    pub fn get(&self, name: &str) -> Option<String> {
        (self.0)(name)
    }
}

impl std::fmt::Debug for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Environment")
    }
}

impl Default for Environment {
    fn default() -> Environment {
        Environment::empty()
    }
}

/// The command's world: see the module's documentation.
#[derive(Debug, Clone, Default)]
pub struct World {
    /// The working directory relative paths in the command resolve against.
    pub cwd: Option<PathBuf>,
    /// What `~` stands for: the shell's `HOME`.
    pub home: Option<PathBuf>,
    env: Environment,
    /// What the command will read from disk (scripts, the container engine's endpoint),
    /// asked only for a guarded program; `None` where no disk is consulted (`search`).
    pub disk: Option<Rc<dyn Disk>>,
    /// The guard's own files, when given as a list (tests); see `listing`.
    paths: Vec<PathBuf>,
    /// Lists the guard's files in place of `paths`, when first needed.
    listing: Option<Listing>,
    /// The paths with links followed, and the running binary: found on first use, as
    /// most commands write nothing and should not pay for the file system calls.
    real: OnceCell<Vec<PathBuf>>,
    /// The guard's files that have other names (hard links), found on first use.
    identities: OnceCell<identity::Identities>,
}

/// The guard's files, listed when a command first writes one (most write nothing, and the
/// list is a few dozen paths built from the environment).
#[derive(Clone)]
struct Listing(Rc<dyn Fn() -> Vec<PathBuf>>);

impl std::fmt::Debug for Listing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Listing")
    }
}

impl World {
    /// A world whose guard files are `paths`, with no environment and no disk.
    pub fn new(paths: Vec<PathBuf>, cwd: Option<PathBuf>, home: Option<PathBuf>) -> World {
        World {
            cwd,
            home,
            paths,
            ..World::default()
        }
    }

    /// The same, with the guard's files listed by `list` when first needed instead.
    pub fn listed_when_needed(mut self, list: impl Fn() -> Vec<PathBuf> + 'static) -> World {
        self.listing = Some(Listing(Rc::new(list)));
        self
    }

    /// The same, with the hook's environment.
    pub fn with_env(mut self, env: Environment) -> World {
        self.env = env;
        self
    }

    /// The same, reading the disk through `disk`.
    pub fn with_disk(mut self, disk: Rc<dyn Disk>) -> World {
        self.disk = Some(disk);
        self
    }

    /// A variable of the hook's own environment (not the command's: its assignments are
    /// the walk's).
    pub fn env(&self, name: &str) -> Option<String> {
        self.env.get(name)
    }

    /// Whether `path` is a directory now (links followed): where `cd` may go, where a copy
    /// lands. With no disk (`search`) nothing is.
    pub fn is_directory(&self, path: &Path) -> bool {
        self.disk
            .as_ref()
            .is_some_and(|disk| disk.is_directory(path))
    }

    /// Whether an agent's `--settings` value (JSON, or a file under the working directory)
    /// switches the guard off.
    pub fn settings_disable_guard(&self, value: &str, cwd: Option<&Path>) -> bool {
        crate::protect::settings_disable_guard(value, cwd)
    }

    /// Whether no file is the guard's (`search`, tests): nothing to protect.
    pub fn guards_nothing(&self) -> bool {
        self.paths.is_empty() && self.listing.is_none()
    }

    fn all_paths(&self) -> &[PathBuf] {
        self.real.get_or_init(|| {
            let mut all = match &self.listing {
                Some(Listing(list)) => list(),
                None => self.paths.clone(),
            };
            if !all.is_empty() {
                all.extend(std::env::current_exe().ok());
            }
            let real: Vec<PathBuf> = all
                .iter()
                .filter_map(|p| std::fs::canonicalize(p).ok())
                .collect();
            all.extend(real);
            all
        })
    }

    /// `~`, `~/…`, `~user/…` as bash expands them; a user it cannot find, or a home it
    /// does not know, is unknown.
    pub fn expand_tilde(&self, word: &str) -> String {
        let Some(rest) = word.strip_prefix('~') else {
            return word.to_string();
        };
        let (user, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let home = match user {
            "" => self.home.clone(),
            "+" => self.cwd.clone(),
            _ => home_of(user),
        };
        match home {
            Some(home) => format!("{}{tail}", home.to_string_lossy()),
            None if user == "-" || !user.contains(UNKNOWN) => format!("{UNKNOWN}{tail}"),
            None => word.to_string(),
        }
    }

    /// A path word as the program would open it: `~` is home, a relative path is under
    /// the working directory, `.` and `..` are resolved without touching the file system.
    pub fn resolve(&self, word: &str, cwd: Option<&Path>) -> PathBuf {
        let expanded = match (word.strip_prefix("~/"), &self.home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ if word == "~" => self.home.clone().unwrap_or_else(|| PathBuf::from(word)),
            _ => PathBuf::from(word),
        };
        let base = cwd.or(self.cwd.as_deref());
        let absolute = match (base, expanded.is_absolute()) {
            (Some(cwd), false) => cwd.join(expanded),
            _ => expanded,
        };
        lexical(&absolute)
    }
}

#[cfg(test)]
mod tests;
