//! `install` and `uninstall` for every agent at every scope, on a scratch root: the file each
//! agent reads at that scope, merged with what is there, with a backup, idempotent, undone;
//! the hook's command line naming the catalog, rules and record `install` was given; the
//! session-start hook that hands the model the "instead of" table; and at the managed scope
//! each agent's machine-wide policy with the keys that keep the user from switching it off.

use serde_json::{Value, json};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const AGENTS: [&str; 5] = ["claude", "codex", "gemini", "copilot", "cursor"];

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mesh-guard"))
}

fn example_catalog() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/catalog.toml")
}

fn text(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

struct Scratch {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    root: PathBuf,
    catalog: PathBuf,
    rules: PathBuf,
    db: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let (home, project, root) = (base.join("home"), base.join("project"), base.join("root"));
        for d in [&home, &project, &root] {
            fs::create_dir_all(d).unwrap();
        }
        // Paths with a space: the hook's command line must quote them.
        let catalog = base.join("ops catalog.toml");
        fs::copy(example_catalog(), &catalog).unwrap();
        let rules = base.join("ops rules");
        fs::create_dir_all(&rules).unwrap();
        Scratch {
            db: base.join("records/audit.db"),
            _dir: dir,
            home,
            project,
            root,
            catalog,
            rules,
        }
    }

    /// mesh-guard given a catalog, rules and record, with none of the caller's settings.
    fn guard(&self, args: &[&str]) -> Output {
        let mut command = Command::new(bin());
        command
            .env("HOME", &self.home)
            .current_dir(&self.project)
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("COPILOT_HOME")
            .env_remove("MESH_GUARD_CATALOG")
            .env_remove("MESH_GUARD_RULES")
            .env_remove("MESH_GUARD_DB")
            .arg("--catalog")
            .arg(&self.catalog)
            .arg("--rules")
            .arg(&self.rules)
            .arg("--db")
            .arg(&self.db)
            .args(args);
        command.output().unwrap()
    }

    /// The file `agent` reads at `scope`, here.
    fn file(&self, agent: &str, scope: &str) -> PathBuf {
        let relative = match (agent, scope) {
            ("claude", "user") => ".claude/settings.json",
            ("claude", "project") => ".claude/settings.json",
            ("claude", _) => "etc/claude-code/managed-settings.json",
            ("codex", "managed") => "etc/codex/requirements.toml",
            ("codex", _) => ".codex/hooks.json",
            ("gemini", "managed") => "etc/gemini-cli/settings.json",
            ("gemini", _) => ".gemini/settings.json",
            ("copilot", "user") => ".copilot/hooks/mesh-guard.json",
            ("copilot", "project") => ".github/hooks/mesh-guard.json",
            ("copilot", _) => "etc/github-copilot/policy.d/mesh-guard.json",
            ("cursor", "managed") => "etc/cursor/hooks.json",
            ("cursor", _) => ".cursor/hooks.json",
            _ => unreachable!(),
        };
        let base = match scope {
            "user" => &self.home,
            "project" => &self.project,
            _ => &self.root,
        };
        base.join(relative)
    }
}

fn read(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap();
    if path.extension().is_some_and(|e| e == "toml") {
        serde_json::to_value(toml::from_str::<toml::Table>(&text).unwrap()).unwrap()
    } else {
        serde_json::from_str(&text).unwrap()
    }
}

fn write(path: &Path, doc: &Value) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let text = if path.extension().is_some_and(|e| e == "toml") {
        toml::to_string(doc).unwrap()
    } else {
        serde_json::to_string_pretty(doc).unwrap()
    };
    fs::write(path, text).unwrap();
}

/// Every hook command in a settings document: (event, command).
fn commands(doc: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (event, groups) in doc["hooks"].as_object().into_iter().flatten() {
        for group in groups.as_array().into_iter().flatten() {
            let inner = group["hooks"].as_array().cloned().unwrap_or_default();
            for hook in inner.iter().chain(Some(group)) {
                if let Some(c) = hook
                    .get("command")
                    .or(hook.get("bash"))
                    .and_then(Value::as_str)
                {
                    found.push((event.clone(), c.to_string()));
                }
            }
        }
    }
    found
}

