//! Which of the command's paths are the guard's own files (self-protection): a path written,
//! a glob, a path with unknown parts, a directory that holds one, a name in a script's text.
//! The files are listed, and their links followed, only when a command first writes one.

use super::World;
use crate::protect::{expand_glob, has_glob, lexical, matches};
use crate::shell::UNKNOWN;
use std::path::{Path, PathBuf};

impl World {
    /// Whether writing `word`, as a path opened from `cwd` (the command's own `cd` wins
    /// over the event's), writes one of the guard's files: it is one, is under one of its
    /// directories, or is a directory that holds one (`rm -rf ~/.local/share/mesh-guard`).
    /// A value that cannot be known, or a glob, covers them when it could name one.
    pub fn covers(&self, word: &str, cwd: Option<&Path>) -> bool {
        if word.is_empty() || word.starts_with('-') {
            return false;
        }
        let word = self.expand_tilde(word);
        if word.contains(UNKNOWN) {
            return self.could_cover(&word, cwd);
        }
        if has_glob(&word) {
            let pattern = self.resolve(&word, cwd);
            return self.pattern_covers(&pattern.to_string_lossy())
                || expand_glob(&pattern)
                    .iter()
                    .any(|p| self.is_or_under(&p.to_string_lossy(), None) || self.holds(p));
        }
        self.is_or_under(&word, cwd) || self.holds(&self.resolve(&word, cwd))
    }

    /// A relative path whose directory cannot be known (after `cd "$X"`, `cd -`): it could
    /// be any directory, so it covers the guard's files when their path ends with it.
    pub fn covers_anywhere(&self, relative: &str) -> bool {
        let word = self.expand_tilde(relative);
        if word.starts_with('/') {
            return self.covers(&word, None);
        }
        let rest = lexical(Path::new(word.trim_start_matches("./")));
        self.could_cover(&format!("{UNKNOWN}/{}", rest.to_string_lossy()), None)
    }

    /// Whether a path with unknown parts could name one of the guard's files, a file under
    /// one of its directories, or a directory that holds one. A wholly unknown word
    /// (`rm "$f"`) is not taken for one: that would refuse every loop over files.
    fn could_cover(&self, word: &str, cwd: Option<&Path>) -> bool {
        if word.chars().all(|c| c == UNKNOWN || c == '/') {
            return false;
        }
        let pattern = if word.starts_with(UNKNOWN) {
            word.to_string()
        } else {
            self.resolve(word, cwd).to_string_lossy().into_owned()
        };
        self.pattern_covers(&pattern)
    }

    /// Whether a pattern (`*`, `?`, `[…]`, and [`UNKNOWN`] for any text) matches a guard
    /// path, a directory holding an existing one, or starts inside a guard directory.
    fn pattern_covers(&self, pattern: &str) -> bool {
        let literal_end = pattern
            .find([UNKNOWN, '*', '?', '['])
            .unwrap_or(pattern.len());
        let fixed = &pattern[..pattern[..literal_end].rfind('/').unwrap_or(0)];
        if !fixed.is_empty()
            && self
                .all_paths()
                .iter()
                .any(|p| Path::new(fixed).starts_with(p))
        {
            return true;
        }
        self.all_paths().iter().any(|p| {
            p.ancestors()
                .take_while(|a| a.parent().is_some())
                .enumerate()
                .any(|(i, a)| (i == 0 || a.exists()) && matches(pattern, &a.to_string_lossy()))
        })
    }

    /// Whether `path` is a directory that holds one of the guard's existing files.
    pub fn holds(&self, path: &Path) -> bool {
        self.holds_any(path, true)
    }

    /// Whether a directory tree written at `path` (a copy's destination) would put a file
    /// where one of the guard's is, or may be.
    pub fn would_hold(&self, path: &Path) -> bool {
        self.holds_any(path, false)
    }

