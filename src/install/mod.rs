//! `install` and `uninstall`: the guard's hooks written into an agent's settings, merged
//! with what is there (other keys and other hooks kept), with a backup of the file it
//! replaces, and idempotent. `--scope managed` is the hardened install (decision 0010):
//! the system-wide policy file, a root-owned binary named by absolute path, and the
//! catalog, rules and compiled index copied into root-owned system paths.

pub mod perm;

use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// Where a hardened install keeps the catalog, the rules and the compiled index.
pub const SYSTEM_DIR: &str = "/etc/mesh-guard";

/// The tools whose calls the PreToolUse hook sees: the shell and the file writers.
pub const MATCHER: &str = "Bash|Write|Edit|MultiEdit|NotebookEdit";

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    User,
    Project,
    Managed,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Managed => "managed",
        }
    }
}

/// What `install` and `uninstall` were asked.
pub struct Request {
    pub agent: String,
    pub scope: Scope,
    /// The settings file, when not the agent's usual one for the scope.
    pub settings: Option<PathBuf>,
    /// The binary the hooks run; default: this executable.
    pub bin: Option<PathBuf>,
    /// The managed scope's system directory (default `/etc/mesh-guard`).
    pub system_dir: Option<PathBuf>,
    /// Managed scope only: run no hooks but the managed ones.
    pub managed_hooks_only: bool,
}

