//! git's own ways to name a host: URLs, `-c` configuration, path-rewriting commands.

use super::host_of_path;
use crate::shell::UNKNOWN;

/// What a git repository argument is.
pub(crate) enum GitUrl {
    /// `ext::COMMAND ARGS`: git runs the command.
    Command(String),
    /// A remote over ssh (or unknown), in the form `host-path` reads.
    Remote(String),
    /// A local path, a remote's name, an https/git URL: no ssh to a named machine.
    Local,
}

pub(crate) fn git_url(value: &str) -> GitUrl {
    if let Some(command) = value.strip_prefix("ext::") {
        return GitUrl::Command(command.to_string());
    }
    let url = ["git+ssh://", "ssh+git://"]
        .iter()
        .find_map(|p| value.strip_prefix(p))
        .map_or_else(|| value.to_string(), |rest| format!("ssh://{rest}"));
    if host_of_path(&url).is_some() || url.contains(UNKNOWN) {
        GitUrl::Remote(url)
    } else {
        GitUrl::Local
    }
}

/// git configuration keys (lowercased) whose value git runs as a shell command.
pub(crate) const GIT_COMMAND_KEYS: [&str; 8] = [
    "core.sshcommand",
    "core.gitproxy",
    "core.editor",
    "core.pager",
    "core.fsmonitor",
    "sequence.editor",
    "diff.external",
    "gpg.program",
];

/// What a git `NAME=VALUE` setting carries.
pub(crate) enum GitConfig<'a> {
    Command(&'a str),
    Url(&'a str),
    Nothing,
}

pub(crate) fn git_config(setting: &str) -> GitConfig<'_> {
    let Some((key, value)) = setting.split_once('=') else {
        return GitConfig::Nothing;
    };
    let original = key;
    let key = key.to_ascii_lowercase();
    let last = key.rsplit('.').next().unwrap_or_default();
    // `url.BASE.insteadOf=PREFIX`: every URL starting with PREFIX is fetched from BASE.
    if key.starts_with("url.") && matches!(last, "insteadof" | "pushinsteadof") {
        return GitConfig::Url(&original[4..original.len() - last.len() - 1]);
    }
    if (key.starts_with("alias.") || key.starts_with("credential.")) && value.starts_with('!') {
        GitConfig::Command(&value[1..])
    } else if GIT_COMMAND_KEYS.contains(&key.as_str())
        || key.starts_with("pager.")
        || (key.starts_with("gpg.") && last == "program")
    {
        GitConfig::Command(value)
    } else if key.starts_with("remote.") && matches!(last, "url" | "pushurl") {
        GitConfig::Url(value)
    } else {
        GitConfig::Nothing
    }
}