    fn holds_any(&self, path: &Path, existing: bool) -> bool {
        let real = std::fs::canonicalize(path).ok();
        let held = |p: &Path| {
            [Some(path), real.as_deref()]
                .into_iter()
                .flatten()
                .any(|dir| p != dir && p.starts_with(dir))
        };
        self.all_paths()
            .iter()
            .any(|p| held(p) && (!existing || p.exists()))
    }

    /// As [`Self::holds`], for the guard files whose own name, or a directory's between
    /// `path` and them, matches one of `names` (`find DIR -name '*.pyc' -delete`).
    pub fn holds_named(&self, path: &Path, names: &[String]) -> bool {
        let real = std::fs::canonicalize(path).ok();
        self.all_paths().iter().any(|p| {
            let below = [Some(path), real.as_deref()]
                .into_iter()
                .flatten()
                .find_map(|dir| {
                    p.strip_prefix(dir)
                        .ok()
                        .filter(|r| !r.as_os_str().is_empty())
                });
            let Some(below) = below else {
                return false;
            };
            // A guard directory's files have names of their own, not known here.
            let named = p.is_dir()
                || below.components().any(|c| {
                    let c = c.as_os_str().to_string_lossy();
                    names.iter().any(|n| matches(n, &c))
                });
            named && p.exists()
        })
    }

    /// Whether `word` is one of the guard's files or under one of its directories. A link
    /// is followed, so a symlink to the catalog is the catalog, and a hard link to it is it.
    pub fn is_or_under(&self, word: &str, cwd: Option<&Path>) -> bool {
        if word.is_empty() || word.contains(UNKNOWN) {
            return false;
        }
        let path = self.resolve(word, cwd);
        let real = std::fs::canonicalize(&path).ok();
        // A file not yet there: its directory may be a link to a guarded one.
        let real_parent = real.is_none().then(|| {
            let parent = path.parent().and_then(|p| std::fs::canonicalize(p).ok());
            parent.zip(path.file_name()).map(|(p, name)| p.join(name))
        });
        if self.is_guard_file_by_identity(&path) {
            return true;
        }
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
}

impl World {
    /// Whether `path` is the directory a guard file is in (`~/.claude`, the record's).
    pub fn is_guard_parent(&self, path: &Path) -> bool {
        self.all_paths().iter().any(|p| p.parent() == Some(path))
    }

    /// A guard file whose name and whose directory's name the text both holds
    /// (`os.path.join(home, '.claude', 'settings.json')`).
    pub fn named_in(&self, text: &str) -> Option<String> {
        self.all_paths().iter().find_map(|p| {
            let name = p.file_name()?.to_string_lossy();
            let dir = p.parent()?.file_name()?.to_string_lossy();
            (text.contains(name.as_ref()) && text.contains(dir.as_ref()))
                .then(|| p.to_string_lossy().into_owned())
        })
    }

    /// The Claude Code settings sources that hold the guard's hooks: those whose settings
    /// file names the guard, or the user's, where the plugin is installed by default.
    pub fn guard_setting_sources(&self) -> Vec<&'static str> {
        let mut files = Vec::new();
        let config = self
            .env("CLAUDE_CONFIG_DIR")
            .map(PathBuf::from)
            .or_else(|| self.home.as_ref().map(|h| h.join(".claude")));
        files.extend(config.map(|c| ("user", c.join("settings.json"))));
        if let Some(cwd) = &self.cwd {
            for dir in cwd.ancestors() {
                files.push(("project", dir.join(".claude/settings.json")));
                files.push(("local", dir.join(".claude/settings.local.json")));
            }
        }
        let mut sources: Vec<&'static str> = files
            .into_iter()
            .filter(|(_, f)| std::fs::read_to_string(f).is_ok_and(|t| t.contains("mesh-guard")))
            .map(|(s, _)| s)
            .collect();
        if sources.is_empty() {
            sources.push("user");
        }
        sources.dedup();
        sources
    }
}