/// Claude Code's settings file for `scope`.
pub fn claude_settings(scope: Scope) -> PathBuf {
    match scope {
        Scope::User => std::env::var_os("CLAUDE_CONFIG_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".claude")))
            .unwrap_or_else(|| PathBuf::from(".claude"))
            .join("settings.json"),
        Scope::Project => std::env::current_dir()
            .unwrap_or_default()
            .join(".claude/settings.json"),
        Scope::Managed => claude_managed_settings(),
    }
}

pub fn claude_managed_settings() -> PathBuf {
    if cfg!(target_os = "macos") {
        PathBuf::from("/Library/Application Support/ClaudeCode/managed-settings.json")
    } else {
        PathBuf::from("/etc/claude-code/managed-settings.json")
    }
}

/// The agents `install` knows, each with its page in docs/agents/.
pub const AGENTS: [&str; 5] = ["claude", "gemini", "codex", "copilot", "cursor"];

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// The settings file `agent` reads at `scope` (docs/agents/<agent>.md), or why none is
/// written there.
pub fn settings_file(agent: &str, scope: Scope) -> Result<PathBuf, String> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let path = match (agent, scope) {
        ("claude", scope) => claude_settings(scope),
        ("gemini", Scope::User) => home().join(".gemini/settings.json"),
        ("gemini", Scope::Project) => cwd.join(".gemini/settings.json"),
        ("codex", Scope::User) => home().join(".codex/hooks.json"),
        ("codex", Scope::Project) => cwd.join(".codex/hooks.json"),
        ("copilot", Scope::User) => std::env::var_os("COPILOT_HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home().join(".copilot"))
            .join("hooks/mesh-guard.json"),
        ("copilot", Scope::Project) => cwd.join(".github/hooks/mesh-guard.json"),
        ("cursor", Scope::User) => home().join(".cursor/hooks.json"),
        ("cursor", Scope::Project) => cwd.join(".cursor/hooks.json"),
        (agent, Scope::Managed) if AGENTS.contains(&agent) => {
            return Err(format!(
                "the managed scope for {agent} is not supported yet, see docs/agents/{agent}.md for its system-wide hook configuration"
            ));
        }
        (other, _) => {
            return Err(format!(
                "unknown agent `{other}`: one of {}",
                AGENTS.join(", ")
            ));
        }
    };
    Ok(path)
}

/// The hook command for an agent other than Claude: any failure but a refusal is turned
/// into one (docs/agents/hook-spec.md).
fn fail_closed_command(prefix: &str, agent: &str) -> String {
    format!(
        "{prefix} hook --agent {agent} || {{ s=$?; [ \"$s\" -eq 2 ] || echo \"mesh-guard failed (exit $s); command refused\" >&2; exit 2; }}"
    )
}

/// The entries `install` adds for `agent`: (event, entry), and the file's format version
/// where the agent wants one.
fn entries(agent: &str, prefix: &str) -> (Vec<(&'static str, Value)>, Option<u64>) {
    let command = fail_closed_command(prefix, agent);
    match agent {
        "gemini" => (
            vec![(
                "BeforeTool",
                json!({"matcher": "*", "hooks": [{
                    "name": "mesh-guard", "type": "command", "command": command,
                    "timeout": 30000, "description": "Refuses shell commands aimed at the mesh",
                }]}),
            )],
            None,
        ),
        "codex" => (
            vec![(
                "PreToolUse",
                json!({"matcher": "*", "hooks": [{
                    "type": "command", "command": command, "timeout": 30, "statusMessage": "mesh-guard",
                }]}),
            )],
            None,
        ),
        "copilot" => (
            vec![(
                "preToolUse",
                json!({"type": "command", "bash": command, "timeoutSec": 30}),
            )],
            Some(1),
        ),
        "cursor" => (
            vec![
                (
                    "beforeShellExecution",
                    json!({"command": command, "timeout": 30, "failClosed": true}),
                ),
                (
                    "preToolUse",
                    json!({"matcher": "Write|Delete", "command": command, "timeout": 30, "failClosed": true}),
                ),
            ],
            Some(1),
        ),
        _ => (
            vec![
                (
                    "PreToolUse",
                    json!({"matcher": MATCHER, "hooks": [{
                        "type": "command",
                        "command": format!("{prefix} hook --agent claude || exit 2"),
                    }]}),
                ),
                (
                    "SessionStart",
                    json!({"hooks": [{
                        "type": "command",
                        "command": format!("{prefix} session-start --agent claude || exit 2"),
                    }]}),
                ),
            ],
            None,
        ),
    }
}

pub fn install(paths: &crate::config::Paths, req: &Request) -> i32 {
    finish(install_inner(paths, req))
}

pub fn uninstall(req: &Request) -> i32 {
    finish(uninstall_inner(req))
}

fn finish(result: Result<Vec<String>, String>) -> i32 {
    match result {
        Ok(lines) => {
            for line in lines {
                outln!("{line}");
            }
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

fn install_inner(paths: &crate::config::Paths, req: &Request) -> Result<Vec<String>, String> {
    let settings = match &req.settings {
        Some(path) => {
            settings_file(&req.agent, req.scope)?;
            path.clone()
        }
        None => settings_file(&req.agent, req.scope)?,
    };
    let mut said = Vec::new();
    let bin = match &req.bin {
        Some(bin) => std::fs::canonicalize(bin)
            .map_err(|e| format!("{}: cannot use as the binary: {e}", bin.display()))?,
        None => std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .map_err(|e| format!("cannot find this executable: {e}"))?,
    };
    let mut options = Vec::new();
    if req.scope == Scope::Managed {
        if perm::current_uid() != Some(0) {
            return Err("the managed scope writes root-owned system files: run it as root (sudo mesh-guard install claude --scope managed)".into());
        }
        if let Some(why) = perm::writable_by_non_root(&bin) {
            return Err(format!(
                "{} cannot be the hardened hook's binary: {why}; install it root-owned (e.g. sudo install -o root -m 0755 mesh-guard /usr/local/bin/) and pass --bin",
                bin.display()
            ));
        }
        let system = req
            .system_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(SYSTEM_DIR));
        let (catalog, rules) = install_system_files(paths, &system, &mut said)?;
        options.push(format!(
            "--catalog {}",
            shell_words::quote(&catalog.to_string_lossy())
        ));
        options.push(format!(
            "--rules {}",
            shell_words::quote(&rules.to_string_lossy())
        ));
    }
    let prefix = format!(
        "{}{}",
        shell_words::quote(&bin.to_string_lossy()),
        options.iter().map(|o| format!(" {o}")).collect::<String>()
    );
    let mut doc = read_settings(&settings)?;
    remove_ours(&mut doc);
    add_ours(&mut doc, &req.agent, &prefix);
    if req.scope == Scope::Managed && req.managed_hooks_only {
        doc.insert("allowManagedHooksOnly".into(), Value::Bool(true));
    }
    said.extend(write_settings(&settings, &Value::Object(doc), req.scope)?);
    Ok(said)
}

fn uninstall_inner(req: &Request) -> Result<Vec<String>, String> {
    let settings = match &req.settings {
        Some(path) => {
            settings_file(&req.agent, req.scope)?;
            path.clone()
        }
        None => settings_file(&req.agent, req.scope)?,
    };
    if !settings.exists() {
        return Ok(vec![format!(
            "{}: absent, nothing to undo",
            settings.display()
        )]);
    }
    let mut doc = read_settings(&settings)?;
    remove_ours(&mut doc);
    let mut said = write_settings(&settings, &Value::Object(doc), req.scope)?;
    if req.scope == Scope::Managed {
        said.push(format!(
            "the system files in {} are left in place; remove them by hand when no hook needs them",
            req.system_dir
                .as_deref()
                .unwrap_or(Path::new(SYSTEM_DIR))
                .display()
        ));
    }
    Ok(said)
}

/// Copies the catalog and the rules in force into `system` (root-owned, read-only to
/// others) and compiles the index beside the catalog. Returns the installed paths.
fn install_system_files(
    paths: &crate::config::Paths,
    system: &Path,
    said: &mut Vec<String>,
) -> Result<(PathBuf, PathBuf), String> {
    crate::catalog::load(&paths.catalog).map_err(|errors| {
        let list: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        format!(
            "the catalog is invalid, nothing installed:\n{}",
            list.join("\n")
        )
    })?;
    crate::rules::Rules::load(paths.rules.as_deref())
        .map_err(|e| format!("the rules are invalid, nothing installed: {e}"))?;
    create_root_dir(system)?;
    let catalog = if paths.catalog.is_dir() {
        let target = system.join("catalog");
        replace_tree(&paths.catalog, &target)?;
        target
    } else {
        let target = system.join("catalog.toml");
        copy_root_file(&paths.catalog, &target)?;
        target
    };
    let rules = system.join("rules");
    match &paths.rules {
        Some(dir) => replace_tree(dir, &rules)?,
        None => {
            // An empty directory: passing it keeps MESH_GUARD_RULES from the agent's
            // environment out of the hook (a flag wins over the variable).
            create_root_dir(&rules)?;
        }
    }
    let index = crate::catalog::compiled_index_for(&catalog);
    crate::catalog::compile(&catalog, &index).map_err(|errors| {
        errors
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    set_mode(&index, 0o644)?;
    said.push(format!("catalog: {}", catalog.display()));
    said.push(format!("rules: {}", rules.display()));
    said.push(format!("compiled index: {}", index.display()));
    Ok((catalog, rules))
}

fn create_root_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    set_mode(dir, 0o755)
}

fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("{}: {e}", path.display()))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, mode);
        Ok(())
    }
}

fn copy_root_file(from: &Path, to: &Path) -> Result<(), String> {
    let bytes = std::fs::read(from).map_err(|e| format!("{}: {e}", from.display()))?;
    let temp = to.with_extension("mesh-guard-tmp");
    std::fs::write(&temp, bytes)
        .and_then(|()| std::fs::rename(&temp, to))
        .map_err(|e| format!("{}: {e}", to.display()))?;
    set_mode(to, 0o644)
}

/// Replaces the directory `to` with a copy of the `*.toml` files under `from`.
fn replace_tree(from: &Path, to: &Path) -> Result<(), String> {
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    }
    create_root_dir(to)?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            replace_tree(&path, &target)?;
        } else if path.extension().is_some_and(|e| e == "toml") {
            copy_root_file(&path, &target)?;
        }
    }
    Ok(())
}

