//! `install` and `uninstall`: the guard's hooks written into an agent's settings, merged
//! with what is there (other keys and other hooks kept), with a backup of the file it
//! replaces, and idempotent. `--scope managed` is the hardened install (decision 0010):
//! the system-wide policy file, a root-owned binary named by absolute path, and the
//! catalog, rules and compiled index copied into root-owned system paths. At every scope the
//! hook's command line names the catalog, rules and record `install` was given: a hook reads
//! no variable for them (decision 0059), so a path left off would silently be the default.

mod entries;
mod error;
mod instructions;
mod system;
pub use entries::MATCHER;
use entries::entries;
pub use error::InstallError;
use system::*;

pub(crate) mod settings;
use settings::*;

use crate::error::exit;
use serde_json::Value;
use std::path::{Path, PathBuf};

pub use crate::config::SYSTEM_DIR;

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
    /// Managed scope only: write the system files under this directory, as if it were `/`
    /// (a machine image's tree, or a test's scratch root); the hooks name them as they will
    /// be found on the machine, and nothing is checked for root ownership.
    pub root: Option<PathBuf>,
    /// The paths `install` was given (`--catalog`, `--db`, `--rules` or their variables).
    pub given: Given,
}

/// The guard's paths as the command line (or its variables) gave them; None for a default.
#[derive(Debug, Clone, Default)]
pub struct Given {
    pub catalog: Option<PathBuf>,
    pub db: Option<PathBuf>,
    pub rules: Option<PathBuf>,
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
pub fn settings_file(agent: &str, scope: Scope) -> Result<PathBuf, InstallError> {
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
        ("codex", Scope::Managed) => PathBuf::from("/etc/codex/requirements.toml"),
        ("gemini", Scope::Managed) => PathBuf::from("/etc/gemini-cli/settings.json"),
        ("copilot", Scope::Managed) => {
            PathBuf::from("/etc/github-copilot/policy.d/mesh-guard.json")
        }
        ("cursor", Scope::Managed) => PathBuf::from("/etc/cursor/hooks.json"),
        (other, _) => {
            return Err(InstallError::UnknownAgent(other.to_string()));
        }
    };
    Ok(path)
}

pub fn install(paths: &crate::config::Paths, req: &Request) -> i32 {
    finish(install_inner(paths, req))
}

pub fn uninstall(req: &Request) -> i32 {
    finish(uninstall_inner(req))
}

fn finish(result: Result<Vec<String>, InstallError>) -> i32 {
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

/// `path` under the staging root, where one is given.
fn staged(root: Option<&Path>, path: &Path) -> PathBuf {
    match root {
        Some(root) => root.join(path.strip_prefix("/").unwrap_or(path)),
        None => path.to_path_buf(),
    }
}

/// `path`, staged under `root`, as the machine will see it.
fn unstaged(root: Option<&Path>, path: &Path) -> PathBuf {
    match root.and_then(|r| path.strip_prefix(r).ok()) {
        Some(rest) => Path::new("/").join(rest),
        None => path.to_path_buf(),
    }
}

/// The file `install` writes: `--settings`, or the agent's own for the scope (staged).
fn target(req: &Request) -> Result<PathBuf, InstallError> {
    let usual = settings_file(&req.agent, req.scope)?;
    Ok(match &req.settings {
        Some(path) => path.clone(),
        None if req.scope == Scope::Managed => staged(req.root.as_deref(), &usual),
        None => usual,
    })
}

/// An absolute form of a path the user gave, so that the hook finds it from any directory.
fn absolute(path: &Path) -> Result<PathBuf, InstallError> {
    if let Ok(path) = std::fs::canonicalize(path) {
        return Ok(path);
    }
    // A record not made yet: its directory must exist or be made by the guard later.
    std::path::absolute(path).map_err(InstallError::file(path))
}

fn option(name: &str, path: &Path) -> String {
    format!(" --{name} {}", shell_words::quote(&path.to_string_lossy()))
}

fn install_inner(paths: &crate::config::Paths, req: &Request) -> Result<Vec<String>, InstallError> {
    let settings = target(req)?;
    let mut said = Vec::new();
    let bin = match &req.bin {
        Some(bin) => std::fs::canonicalize(bin).map_err(|cause| InstallError::Binary {
            path: bin.clone(),
            cause,
        })?,
        None => std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .map_err(InstallError::NoExecutable)?,
    };
    let mut options = String::new();
    let root = req.root.as_deref();
    if req.scope == Scope::Managed {
        if root.is_none() && crate::perm::current_uid() != Some(0) {
            return Err(InstallError::NotRoot {
                agent: req.agent.clone(),
            });
        }
        if let Some(why) = crate::perm::writable_by_non_root(&bin).filter(|_| root.is_none()) {
            return Err(InstallError::BinaryNotHardened { path: bin, why });
        }
        let system = req
            .system_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(SYSTEM_DIR));
        let (catalog, rules) = install_system_files(paths, &staged(root, &system), &mut said)?;
        options.push_str(&option("catalog", &unstaged(root, &catalog)));
        options.push_str(&option("rules", &unstaged(root, &rules)));
    } else {
        if let Some(catalog) = &req.given.catalog {
            options.push_str(&option("catalog", &absolute(catalog)?));
        }
        if let Some(rules) = &req.given.rules {
            options.push_str(&option("rules", &absolute(rules)?));
        }
    }
    if let Some(db) = &req.given.db {
        options.push_str(&option("db", &absolute(db)?));
    }
    let prefix = format!("{}{options}", shell_words::quote(&bin.to_string_lossy()));
    let format = Format::of(&settings);
    let mut doc = read_settings(&settings, format)?;
    remove_ours(&mut doc);
    add_ours(&mut doc, &req.agent, &prefix);
    if req.scope == Scope::Managed {
        said.extend(policy(&mut doc, req));
    }
    said.extend(write_settings(
        &settings,
        &Value::Object(doc),
        req.scope,
        format,
    )?);
    if let Some(file) = instructions::file(&req.agent, req.scope).filter(|_| req.settings.is_none())
    {
        match crate::catalog::load(&paths.catalog) {
            Ok(catalog) => {
                let table = crate::instead::markdown(&catalog);
                said.extend(instructions::write(&file, &table)?);
            }
            Err(_) => said.push(format!(
                "{}: the catalog cannot be read, so no instead-of table was written to {}",
                paths.catalog.display(),
                file.display()
            )),
        }
    }
    Ok(said)
}

