//! The files the use-time check (`usetime`) reads: every file that could have put a guard
//! variable into the hook's environment, and the listings that spare the probes of the
//! absent ones (decision 0040).

use super::usetime::Format;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Entries read from one `*.d/` folder; a folder with more counts as setting it.
const MAX_DIR_ENTRIES: usize = 256;
/// Entries of a folder listed to spare probes (`Existing`); past this its files are probed
/// one by one, as if it had not been listed.
const MAX_LISTED: usize = 4096;

/// The names in the folder that holds most of the candidates (the home directory), listed
/// once: most candidates are absent, and a probe of each, with one more for its `*.d/`
/// folder, cost some thirty-five system calls where a listing costs five. A name missing
/// from the listing is skipped, which is what its probe would have found; a folder that
/// cannot be listed, or holds too much, is not used, and its candidates are probed.
pub(super) struct Existing {
    listed: Vec<(PathBuf, Names)>,
    /// Folders of `/etc` that several candidates lie in, found absent by one probe each.
    absent: Vec<PathBuf>,
}

/// The `/etc` folders whose candidates (files and `*.d/` folders: six under `/etc/zsh`) are
/// spared by one probe of the folder when it is absent, as it mostly is. A folder that is
/// there costs that one probe more.
const PROBED_FOLDERS: [&str; 3] = ["/etc/zsh", "/etc/fish", "/etc/claude-code"];

impl Existing {
    pub(super) fn list() -> Existing {
        let home = crate::io::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        // Not `/etc`: its hundred-odd names cost more to list and keep than the two dozen
        // probes they would spare (measured: docs/performance.md).
        let listed = home
            .into_iter()
            .filter_map(|dir| names_in(&dir).map(|names| (dir, names)))
            .collect();
        // Only a folder the file system says is not there (a dangling link included): any
        // other answer, a denied one too, leaves its candidates to their own probes.
        let absent = PROBED_FOLDERS
            .iter()
            .map(PathBuf::from)
            .filter(|dir| {
                std::fs::metadata(dir).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            })
            .collect();
        Existing { listed, absent }
    }

    /// Whether `path` may exist: false only when it lies in a listed folder whose listing
    /// lacks its first name there, or in a folder found absent.
    pub(super) fn may_hold(&self, path: &Path) -> bool {
        // A path whose bytes do not start with the folder's cannot lie in it, unless it
        // spells the folder another way (`/etc//zsh`); it is then probed, as any path the
        // listing says nothing about. The byte test spares most paths the component walk.
        let within = |dir: &Path| {
            path.as_os_str()
                .as_bytes()
                .starts_with(dir.as_os_str().as_bytes())
        };
        if self
            .absent
            .iter()
            .any(|dir| within(dir) && path.starts_with(dir))
        {
            return false;
        }
        for (dir, names) in &self.listed {
            if !within(dir) {
                continue;
            }
            if let Some(first) = first_name_after(path, dir) {
                return names.holds(first);
            }
            let Ok(rest) = path.strip_prefix(dir) else {
                continue;
            };
            match rest.components().next() {
                Some(Component::Normal(first)) => return names.holds(first),
                _ => continue,
            }
        }
        true
    }
}