fn read_settings(path: &Path) -> Result<Map<String, Value>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(format!(
            "{}: not a JSON object; left unchanged",
            path.display()
        )),
        Err(e) => Err(format!(
            "{}: not valid JSON ({e}); left unchanged",
            path.display()
        )),
    }
}

/// A hook command this installer wrote: it runs mesh-guard's hook or session-start for an
/// agent. (The plugin's own hooks run through `${CLAUDE_PLUGIN_ROOT}` and live elsewhere.)
pub fn is_ours(command: &str) -> bool {
    command.contains("mesh-guard")
        && (command.contains(" hook --agent ") || command.contains(" session-start --agent "))
}

/// The command of a hook entry: `command`, or Copilot's `bash`.
fn entry_command(entry: &Value) -> Option<&str> {
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

fn remove_ours(doc: &mut Map<String, Value>) {
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

fn add_ours(doc: &mut Map<String, Value>, agent: &str, prefix: &str) {
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
fn write_settings(path: &Path, doc: &Value, scope: Scope) -> Result<Vec<String>, String> {
    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(doc).expect("JSON values serialize")
    );
    let old = std::fs::read(path).ok();
    if old.as_deref() == Some(text.as_bytes()) {
        return Ok(vec![format!("{}: already up to date", path.display())]);
    }
    let mut said = Vec::new();
    if let Some(old) = &old {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let backup = path.with_file_name(format!("{name}.bak-{stamp}"));
        std::fs::write(&backup, old).map_err(|e| format!("{}: {e}", backup.display()))?;
        said.push(format!("backup: {}", backup.display()));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let temp = path.with_extension("json.mesh-guard-tmp");
    std::fs::write(&temp, &text)
        .and_then(|()| std::fs::rename(&temp, path))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if scope == Scope::Managed {
        set_mode(path, 0o644)?;
    }
    said.push(format!("hooks written: {}", path.display()));
    Ok(said)
}
