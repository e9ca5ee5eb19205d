//! Where the guard's files are: the command line (and, for the operator's own commands,
//! the environment: `cli`), then fixed places under the account's home (decision 0059).

use crate::ondisk::disk::OnDisk;
use crate::protect::lexical;
use crate::world::{Environment, World};
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct Paths {
    pub catalog: PathBuf,
    pub db: PathBuf,
    pub rules: Option<PathBuf>,
    /// Where the one home every disk reader of the process takes comes from (decision 0068).
    pub home: Home,
}

/// The home a process reads the disk under (ssh's configuration, startup files, the
/// engines' contexts): one per process, so no two readers disagree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Home {
    /// The account's, as the user database gives it: a hook's (decision 0059).
    #[default]
    Account,
    /// `HOME`, else the account's: the operator's own commands, which take the
    /// environment they are run in (`check`, `test`, `mcp`, `search`).
    Session,
}

/// Where a hardened install keeps the catalog, the rules, the compiled index and
/// `allowed_signers`.
pub const SYSTEM_DIR: &str = "/etc/mesh-guard";

/// The guard's default directories: under the account's home as the user database gives
/// it, never `HOME` or `XDG_*`, which the session's environment (and so the agent) could
/// set (decision 0059). An account with no home there uses the system's places.
pub struct Defaults {
    pub config: PathBuf,
    pub data: PathBuf,
}

impl Defaults {
    pub fn for_account() -> Defaults {
        match crate::perm::account_home() {
            Some(home) if cfg!(target_os = "macos") => {
                let dir = home.join("Library/Application Support/mesh-guard");
                Defaults {
                    config: dir.clone(),
                    data: dir,
                }
            }
            Some(home) => Defaults {
                config: home.join(".config/mesh-guard"),
                data: home.join(".local/share/mesh-guard"),
            },
            None => Defaults {
                config: PathBuf::from(SYSTEM_DIR),
                data: PathBuf::from("/var/lib/mesh-guard"),
            },
        }
    }
}

impl Paths {
    /// Given paths (flags, or an operator's command's variables: `cli`) win over the
    /// defaults.
    pub fn resolve(catalog: Option<PathBuf>, db: Option<PathBuf>, rules: Option<PathBuf>) -> Paths {
        // Asked only for a default: the user database costs a hook call otherwise.
        let dirs = std::cell::OnceCell::new();
        let dirs = || dirs.get_or_init(Defaults::for_account);
        let catalog = catalog.unwrap_or_else(|| dirs().config.join("catalog.toml"));
        let db = db.unwrap_or_else(|| dirs().data.join("audit.db"));
        Paths {
            catalog,
            db,
            rules,
            home: Home::default(),
        }
    }

    /// The directory of the compiled catalog caches: beside the record, whose directory
    /// is the guard's own.
    pub fn cache_dir(&self) -> PathBuf {
        let dir = self
            .db
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        dir.join("catalog-cache")
    }

    /// The catalog, read when first needed, through its compiled cache. An operator's
    /// compiled index beside the catalog is only read; a catalog owned by another user
    /// (root, in a hardened install) is never cached where this user could forge the
    /// cache: without its index it is parsed in memory (decision 0010).
    pub fn lazy_catalog(&self) -> crate::catalog::LazyCatalog {
        let catalog = self.catalog.clone();
        let cache_dir = self.cache_dir();
        // Chosen when first needed: a command with no guarded program makes no file check.
        crate::catalog::LazyCatalog::chosen_at_first_use(self.catalog.clone(), move || {
            let compiled = crate::catalog::compiled_index_for(&catalog);
            if compiled.is_file() {
                return crate::catalog::CatalogSource {
                    cache: Some(compiled),
                    read_only: true,
                    seen: None,
                };
            }
            // One look at the catalog serves whose it is and, next, the cache's stamp.
            let seen = std::fs::metadata(&catalog).ok();
            if seen.as_ref().is_some_and(crate::perm::belongs_to_other) {
                return crate::catalog::CatalogSource::default();
            }
            crate::catalog::CatalogSource {
                cache: Some(crate::catalog::cache_file_for(&cache_dir, &catalog)),
                read_only: false,
                seen,
            }
        })
    }