/// What another tool already keeps there: a key and a hook of its own, in the agent's shape.
fn existing(agent: &str) -> Value {
    let other = "/opt/audit/log-tool-use";
    match agent {
        "copilot" => {
            json!({"version": 1, "hooks": {"postToolUse": [{"type": "command", "bash": other}]}})
        }
        "cursor" => json!({"version": 1, "hooks": {"afterFileEdit": [{"command": other}]}}),
        _ => {
            json!({"model": "house-model", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": other}]}]}})
        }
    }
}

fn backups(path: &Path) -> usize {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    fs::read_dir(path.parent().unwrap())
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{name}.bak-"))
        })
        .count()
}

#[test]
fn every_agent_at_every_scope_round_trips_and_names_what_it_was_given() {
    let s = Scratch::new();
    let sys_bin = s.root.join("usr/local/bin/mesh-guard");
    fs::create_dir_all(sys_bin.parent().unwrap()).unwrap();
    fs::copy(bin(), &sys_bin).unwrap();
    let q = |p: &Path| shell_words::quote(&p.to_string_lossy()).into_owned();
    for agent in AGENTS {
        for scope in ["user", "project", "managed"] {
            let context = format!("{agent} --scope {scope}");
            let file = s.file(agent, scope);
            write(&file, &existing(agent));
            // Copilot drops a session-start hook's output: its table goes in the instructions
            // file it reads at the start of every session, beside what is there.
            let instructions = match (agent, scope) {
                ("copilot", "user") => Some(s.home.join(".copilot/copilot-instructions.md")),
                ("copilot", "project") => Some(s.project.join(".github/copilot-instructions.md")),
                _ => None,
            };
            let house = "# House rules\n\nBe kind to the build.\n";
            if let Some(path) = &instructions {
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(path, house).unwrap();
            }
            let mut args = vec!["install", agent, "--scope", scope];
            let root = s.root.to_string_lossy().into_owned();
            let sys = sys_bin.to_string_lossy().into_owned();
            if scope == "managed" {
                args.extend(["--root", &root, "--bin", &sys, "--managed-hooks-only"]);
            }
            let out = s.guard(&args);
            assert_eq!(out.status.code(), Some(0), "{context}: {}", text(&out));
            let doc = read(&file);
            for (key, value) in existing(agent).as_object().unwrap() {
                if key != "hooks" {
                    assert_eq!(&doc[key], value, "{context}: {key} kept");
                }
            }
            let all = commands(&doc);
            assert!(
                all.iter().any(|(_, c)| c == "/opt/audit/log-tool-use"),
                "{context}: the other hook kept: {doc:#}"
            );
            let ours: Vec<&(String, String)> = all
                .iter()
                .filter(|(_, c)| c.contains("mesh-guard"))
                .collect();
            let hooks = ours
                .iter()
                .filter(|(_, c)| c.contains(" hook --agent "))
                .count();
            let starts = ours
                .iter()
                .filter(|(_, c)| c.contains(" session-start --agent "))
                .count();
            assert!(hooks >= 1, "{context}: no pre-tool hook: {doc:#}");
            assert_eq!(starts, 1, "{context}: one session-start hook: {doc:#}");
            // The paths it was given, on every command: a hook reads no variable for them.
            let (catalog, rules) = if scope == "managed" {
                (
                    PathBuf::from("/etc/mesh-guard/catalog.toml"),
                    PathBuf::from("/etc/mesh-guard/rules"),
                )
            } else {
                (s.catalog.clone(), s.rules.clone())
            };
            for (event, command) in &ours {
                for (option, path) in [("catalog", &catalog), ("rules", &rules), ("db", &s.db)] {
                    assert!(
                        command.contains(&format!(" --{option} {} ", q(path))),
                        "{context}: {event}'s command does not name --{option} {}: {command}",
                        path.display()
                    );
                    assert!(command.contains(&format!(" --agent {agent}")), "{command}");
                }
                if scope == "managed" {
                    assert!(command.starts_with(&q(&sys_bin)), "{context}: {command}");
                }
            }
            assert_eq!(backups(&file), 1, "{context}: one backup of what was there");
            if scope == "managed" {
                let mode = fs::metadata(&file).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o644, "{context}");
                assert_eq!(
                    fs::read(s.root.join("etc/mesh-guard/catalog.toml")).unwrap(),
                    fs::read(&s.catalog).unwrap(),
                    "{context}: the catalog copied into the system directory"
                );
                match agent {
                    "claude" => assert_eq!(doc["allowManagedHooksOnly"], true, "{context}"),
                    "codex" => {
                        assert_eq!(doc["allow_managed_hooks_only"], true, "{context}");
                        assert_eq!(doc["features"]["hooks"], true, "{context}");
                        assert_eq!(doc["hooks"]["managed_dir"], "/etc/mesh-guard", "{context}");
                    }
                    "gemini" => assert_eq!(doc["hooksConfig"]["enabled"], true, "{context}"),
                    _ => {}
                }
            }

            if let Some(path) = &instructions {
                let text = fs::read_to_string(path).unwrap();
                assert!(text.starts_with(house), "{context}: {text}");
                assert!(
                    text.contains("| `ssh <machine> journalctl` |"),
                    "{context}: no table: {text}"
                );
            }
            // Again: nothing added twice, nothing rewritten.
            let written = fs::read(&file).unwrap();
            let told = instructions.as_ref().map(|p| fs::read(p).unwrap());
            let out = s.guard(&args);
            assert_eq!(out.status.code(), Some(0), "{context}: {}", text(&out));
            assert_eq!(
                fs::read(&file).unwrap(),
                written,
                "{context}: not idempotent"
            );
            assert_eq!(
                instructions.as_ref().map(|p| fs::read(p).unwrap()),
                told,
                "{context}: the instructions not idempotent"
            );
            assert_eq!(backups(&file), 1, "{context}");

            let mut undo = vec!["uninstall", agent, "--scope", scope];
            if scope == "managed" {
                undo.extend(["--root", &root]);
            }
            let out = s.guard(&undo);
            assert_eq!(out.status.code(), Some(0), "{context}: {}", text(&out));
            let left = read(&file);
            assert!(
                commands(&left)
                    .iter()
                    .all(|(_, c)| !c.contains("mesh-guard")),
                "{context}: uninstall left {left:#}"
            );
            if scope != "managed" {
                assert_eq!(left, existing(agent), "{context}: uninstall undoes install");
            }
            if let Some(path) = &instructions {
                assert_eq!(fs::read_to_string(path).unwrap(), house, "{context}");
            }
        }
    }
}

