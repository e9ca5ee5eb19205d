//! End-to-end: the hardened install (`install claude --scope managed`) against an agent
//! that tries to switch the guard off, with the real Claude Code CLI run as an
//! unprivileged user.
//!
//! As root, the test installs a root-owned copy of mesh-guard, the example catalog and the
//! managed settings. `/etc/claude-code` and `/etc/mesh-guard` are the sandbox's own
//! directories, bind-mounted in a private mount namespace (`unshare --mount`), so the
//! machine's real policy files are neither read nor changed. Then a scripted model, as
//! the user `meshguard-agent` (created when absent), tries every way round the guard
//! the issue lists, and finally runs `ssh atlas uptime`, whose `ssh` is a stub that
//! leaves a marker file. The marker must not appear, and the refusals must be recorded.
//! A plain override planted in the user's settings, and a copied grant past its expiry, are
//! refused; a session started with the operator's signed grant runs the command
//! (decision 0058). The agent's home is the user database's (`usermod -d`), as the hook
//! takes it (decision 0059).
//!
//! Needs root, `unshare`, `runuser`, `useradd` and the CLI (`npm ci --prefix tests/e2e`):
//! without them it says so and passes, unless `MESH_GUARD_E2E_REQUIRED=1`.

#[allow(dead_code)]
#[path = "e2e/claude_api.rs"]
mod claude_api;
mod common_e2e;

use claude_api::ToolCall;
use serde_json::json;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

