//! Layer 1 of the guard's self-protection (decision 0008): a guard variable in the hook's
//! environment that a file the agent can write also sets is never honoured, whatever wrote
//! the file; a write is judged by the file it leaves. Every case runs with a scratch HOME,
//! so no test reads the real home directory.

mod common;
use common::*;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A scratch home and project, with the project's work in a sub-directory.
struct Setup {
    dir: Scratch,
}

impl Setup {
    fn new(name: &str) -> Setup {
        let dir = Scratch::new(name);
        std::fs::create_dir_all(dir.path("home")).unwrap();
        std::fs::create_dir_all(dir.path("project/src/deep")).unwrap();
        Setup { dir }
    }
    fn home(&self) -> PathBuf {
        self.dir.path("home")
    }
    fn cwd(&self) -> PathBuf {
        self.dir.path("project/src/deep")
    }
    fn db(&self) -> PathBuf {
        self.dir.path("audit.db")
    }
    fn write(&self, name: &str, text: &str) -> PathBuf {
        self.dir.write(name, text)
    }

    /// The environment a session was started with: the guard's catalog and record, a
    /// scratch home, and `extra`.
    fn env(&self, extra: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
        let mut env = vec![
            (
                "MESH_GUARD_CATALOG",
                example_catalog().to_string_lossy().into_owned(),
            ),
            ("MESH_GUARD_DB", self.db().to_string_lossy().into_owned()),
            ("HOME", self.home().to_string_lossy().into_owned()),
            // Empty is unset to the guard: the caller's own must not leak in.
            ("CLAUDE_CONFIG_DIR", String::new()),
            ("CLAUDE_PROJECT_DIR", String::new()),
            ("ZDOTDIR", String::new()),
            ("XDG_CONFIG_HOME", String::new()),
            ("XDG_DATA_HOME", String::new()),
        ];
        for (k, v) in extra {
            env.retain(|(name, _)| name != k);
            env.push((k, v.to_string()));
        }
        env
    }

    fn event(&self, tool: &str, input: serde_json::Value) -> Vec<u8> {
        serde_json::json!({
            "session_id": "sess-ut",
            "transcript_path": "/tmp/t.jsonl",
            "cwd": self.cwd(),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": input,
            "tool_use_id": "toolu_ut",
        })
        .to_string()
        .into_bytes()
    }

    fn bash(&self, command: &str, extra: &[(&'static str, &str)]) -> Output {
        let event = self.event("Bash", serde_json::json!({"command": command}));
        run_env(&["hook"], &self.env(extra), &event)
    }

    fn tool(&self, tool: &str, input: serde_json::Value) -> Output {
        run_env(&["hook"], &self.env(&[]), &self.event(tool, input))
    }
}

/// (kind, rule, reason) of every recorded row, oldest first.
fn rows(db: &Path) -> Vec<(String, String, String)> {
    if !db.exists() {
        return Vec::new();
    }
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT kind, rule, reason FROM events ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

const OVERRIDE: &str = "MESH_GUARD_OVERRIDE";

#[test]
fn an_override_set_by_settings_local_above_the_cwd_is_refused_and_recorded_as_an_attempt() {
    let s = Setup::new("ut-local");
    s.write(
        "project/.claude/settings.local.json",
        r#"{"env":{"MESH_GUARD_OVERRIDE":"I need to debug atlas"}}"#,
    );
    let out = s.bash("ssh atlas uptime", &[(OVERRIDE, "I need to debug atlas")]);
    assert_eq!(out.code, 2, "refused: {}", out.stderr);
    let message = claude_denial(&out.stdout);
    assert!(
        message.contains("Tell the operator") && message.contains(".claude/settings.local.json"),
        "the message names the file, to the operator: {message}"
    );
    let rows = rows(&s.db());
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        rows[0].0, "override-attempt",
        "never an operator's override"
    );
    assert!(
        rows[0].2.starts_with("not honoured") && rows[0].2.contains("settings.local.json"),
        "the reason says where it came from: {}",
        rows[0].2
    );
}

#[test]
fn the_same_override_with_no_file_setting_it_is_the_operators_and_honoured() {
    let s = Setup::new("ut-real");
    // PATH lines and unrelated settings change nothing.
    s.write(
        "home/.bashrc",
        "export PATH=$HOME/bin:$PATH\nalias ll='ls -l'\n",
    );
    s.write(
        "project/.claude/settings.json",
        r#"{"env":{"RUST_LOG":"debug"},"permissions":{"allow":["Bash(cargo test)"]}}"#,
    );
    let out = s.bash("ssh atlas uptime", &[(OVERRIDE, "incident 42")]);
    assert_eq!(out.code, 0, "honoured: {}", out.stderr);
    let rows = rows(&s.db());
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].0.as_str(), rows[0].2.as_str()),
        ("override", "incident 42")
    );
}