#[test]
fn the_managed_scope_without_a_staging_root_wants_root() {
    if fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false)
    {
        return; // Root may write the real system files; this test must not.
    }
    let s = Scratch::new();
    for agent in AGENTS {
        let out = s.guard(&["install", agent, "--scope", "managed"]);
        assert_eq!(out.status.code(), Some(2), "{agent}: {}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("run it as root"),
            "{agent}: {}",
            text(&out)
        );
    }
}

#[test]
fn a_hook_installed_at_the_user_scope_reads_the_catalog_it_was_given() {
    // The catalog given is not the default one: a hook that read the default would pass
    // `ssh atlas`, since the default catalog does not exist in this home.
    let s = Scratch::new();
    let out = s.guard(&["install", "codex"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc = read(&s.file("codex", "user"));
    let (_, command) = commands(&doc)
        .into_iter()
        .find(|(e, _)| e == "PreToolUse")
        .unwrap();
    let event = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "ssh atlas uptime"}, "session_id": "s", "cwd": s.project});
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(&command)
        .env("HOME", &s.home)
        .env_remove("MESH_GUARD_CATALOG")
        .env_remove("MESH_GUARD_DB")
        .current_dir(&s.project)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("mesh machine `atlas`"),
        "{}",
        text(&out)
    );
    assert!(s.db.exists(), "the refusal recorded where it was told");
}
