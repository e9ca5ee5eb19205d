//! The guard's variables and the files a future session starts from: a startup file, an
//! assignment of a guard variable, settings that turn the guard off.

use super::GUARD_VARIABLES;
use crate::shell::UNKNOWN;
use std::path::{Path, PathBuf};

/// Whether text sets one of the guard's variables: `MESH_GUARD_OVERRIDE=…`, and the
/// append form `MESH_GUARD_OVERRIDE+=…`, which sets it just the same when it was unset.
pub fn assigns_guard_variable(text: &str) -> bool {
    // Every one starts with the prefix: one search of the text, not one per variable (each
    // search sets up a searcher, and this runs on every word of every command).
    text.match_indices(GUARD_VARIABLE_PREFIX).any(|(at, _)| {
        GUARD_VARIABLES.iter().any(|v| {
            text[at..]
                .strip_prefix(v)
                .is_some_and(|rest| rest.starts_with('=') || rest.starts_with("+="))
        })
    })
}

/// What every one of `GUARD_VARIABLES` starts with.
const GUARD_VARIABLE_PREFIX: &str = "MESH_GUARD_";

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

/// Whether a word after the program names a guard variable: from an environment setter
/// (`systemctl --user set-environment MESH_GUARD_OVERRIDE=x`, `tmux setenv -g …`,
/// `launchctl setenv …`; rules/self.toml), a variable set for the sessions to come.
pub fn names_guard_variable(words: &[String]) -> bool {
    words
        .iter()
        .skip(1)
        .any(|w| GUARD_VARIABLES.iter().any(|v| w.starts_with(v)))
}

/// Whether an agent's `--settings` value (JSON, or a settings file, read if it exists)
/// switches the guard off: all hooks off, managed hooks only, its plugin disabled, or a
/// guard variable in the settings' `env`. A value that cannot be known is taken to.
pub fn settings_disable_guard(value: &str, cwd: Option<&Path>) -> bool {
    if value.contains(UNKNOWN) {
        return true;
    }
    let text = if value.trim_start().starts_with('{') {
        value.to_string()
    } else {
        let path = match cwd {
            Some(cwd) if !value.starts_with('/') => cwd.join(value),
            _ => PathBuf::from(value),
        };
        match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(_) => return false,
        }
    };
    let Ok(settings) = serde_json::from_str::<serde_json::Value>(&text) else {
        // Not JSON the hook can read: the agent may read it otherwise.
        return true;
    };
    let truthy = |key: &str| {
        settings
            .get(key)
            .is_some_and(|v| v != false && !v.is_null())
    };
    let plugin_off = settings
        .get("enabledPlugins")
        .and_then(|p| p.as_object())
        .is_some_and(|p| {
            p.iter()
                .any(|(name, on)| name.starts_with("mesh-guard") && on == false)
        });
    let env_sets = settings
        .get("env")
        .and_then(|e| e.as_object())
        .is_some_and(|e| GUARD_VARIABLES.iter().any(|v| e.contains_key(*v)));
    truthy("disableAllHooks") || truthy("allowManagedHooksOnly") || plugin_off || env_sets
}
