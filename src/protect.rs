//! Self-protection: what an agent may not change about the guard itself. Its catalog,
//! rules, record, cache, binary, plugin and the agent's hook settings are the operator's;
//! so are the guard's variables in the files a future session starts from.

use std::path::{Component, Path, PathBuf};

/// The variables that configure the guard. Set in a command they change nothing (the hook
/// reads its own environment), but written into a startup file they would configure the
/// next session: the override above all, and also which binary, catalog or rules it uses.
pub const GUARD_VARIABLES: [&str; 6] = [
    "MESH_GUARD_OVERRIDE",
    "MESH_GUARD_OVERRIDE_SCOPE",
    "MESH_GUARD_BIN",
    "MESH_GUARD_CATALOG",
    "MESH_GUARD_DB",
    "MESH_GUARD_RULES",
];

/// Programs that set a variable for sessions other than their own.
const ENVIRONMENT_SETTERS: [&str; 6] = [
    "systemctl",
    "launchctl",
    "dbus-update-activation-environment",
    "initctl",
    "tmux",
    "screen",
];

/// Where the guard's own files are, and how the command's paths resolve.
#[derive(Debug, Clone, Default)]
pub struct Protected {
    pub paths: Vec<PathBuf>,
    /// The working directory relative paths in the command resolve against.
    pub cwd: Option<PathBuf>,
    pub home: Option<PathBuf>,
    /// The paths with links followed, and the running binary: found on first use, as
    /// most commands write nothing and should not pay for the file system calls.
    real: std::cell::OnceCell<Vec<PathBuf>>,
}

impl Protected {
    pub fn new(paths: Vec<PathBuf>, cwd: Option<PathBuf>, home: Option<PathBuf>) -> Protected {
        Protected {
            paths,
            cwd,
            home,
            real: std::cell::OnceCell::new(),
        }
    }