/// Every file that could have set a variable in the hook's environment, leaving out the
/// files and folders `existing` shows absent.
pub(super) fn sources(cwd: Option<&Path>, existing: &Existing) -> Vec<(PathBuf, Format)> {
    // A folder named twice (`/etc/environment.d` is both `/etc/environment`'s snippets and
    // systemd's folder; `~/.profile.d` likewise) is listed once.
    let listed = std::cell::RefCell::new(Vec::<(PathBuf, Vec<PathBuf>)>::new());
    let listing = |dir: &Path| {
        if !existing.may_hold(dir) {
            return Vec::new();
        }
        if let Some((_, files)) = listed
            .borrow()
            .iter()
            .find(|(d, _)| d.as_os_str() == dir.as_os_str())
        {
            return files.clone();
        }
        let files = listing(dir);
        listed.borrow_mut().push((dir.to_path_buf(), files.clone()));
        files
    };
    let mut out = Vec::new();
    let home = crate::io::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let settings_in = |dir: &Path, out: &mut Vec<(PathBuf, Format)>| {
        for name in ["settings.json", "settings.local.json"] {
            out.push((dir.join(name), Format::Settings));
        }
    };
    // Claude Code: user, CLAUDE_CONFIG_DIR, managed, then every project root.
    if let Some(home) = &home {
        settings_in(&home.join(".claude"), &mut out);
    }
    if let Some(dir) = crate::io::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        for file in listing(Path::new(&dir)) {
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with("settings") && name.ends_with(".json") {
                out.push((file, Format::Settings));
            }
        }
    }
    out.push((
        PathBuf::from("/etc/claude-code/managed-settings.json"),
        Format::Settings,
    ));
    for file in listing(Path::new("/etc/claude-code/managed-settings.d")) {
        out.push((file, Format::Settings));
    }
    let project = crate::io::var_os("CLAUDE_PROJECT_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from);
    let roots: Vec<PathBuf> = project
        .iter()
        .cloned()
        .chain(
            cwd.into_iter()
                .flat_map(|c| c.ancestors().map(Path::to_path_buf)),
        )
        .collect();
    for root in &roots {
        settings_in(&root.join(".claude"), &mut out);
        // Gemini CLI loads the nearest `.gemini/.env` or `.env` into its own environment.
        out.push((root.join(".gemini/.env"), Format::Text));
        out.push((root.join(".env"), Format::Text));
    }
    // Shell startup and environment files, with their snippet folders.
    let text = |file: PathBuf, out: &mut Vec<(PathBuf, Format)>| {
        // Appended to the bytes: `display` would replace a name that is not UTF-8, and the
        // folder probed would be another one.
        let mut folder = file.clone().into_os_string();
        folder.push(".d");
        let folder = PathBuf::from(folder);
        out.push((file, Format::Text));
        out.extend(listing(&folder).into_iter().map(|f| (f, Format::Text)));
    };
    if let Some(home) = &home {
        for name in [
            ".bashrc",
            ".bash_profile",
            ".bash_login",
            ".bash_logout",
            ".bash_aliases",
            ".profile",
            ".zshrc",
            ".zshenv",
            ".zprofile",
            ".zlogin",
            ".kshrc",
            ".mkshrc",
            ".pam_environment",
            ".env",
            ".gemini/.env",
            ".config/fish/config.fish",
        ] {
            text(home.join(name), &mut out);
        }
        for folder in [".config/environment.d", ".config/fish/conf.d", ".profile.d"] {
            out.extend(
                listing(&home.join(folder))
                    .into_iter()
                    .map(|f| (f, Format::Text)),
            );
        }
    }
    if let Some(zdotdir) = crate::io::var_os("ZDOTDIR").filter(|d| !d.is_empty()) {
        for name in [".zshrc", ".zshenv", ".zprofile", ".zlogin"] {
            text(Path::new(&zdotdir).join(name), &mut out);
        }
    }
    for file in [
        "/etc/profile",
        "/etc/bash.bashrc",
        "/etc/bashrc",
        "/etc/environment",
        "/etc/zshenv",
        "/etc/zshrc",
        "/etc/zprofile",
        "/etc/zsh/zshenv",
        "/etc/zsh/zshrc",
        "/etc/zsh/zprofile",
        "/etc/security/pam_env.conf",
        "/etc/fish/config.fish",
    ] {
        text(PathBuf::from(file), &mut out);
    }
    for folder in ["/etc/environment.d", "/etc/fish/conf.d"] {
        out.extend(
            listing(Path::new(folder))
                .into_iter()
                .map(|f| (f, Format::Text)),
        );
    }
    // A file reached twice the same way (a folder named twice, the home directory also an
    // ancestor of the event's folder) is read once, where it first comes; one read both as
    // settings and as text is read both ways.
    first_of_each(out)
}

