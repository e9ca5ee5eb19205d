//! `install` and `uninstall`: the guard's hooks written into an agent's settings, merged
//! with what is there (other keys and other hooks kept), with a backup of the file it
//! replaces, and idempotent. `--scope managed` is the hardened install (decision 0010):
//! the system-wide policy file, a root-owned binary named by absolute path, and the
//! catalog, rules and compiled index copied into root-owned system paths.

mod system;
use system::*;

pub(crate) mod settings;
use settings::*;

use crate::error::exit;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

pub use crate::config::SYSTEM_DIR;

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
        Scope::User => crate::io::var_os("CLAUDE_CONFIG_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| crate::io::var_os("HOME").map(|h| PathBuf::from(h).join(".claude")))
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
    crate::io::var_os("HOME")
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
        ("copilot", Scope::User) => crate::io::var_os("COPILOT_HOME")
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
        "{prefix} hook --agent {agent} || {{ s=$?; [ \"$s\" -eq 2 ] || echo \"Decided by mesh-guard, not an error: do not retry or work round it. Tell the operator: mesh-guard could not run (exit $s), so it refuses every command until it can.\" >&2; exit 2; }}"
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
            exit::OK
        }
        Err(e) => {
            errln!("error: {e}");
            exit::ERROR
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
        if crate::perm::current_uid() != Some(0) {
            return Err("the managed scope writes root-owned system files: run it as root (sudo mesh-guard install claude --scope managed)".into());
        }
        if let Some(why) = crate::perm::writable_by_non_root(&bin) {
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
