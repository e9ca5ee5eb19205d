//! `doctor`: the setup an agent would run under, checked as that agent's user would meet
//! it. Each finding says how to fix it; only what stops the guard working fails.

use crate::config::Paths;
use crate::install::{self, perm};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Ok,
    Warn,
    Fail,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Ok => "ok",
            Level::Warn => "warn",
            Level::Fail => "fail",
        }
    }
}

struct Finding {
    level: Level,
    what: String,
    fix: String,
}

/// One settings file that runs the guard's hook.
struct Installed {
    agent: &'static str,
    scope: &'static str,
    settings: PathBuf,
    command: String,
}

#[derive(Default)]
struct Report {
    findings: Vec<Finding>,
}

impl Report {
    fn add(&mut self, level: Level, what: impl Into<String>, fix: impl Into<String>) {
        self.findings.push(Finding {
            level,
            what: what.into(),
            fix: fix.into(),
        });
    }
}

pub fn run(paths: &Paths, json_out: bool, user: Option<&str>) -> i32 {
    let mut report = Report::default();
    let user = agent_user(user, &mut report);
    let installed = installed_hooks(user.as_ref());
    let managed = installed.iter().find(|i| i.scope == "managed");
    // A managed hook names its catalog and rules itself: those are the ones in force.
    let catalog = managed
        .and_then(|m| option_in(&m.command, "--catalog"))
        .unwrap_or_else(|| paths.catalog.clone());
    let rules = managed
        .and_then(|m| option_in(&m.command, "--rules"))
        .or_else(|| paths.rules.clone());
    let index = crate::catalog::compiled_index_for(&catalog);

    match crate::catalog::load(&catalog) {
        Ok(_) => report.add(Level::Ok, format!("catalog {} is valid", catalog.display()), ""),
        Err(errors) => report.add(
            Level::Fail,
            format!(
                "catalog: {}",
                errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ")
            ),
            format!(
                "create or fix {} (see examples/catalog.toml), or point --catalog / MESH_GUARD_CATALOG at it; then run mesh-guard catalog check",
                catalog.display()
            ),
        ),
    }
    match crate::rules::Rules::load(rules.as_deref()) {
        Ok(_) => report.add(
            Level::Ok,
            match &rules {
                Some(r) => format!("rules valid (built-in, and {})", r.display()),
                None => "rules valid (built-in)".into(),
            },
            "",
        ),
        Err(e) => report.add(
            Level::Fail,
            format!("rules: {e}"),
            "fix the rules file named, then run mesh-guard catalog check",
        ),
    }
    if managed.is_some() && !index.is_file() {
        report.add(
            Level::Warn,
            format!(
                "no compiled index at {}: each hook parses the catalog",
                index.display()
            ),
            format!(
                "sudo mesh-guard --catalog {} catalog compile",
                catalog.display()
            ),
        );
    }

    let launcher = launcher_binary(user.as_ref());
    let hook_bins: Vec<PathBuf> = installed
        .iter()
        .filter(|i| i.scope != "plugin")
        .filter_map(|i| first_word(&i.command))
        .collect();
    match &launcher {
        Some(bin) => report.add(
            Level::Ok,
            format!("the plugin's launcher runs {}", bin.display()),
            "",
        ),
        None => report.add(
            if hook_bins.iter().any(|b| b.is_file()) {
                Level::Warn
            } else {
                Level::Fail
            },
            "the plugin's launcher finds no mesh-guard (MESH_GUARD_BIN, PATH, ~/.cargo/bin)",
            "cargo install --locked --path <checkout>, or put mesh-guard on PATH",
        ),
    }
    for bin in &hook_bins {
        if !bin.is_file() {
            report.add(
                Level::Fail,
                format!("a hook runs {}, which does not exist", bin.display()),
                "install the binary there, or run mesh-guard install again with --bin",
            );
        }
    }

    if installed.is_empty() {
        report.add(
            Level::Fail,
            "no agent has the guard's hooks",
            "mesh-guard install claude (user scope), or sudo mesh-guard install claude --scope managed (hardened), or install the plugin",
        );
    }
    for i in &installed {
        report.add(
            Level::Ok,
            format!(
                "{} has the hooks at {} scope ({})",
                i.agent,
                i.scope,
                i.settings.display()
            ),
            "",
        );
    }

    // Every file the guard runs on, as the agent's user could change it.
    let mut guard_files: Vec<PathBuf> = vec![catalog.clone(), index.clone()];
    guard_files.extend(rules.clone());
    guard_files.extend(launcher.clone());
    guard_files.extend(hook_bins.iter().cloned());
    guard_files.extend(managed.map(|m| m.settings.clone()));
    guard_files.sort();
    guard_files.dedup();
    let writable: Vec<PathBuf> = match &user {
        Some(u) if u.uid != 0 => guard_files
            .iter()
            .filter(|f| f.exists() && perm::can_change(u, f))
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    let who = user
        .as_ref()
        .map(|u| u.name.clone())
        .unwrap_or_else(|| "?".into());
    for f in &writable {
        report.add(
            Level::Warn,
            format!("{} can change {}", who, f.display()),
            format!(
                "for a hardened install: sudo chown root:root {0} and sudo chmod go-w {0} (and its directories)",
                f.display()
            ),
        );
    }

    let db = managed
        .and_then(|m| option_in(&m.command, "--db"))
        .unwrap_or_else(|| match &user {
            Some(u) if managed.is_some() => u.home.join(".local/share/mesh-guard/audit.db"),
            _ => paths.db.clone(),
        });
    let record_ok = user.as_ref().is_none_or(|u| perm::can_change(u, &db));
    report.add(
        if record_ok { Level::Ok } else { Level::Warn },
        format!("the record goes to {} (and each row to the system log)", db.display()),
        if record_ok {
            String::new()
        } else {
            format!("{who} cannot write it: refusals are not recorded and overrides not honoured; let {who} write {}", db.display())
        },
    );

    // Hardened only when checked for a known, unprivileged user.
    let hardened =
        managed.is_some() && writable.is_empty() && user.as_ref().is_some_and(|u| u.uid != 0);
    let mode = if hardened {
        "hardened"
    } else if installed.is_empty() {
        "none"
    } else {
        "user-level"
    };
    if mode == "user-level" {
        report.add(
            Level::Warn,
            "user-level install: the agent's user can edit its own settings and switch the guard off",
            "for a guard the agent cannot undo: sudo mesh-guard install claude --scope managed (README, Hardened install)",
        );
    }
    let sound = !report.findings.iter().any(|f| f.level == Level::Fail);

    if json_out {
        let object = json!({
            "sound": sound,
            "mode": mode,
            "user": user.as_ref().map(|u| u.name.clone()),
            "paths": {
                "catalog": catalog, "rules": rules, "compiled_index": index, "db": db,
                "binary": std::env::current_exe().ok(), "launcher_binary": launcher,
            },
            "agents": installed.iter().map(|i| json!({
                "agent": i.agent, "scope": i.scope, "settings": i.settings, "command": i.command,
            })).collect::<Vec<_>>(),
            "writable_by_user": writable,
            "findings": report.findings.iter().map(|f| json!({
                "level": f.level.name(), "what": f.what, "fix": f.fix,
            })).collect::<Vec<_>>(),
        });
        outln!("{object}");
    } else {
        outln!("mode: {mode}");
        for f in &report.findings {
            outln!("{:<4}  {}", f.level.name(), f.what);
            if !f.fix.is_empty() {
                outln!("      fix: {}", f.fix);
            }
        }
        outln!(
            "{}",
            if sound {
                "sound"
            } else {
                "NOT sound: the guard cannot work as set up"
            }
        );
    }
    if sound { 0 } else { 1 }
}

/// The agent's user: `--user`, else `SUDO_USER` when run as root, else the current user.
fn agent_user(asked: Option<&str>, report: &mut Report) -> Option<perm::User> {
    let uid = perm::current_uid();
    let name = asked.map(str::to_string).or_else(|| {
        (uid == Some(0))
            .then(|| std::env::var("SUDO_USER").ok().filter(|s| !s.is_empty()))
            .flatten()
    });
    let wanted = name.clone().or_else(|| uid.map(|u| u.to_string()))?;
    let mut found = perm::lookup(&wanted);
    // The current user's own session reads its settings under $HOME.
    if name.is_none()
        && let (Some(u), Some(home)) = (found.as_mut(), std::env::var_os("HOME"))
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
fn option_in(command: &str, name: &str) -> Option<PathBuf> {
    let words = shell_words::split(command.split("||").next()?).ok()?;
    let at = words.iter().position(|w| w == name)?;
    words.get(at + 1).map(PathBuf::from)
}

fn first_word(command: &str) -> Option<PathBuf> {
    let words = shell_words::split(command.split("||").next()?).ok()?;
    words.first().map(PathBuf::from).filter(|p| p.is_absolute())
}

/// The settings files that run the guard, read where the agent's user's Claude reads them.
fn installed_hooks(user: Option<&perm::User>) -> Vec<Installed> {
    let home = user
        .map(|u| u.home.clone())
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from));
    let mut files = vec![("managed", install::claude_managed_settings())];
    let user_dir = std::env::var_os("CLAUDE_CONFIG_DIR")
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
    // The other agents' user and project files (docs/agents/).
    let env_home = std::env::var_os("HOME").map(PathBuf::from);
    for agent in install::AGENTS.iter().filter(|a| **a != "claude") {
        for (scope, name) in [
            (install::Scope::User, "user"),
            (install::Scope::Project, "project"),
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
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let Ok(Value::Object(doc)) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            if let Some((_, _, command)) = install::settings::hook_commands(&doc)
                .into_iter()
                .find(|(_, _, c)| install::settings::is_ours(c) && c.contains(" hook --agent "))
            {
                found.push(Installed {
                    agent,
                    scope: name,
                    settings: file.clone(),
                    command,
                });
            }
        }
    }
    found
}

/// The binary the plugin's launcher would run: `MESH_GUARD_BIN`, then `PATH`, then
/// `~/.cargo/bin`, skipping the launcher itself (plugin/bin/mesh-guard).
fn launcher_binary(user: Option<&perm::User>) -> Option<PathBuf> {
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
    if let Some(bin) = std::env::var_os("MESH_GUARD_BIN").filter(|b| !b.is_empty()) {
        let bin = PathBuf::from(bin);
        return usable(&bin).then_some(bin);
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join("mesh-guard");
            if usable(&candidate) {
                return Some(candidate);
            }
        }
    }
    let home = user
        .map(|u| u.home.clone())
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from))?;
    let cargo = home.join(".cargo/bin/mesh-guard");
    usable(&cargo).then_some(cargo)
}

fn is_executable(path: &Path) -> bool {
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
