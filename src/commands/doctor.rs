//! `doctor`: the setup an agent would run under, checked as that agent's user would meet
//! it. Each finding says how to fix it; only what stops the guard working fails.

mod setup;
use setup::*;

use crate::config::Paths;
use crate::error::exit;
use crate::perm;
use serde_json::json;
use std::path::PathBuf;

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
    if sound { exit::OK } else { exit::NO }
}
