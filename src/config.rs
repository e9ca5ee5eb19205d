//! Where the guard's files are: flags, then environment, then the platform's directories.

use crate::decide::{Protected, normalize_protected};
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct Paths {
    pub catalog: PathBuf,
    pub db: PathBuf,
    pub rules: Option<PathBuf>,
}

fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "mesh-guard")
}

impl Paths {
    /// `flag` wins over `env`, which wins over the platform default.
    pub fn resolve(catalog: Option<PathBuf>, db: Option<PathBuf>, rules: Option<PathBuf>) -> Paths {
        let dirs = project_dirs();
        let catalog = catalog.unwrap_or_else(|| match &dirs {
            Some(d) => d.config_dir().join("catalog.toml"),
            None => PathBuf::from("catalog.toml"),
        });
        let db = db.unwrap_or_else(|| match &dirs {
            Some(d) => d.data_dir().join("audit.db"),
            None => PathBuf::from("audit.db"),
        });
        Paths { catalog, db, rules }
    }

    /// The files an agent may not change: the catalog, the rules, the record and the
    /// plugin that runs the guard.
    pub fn protected(&self, cwd: Option<PathBuf>) -> Protected {
        let mut paths = vec![absolute(&self.catalog), absolute(&self.db)];
        paths.extend(self.rules.as_ref().map(|r| absolute(r)));
        if let Some(plugin) = std::env::var_os("CLAUDE_PLUGIN_ROOT").filter(|p| !p.is_empty()) {
            paths.push(absolute(&PathBuf::from(plugin)));
        }
        if let Some(dirs) = project_dirs() {
            paths.push(absolute(dirs.config_dir()));
        }
        Protected {
            paths,
            cwd,
            home: std::env::var_os("HOME").map(PathBuf::from),
        }
    }
}

fn absolute(path: &std::path::Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    normalize_protected(&joined)
}