/// The first name of `path` below `dir` read from the bytes, when they spell it plainly:
/// `dir`'s bytes, a slash (or `dir` ends in one), then a name that is not `.` or `..`.
/// `None` sends the caller to the component walk, which reads every other spelling.
fn first_name_after<'p>(path: &'p Path, dir: &Path) -> Option<&'p OsStr> {
    let dir = dir.as_os_str().as_bytes();
    let rest = path.as_os_str().as_bytes().strip_prefix(dir)?;
    let rest = match dir.last() {
        Some(b'/') => rest,
        _ => rest.strip_prefix(b"/")?,
    };
    let name = rest.split(|b| *b == b'/').next()?;
    (!matches!(name, b"" | b"." | b"..")).then(|| OsStr::from_bytes(name))
}

/// `files` without the later copies of an entry, in their order. Entries are the same when
/// their bytes are: a file spelled two ways is read twice, which costs a read, not a check.
fn first_of_each(files: Vec<(PathBuf, Format)>) -> Vec<(PathBuf, Format)> {
    let key = |i: usize| (files[i].0.as_os_str().as_bytes(), files[i].1 as u8);
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|&a, &b| key(a).cmp(&key(b)).then(a.cmp(&b)));
    let mut keep = vec![true; files.len()];
    for pair in order.windows(2) {
        if key(pair[0]) == key(pair[1]) {
            keep[pair[1]] = false;
        }
    }
    let mut keep = keep.into_iter();
    let mut files = files;
    files.retain(|_| keep.next().unwrap_or(true));
    files
}

/// The names of a listed folder, in ASCII lower case, sorted: looked up by binary search
/// rather than hashed, since a hook looks up some fifty of them once.
pub(super) struct Names(Vec<Vec<u8>>);

impl Names {
    fn holds(&self, name: &OsStr) -> bool {
        let lower = name.as_bytes().to_ascii_lowercase();
        self.0.binary_search(&lower).is_ok()
    }
}

impl<const N: usize> From<[&str; N]> for Names {
    fn from(names: [&str; N]) -> Names {
        let mut names: Vec<Vec<u8>> = names
            .iter()
            .map(|n| n.to_ascii_lowercase().into_bytes())
            .collect();
        names.sort();
        Names(names)
    }
}

/// A folder's entries (one level), or, past the bound, the folder itself, which the
/// caller cannot read and so fails closed on: see `find`.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .take(MAX_DIR_ENTRIES + 1)
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    if files.len() > MAX_DIR_ENTRIES {
        return vec![dir.to_path_buf()];
    }
    files.sort();
    files
}

/// The names in `dir`, in ASCII lower case; `None` when it cannot be listed, holds too
/// many, or holds a name that is not ASCII.
fn names_in(dir: &Path) -> Option<Names> {
    // Only where a name means exactly its bytes: a case-insensitive file system (macOS's
    // default) opens `.zshenv` for a file listed as `.ZSHENV`.
    if !cfg!(target_os = "linux") {
        return None;
    }
    let entries = std::fs::read_dir(dir).ok()?;
    let mut names = Vec::new();
    // The entries read are counted, not the names they fold to: a folder of case variants
    // would otherwise pass the bound with most of it unread.
    for entry in entries.take(MAX_LISTED + 1) {
        let name = entry.ok()?.file_name();
        // A Linux folder can fold case too (ext4 `casefold`): names are compared in ASCII
        // lower case, and a listing with any other name is not used, since Unicode folding
        // could make it one of the candidates.
        if !name.is_ascii() {
            return None;
        }
        names.push(name.as_bytes().to_ascii_lowercase());
    }
    if names.len() > MAX_LISTED {
        return None;
    }
    names.sort();
    names.dedup();
    Some(Names(names))
}

#[cfg(test)]
#[path = "candidates_tests.rs"]
mod tests;