const AGENT_USER: &str = "meshguard-agent";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// None (after saying why) when the test cannot run here; a panic when it must.
fn prerequisites() -> Option<PathBuf> {
    let cli = std::env::var_os("MESH_GUARD_CLAUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("tests/e2e/node_modules/.bin/claude"));
    let is_root = fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    let tool = |name: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let missing: Vec<String> = [
        (!cli.is_file()).then(|| format!("the Claude Code CLI ({})", cli.display())),
        (!is_root).then(|| "root".to_string()),
        (!tool("unshare")).then(|| "unshare".to_string()),
        (!tool("runuser")).then(|| "runuser".to_string()),
        (!tool("useradd")).then(|| "useradd".to_string()),
        (!tool("usermod")).then(|| "usermod".to_string()),
        (!tool("ssh-keygen")).then(|| "ssh-keygen".to_string()),
    ]
    .into_iter()
    .flatten()
    .collect();
    if missing.is_empty() {
        return Some(cli);
    }
    let message = format!(
        "e2e hardened install: {} missing — end-to-end test NOT run",
        missing.join(", ")
    );
    if std::env::var("MESH_GUARD_E2E_REQUIRED").as_deref() == Ok("1") {
        panic!("{message} (MESH_GUARD_E2E_REQUIRED=1)");
    }
    let _ = writeln!(std::io::stderr(), "\n{message}\n");
    None
}

fn sh(command: &mut Command) -> std::process::Output {
    let output = command.output().expect("start a command");
    assert!(
        output.status.success(),
        "{command:?} failed\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The agent's user: created once, reused after.
fn agent_user() -> (u32, u32) {
    let id = |flag: &str| {
        Command::new("id")
            .args([flag, AGENT_USER])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
    };
    if id("-u").is_none() {
        sh(Command::new("useradd")
            .args(["--system", "--no-create-home", "--shell", "/bin/sh"])
            .arg(AGENT_USER));
    }
    (id("-u").expect("a uid"), id("-g").expect("a gid"))
}

fn mkdir(path: &Path, mode: u32, owner: Option<(u32, u32)>) {
    fs::create_dir_all(path).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    }
}

/// The sandbox: root-owned and readable by all, with the agent's home and project its own.
struct Sandbox {
    dir: PathBuf,
}

impl Sandbox {
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// `program` in a private mount namespace where the sandbox's directories are the
    /// system's policy directories.
    fn namespaced(&self) -> Command {
        // The mount points must exist; empty directories change nothing on the machine.
        for dir in ["/etc/claude-code", "/etc/mesh-guard"] {
            let _ = fs::create_dir_all(dir);
        }
        let mut command = Command::new("unshare");
        command
            .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
            .arg(
                "mount --bind \"$1\" /etc/claude-code && mount --bind \"$2\" /etc/mesh-guard \
                 && shift 2 && exec \"$@\"",
            )
            .arg("sh")
            .arg(self.path("etc-claude-code"))
            .arg(self.path("etc-mesh-guard"));
        command
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// The sandbox with a root-owned copy of the CLI the agent's user runs: the checkout (and
/// the CLI in its `node_modules`) may sit under a directory that user cannot enter.
fn setup(owner: (u32, u32), cli: &Path) -> (Sandbox, PathBuf) {
    let dir = std::env::temp_dir().join(format!("mesh-guard-hardened-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let sandbox = Sandbox { dir };
    for d in [
        "",
        "sys",
        "sys/bin",
        "stubs",
        "etc-claude-code",
        "etc-mesh-guard",
    ] {
        mkdir(&sandbox.path(d), 0o755, Some((0, 0)));
    }
    for d in ["home", "work", "work/.claude", "markers"] {
        mkdir(&sandbox.path(d), 0o755, Some(owner));
    }
    let bin = sandbox.path("sys/bin/mesh-guard");
    fs::copy(env!("CARGO_BIN_EXE_mesh-guard"), &bin).unwrap();
    fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    let ssh = sandbox.path("stubs/ssh");
    fs::write(
        &ssh,
        format!(
            "#!/bin/sh\necho \"$@\" >> {}\n",
            sandbox.path("markers/ssh-ran").display()
        ),
    )
    .unwrap();
    fs::set_permissions(&ssh, fs::Permissions::from_mode(0o755)).unwrap();
    // The package's `claude` is a link to its native binary, which stands alone.
    let cli_copy = sandbox.path("sys/bin/claude");
    fs::copy(fs::canonicalize(cli).unwrap(), &cli_copy).unwrap();
    fs::set_permissions(&cli_copy, fs::Permissions::from_mode(0o755)).unwrap();
    (sandbox, cli_copy)
}

/// Runs `claude -p` as the agent's user against a model that makes `calls`, the session
/// started with `env` besides the usual.
fn run_agent(
    sandbox: &Sandbox,
    cli: &Path,
    calls: Vec<ToolCall>,
    extra: &[&str],
    env: &[String],
) -> (common_e2e::Output, common_e2e::FakeApi) {
    let api = claude_api::start_script(calls);
    let mut command = sandbox.namespaced();
    command
        .args(["runuser", "-u", AGENT_USER, "--", "env", "-i"])
        .arg(format!("HOME={}", sandbox.path("home").display()))
        .arg(format!(
            "PATH={}:/usr/local/bin:/usr/bin:/bin",
            sandbox.path("stubs").display()
        ))
        .args([
            "LANG=C.UTF-8",
            "ANTHROPIC_API_KEY=sk-ant-e2e-not-a-real-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
            "DISABLE_TELEMETRY=1",
            "DISABLE_AUTOUPDATER=1",
        ])
        .arg(format!("ANTHROPIC_BASE_URL={}", api.base_url()))
        .args(env)
        .arg("sh")
        .arg("-c")
        .arg("cd \"$1\" && shift && exec \"$@\"")
        .arg("sh")
        .arg(sandbox.path("work"))
        .arg(cli)
        .args(["-p", "Run the commands you were scripted to run."])
        .args(["--output-format", "stream-json", "--verbose"])
        .args(["--permission-mode", "bypassPermissions"])
        .args(extra);
    (common_e2e::run(command), api)
}

fn write_as(owner: (u32, u32), path: &Path, text: &str) {
    fs::write(path, text).unwrap();
    std::os::unix::fs::chown(path, Some(owner.0), Some(owner.1)).unwrap();
}

fn records(db: &Path) -> Vec<(String, String, String)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.prepare("SELECT kind, command, rule FROM events ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn the_agents_user_cannot_switch_a_hardened_install_off() {
    let Some(cli) = prerequisites() else {
        return;
    };
    let owner = agent_user();
    let (sandbox, cli) = setup(owner, &cli);
    // The hook takes the agent's home from the user database, never from HOME.
    sh(Command::new("usermod")
        .args(["-d"])
        .arg(sandbox.path("home"))
        .arg(AGENT_USER));
    let bin = sandbox.path("sys/bin/mesh-guard");

    // The operator's install, as root.
    let mut install = sandbox.namespaced();
    install
        .arg(&bin)
        .arg("--catalog")
        .arg(root().join("examples/catalog.toml"))
        .args(["install", "claude", "--scope", "managed", "--bin"])
        .arg(&bin);
    let said = sh(&mut install);
    let managed =
        fs::read_to_string(sandbox.path("etc-claude-code/managed-settings.json")).unwrap();
    assert!(
        managed.contains(&format!(
            "{} --catalog /etc/mesh-guard/catalog.toml --rules /etc/mesh-guard/rules hook --agent claude",
            bin.display()
        )),
        "{managed}\n{}",
        String::from_utf8_lossy(&said.stdout)
    );
    assert!(sandbox.path("etc-mesh-guard/catalog.toml.idx").is_file());
    // doctor, as root for the agent's user: hardened; and not once that user can write
    // the catalog.
    let doctor = |sandbox: &Sandbox| {
        let mut command = sandbox.namespaced();
        command
            .arg(&bin)
            .args(["doctor", "--json", "--user", AGENT_USER])
            .env_remove("MESH_GUARD_CATALOG")
            .env_remove("MESH_GUARD_RULES");
        let output = command.output().unwrap();
        let report: serde_json::Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|_| panic!("doctor: {}", String::from_utf8_lossy(&output.stderr)));
        (output.status.code(), report)
    };
    let (code, report) = doctor(&sandbox);
    assert_eq!(
        (code, &report["mode"]),
        (Some(0), &json!("hardened")),
        "{report:#}"
    );
    let installed_catalog = sandbox.path("etc-mesh-guard/catalog.toml");
    fs::set_permissions(&installed_catalog, fs::Permissions::from_mode(0o666)).unwrap();
    let (_, report) = doctor(&sandbox);
    assert_eq!(report["mode"], "user-level", "{report:#}");
    assert_eq!(
        report["writable_by_user"],
        json!(["/etc/mesh-guard/catalog.toml"]),
        "{report:#}"
    );
    fs::set_permissions(&installed_catalog, fs::Permissions::from_mode(0o644)).unwrap();

    let catalog_before = fs::read(sandbox.path("etc-mesh-guard/catalog.toml")).unwrap();
    let bin_before = fs::read(&bin).unwrap();

    // First session: the agent tries each way round the guard, then the guarded command.
    let home = sandbox.path("home");
    let work = sandbox.path("work");
    let user_settings = home.join(".claude/settings.json");
    let write = |path: &Path, content: serde_json::Value| ToolCall {
        name: "Write".into(),
        input: json!({"file_path": path, "content": content.to_string()}),
    };
    let off = json!({
        "disableAllHooks": true,
        "enabledPlugins": {"mesh-guard@mesh-guard": false},
        "env": {"MESH_GUARD_BIN": "/bin/true", "MESH_GUARD_OVERRIDE": "the agent says so"},
    });
    let calls = vec![
        write(&user_settings, off.clone()),
        write(&work.join(".claude/settings.local.json"), off.clone()),
        ToolCall::bash(&format!("cp /bin/true {}", bin.display())),
        ToolCall::bash("printf 'version = 1\\n' > /etc/mesh-guard/catalog.toml"),
        // Past the guard's own checks (any program can write a file): the project's
        // settings switch all hooks off, for this session and the next. The code that does
        // it is in a script file, which the guard does not read (inline code naming the
        // settings file is refused since interpreters' code is checked).
        ToolCall {
            name: "Write".into(),
            input: json!({
                "file_path": work.join("off.py"),
                "content": "import json\njson.dump({\"disableAllHooks\": True, \"enabledPlugins\": {\"mesh-guard@mesh-guard\": False}, \"env\": {\"MESH_GUARD_BIN\": \"/bin/true\"}}, open(\".claude/settings.json\", \"w\"))\n",
            }),
        },
        ToolCall::bash("python3 off.py"),
        ToolCall::bash("ssh atlas uptime"),
    ];
    let (output, api) = run_agent(&sandbox, &cli, calls, &[], &[]);
    let results = claude_api::script_results(&api);
    let context = format!(
        "exit {:?}\nstderr:\n{}\nrequests:\n{}\nstep results:\n{results:#?}",
        output.status,
        output.stderr,
        api.log()
    );
    assert_eq!(results.len(), 7, "not every step ran\n{context}");
    assert!(
        fs::read_to_string(work.join(".claude/settings.json"))
            .is_ok_and(|s| s.contains("disableAllHooks")),
        "the project's settings were not switched off: the test proves nothing\n{context}"
    );
    assert!(
        !sandbox.path("markers/ssh-ran").exists(),
        "ssh ran in a hardened install\n{context}"
    );
    assert!(
        !user_settings.exists(),
        "the user's settings were written\n{context}"
    );
    assert_eq!(
        fs::read(&bin).unwrap(),
        bin_before,
        "the binary was replaced"
    );
    assert_eq!(
        fs::read(sandbox.path("etc-mesh-guard/catalog.toml")).unwrap(),
        catalog_before,
        "the catalog was edited"
    );
    let db = home.join(".local/share/mesh-guard/audit.db");
    let rows = records(&db);
    for wanted in [
        ("self-protection", user_settings.display().to_string()),
        (
            "self-protection",
            work.join(".claude/settings.local.json")
                .display()
                .to_string(),
        ),
        ("self-protection", format!("cp /bin/true {}", bin.display())),
        (
            "self-protection",
            "> /etc/mesh-guard/catalog.toml".to_string(),
        ),
        ("remote-access", "ssh atlas uptime".to_string()),
    ] {
        assert!(
            rows.iter().any(|(kind, command, rule)| kind == "refusal"
                && rule == wanted.0
                && command.contains(&wanted.1)),
            "no refusal {wanted:?} recorded: {rows:#?}\n{context}"
        );
    }

    // Second session: the user's and the project's settings and the command line all
    // say to switch hooks off, as if the agent had got them written, and the user's
    // settings plant a plain override.
    write_as(owner, &user_settings, &off.to_string());
    write_as(
        owner,
        &work.join(".claude/settings.local.json"),
        &json!({"disableAllHooks": true}).to_string(),
    );
    let before = records(&db).len();
    let (output, api) = run_agent(
        &sandbox,
        &cli,
        vec![ToolCall::bash("ssh atlas uptime")],
        &["--settings", "{\"disableAllHooks\":true}"],
        &[],
    );
    let context = format!(
        "exit {:?}\nstderr:\n{}\nrequests:\n{}\nstep results:\n{:#?}",
        output.status,
        output.stderr,
        api.log(),
        claude_api::script_results(&api)
    );
    assert_eq!(
        claude_api::script_results(&api).len(),
        1,
        "the step did not run\n{context}"
    );
    assert!(
        !sandbox.path("markers/ssh-ran").exists(),
        "ssh ran with disableAllHooks in user, project and --settings\n{context}"
    );
    let rows = records(&db);
    assert!(
        rows[before..]
            .iter()
            // The planted override is unsigned: the command is refused as an attempt.
            .any(|(kind, command, _)| kind == "override-attempt" && command == "ssh atlas uptime"),
        "the refusal was not recorded: {rows:#?}\n{context}"
    );
    fs::remove_file(&user_settings).unwrap();
    fs::remove_file(work.join(".claude/settings.local.json")).unwrap();
    fs::remove_file(work.join(".claude/settings.json")).unwrap();

    // The operator's grant, signed with their key, listed in the root-owned allowed_signers.
    let key = sandbox.path("sys/operator_key");
    sh(Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "operator", "-f"])
        .arg(&key));
    let public = fs::read_to_string(key.with_extension("pub")).unwrap();
    let signers = sandbox.path("etc-mesh-guard/allowed_signers");
    fs::write(
        &signers,
        format!("operator namespaces=\"mesh-guard-override\" {public}"),
    )
    .unwrap();
    fs::set_permissions(&signers, fs::Permissions::from_mode(0o644)).unwrap();
    let granted = sh(Command::new(&bin)
        .arg("--catalog")
        .arg(&installed_catalog)
        .args([
            "override",
            "grant",
            "--reason",
            "e2e: the operator's own",
            "--for",
            "1h",
        ])
        .args(["--machine", "atlas", "-f"])
        .arg(&key));
    let line = String::from_utf8_lossy(&granted.stdout).trim().to_string();
    let grant = line
        .strip_prefix("export MESH_GUARD_OVERRIDE=")
        .unwrap_or_else(|| panic!("an export line: {line}"))
        .to_string();
    // A grant the agent copied from an earlier session, past its expiry.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
        / 1000
        * 1000;
    let host = String::from_utf8_lossy(&sh(Command::new("uname").arg("-n")).stdout)
        .trim()
        .to_string();
    let message = mesh_guard::grant::Grant {
        reason: "copied".into(),
        scope: String::new(),
        host,
        issued_ms: now - 7_200_000,
        expires_ms: now - 3_600_000,
        nonce: "0123456789abcdef".into(),
    }
    .render();
    let message_file = sandbox.path("sys/expired-grant");
    fs::write(&message_file, &message).unwrap();
    sh(Command::new("ssh-keygen")
        .args(["-q", "-Y", "sign", "-n", "mesh-guard-override", "-f"])
        .arg(&key)
        .arg(&message_file));
    let armored = fs::read_to_string(message_file.with_extension("sig")).unwrap();
    let expired = mesh_guard::grant::encode(&message, &armored).unwrap();

    let session = |grant: &str| {
        let before = records(&db).len();
        let (output, api) = run_agent(
            &sandbox,
            &cli,
            vec![ToolCall::bash("ssh atlas uptime")],
            &[],
            &[format!("MESH_GUARD_OVERRIDE={grant}")],
        );
        let context = format!(
            "exit {:?}\nstderr:\n{}\nstep results:\n{:#?}",
            output.status,
            output.stderr,
            claude_api::script_results(&api)
        );
        (records(&db)[before..].to_vec(), context)
    };
    let (rows, context) = session(&expired);
    assert!(
        !sandbox.path("markers/ssh-ran").exists(),
        "ssh ran under a copied expired grant\n{context}"
    );
    assert!(
        rows.iter()
            .any(|(kind, command, _)| kind == "override-attempt" && command == "ssh atlas uptime"),
        "{rows:#?}\n{context}"
    );
    let (rows, context) = session(&grant);
    assert!(
        sandbox.path("markers/ssh-ran").exists(),
        "the operator's grant did not let ssh run\n{context}"
    );
    assert!(
        rows.iter()
            .any(|(kind, command, _)| kind == "override" && command == "ssh atlas uptime"),
        "{rows:#?}\n{context}"
    );
}
