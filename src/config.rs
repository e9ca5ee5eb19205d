//! Where the guard's files are: flags, then environment, then the platform's directories.

use crate::protect::{Protected, lexical};
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct Paths {
    pub catalog: PathBuf,
    pub db: PathBuf,
    pub rules: Option<PathBuf>,
}

fn project_dirs() -> Option<directories::ProjectDirs> {
    // Without HOME, `directories` asks NSS for the user's home (`getpwuid_r`). A user
    // `/etc/passwd` does not list sends that past the files to NSS's modules, which a static
    // glibc binary loads with `dlopen` from the installed glibc, and where they do not match
    // it crashes (`libnss_systemd`, found in review): a crash lets the command run. Such a
    // user has no home here, as musl's build never looks past the files either.
    #[cfg(target_os = "linux")]
    if std::env::var_os("HOME").is_none_or(|h| h.is_empty()) && crate::perm::passwd_home().is_none()
    {
        return None;
    }
    directories::ProjectDirs::from("", "", "mesh-guard")
}

impl Paths {
    /// `flag` wins over `env`, which wins over the platform default.
    pub fn resolve(catalog: Option<PathBuf>, db: Option<PathBuf>, rules: Option<PathBuf>) -> Paths {
        // Asked only for a default: the platform's directories cost a hook call otherwise.
        let dirs = std::cell::OnceCell::new();
        let dirs = || dirs.get_or_init(project_dirs);
        let catalog = catalog.unwrap_or_else(|| match dirs() {
            Some(d) => d.config_dir().join("catalog.toml"),
            None => PathBuf::from("catalog.toml"),
        });
        let db = db.unwrap_or_else(|| match dirs() {
            Some(d) => d.data_dir().join("audit.db"),
            None => PathBuf::from("audit.db"),
        });
        Paths { catalog, db, rules }
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

    /// The files an agent may not change: the catalog, the rules, the record and the
    /// plugin that runs the guard. Listed when a command first writes a file.
    pub fn protected(&self, cwd: Option<PathBuf>) -> Protected {
        let home = crate::io::var_os("HOME").map(PathBuf::from);
        let disk = crate::ondisk::disk::OnDisk::new(home.as_deref());
        let (paths, at, home_dir) = (self.clone(), cwd.clone(), home.clone());
        let mut protected = Protected::new(Vec::new(), cwd, home)
            .listed_when_needed(move || paths.guard_files(at.as_ref(), home_dir.as_ref()));
        protected.disk = Some(std::rc::Rc::new(disk));
        protected
    }

    fn guard_files(&self, cwd: Option<&PathBuf>, home: Option<&PathBuf>) -> Vec<PathBuf> {
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
        // The default places are the guard's even when flags point elsewhere: a record or
        // catalog there is still the operator's.
        if let Some(dirs) = project_dirs() {
            paths.push(absolute(dirs.config_dir()));
            paths.push(absolute(dirs.data_dir()));
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
        for base in home.into_iter().chain(project_dirs.iter()) {
            for file in AGENT_HOOK_FILES {
                paths.push(base.join(file));
            }
        }
        paths.extend(home.iter().map(|h| h.join(".claude/plugins")));
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