#[test]
fn an_override_planted_in_a_startup_snippet_with_the_append_form_is_refused() {
    for (file, text) in [
        ("home/.bashrc.d/zz.sh", "export MESH_GUARD_OVERRIDE+=x\n"),
        (
            "home/.bash_aliases",
            "alias x=y\nexport MESH_GUARD_OVER\"\"RIDE=1\n",
        ),
        (
            "home/.config/environment.d/10-x.conf",
            "MESH_GUARD_OVERRIDE=x\n",
        ),
        (
            "home/.config/fish/config.fish",
            "set -gx MESH_GUARD_OVERRIDE x\n",
        ),
        ("project/.env", "MESH_GUARD_OVERRIDE=x\n"),
    ] {
        let s = Setup::new("ut-startup");
        s.write(file, text);
        let out = s.bash("ssh atlas uptime", &[(OVERRIDE, "x")]);
        assert_eq!(out.code, 2, "{file}: {}", out.stderr);
        let rows = rows(&s.db());
        assert_eq!(rows.len(), 1, "{file}");
        assert_eq!(rows[0].0, "override-attempt", "{file}");
    }
}

/// The scan lists the home directory once and probes only the names it holds: a snippet
/// folder whose startup file is absent, a dot file that is a symlink, a file one folder
/// down, and a home spelled with a trailing `/.` are all still found.
#[test]
fn an_override_planted_where_only_the_home_listing_shows_it_is_refused() {
    for (file, text, home_suffix) in [
        (
            "home/.zlogin.d/10-x.sh",
            "export MESH_GUARD_OVERRIDE=1\n",
            "",
        ),
        ("home/.gemini/.env", "MESH_GUARD_OVERRIDE=1\n", ""),
        ("elsewhere/pam", "MESH_GUARD_OVERRIDE DEFAULT=1\n", ""),
        (
            "home/.profile.d/x.sh",
            "export MESH_GUARD_OVERRIDE=1\n",
            "/.",
        ),
        ("home/.kshrc", "export MESH_GUARD_OVERRIDE=1\n", "/"),
    ] {
        let s = Setup::new("ut-listed");
        let planted = s.write(file, text);
        if file.starts_with("elsewhere/") {
            std::os::unix::fs::symlink(&planted, s.home().join(".pam_environment")).unwrap();
        }
        let home = format!("{}{home_suffix}", s.home().display());
        let out = s.bash("ssh atlas uptime", &[(OVERRIDE, "x"), ("HOME", &home)]);
        assert_eq!(out.code, 2, "{file}: {}", out.stderr);
        let rows = rows(&s.db());
        assert_eq!(rows.len(), 1, "{file}");
        assert_eq!(rows[0].0, "override-attempt", "{file}");
    }
}

