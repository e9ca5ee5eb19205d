//! Where `cd DIR` goes when `CDPATH` is set: bash tries each of its directories in order,
//! then DIR from the working directory, and goes to the first that is a directory
//! (decision 0070). `CDPATH=~/.config cd mesh-guard` goes to `~/.config/mesh-guard`.

use crate::decide::{Guard, Walk};
use crate::shell::{Command, UNKNOWN};
use std::path::PathBuf;

impl Guard<'_> {
    /// Where `cd DIR` goes from where the walk is; `None` when that cannot be known (the
    /// relative paths after it are then judged from anywhere).
    pub(in crate::decide) fn cd_target(
        &self,
        dir: &str,
        command: &Command,
        walk: &Walk,
    ) -> Option<PathBuf> {
        let dir = self.world.expand_tilde(dir);
        let base = walk.cwd.clone();
        if dir.contains(UNKNOWN) || (walk.cwd_unknown && !dir.starts_with('/')) {
            return None;
        }
        let plain = self.world.resolve(&dir, base.as_deref());
        if !searches_cdpath(&dir) {
            return Some(plain);
        }
        let values: Vec<String> = walk
            .env_values(command, "CDPATH")
            .cloned()
            .chain(self.world.env("CDPATH"))
            .filter(|v| !v.is_empty())
            .collect();
        if values.is_empty() {
            return Some(plain);
        }
        let mut candidates: Vec<PathBuf> = Vec::new();
        for value in &values {
            for entry in value.split(':') {
                // An empty entry is the working directory; `~` after `:` is expanded too.
                let entry = self
                    .world
                    .expand_tilde(if entry.is_empty() { "." } else { entry });
                if entry.contains(UNKNOWN) || (walk.cwd_unknown && !entry.starts_with('/')) {
                    return None;
                }
                candidates.push(
                    self.world
                        .resolve(&format!("{entry}/{dir}"), base.as_deref()),
                );
            }
        }
        candidates.push(plain);
        candidates.dedup();
        // Which bash takes depends on what is a directory when it runs: known only when
        // one candidate alone is one now. None (the command may make it), or several (the
        // command may remove one), and the directory is not known.
        let mut existing = candidates
            .into_iter()
            .filter(|c| self.world.is_directory(c));
        match (existing.next(), existing.next()) {
            (Some(only), None) => Some(only),
            _ => None,
        }
    }
}

/// Whether bash looks `dir` up in `CDPATH`: not for an absolute path, nor one that starts
/// with `.` or `..` as a component.
fn searches_cdpath(dir: &str) -> bool {
    !(dir.starts_with('/')
        || dir == "."
        || dir == ".."
        || dir.starts_with("./")
        || dir.starts_with("../"))
}
