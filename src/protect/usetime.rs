//! Use-time protection (decision 0008, layer 1): a guard variable in the hook's own
//! environment is the operator's only if no file the agent can write also sets it.
//!
//! Spotting the write that plants a variable cannot win (the agent can run any code), so
//! the hook looks, when it is about to use a variable, at every file that could have put
//! it into its environment: Claude Code's settings (`env`), the shell startup files and
//! their `*.d/` folders, `/etc/environment`, environment.d, pam_env and the `.env` files
//! Gemini CLI loads. It reads them only when one of the variables is present, so the
//! common path reads no extra file.

use super::candidates::{Existing, sources};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The variables that grant the override.
pub const OVERRIDE_VARIABLES: [&str; 2] = ["MESH_GUARD_OVERRIDE", "MESH_GUARD_OVERRIDE_SCOPE"];
/// The variables that choose the guard's binary and files: planted, they could point it
/// at an empty catalog and let everything pass.
pub const PATH_VARIABLES: [&str; 4] = [
    "MESH_GUARD_BIN",
    "MESH_GUARD_CATALOG",
    "MESH_GUARD_DB",
    "MESH_GUARD_RULES",
];

/// The variables checked before anything is decided: the binary, and the rules, which
/// decide every command.
pub const UP_FRONT_VARIABLES: [&str; 2] = ["MESH_GUARD_BIN", "MESH_GUARD_RULES"];
/// The variables checked only when what they name is about to be used (decision 0031):
/// the catalog before it is read, the record before a row is written, and both before the
/// guard's own files decide whether a command writes one of them.
pub const DEFERRED_VARIABLES: [&str; 2] = ["MESH_GUARD_CATALOG", "MESH_GUARD_DB"];

/// Past this a file is not read further and counts as setting the variable: its tail
/// could, and the hook must answer quickly.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// The longest file name a refusal shows.
const MAX_SHOWN: usize = 120;

/// A guard variable present in the environment that a file the agent can write also sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planted {
    pub variable: &'static str,
    pub file: PathBuf,
}

impl Planted {
    /// The file as the operator knows it: `~/…` under the home directory.
    pub fn shown_file(&self) -> String {
        // The refusal stays under 1,000 characters: a deep project path keeps its tail.
        let full = shown(&self.file);
        let count = full.chars().count();
        if count <= MAX_SHOWN {
            return full;
        }
        let tail: String = full.chars().skip(count - MAX_SHOWN).collect();
        format!("…{tail}")
    }
}

pub fn shown(file: &Path) -> String {
    match crate::io::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|h| file.strip_prefix(&h).ok().map(Path::to_path_buf))
    {
        Some(rest) => format!("~/{}", rest.display()),
        None => file.display().to_string(),
    }
}