/// What the managed scope sets besides the hooks, so that the agent's user cannot switch
/// them off: each agent's own keys (docs/agents/<agent>.md says what they stop).
fn policy(doc: &mut serde_json::Map<String, Value>, req: &Request) -> Vec<String> {
    use serde_json::json;
    let mut said = Vec::new();
    match req.agent.as_str() {
        "codex" => {
            // Requirements pin a feature's value: a user's `[features] hooks = false` (or
            // `-c features.hooks=false`) falls back to it.
            let features = doc.entry("features").or_insert_with(|| json!({}));
            if let Some(features) = features.as_object_mut() {
                features.insert("hooks".into(), Value::Bool(true));
            }
            let system = req.system_dir.clone().unwrap_or_else(|| SYSTEM_DIR.into());
            if let Some(hooks) = doc.get_mut("hooks").and_then(Value::as_object_mut) {
                hooks
                    .entry("managed_dir")
                    .or_insert_with(|| json!(system.to_string_lossy()));
            }
            if req.managed_hooks_only {
                doc.insert("allow_managed_hooks_only".into(), Value::Bool(true));
            }
        }
        "gemini" => {
            // System settings override the user's and the workspace's for a value.
            let config = doc.entry("hooksConfig").or_insert_with(|| json!({}));
            if let Some(config) = config.as_object_mut() {
                config.insert("enabled".into(), Value::Bool(true));
            }
        }
        "claude" if req.managed_hooks_only => {
            doc.insert("allowManagedHooksOnly".into(), Value::Bool(true));
        }
        agent if req.managed_hooks_only => said.push(format!(
            "{agent} has no setting that keeps the user's own hooks from running; --managed-hooks-only changes nothing for it"
        )),
        _ => {}
    }
    said
}

fn uninstall_inner(req: &Request) -> Result<Vec<String>, InstallError> {
    let settings = target(req)?;
    if !settings.exists() {
        return Ok(vec![format!(
            "{}: absent, nothing to undo",
            settings.display()
        )]);
    }
    let format = Format::of(&settings);
    let mut doc = read_settings(&settings, format)?;
    remove_ours(&mut doc);
    let mut said = write_settings(&settings, &Value::Object(doc), req.scope, format)?;
    if let Some(file) = instructions::file(&req.agent, req.scope).filter(|_| req.settings.is_none())
    {
        said.extend(instructions::remove(&file)?);
    }
    if req.scope == Scope::Managed {
        said.push(format!(
            "the system files in {} and the policy's other keys are left in place; remove them by hand when no hook needs them",
            req.system_dir
                .as_deref()
                .unwrap_or(Path::new(SYSTEM_DIR))
                .display()
        ));
    }
    Ok(said)
}
