//! `doctor`: the setup an agent would run under, checked as that agent's user would meet
//! it. Each finding says how to fix it; only what stops the guard working fails.

mod record;
mod setup;
mod signers;
mod trust;
use setup::{agent_user, hook_program, installed_hooks, launcher_binary, option_in};

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

/// What the checks found, for the answer: the files in force and who the agent runs as.
struct InForce {
    user: Option<perm::User>,
    installed: Vec<Installed>,
    catalog: PathBuf,
    rules: Option<PathBuf>,
    index: PathBuf,
    launcher: Option<PathBuf>,
    db: PathBuf,
    writable: Vec<PathBuf>,
    /// `allowed_signers` beside the catalog, when it exists.
    signers: Option<PathBuf>,
}

impl InForce {
    fn managed(&self) -> Option<&Installed> {
        self.installed.iter().find(|i| i.scope == "managed")
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
    let db = managed
        .and_then(|m| option_in(&m.command, "--db"))
        .unwrap_or_else(|| match &user {
            Some(u) if managed.is_some() => u.home.join(".local/share/mesh-guard/audit.db"),
            _ => paths.db.clone(),
        });
    let mut found = InForce {
        index: crate::catalog::compiled_index_for(&catalog),
        launcher: launcher_binary(user.as_ref()),
        user,
        installed,
        catalog,
        rules,
        db,
        writable: Vec::new(),
        signers: None,
    };
    let modes = check_catalog_and_rules(&found, &mut report);
    found.signers = signers::check(&found.catalog, found.user.as_ref(), &mut report);
    let hook_bins = check_binaries(&found, &mut report);
    check_installed(&found.installed, &mut report);
    found.writable = check_writable(&found, &hook_bins, &mut report);
    check_record(&found, &mut report);
    let mode = mode(&found, &mut report);
    let sound = !report.findings.iter().any(|f| f.level == Level::Fail);
    let trusted = trust::entries(&found, &hook_bins);
    if json_out {
        print_json(&found, &report, mode, modes.as_ref(), sound, &trusted);
    } else {
        print_text(&report, mode, sound, &trusted);
    }
    if sound { exit::OK } else { exit::NO }
}

/// Also says which mode is in force where (decision 0060), and returns the catalog's modes.
fn check_catalog_and_rules(found: &InForce, report: &mut Report) -> Option<crate::catalog::Modes> {
    let (catalog, rules, index) = (&found.catalog, &found.rules, &found.index);
    let mut modes = None;
    match crate::catalog::load(catalog) {
        Ok(loaded) => {
            report.add(Level::Ok, format!("catalog {} is valid", catalog.display()), "");
            let set = loaded.modes().clone();
            if set.all_enforced() {
                report.add(Level::Ok, "mode: enforce everywhere", "");
            } else {
                report.add(
                    Level::Warn,
                    format!(
                        "mode: {}; what report mode covers passes and is recorded as would-refuse",
                        set.describe()
                    ),
                    "review `mesh-guard audit --kind would-refuse` and `mesh-guard replay`, then set `enforce` in the catalog's [mode] (docs/catalog.md)",
                );
            }
            modes = Some(set);
        }
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
            match rules {
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
    if found.managed().is_some() && !index.is_file() {
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
    modes
}

/// The binary the plugin's launcher finds, and those the installed hooks name; gives the
/// latter back.
fn check_binaries(found: &InForce, report: &mut Report) -> Vec<PathBuf> {
    let mut hook_bins = Vec::new();
    for i in found.installed.iter().filter(|i| i.scope != "plugin") {
        match hook_program(&i.command) {
            Ok(bin) if bin.is_file() => hook_bins.push(bin),
            Ok(bin) => report.add(
                Level::Fail,
                format!("a hook runs {}, which does not exist", bin.display()),
                "install the binary there, or run mesh-guard install again with --bin",
            ),
            Err(why) => report.add(
                Level::Fail,
                format!("{why} ({})", i.settings.display()),
                "install the binary on the agent's PATH, or run mesh-guard install again (it names the binary by absolute path)",
            ),
        }
    }
    // The launcher runs only the plugin's hooks: without the plugin, what it finds is moot.
    if found.installed.iter().any(|i| i.scope == "plugin") {
        match &found.launcher {
            Some(bin) => report.add(
                Level::Ok,
                format!("the plugin's launcher runs {}", bin.display()),
                "",
            ),
            None => report.add(
                Level::Fail,
                "the plugin's launcher finds no mesh-guard (/usr/local/bin, /usr/bin, ~/.cargo/bin, ~/.local/bin)",
                "sudo install -m 0755 mesh-guard /usr/local/bin/, or cargo install --locked --path <checkout>",
            ),
        }
    }
    hook_bins
}

fn check_installed(installed: &[Installed], report: &mut Report) {
    if installed.is_empty() {
        report.add(
            Level::Fail,
            "no agent has the guard's hooks",
            "mesh-guard install claude (user scope), or sudo mesh-guard install claude --scope managed (hardened), or install the plugin",
        );
    }
    for i in installed {
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
}

fn who(user: Option<&perm::User>) -> String {
    user.map(|u| u.name.clone()).unwrap_or_else(|| "?".into())
}

/// Every file the guard runs on that the agent's user could change; gives them back.
fn check_writable(found: &InForce, hook_bins: &[PathBuf], report: &mut Report) -> Vec<PathBuf> {
    let mut guard_files: Vec<PathBuf> = vec![found.catalog.clone(), found.index.clone()];
    guard_files.extend(found.rules.clone());
    guard_files.extend(found.signers.clone());
    guard_files.extend(found.launcher.clone());
    guard_files.extend(hook_bins.iter().cloned());
    guard_files.extend(found.managed().map(|m| m.settings.clone()));
    guard_files.sort();
    guard_files.dedup();
    let writable: Vec<PathBuf> = match &found.user {
        Some(u) if u.uid != 0 => guard_files
            .iter()
            .filter(|f| f.exists() && perm::can_change(u, f))
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    let who = who(found.user.as_ref());
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
    writable
}

fn check_record(found: &InForce, report: &mut Report) {
    let db = &found.db;
    let who = who(found.user.as_ref());
    let record_ok = found.user.as_ref().is_none_or(|u| perm::can_change(u, db));
    report.add(
        if record_ok { Level::Ok } else { Level::Warn },
        format!("the record goes to {} (and each row to the system log)", db.display()),
        if record_ok {
            String::new()
        } else {
            format!("{who} cannot write it: refusals are not recorded and overrides not honoured; let {who} write {}", db.display())
        },
    );
    record::check(db, &found.catalog, report);
}

/// Hardened only when checked for a known, unprivileged user.
fn mode(found: &InForce, report: &mut Report) -> &'static str {
    let hardened = found.managed().is_some()
        && found.writable.is_empty()
        && found.user.as_ref().is_some_and(|u| u.uid != 0);
    let mode = if hardened {
        "hardened"
    } else if found.installed.is_empty() {
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
    mode
}

fn print_json(
    found: &InForce,
    report: &Report,
    mode: &str,
    modes: Option<&crate::catalog::Modes>,
    sound: bool,
    trusted: &[trust::Entry],
) {
    let enforcement = modes.map(|m| {
        let map = |set: &mut dyn Iterator<Item = (&str, crate::catalog::Mode)>| {
            set.map(|(k, v)| (k.to_string(), json!(v.as_str())))
                .collect::<serde_json::Map<_, _>>()
        };
        let rules = &mut m.rules.iter().map(|&(r, v)| (r.id(), v));
        let modules = &mut m.modules.iter().map(|(n, v)| (n.as_str(), *v));
        json!({
            "default": m.default.unwrap_or(crate::catalog::Mode::Enforce).as_str(),
            "rules": map(rules), "modules": map(modules),
        })
    });
    let object = json!({
        "sound": sound,
        "mode": mode,
        "enforcement": enforcement,
        "user": found.user.as_ref().map(|u| u.name.clone()),
        "paths": {
            "catalog": found.catalog, "rules": found.rules, "compiled_index": found.index,
            "db": found.db, "binary": std::env::current_exe().ok(),
            "allowed_signers": found.signers,
            "launcher_binary": found.launcher,
        },
        "agents": found.installed.iter().map(|i| json!({
            "agent": i.agent, "scope": i.scope, "settings": i.settings, "command": i.command,
        })).collect::<Vec<_>>(),
        "writable_by_user": found.writable,
        "trusted_files": trust::json(trusted),
        "findings": report.findings.iter().map(|f| json!({
            "level": f.level.name(), "what": f.what, "fix": f.fix,
        })).collect::<Vec<_>>(),
    });
    outln!("{object}");
}

fn print_text(report: &Report, mode: &str, sound: bool, trusted: &[trust::Entry]) {
    outln!("mode: {mode}");
    for f in &report.findings {
        outln!("{:<4}  {}", f.level.name(), f.what);
        if !f.fix.is_empty() {
            outln!("      fix: {}", f.fix);
        }
    }
    trust::print(trusted);
    outln!(
        "{}",
        if sound {
            "sound"
        } else {
            "NOT sound: the guard cannot work as set up"
        }
    );
}
