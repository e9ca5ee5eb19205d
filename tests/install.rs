//! `install`/`uninstall` merge the guard's hooks into an agent's settings and undo it;
//! `catalog compile` writes the index a hook only reads; `doctor` reports a sound setup
//! and fails a broken one, naming what is wrong.

use serde_json::{Value, json};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mesh-guard"))
}

fn example_catalog() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/catalog.toml")
}

/// mesh-guard with a HOME of its own and none of the caller's guard settings.
fn guard(home: &Path) -> Command {
    let mut command = Command::new(bin());
    command
        .env("HOME", home)
        .current_dir(home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("SUDO_USER")
        .env_remove("MESH_GUARD_CATALOG")
        .env_remove("MESH_GUARD_RULES")
        .env_remove("MESH_GUARD_BIN")
        .env("MESH_GUARD_DB", home.join("audit.db"));
    command
}

fn text(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

fn backups(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains("settings.json.bak-"))
        .collect();
    found.sort();
    found
}

fn ours(settings: &Value, event: &str) -> usize {
    settings["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .filter(|h| {
            h["command"]
                .as_str()
                .is_some_and(|c| c.contains("mesh-guard") && c.contains("--agent claude"))
        })
        .count()
}

fn existing_settings() -> Value {
    json!({
        "model": "opus",
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/opt/audit-bash"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
        }
    })
}