    /// The command's world, built once per event: the working directory, the shell's `HOME`
    /// (`~` in a command), the hook's environment, the disk under one home, and the files an
    /// agent may not change (the catalog, the rules, the record and the plugin that runs the
    /// guard), listed when a command first writes a file. The agents' settings are listed
    /// under `HOME` and under the account's home.
    pub fn world(&self, cwd: Option<PathBuf>) -> World {
        let env = Environment::of_process();
        let home = env.get("HOME").map(PathBuf::from);
        // What the disk says (ssh's configuration, startup files, the engines' contexts) is
        // read under one home (decision 0068): two made two routes of one destination.
        let disk = match (self.home, &home) {
            (Home::Session, Some(home)) => OnDisk::new(Some(home), env.lookup()),
            _ => OnDisk::for_account(env.lookup()),
        };
        let (paths, at, home_dir) = (self.clone(), cwd.clone(), home.clone());
        World::new(Vec::new(), cwd, home)
            .listed_when_needed(move || {
                let homes: Vec<PathBuf> = home_dir
                    .iter()
                    .cloned()
                    .chain(crate::perm::account_home())
                    .collect();
                paths.guard_files(at.as_ref(), &homes)
            })
            .with_env(env)
            .with_disk(std::rc::Rc::new(disk))
    }

    fn guard_files(&self, cwd: Option<&PathBuf>, homes: &[PathBuf]) -> Vec<PathBuf> {
        // The cache decides like the catalog does, so it is as much the operator's.
        let mut paths = vec![
            absolute(&self.catalog),
            absolute(&self.db),
            absolute(&self.cache_dir()),
            crate::catalog::compiled_index_for(&self.catalog),
        ];
        paths.extend(self.rules.as_ref().map(|r| absolute(r)));
        if let Some(plugin) = crate::io::var_os("CLAUDE_PLUGIN_ROOT").filter(|p| !p.is_empty()) {
            paths.push(absolute(&PathBuf::from(plugin)));
        }
        paths.push(crate::grant::allowed_signers_for(&absolute(&self.catalog)));
        // The default places are the guard's even when flags point elsewhere: a record or
        // catalog there is still the operator's.
        let defaults = Defaults::for_account();
        paths.push(absolute(&defaults.config));
        paths.push(absolute(&defaults.data));
        // And where they would be under the shell's `HOME`: protecting them costs nothing.
        for home in homes {
            paths.push(home.join(".config/mesh-guard"));
            paths.push(home.join(".local/share/mesh-guard"));
        }
        // The agents' own hook settings and plugins (the binary is added when first needed):
        // the user's, and the project's at the working directory and every directory above
        // it (the project root may be any of them).
        let var = |name: &str| {
            crate::io::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let project_dirs: Vec<PathBuf> = cwd
            .iter()
            .flat_map(|c| c.ancestors().map(PathBuf::from))
            .chain(var("CLAUDE_PROJECT_DIR"))
            .collect();
        for base in homes.iter().chain(project_dirs.iter()) {
            for file in AGENT_HOOK_FILES {
                paths.push(base.join(file));
            }
        }
        paths.extend(homes.iter().map(|h| h.join(".claude/plugins")));
        paths.extend(crate::protect::launcher_places(homes));
        paths.extend(var("CLAUDE_CONFIG_DIR").map(|d| d.join("settings.json")));
        paths.extend(
            var("CODEX_HOME")
                .iter()
                .flat_map(|d| [d.join("hooks.json"), d.join("config.toml")]),
        );
        paths.extend(var("COPILOT_HOME").map(|d| d.join("hooks")));
        paths
    }
}

/// Where each agent reads its hooks, under the home directory or a project (docs/agents/*.md).
const AGENT_HOOK_FILES: [&str; 8] = [
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".codex/hooks.json",
    ".codex/config.toml",
    ".gemini/settings.json",
    ".copilot/hooks",
    ".github/hooks",
    ".cursor/hooks.json",
];

fn absolute(path: &std::path::Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    lexical(&joined)
}