#[test]
fn a_guard_variable_set_by_settings_env_refuses_every_command() {
    for (var, value) in [
        ("MESH_GUARD_BIN", "/bin/true"),
        ("MESH_GUARD_RULES", "/tmp/empty-rules"),
    ] {
        let s = Setup::new("ut-bin");
        s.write(
            "home/.claude/settings.json",
            &format!(r#"{{"env":{{"{var}":"{value}"}}}}"#),
        );
        // Even a command that reaches nothing: the guard's own setup is not to be trusted.
        let out = s.bash("ls -la", &[(var, value)]);
        assert_eq!(out.code, 2, "{var}: {}", out.stderr);
        assert!(claude_denial(&out.stdout).contains(var));
        let rows = rows(&s.db());
        assert_eq!(rows.len(), 1, "{var}");
        assert_eq!(rows[0].0, "override-attempt");
    }
}

#[test]
fn a_planted_catalog_is_not_used_and_a_planted_record_is_not_written() {
    let s = Setup::new("ut-db");
    let empty = s.write("empty.toml", "version = 1\n");
    let fake_db = s.dir.path("fake.db");
    s.write(
        "project/.claude/settings.local.json",
        &format!(
            r#"{{"env":{{"MESH_GUARD_CATALOG":"{}","MESH_GUARD_DB":"{}"}}}}"#,
            empty.display(),
            fake_db.display()
        ),
    );
    let out = s.bash(
        "ssh atlas uptime",
        &[
            ("MESH_GUARD_CATALOG", &empty.to_string_lossy()),
            ("MESH_GUARD_DB", &fake_db.to_string_lossy()),
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(!fake_db.exists(), "the agent's record is not the record");
    let real = s.home().join(".local/share/mesh-guard/audit.db");
    let rows = rows(&real);
    assert_eq!(rows.len(), 1, "recorded where the operator looks");
    assert_eq!(rows[0].0, "override-attempt");
}

/// The planted catalog is not read for anything, not even for where the attempt's row is
/// forwarded (`[record] syslog`): one that forwards to a socket of the agent's is ignored.
#[test]
fn a_planted_catalog_does_not_say_where_the_attempt_is_forwarded() {
    let s = Setup::new("ut-syslog");
    let socket = s.dir.path("agent.sock");
    let listener = std::os::unix::net::UnixDatagram::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    let planted = s.write(
        "planted.toml",
        &format!(
            "version = 1\n[record]\nsyslog = \"unix:{}\"\n",
            socket.display()
        ),
    );
    s.write(
        "project/.claude/settings.local.json",
        &format!(
            r#"{{"env":{{"MESH_GUARD_CATALOG":"{}"}}}}"#,
            planted.display()
        ),
    );
    let out = s.bash(
        "ssh atlas uptime",
        &[("MESH_GUARD_CATALOG", &planted.to_string_lossy())],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    let mut buf = [0u8; 4096];
    assert!(
        listener.recv(&mut buf).is_err(),
        "the row went where the planted catalog said"
    );
    let rows = rows(&s.db());
    assert_eq!(rows.len(), 1, "recorded where the operator looks");
    assert_eq!(rows[0].0, "override-attempt");
}

#[test]
fn a_two_step_edit_is_judged_by_the_file_it_leaves() {
    let s = Setup::new("ut-edit");
    let rc = s.home().join(".bashrc");
    // Step one writes another variable: it sets nothing of the guard's, and passes.
    let first = s.tool(
        "Write",
        serde_json::json!({"file_path": rc, "content": "export PATH=$PATH:/opt\nexport MESH_GUARD_OVERRIDE_X=1\n"}),
    );
    assert_eq!(first.code, 0, "{}", first.stderr);
    std::fs::write(
        &rc,
        "export PATH=$PATH:/opt\nexport MESH_GUARD_OVERRIDE_X=1\n",
    )
    .unwrap();
    // Step two's own text names no guard variable, but the file it leaves sets one.
    let second = s.tool(
        "Edit",
        serde_json::json!({"file_path": rc, "old_string": "_X=1", "new_string": "=1"}),
    );
    assert_eq!(second.code, 2, "{}", second.stderr);
    let multi = s.tool(
        "MultiEdit",
        serde_json::json!({"file_path": rc, "edits": [
            {"old_string": "OVERRIDE_X", "new_string": "OVERRIDE_Y"},
            {"old_string": "_Y=", "new_string": "+="},
        ]}),
    );
    assert_eq!(multi.code, 2, "{}", multi.stderr);
    // An ordinary edit of the same file passes.
    let path_line = s.tool(
        "Edit",
        serde_json::json!({"file_path": rc, "old_string": "/opt", "new_string": "/opt/bin"}),
    );
    assert_eq!(path_line.code, 0, "{}", path_line.stderr);
}

#[test]
fn reading_settings_and_ordinary_work_pass_with_no_file_read_for_them() {
    let s = Setup::new("ut-ordinary");
    s.write(
        "project/.claude/settings.local.json",
        r#"{"env":{"MESH_GUARD_OVERRIDE":"x"}}"#,
    );
    for command in [
        "cat ../../.claude/settings.local.json",
        "cargo build && rm -rf target/",
        "grep -r MESH_GUARD_OVERRIDE ~/.bashrc",
    ] {
        // No override in this session's environment: the planted file is only data.
        let out = s.bash(command, &[]);
        assert_eq!(out.code, 0, "{command}: {}", out.stderr);
    }
    let read = s.tool(
        "Read",
        serde_json::json!({"file_path": s.dir.path("project/.claude/settings.local.json")}),
    );
    assert_eq!(read.code, 0);
    assert!(rows(&s.db()).is_empty());
}

#[test]
fn session_start_records_a_planted_override_as_an_attempt() {
    let s = Setup::new("ut-start");
    s.write("home/.profile", "export MESH_GUARD_OVERRIDE=later\n");
    let event = serde_json::json!({"session_id": "sess-ut", "cwd": s.cwd(), "hook_event_name": "SessionStart"});
    let out = run_env(
        &["session-start"],
        &s.env(&[(OVERRIDE, "later")]),
        event.to_string().as_bytes(),
    );
    assert_eq!(out.code, 0);
    let rows = rows(&s.db());
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].0, "override-attempt");
}

/// The plugin's launcher, run as Claude Code runs it: it must not run a planted binary.
fn launcher(s: &Setup, bin: &str) -> (i32, String) {
    let launcher = Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin/bin/mesh-guard");
    let out = Command::new("sh")
        .arg(&launcher)
        .arg("--version")
        .current_dir(s.cwd())
        .env("HOME", s.home())
        .env("MESH_GUARD_BIN", bin)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("MESH_GUARD_LAUNCHER_ACTIVE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn the_launcher_refuses_a_mesh_guard_bin_set_by_a_settings_file() {
    let s = Setup::new("ut-launcher");
    // A stand-in that would say it ran.
    let fake = s.write("fake-guard", "#!/bin/sh\necho FAKE-RAN\nexit 0\n");
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let fake = fake.to_string_lossy().into_owned();
    // The operator's own choice, set by no file, runs.
    let (code, text) = launcher(&s, &fake);
    assert_eq!((code, text.trim()), (0, "FAKE-RAN"));
    s.write(
        "project/.claude/settings.local.json",
        &format!(r#"{{"env":{{"MESH_GUARD_BIN":"{fake}"}}}}"#),
    );
    let (code, text) = launcher(&s, &fake);
    assert_eq!(code, 2, "{text}");
    assert!(!text.contains("FAKE-RAN"), "the planted binary ran: {text}");
    assert!(text.contains("settings.local.json"), "{text}");
}

/// Decision 0031: the catalog's and the record's variables are checked when what they name
/// is about to be used. A planted file that any scan would find proves which calls scan:
/// a command that needs neither passes without looking (no file of the scan is read, or
/// the planted one would refuse it), and every use still refuses.
#[test]
fn a_planted_catalog_or_record_is_refused_when_used_and_costs_a_plain_command_nothing() {
    let s = Setup::new("ut-deferred");
    let empty = s.write("empty.toml", "version = 1\n");
    let fake_db = s.dir.path("fake.db");
    let (empty_text, fake_text) = (empty.to_string_lossy(), fake_db.to_string_lossy());
    s.write(
        "project/.claude/settings.local.json",
        &format!(r#"{{"env":{{"MESH_GUARD_CATALOG":"{empty_text}"}}}}"#),
    );
    let catalog = [("MESH_GUARD_CATALOG", &*empty_text)];
    for command in [
        "ls -la",
        "true",
        "cargo build --release 2>&1 | tail -n 20 && git status --short",
    ] {
        let out = s.bash(command, &catalog);
        assert_eq!(out.code, 0, "{command}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{command}: a pass says nothing");
    }
    assert!(rows(&s.db()).is_empty(), "nothing recorded for a pass");
    // Needs the catalog: refused, and recorded as an attempt where the operator looks.
    let out = s.bash("ssh atlas uptime", &catalog);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(claude_denial(&out.stdout).contains("MESH_GUARD_CATALOG"));
    // Writes a file: the list of the guard's files, which names the catalog, decides
    // whether it is one of them, so the variable is checked even for a harmless path.
    for command in ["rm -rf build/", "rm -rf ~/.local/share/mesh-guard"] {
        let out = s.bash(command, &catalog);
        assert_eq!(out.code, 2, "{command}: {}", out.stderr);
        assert!(claude_denial(&out.stdout).contains("MESH_GUARD_CATALOG"));
    }
    let kinds: Vec<String> = rows(&s.db()).into_iter().map(|r| r.0).collect();
    assert_eq!(kinds, ["override-attempt"; 3]);

    // A planted record: a plain command passes; a refusal is not written where it says.
    let s = Setup::new("ut-deferred-db");
    s.write(
        "home/.claude/settings.json",
        &format!(r#"{{"env":{{"MESH_GUARD_DB":"{fake_text}"}}}}"#),
    );
    let record = [("MESH_GUARD_DB", &*fake_text)];
    assert_eq!(s.bash("ls -la", &record).code, 0);
    let out = s.bash("echo '{}' > ~/.claude/settings.json", &record);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(claude_denial(&out.stdout).contains("MESH_GUARD_DB"));
    assert!(!fake_db.exists(), "the agent's record is not the record");
    let real = s.home().join(".local/share/mesh-guard/audit.db");
    assert_eq!(rows(&real).len(), 1, "recorded where the operator looks");
}