    fn all_paths(&self) -> &[PathBuf] {
        self.real.get_or_init(|| {
            let mut all = self.paths.clone();
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

    /// Whether `word`, as a path opened from `cwd` (the command's own `cd` wins over the
    /// event's), is one of the guard's files or under one of its directories. A link is
    /// followed, so a symlink to the catalog is the catalog.
    pub fn covers(&self, word: &str, cwd: Option<&Path>) -> bool {
        if word.is_empty() || word.starts_with('-') || word.contains(crate::shell::UNKNOWN) {
            return false;
        }
        let path = self.resolve(word, cwd);
        let real = std::fs::canonicalize(&path).ok();
        // A file not yet there: its directory may be a link to a guarded one.
        let real_parent = real.is_none().then(|| {
            let parent = path.parent().and_then(|p| std::fs::canonicalize(p).ok());
            parent.zip(path.file_name()).map(|(p, name)| p.join(name))
        });
        [Some(path), real, real_parent.flatten()]
            .into_iter()
            .flatten()
            .any(|candidate| {
                self.all_paths().iter().any(|p| {
                    candidate.starts_with(p) || {
                        let (p, w) = (p.to_string_lossy(), candidate.to_string_lossy());
                        w.strip_prefix(p.as_ref())
                            .is_some_and(|rest| matches!(rest, "-wal" | "-shm" | "-journal"))
                    }
                })
            })
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

/// `.` and `..` taken out of a path without the file system.
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Whether text sets one of the guard's variables: `MESH_GUARD_OVERRIDE=…`, and the
/// append form `MESH_GUARD_OVERRIDE+=…`, which sets it just the same when it was unset.
pub fn assigns_guard_variable(text: &str) -> bool {
    GUARD_VARIABLES.iter().any(|v| {
        text.match_indices(v).any(|(at, _)| {
            let rest = &text[at + v.len()..];
            rest.starts_with('=') || rest.starts_with("+=")
        })
    })
}

/// Whether a file is one a session starts from: shell startup and environment files, and
/// the agent's settings. Only there does a written variable reach a future session; a
/// README that documents the override is not refused.
pub fn is_startup_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let dotfile = name.starts_with('.')
        && [
            "rc", "profile", "env", "login", "logout", "bash", "zsh", "aliases",
        ]
        .iter()
        .any(|k| name.contains(k));
    // `~/.bashrc.d/x`, `/etc/profile.d/x`: every `*.d/` snippet folder a startup file reads.
    let snippet = path.split('/').rev().skip(1).any(|dir| {
        dir.ends_with(".d") && (dir.starts_with('.') || is_startup_file(dir.trim_end_matches(".d")))
    });
    let script = [".sh", ".bash", ".zsh", ".env", ".envrc", ".fish"]
        .iter()
        .any(|e| name.ends_with(e));
    let named = matches!(
        name,
        "environment"
            | "config.fish"
            | "settings.json"
            | "settings.local.json"
            | "hooks.json"
            | "config.toml"
    );
    dotfile
        || script
        || named
        || snippet
        || path.contains("/profile.d/")
        || path.contains("/environment.d/")
        || path.contains("/fish/")
        || matches!(
            name,
            "profile" | "bash.bashrc" | "bashrc" | "zshenv" | "zshrc" | "zprofile"
        )
}

/// `systemctl --user set-environment MESH_GUARD_OVERRIDE=x`, `tmux setenv -g …`,
/// `launchctl setenv …`: a variable set for the sessions to come.
pub fn sets_future_environment(words: &[String]) -> bool {
    let Some(program) = words.first().map(|p| crate::argv::base_name(p)) else {
        return false;
    };
    ENVIRONMENT_SETTERS.contains(&program)
        && words[1..]
            .iter()
            .any(|w| GUARD_VARIABLES.iter().any(|v| w.starts_with(v)))
}

/// `claude plugin disable mesh-guard` and kin: turning the guard off from inside.
pub fn disables_plugin(words: &[String]) -> bool {
    let Some(program) = words.first().map(|p| crate::argv::base_name(p)) else {
        return false;
    };
    program == "claude"
        && words.iter().any(|w| w == "plugin" || w == "plugins")
        && words
            .iter()
            .any(|w| matches!(w.as_str(), "disable" | "uninstall" | "remove" | "rm"))
        && words.iter().any(|w| w.starts_with("mesh-guard"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startup_files_and_others() {
        for path in [
            "/root/.bashrc",
            "~/.profile",
            ".zshenv",
            "/etc/environment",
            "x/run.sh",
            ".envrc",
            "/root/.claude/settings.json",
            "/etc/profile.d/a",
            "/root/.bash_aliases",
            "/etc/profile",
            "/etc/bash.bashrc",
            "/root/.bashrc.d/extra",
            "/etc/zsh/zshenv",
            "/root/.config/fish/conf.d/x.fish",
        ] {
            assert!(is_startup_file(path), "{path}");
        }
        for path in ["README.md", "docs/override.md", "src/main.rs", "notes.txt"] {
            assert!(!is_startup_file(path), "{path}");
        }
    }

    #[test]
    fn the_append_form_assigns() {
        assert!(assigns_guard_variable("export MESH_GUARD_OVERRIDE+=x"));
        assert!(assigns_guard_variable("MESH_GUARD_DB=/tmp/x"));
        assert!(!assigns_guard_variable(
            "see MESH_GUARD_OVERRIDE in the README"
        ));
    }

    #[test]
    fn paths_resolve_through_cd_and_links() {
        let dir = std::env::temp_dir().join(format!("mesh-guard-protect-{}", std::process::id()));
        let guarded = dir.join("guarded");
        std::fs::create_dir_all(&guarded).unwrap();
        std::fs::write(guarded.join("catalog.toml"), "").unwrap();
        let link = dir.join("link");
        let _ = std::os::unix::fs::symlink(&guarded, &link);
        let protected = Protected::new(vec![guarded.clone()], Some(PathBuf::from("/")), None);
        assert!(protected.covers("catalog.toml", Some(&guarded)));
        assert!(protected.covers(&link.join("catalog.toml").to_string_lossy(), None));
        assert!(protected.covers(&link.join("new.toml").to_string_lossy(), None));
        assert!(!protected.covers("catalog.toml", Some(&dir)));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