/// The variables of `names` present in this process's environment (no file is read).
pub fn present(names: &[&'static str]) -> Vec<&'static str> {
    names
        .iter()
        .copied()
        .filter(|n| crate::io::var_os(n).is_some())
        .collect()
}

/// The first file the agent can write that sets one of the `names` present in this
/// process's environment. `cwd` is the event's: its ancestors are project roots.
pub fn find(names: &[&'static str], cwd: Option<&Path>) -> Option<Planted> {
    let present = present(names);
    if present.is_empty() {
        return None;
    }
    let uid = effective_uid();
    let existing = Existing::list();
    for (file, format) in sources(cwd, &existing) {
        if !existing.may_hold(&file) {
            continue;
        }
        if uid != 0 && !agent_can_write(&file, uid) {
            continue;
        }
        let Some(text) = read_bounded(&file) else {
            continue;
        };
        if let Some(variable) = first_set(format, &text, &present) {
            return Some(Planted { variable, file });
        }
    }
    None
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Format {
    /// A Claude Code settings file: its `env` object.
    Settings,
    /// Anything a shell or an environment loader reads: any mention of the name.
    Text,
}

/// What a file holds: its bytes, or for an over-long file one that mentions everything.
enum Read {
    Bytes(Vec<u8>),
    TooLong,
}

fn read_bounded(file: &Path) -> Option<Read> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let kind = std::fs::metadata(file).ok()?.file_type();
    if kind.is_char_device() {
        // A dotfile linked to /dev/null holds nothing.
        return None;
    }
    if !kind.is_file() {
        // A folder here is one too big to list (`candidates::listing`); a pipe or socket
        // could feed a shell anything, and opening one could wait forever. Either counts.
        return Some(Read::TooLong);
    }
    // Non-blocking, so a file swapped for a pipe after the check above cannot hang the hook.
    const O_NONBLOCK: i32 = 0o4000;
    let handle = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(file)
        .ok()?;
    let opened = handle.metadata().ok()?;
    if !opened.is_file() {
        return Some(Read::TooLong);
    }
    let bytes = crate::ondisk::read::read_up_to(&handle, opened.len(), MAX_FILE_BYTES + 1).ok()?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Some(Read::TooLong);
    }
    Some(Read::Bytes(bytes))
}

/// The first of `present` (in its order) that the file sets.
fn first_set(format: Format, read: &Read, present: &[&'static str]) -> Option<&'static str> {
    let bytes = match read {
        Read::TooLong => return present.first().copied(),
        Read::Bytes(bytes) => bytes,
    };
    if format == Format::Settings
        && let Ok(json) = serde_json::from_str::<serde_json::Value>(&String::from_utf8_lossy(bytes))
    {
        let env = json.get("env").and_then(|e| e.as_object());
        return present
            .iter()
            .copied()
            .find(|v| env.is_some_and(|env| env.contains_key(*v)));
    }
    // Unreadable JSON is read as text: what Claude Code makes of it is not ours to guess.
    // Text is read as bytes: a name is ASCII, and a byte that is not cannot be part of one,
    // as the character it belongs to could not.
    let words = stem_words(bytes);
    present
        .iter()
        .copied()
        .find(|v| words.iter().any(|word| names(v, word)))
}

#[cfg(test)]
fn sets(format: Format, read: &Read, variable: &'static str) -> bool {
    first_set(format, read, &[variable]).is_some()
}

/// Whether text names `variable` in any way a shell could set it: the name itself with any
/// operator (`=`, `+=`, `export NAME`, fish's `set -x NAME`), in any letter case (`${n^^}`),
/// or a leading piece of it that the rest could be glued to (`MESH_GUARD_OVER""RIDE`,
/// `MESH_GUARD_$x`). Another variable whose name only starts the same (`…_OVERRIDE_X`)
/// does not count.
pub fn mentions(text: &str, variable: &str) -> bool {
    stem_words(text.as_bytes())
        .iter()
        .any(|word| names(variable, word))
}

/// Every word of `text` that starts with the guard's stem (`mesh_guard`, in any letter case)
/// and is not glued to what comes before it, in ASCII lower case: the text is lowered and
/// searched once, whatever the number of variables asked about.
fn stem_words(text: &[u8]) -> Vec<Vec<u8>> {
    const STEM: &[u8] = b"mesh_guard";
    let word_byte = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    let lower = text.to_ascii_lowercase();
    let mut words = Vec::new();
    let mut at = 0;
    while let Some(found) = lower[at..]
        .windows(STEM.len())
        .position(|w| w == STEM)
        .map(|i| at + i)
    {
        let glued_before = found > 0 && word_byte(&lower[found - 1]);
        if !glued_before {
            let len = lower[found..].iter().take_while(|b| word_byte(b)).count();
            words.push(lower[found..found + len].to_vec());
        }
        at = found + 1;
    }
    words
}

/// Whether `word` (lower case, from `stem_words`) could be `variable` or a leading piece of it.
fn names(variable: &str, word: &[u8]) -> bool {
    variable.len() >= word.len() && variable.as_bytes()[..word.len()].eq_ignore_ascii_case(word)
}

/// This process's user (root, for whom every file is writable, counts every file). Unknown
/// counts as root: every file then counts. So does a process whose effective user is not
/// its real one (set-user-ID), as the owner of its `/proc/self` (root when it is not
/// dumpable) said before: the two system calls spare that path lookup.
fn effective_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    let real = unsafe { libc::getuid() };
    match crate::perm::current_uid() {
        Some(uid) if uid == real => uid,
        _ => 0,
    }
}

/// Whether the agent's user could change the file: write it, or replace it in its
/// folder. Group and other write bits count whatever the groups, erring toward "can".
fn agent_can_write(file: &Path, uid: u32) -> bool {
    let writable = |p: &Path| {
        std::fs::metadata(p)
            .is_ok_and(|m| (m.uid() == uid && m.mode() & 0o200 != 0) || m.mode() & 0o022 != 0)
    };
    writable(file) || file.parent().is_some_and(writable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_every_way_a_shell_sets_it() {
        let v = "MESH_GUARD_OVERRIDE";
        for text in [
            "export MESH_GUARD_OVERRIDE=1",
            "export MESH_GUARD_OVERRIDE+=x",
            "set -gx MESH_GUARD_OVERRIDE yes",
            "n=mesh_guard_override; export \"${n^^}=1\"",
            "declare -x \"MESH_GUARD_OVER\"\"RIDE=1\"",
            "export MESH_GUARD_$x=1",
            "MESH_GUARD_OVERRIDE",
        ] {
            assert!(mentions(text, v), "{text}");
        }
        for text in [
            "export PATH=$HOME/bin:$PATH",
            "export MESH_GUARD_OVERRIDE_X=1",
            "export MESH_GUARD_BIN=/usr/bin/mesh-guard",
            "XMESH_GUARD_OVERRIDE=1",
        ] {
            assert!(!mentions(text, v), "{text}");
        }
    }

    #[test]
    fn text_is_read_as_bytes_and_the_first_variable_asked_about_is_named() {
        let text =
            Read::Bytes(b"\xff\xfeexport MESH_GUARD_DB=/tmp/x\nMESH_GUARD_CATALOG=y\n".to_vec());
        let asked = ["MESH_GUARD_CATALOG", "MESH_GUARD_DB"];
        assert_eq!(
            first_set(Format::Text, &text, &asked),
            Some("MESH_GUARD_CATALOG")
        );
        assert_eq!(
            first_set(Format::Text, &text, &asked[1..]),
            Some("MESH_GUARD_DB")
        );
        let glued = Read::Bytes(b"xMESH_GUARD_DB=1 \xc3\xa9MESH_GUARD_CATALOG=2".to_vec());
        // A byte of a non-ASCII character is no part of a name, as the character is not.
        assert_eq!(
            first_set(Format::Text, &glued, &asked),
            Some("MESH_GUARD_CATALOG")
        );
        assert_eq!(first_set(Format::Text, &glued, &asked[1..]), None);
        assert_eq!(
            first_set(Format::Settings, &Read::TooLong, &asked),
            Some("MESH_GUARD_CATALOG")
        );
    }

    #[test]
    fn settings_count_their_env_only() {
        let set = Read::Bytes(br#"{"env":{"MESH_GUARD_OVERRIDE":"x"}}"#.to_vec());
        let elsewhere =
            Read::Bytes(br#"{"permissions":{"allow":["Bash(MESH_GUARD_OVERRIDE)"]}}"#.to_vec());
        assert!(sets(Format::Settings, &set, "MESH_GUARD_OVERRIDE"));
        assert!(!sets(Format::Settings, &elsewhere, "MESH_GUARD_OVERRIDE"));
        let broken = Read::Bytes(br#"{"env":{"MESH_GUARD_OVERRIDE":"x"},"#.to_vec());
        assert!(sets(Format::Settings, &broken, "MESH_GUARD_OVERRIDE"));
        assert!(sets(Format::Text, &Read::TooLong, "MESH_GUARD_DB"));
    }

    #[test]
    fn a_pipe_counts_and_does_not_hang() {
        let dir = std::env::temp_dir().join(format!("mesh-guard-usetime-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join(".bashrc");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(
            made.is_ok_and(|s| s.success()),
            "mkfifo is needed for this test"
        );
        assert!(matches!(read_bounded(&fifo), Some(Read::TooLong)));
        assert!(read_bounded(Path::new("/dev/null")).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
