//! An agent's settings file: read, the guard's hook entries found, removed or added, written
//! with a backup. Every agent's is JSON but Codex's `requirements.toml`, whose `[hooks]`
//! tables have the shape of its `hooks.json`: it is read into the same JSON values.

use super::{InstallError, Scope, entries, set_mode};
use serde_json::{Map, Value, json};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Toml,
}

impl Format {
    pub fn of(path: &Path) -> Format {
        if path.extension().is_some_and(|e| e == "toml") {
            Format::Toml
        } else {
            Format::Json
        }
    }
}

pub fn read_settings(path: &Path, format: Format) -> Result<Map<String, Value>, InstallError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => return Err(InstallError::file(path)(e)),
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    if format == Format::Toml {
        let table =
            toml::from_str::<toml::Table>(&text).map_err(|cause| InstallError::NotToml {
                path: path.to_path_buf(),
                cause,
            })?;
        return match serde_json::to_value(table) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(InstallError::NotTomlTable(path.to_path_buf())),
        };
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(InstallError::NotJsonObject(path.to_path_buf())),
        Err(cause) => Err(InstallError::NotJson {
            path: path.to_path_buf(),
            cause,
        }),
    }
}

/// A hook command this installer wrote: it runs mesh-guard's hook or session-start for an
/// agent. (The plugin's own hooks run through `${CLAUDE_PLUGIN_ROOT}` and live elsewhere.)
pub fn is_ours(command: &str) -> bool {
    command.contains("mesh-guard")
        && (command.contains(" hook --agent ") || command.contains(" session-start --agent "))
}

/// The command of a hook entry: `command`, or Copilot's `bash`.
pub(crate) fn entry_command(entry: &Value) -> Option<&str> {
    entry
        .get("command")
        .or_else(|| entry.get("bash"))
        .and_then(Value::as_str)
}

/// Every hook command in a settings document, by event: (event, matcher, command).
pub fn hook_commands(doc: &Map<String, Value>) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    let Some(Value::Object(hooks)) = doc.get("hooks") else {
        return found;
    };
    for (event, groups) in hooks {
        for group in groups.as_array().into_iter().flatten() {
            let matcher = group.get("matcher").and_then(Value::as_str).unwrap_or("");
            let inner = group.get("hooks").and_then(Value::as_array);
            // Claude, Gemini and Codex nest the hooks in a group; Copilot and Cursor do not.
            for hook in inner.into_iter().flatten().chain(Some(group)) {
                if let Some(command) = entry_command(hook) {
                    found.push((event.clone(), matcher.to_string(), command.to_string()));
                }
            }
        }
    }
    found
}

pub(crate) fn remove_ours(doc: &mut Map<String, Value>) {
    let Some(Value::Object(hooks)) = doc.get_mut("hooks") else {
        return;
    };
    for groups in hooks.values_mut() {
        let Some(list) = groups.as_array_mut() else {
            continue;
        };
        for group in list.iter_mut() {
            if let Some(inner) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                inner.retain(|h| !entry_command(h).is_some_and(is_ours));
            }
        }
        list.retain(|g| {
            !entry_command(g).is_some_and(is_ours)
                && g.get("hooks")
                    .and_then(Value::as_array)
                    .is_none_or(|h| !h.is_empty())
        });
    }
    hooks.retain(|_, groups| groups.as_array().is_none_or(|g| !g.is_empty()));
    if hooks.is_empty() {
        doc.remove("hooks");
    }
}

pub(crate) fn add_ours(doc: &mut Map<String, Value>, agent: &str, prefix: &str) {
    let (added, version) = entries(agent, prefix);
    if let Some(version) = version {
        doc.entry("version").or_insert(json!(version));
    }
    let hooks = doc
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    if !hooks.is_object() {
        *hooks = Value::Object(Map::new());
    }
    let hooks = hooks.as_object_mut().expect("an object");
    for (event, entry) in added {
        let list = hooks.entry(event).or_insert_with(|| json!([]));
        if !list.is_array() {
            *list = json!([]);
        }
        list.as_array_mut().expect("an array").push(entry);
    }
}

/// Writes `doc` to `path` unless it is already what is there; the old file is kept as
/// `<file>.bak-<unix ms>`. A managed file is left root-owned and readable by all.
pub(crate) fn write_settings(
    path: &Path,
    doc: &Value,
    scope: Scope,
    format: Format,
) -> Result<Vec<String>, InstallError> {
    let text = match format {
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(doc).expect("JSON values serialize")
        ),
        // Read from TOML and given only strings, numbers, booleans, arrays and tables. Keys
        // sorted, so that a second install writes the same bytes as the first.
        Format::Toml => toml::to_string(&sorted(doc)).map_err(|cause| InstallError::TomlWrite {
            path: path.to_path_buf(),
            cause,
        })?,
    };
    let old = std::fs::read(path).ok();
    if old.as_deref() == Some(text.as_bytes()) {
        return Ok(vec![format!("{}: already up to date", path.display())]);
    }
    let mut said = Vec::new();
    if let Some(old) = &old {
        let backup = backup_path(path);
        std::fs::write(&backup, old).map_err(InstallError::file(&backup))?;
        said.push(format!("backup: {}", backup.display()));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if scope == Scope::Managed && !dir.exists() {
            super::create_root_dir(dir)?;
        } else {
            std::fs::create_dir_all(dir).map_err(InstallError::file(dir))?;
        }
    }
    let mut temp = path.as_os_str().to_owned();
    temp.push(".mesh-guard-tmp");
    let temp = std::path::PathBuf::from(temp);
    std::fs::write(&temp, &text)
        .and_then(|()| std::fs::rename(&temp, path))
        .map_err(InstallError::file(path))?;
    if scope == Scope::Managed {
        set_mode(path, 0o644)?;
    }
    said.push(format!("hooks written: {}", path.display()));
    Ok(said)
}

/// `value` with every table's keys in order.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Where the file at `path` is kept before it is replaced: `<file>.bak-<unix ms>`.
pub(crate) fn backup_path(path: &Path) -> std::path::PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{name}.bak-{stamp}"))
}