#[test]
fn install_merges_keeps_a_backup_and_is_idempotent_and_uninstall_undoes_it() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".claude");
    fs::create_dir_all(&dir).unwrap();
    let settings = dir.join("settings.json");
    let before = serde_json::to_string_pretty(&existing_settings()).unwrap();
    fs::write(&settings, &before).unwrap();

    let out = guard(home.path())
        .args(["install", "claude"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let after = read_json(&settings);
    assert_eq!(after["model"], "opus");
    assert_eq!(after["permissions"], existing_settings()["permissions"]);
    assert_eq!(after["hooks"]["Stop"], existing_settings()["hooks"]["Stop"]);
    assert_eq!(
        after["hooks"]["PreToolUse"][0],
        existing_settings()["hooks"]["PreToolUse"][0]
    );
    assert_eq!(
        after["hooks"]["PreToolUse"][1]["matcher"],
        "Bash|Write|Edit|MultiEdit|NotebookEdit"
    );
    assert_eq!(
        (ours(&after, "PreToolUse"), ours(&after, "SessionStart")),
        (1, 1)
    );
    let command = after["hooks"]["PreToolUse"][1]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    let canonical = fs::canonicalize(bin()).unwrap();
    assert!(
        command.starts_with(&shell_words::quote(&canonical.to_string_lossy()).into_owned()),
        "the hook names this binary by absolute path: {command}"
    );
    let first_backups = backups(&dir);
    assert_eq!(first_backups.len(), 1, "{}", text(&out));
    assert_eq!(fs::read_to_string(&first_backups[0]).unwrap(), before);

    // Twice: nothing added twice, nothing rewritten.
    let written = fs::read_to_string(&settings).unwrap();
    let out = guard(home.path())
        .args(["install", "claude"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(fs::read_to_string(&settings).unwrap(), written);
    assert_eq!(backups(&dir).len(), 1);

    let out = guard(home.path())
        .args(["uninstall", "claude"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(read_json(&settings), existing_settings());
    assert_eq!(backups(&dir).len(), 2);
}

#[test]
fn project_scope_writes_the_projects_settings_and_claude_config_dir_moves_the_users() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    fs::create_dir_all(&project).unwrap();
    let out = guard(home.path())
        .current_dir(&project)
        .args(["install", "claude", "--scope", "project"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let settings = read_json(&project.join(".claude/settings.json"));
    assert_eq!(
        (
            ours(&settings, "PreToolUse"),
            ours(&settings, "SessionStart")
        ),
        (1, 1)
    );
    assert!(!home.path().join(".claude/settings.json").exists());

    let config = home.path().join("config");
    let out = guard(home.path())
        .env("CLAUDE_CONFIG_DIR", &config)
        .args(["install", "claude"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        ours(&read_json(&config.join("settings.json")), "PreToolUse"),
        1
    );
}

#[test]
fn settings_that_are_not_json_are_left_alone() {
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".claude/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    fs::write(&settings, "{ not json").unwrap();
    let out = guard(home.path())
        .args(["install", "claude"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not valid JSON"),
        "{}",
        text(&out)
    );
    assert_eq!(fs::read_to_string(&settings).unwrap(), "{ not json");
}

/// The `n`th `json` block of docs/agents/<agent>.md.
fn doc_json(agent: &str, n: usize) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("docs/agents/{agent}.md"));
    let text = fs::read_to_string(path).unwrap();
    let block = text
        .split("```json\n")
        .nth(n + 1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    serde_json::from_str(block).unwrap()
}

#[test]
fn other_agents_get_the_configuration_their_page_documents() {
    let home = tempfile::tempdir().unwrap();
    let canonical = fs::canonicalize(bin()).unwrap();
    for (agent, file, block) in [
        ("gemini", ".gemini/settings.json", 0),
        ("codex", ".codex/hooks.json", 0),
        ("copilot", ".copilot/hooks/mesh-guard.json", 0),
        ("cursor", ".cursor/hooks.json", 1),
    ] {
        // No record given: the page's commands name none.
        let out = guard(home.path())
            .env_remove("MESH_GUARD_DB")
            .args(["install", agent])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{agent}: {}", text(&out));
        let path = home.path().join(file);
        let written = fs::read_to_string(&path).unwrap();
        // The page says `mesh-guard`; the install names the binary by absolute path.
        let as_documented: Value =
            serde_json::from_str(&written.replace(&canonical.display().to_string(), "mesh-guard"))
                .unwrap();
        assert_eq!(as_documented, doc_json(agent, block), "{agent}");
        let out = guard(home.path())
            .env_remove("MESH_GUARD_DB")
            .args(["install", agent])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            written,
            "{agent}: not idempotent"
        );
        let out = guard(home.path())
            .args(["uninstall", agent])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{agent}: {}", text(&out));
        let left = read_json(&path);
        assert!(
            !left.to_string().contains("mesh-guard"),
            "{agent}: uninstall left {left}"
        );
    }
    let out = guard(home.path())
        .args(["install", "vim"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown agent `vim`"));
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

#[test]
fn managed_scope_installs_root_owned_system_files_and_names_them_in_the_hook() {
    let home = tempfile::tempdir().unwrap();
    let system = home.path().join("etc-mesh-guard");
    let managed = home.path().join("managed-settings.json");
    let sys_bin = home.path().join("bin/mesh-guard");
    fs::create_dir_all(sys_bin.parent().unwrap()).unwrap();
    fs::copy(bin(), &sys_bin).unwrap();
    let install = |bin_path: &Path| {
        guard(home.path())
            .arg("--catalog")
            .arg(example_catalog())
            .args(["install", "claude", "--scope", "managed", "--bin"])
            .arg(bin_path)
            .arg("--settings")
            .arg(&managed)
            .arg("--system-dir")
            .arg(&system)
            .output()
            .unwrap()
    };
    if !is_root() {
        let out = install(&sys_bin);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(String::from_utf8_lossy(&out.stderr).contains("run it as root"));
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    // A binary others may replace cannot be the hardened hook's.
    fs::set_permissions(&sys_bin, fs::Permissions::from_mode(0o777)).unwrap();
    let out = install(&sys_bin);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("is writable by its group or by others (mode 777)"),
        "{}",
        text(&out)
    );
    assert!(!managed.exists());

    fs::set_permissions(&sys_bin, fs::Permissions::from_mode(0o755)).unwrap();
    let out = install(&sys_bin);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let settings = read_json(&managed);
    let command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    let sys_bin = fs::canonicalize(&sys_bin).unwrap();
    let system = fs::canonicalize(&system).unwrap();
    assert_eq!(
        command,
        format!(
            "{} --catalog {} --rules {} --db {} hook --agent claude || {{ s=$?; [ \"$s\" -eq 2 ] || echo \"Decided by mesh-guard, not an error: do not retry or work round it. Tell the operator: mesh-guard could not run (exit $s), so it refuses every command until it can.\" >&2; exit 2; }}",
            sys_bin.display(),
            system.join("catalog.toml").display(),
            system.join("rules").display(),
            home.path().join("audit.db").display()
        )
    );
    assert_eq!(
        fs::read(system.join("catalog.toml")).unwrap(),
        fs::read(example_catalog()).unwrap()
    );
    assert!(system.join("catalog.toml.idx").is_file());
    let mode = fs::metadata(&managed).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
}

#[test]
fn catalog_compile_writes_the_index_a_hook_only_reads() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog.toml");
    fs::copy(example_catalog(), &catalog).unwrap();
    let out = guard(dir.path())
        .arg("--catalog")
        .arg(&catalog)
        .args(["catalog", "compile"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let index = dir.path().join("catalog.toml.idx");
    let compiled = fs::read(&index).unwrap();

    // The catalog changes after the index was made: a hook decides from the catalog
    // itself (a new machine is refused) and leaves the operator's index alone.
    let mut text_catalog = fs::read_to_string(&catalog).unwrap();
    text_catalog.push_str("\n[[machine]]\nname = \"zeus\"\n");
    fs::write(&catalog, text_catalog).unwrap();
    let check = guard(dir.path())
        .arg("--catalog")
        .arg(&catalog)
        .args(["check", "ssh zeus uptime"])
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    assert_eq!(
        fs::read(&index).unwrap(),
        compiled,
        "a check rewrote the index"
    );
    assert!(
        !dir.path().join("catalog-cache").exists(),
        "a user cache was written"
    );

    fs::write(&catalog, "version = 1\n[[machine]]\nnom = \"x\"\n").unwrap();
    let out = guard(dir.path())
        .arg("--catalog")
        .arg(&catalog)
        .args(["catalog", "compile"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&catalog.display().to_string()));
}

fn doctor(home: &Path, catalog: &Path) -> Output {
    guard(home)
        .env("MESH_GUARD_BIN", bin())
        .arg("--catalog")
        .arg(catalog)
        .args(["doctor", "--json"])
        .output()
        .unwrap()
}

#[test]
fn doctor_passes_a_sound_user_level_setup_and_says_it_is_user_level() {
    let home = tempfile::tempdir().unwrap();
    let out = guard(home.path())
        .args(["install", "claude"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = doctor(home.path(), &example_catalog());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["sound"], true);
    assert_eq!(report["mode"], "user-level");
    assert_eq!(report["agents"][0]["agent"], "claude");
    assert_eq!(report["agents"][0]["scope"], "user");
    // The launcher looks in fixed places only: the variable names nothing it would run.
    assert_ne!(
        report["paths"]["launcher_binary"],
        bin().display().to_string()
    );
    assert_eq!(
        report["paths"]["db"],
        home.path().join("audit.db").display().to_string()
    );
}

#[test]
fn doctor_fails_a_missing_catalog_naming_its_path_and_says_how_to_fix_it() {
    let home = tempfile::tempdir().unwrap();
    guard(home.path())
        .args(["install", "claude"])
        .output()
        .unwrap();
    let missing = home.path().join("nowhere/catalog.toml");
    let out = doctor(home.path(), &missing);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let failed: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["level"] == "fail")
        .collect();
    assert_eq!(failed.len(), 1, "{report:#}");
    let what = failed[0]["what"].as_str().unwrap();
    assert!(what.contains(&missing.display().to_string()), "{what}");
    assert!(failed[0]["fix"].as_str().unwrap().contains("catalog check"));

    // The text form names it too.
    let out = guard(home.path())
        .env("MESH_GUARD_BIN", bin())
        .arg("--catalog")
        .arg(&missing)
        .arg("doctor")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&missing.display().to_string()));
}

#[test]
fn doctor_fails_when_no_agent_has_the_hooks() {
    let home = tempfile::tempdir().unwrap();
    let out = doctor(home.path(), &example_catalog());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["mode"], "none");
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["level"] == "fail" && f["what"] == "no agent has the guard's hooks"),
        "{report:#}"
    );
}

/// The README's own user-level setup: hooks naming a bare `mesh-guard`, the binary on the
/// agent's `PATH`. Doctor looks the name up as the agent's shell would (its own `PATH` stands
/// in for the agent's) and, with no plugin installed, does not judge the plugin's launcher.
#[test]
fn doctor_finds_a_bare_mesh_guard_on_path_as_the_agent_would() {
    let home = tempfile::tempdir().unwrap();
    let bin_dir = home.path().join("tools");
    fs::create_dir_all(&bin_dir).unwrap();
    fs::copy(bin(), bin_dir.join("mesh-guard")).unwrap();
    let settings = home.path().join(".claude/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let readme =
        fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let block = readme
        .split("```json\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    fs::write(&settings, block).unwrap();
    let findings = |path: &str| {
        let out = guard(home.path())
            .env("PATH", path)
            .arg("--catalog")
            .arg(example_catalog())
            .args(["doctor", "--json"])
            .output()
            .unwrap();
        let report: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)));
        (out.status.code(), report)
    };
    let on_path = format!("{}:/usr/bin:/bin", bin_dir.display());
    let (code, report) = findings(&on_path);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["sound"], true, "{report:#}");
    assert!(
        !report.to_string().contains("launcher finds no mesh-guard"),
        "{report:#}"
    );

    // Not on PATH: the hook would run nothing (exit 127), which doctor says plainly.
    let (code, report) = findings("/usr/bin:/bin");
    assert_eq!(code, Some(1), "{report:#}");
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["level"] == "fail"
                && f["what"]
                    .as_str()
                    .unwrap()
                    .contains("`mesh-guard`, which is in no directory of PATH")),
        "{report:#}"
    );
}
