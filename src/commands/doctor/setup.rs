//! What the doctor looks at: the agents' hooks as installed, the binary the launcher finds,
//! the agent's user.

use super::{Installed, Level, Report};
use crate::install;
use crate::perm;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The agent's user: `--user`, else `SUDO_USER` when run as root, else the current user.
pub(crate) fn agent_user(asked: Option<&str>, report: &mut Report) -> Option<perm::User> {
    let uid = perm::current_uid();
    let name = asked.map(str::to_string).or_else(|| {
        (uid == Some(0))
            .then(|| crate::io::var("SUDO_USER").ok().filter(|s| !s.is_empty()))
            .flatten()
    });
    let wanted = name.clone().or_else(|| uid.map(|u| u.to_string()))?;
    let mut found = perm::lookup(&wanted);
    // The current user's own session reads its settings under $HOME.
    if name.is_none()
        && let (Some(u), Some(home)) = (found.as_mut(), crate::io::var_os("HOME"))
    {
        u.home = PathBuf::from(home);
    }
    if found.as_ref().is_some_and(|u| u.uid == 0) {
        report.add(
            Level::Warn,
            "the agent runs as root: no file of the guard can be kept from it",
            "run the agent as an unprivileged user (pass --user NAME to check that user)",
        );
    }
    if found.is_none() {
        report.add(
            Level::Warn,
            format!("user {wanted} not found in /etc/passwd: what it can write is not checked"),
            "pass --user NAME",
        );
    }
    found
}

/// The value of `--name VALUE` in a hook command.
pub(crate) fn option_in(command: &str, name: &str) -> Option<PathBuf> {
    let words = shell_words::split(command.split("||").next()?).ok()?;
    let at = words.iter().position(|w| w == name)?;
    words.get(at + 1).map(PathBuf::from)
}

/// The settings files that run the guard, read where the agent's user's Claude reads them.
pub(crate) fn installed_hooks(user: Option<&perm::User>) -> Vec<Installed> {
    let home = user
        .map(|u| u.home.clone())
        .or_else(|| crate::io::var_os("HOME").map(PathBuf::from));
    let mut files = vec![("managed", install::claude_managed_settings())];
    let user_dir = crate::io::var_os("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty() && user.is_none_or(|u| Some(u.uid) == perm::current_uid()))
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".claude")));
    if let Some(dir) = &user_dir {
        files.push(("user", dir.join("settings.json")));
    }
    if let Ok(cwd) = std::env::current_dir() {
        files.push(("project", cwd.join(".claude/settings.json")));
        files.push(("project", cwd.join(".claude/settings.local.json")));
    }
    let mut found = Vec::new();
    for (scope, file) in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(Value::Object(doc)) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        for (event, _, command) in install::settings::hook_commands(&doc) {
            if event == "PreToolUse" && install::settings::is_ours(&command) {
                found.push(Installed {
                    agent: "claude",
                    scope,
                    settings: file.clone(),
                    command,
                });
            }
        }
        if scope == "user"
            && let Some(Value::Object(plugins)) = doc.get("enabledPlugins")
            && plugins
                .iter()
                .any(|(k, v)| k.starts_with("mesh-guard@") && v == &Value::Bool(true))
        {
            found.push(Installed {
                agent: "claude",
                scope: "plugin",
                settings: file.clone(),
                command: String::new(),
            });
        }
    }
    // The other agents' files at every scope (docs/agents/): each file of Copilot's hook
    // directories, the one file the others read.
    let env_home = crate::io::var_os("HOME").map(PathBuf::from);
    for agent in install::AGENTS.iter().filter(|a| **a != "claude") {
        for scope in [
            install::Scope::Managed,
            install::Scope::User,
            install::Scope::Project,
        ] {
            let Ok(mut file) = install::settings_file(agent, scope) else {
                continue;
            };
            // Read where the agent's user's own CLI would read it.
            if let (Some(from), Some(to)) = (&env_home, &home)
                && let Ok(rest) = file.strip_prefix(from)
            {
                file = to.join(rest);
            }
            let files = if *agent == "copilot" {
                json_files_beside(&file)
            } else {
                vec![file]
            };
            for file in files {
                let format = install::settings::Format::of(&file);
                let Ok(doc) = install::settings::read_settings(&file, format) else {
                    continue;
                };
                if let Some((_, _, command)) = install::settings::hook_commands(&doc)
                    .into_iter()
                    .find(|(_, _, c)| install::settings::is_ours(c) && c.contains(" hook --agent "))
                {
                    found.push(Installed {
                        agent,
                        scope: scope.name(),
                        settings: file.clone(),
                        command,
                    });
                }
            }
        }
    }
    found
}

/// Every `*.json` in the directory of `file` (Copilot loads each file of its hook
/// directories).
fn json_files_beside(file: &Path) -> Vec<PathBuf> {
    let Some(dir) = file.parent() else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// The program a hook command runs, found as the agent's shell would find it: a path as it
/// is, a bare name on `PATH` (doctor's own `PATH` stands in for the agent's). Err says why
/// none runs.
pub(crate) fn hook_program(command: &str) -> Result<PathBuf, NoProgram> {
    let words = shell_words::split(command.split("||").next().unwrap_or(""))
        .map_err(|_| NoProgram::Unreadable(command.to_string()))?;
    let Some(first) = words.first() else {
        return Err(NoProgram::Empty);
    };
    let path = PathBuf::from(first);
    if first.contains('/') {
        return if path.is_absolute() {
            Ok(path)
        } else {
            Err(NoProgram::Relative(first.clone()))
        };
    }
    let dirs = crate::io::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&dirs)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(first))
        .find(|p| p.is_file() && is_executable(p))
        .ok_or_else(|| NoProgram::NotOnPath(first.clone()))
}

/// Why a hook command names no program that runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NoProgram {
    /// The command does not split into words as a shell would (an open quote).
    Unreadable(String),
    /// The command has no words.
    Empty,
    /// The program is a relative path.
    Relative(String),
    /// The program is a bare name found in no directory of `PATH`.
    NotOnPath(String),
}

impl std::fmt::Display for NoProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoProgram::Unreadable(command) => {
                write!(f, "a hook command cannot be read: {command}")
            }
            NoProgram::Empty => f.write_str("a hook command is empty"),
            NoProgram::Relative(first) => write!(
                f,
                "a hook runs {first}, a path relative to wherever the agent starts"
            ),
            NoProgram::NotOnPath(first) => write!(
                f,
                "a hook runs `{first}`, which is in no directory of PATH (as the agent's shell would look it up)"
            ),
        }
    }
}

impl std::error::Error for NoProgram {}

/// The binary the plugin's launcher would run: the first of its fixed places
/// (`protect::LAUNCHER_PLACES`) whose binary is root's and out of every account's reach,
/// else the first with a binary (decision 0070); `~` the agent's user's home; never a
/// variable's.
pub(crate) fn launcher_binary(user: Option<&perm::User>) -> Option<PathBuf> {
    let usable = |p: &Path| {
        p.is_file()
            && is_executable(p)
            && !std::fs::read(p)
                .map(|b| {
                    b.starts_with(b"#!")
                        && String::from_utf8_lossy(&b).contains("mesh-guard plugin launcher")
                })
                .unwrap_or(false)
    };
    // The user database's home, as the launcher takes it (`user.home` may be `HOME`).
    let home = user
        .and_then(|u| perm::lookup(&u.name))
        .map(|u| u.home)
        .or_else(perm::account_home);
    let places: Vec<PathBuf> = crate::protect::launcher_places(&Vec::from_iter(home))
        .into_iter()
        .filter(|p| usable(p))
        .collect();
    places
        .iter()
        .find(|p| crate::protect::reach::root_owned(p).is_ok())
        .or(places.first())
        .cloned()
}

pub(crate) fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        true
    }
}
