//! End-to-end tests: the mesh-guard plugin inside the real Claude Code CLI.
//!
//! Each case starts a scripted fake Anthropic API (`tests/e2e/claude_api.rs`),
//! runs `claude -p` against it with the plugin loaded and a fresh HOME, lets
//! the "model" propose one Bash command, and then looks at what really
//! happened: whether the command ran (a sentinel file it writes) and what the
//! model was told (the `tool_result` the CLI sent back).
//!
//! A hook reads no variable for its binary, catalog or record (decision 0059): each case
//! loads a copy of the plugin whose launcher looks for the guard where the case says (its
//! fixed places are not a test's to write) and whose hooks name the case's catalog and
//! record on their command line, as an operator's own install would; the rest of the plugin
//! is the repository's, byte for byte.
//!
//! The CLI comes from npm (`npm ci --prefix tests/e2e`, pinned by the lockfile
//! there) or from `MESH_GUARD_CLAUDE`. Without it these tests cannot run; they
//! say so loudly, and fail when `MESH_GUARD_E2E_REQUIRED=1` (as in `.ci/e2e`).

#[path = "e2e/claude_api.rs"]
mod claude_api;
mod common_e2e;

use claude_api::{TOOL_USE_ID, ToolCall};
use common_e2e::{FakeApi, Output, run};
use serde_json::{Value, json};
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Claude Code CLI, or None (after saying so) when it is not installed.
/// Probed once per test process; every case asks.
fn claude_cli() -> Option<PathBuf> {
    static CLI: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let found = CLI.get_or_init(|| {
        let found = probe_cli();
        // Written straight to the process's stderr: libtest captures print!
        // and eprint! of passing tests, and this must show on `cargo test`.
        let line = match &found {
            Ok(cli) => format!("e2e: running with {}", cli_version(cli)),
            Err(why) => format!(
                "e2e: Claude Code CLI not installed ({why}); run npm ci --prefix tests/e2e \
                 — end-to-end tests NOT run"
            ),
        };
        let _ = writeln!(std::io::stderr(), "\n{line}\n");
        found
    });
    match found {
        Ok(cli) => Some(cli.clone()),
        Err(why) if std::env::var("MESH_GUARD_E2E_REQUIRED").as_deref() == Ok("1") => {
            panic!("e2e: Claude Code CLI not usable ({why}) and MESH_GUARD_E2E_REQUIRED=1")
        }
        Err(_) => None,
    }
}

/// Finds the CLI and checks that it starts: npm leaves a stub in its place
/// when the package's postinstall did not run.
fn probe_cli() -> Result<PathBuf, String> {
    let cli = match std::env::var_os("MESH_GUARD_CLAUDE") {
        Some(path) => PathBuf::from(path),
        None => repo_root().join("tests/e2e/node_modules/.bin/claude"),
    };
    if !cli.is_file() {
        return Err(format!("{} missing", cli.display()));
    }
    let version = Command::new(&cli)
        .arg("--version")
        .env("DISABLE_AUTOUPDATER", "1")
        .output()
        .map_err(|e| format!("{} does not start: {e}", cli.display()))?;
    if !version.status.success() {
        return Err(format!(
            "{} does not start: {}",
            cli.display(),
            String::from_utf8_lossy(&version.stderr).trim()
        ));
    }
    Ok(cli)
}

fn cli_version(cli: &Path) -> String {
    let out = Command::new(cli).arg("--version").output();
    let version = out
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!("{version} at {}", cli.display())
}

/// The mesh-guard the plugin should run: this crate's binary, or another
/// build named by `MESH_GUARD_E2E_GUARD` (a release build, an installed one).
fn guard_binary() -> PathBuf {
    match std::env::var_os("MESH_GUARD_E2E_GUARD") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(env!("CARGO_BIN_EXE_mesh-guard")),
    }
}

/// The plugin's files with its launcher looking for the guard at `guard` only, and its
/// hooks naming `catalog` and `db`: written into `dir`.
fn plugin_copy(dir: &Path, guard: &Path, catalog: &Path, db: &Path) {
    let from = repo_root().join("plugin");
    for file in [
        "bin/mesh-guard",
        "hooks/hooks.json",
        ".claude-plugin/plugin.json",
    ] {
        let mut text = fs::read_to_string(from.join(file)).expect("read the plugin");
        if file == "bin/mesh-guard" {
            let start = text.find("\nPLACES='").expect("the launcher's PLACES") + 1;
            let end = start + text[start..].find('\n').unwrap();
            text.replace_range(start..end, &format!("PLACES='{}'", guard.display()));
        }
        if file == "hooks/hooks.json" {
            let paths = format!(
                "/bin/mesh-guard\\\" --catalog '{}' --db '{}' ",
                catalog.display(),
                db.display()
            );
            text = text.replace("/bin/mesh-guard\\\" ", &paths);
            assert!(
                text.contains("--catalog"),
                "the hooks' command lines: {text}"
            );
        }
        let to = dir.join(file);
        fs::create_dir_all(to.parent().unwrap()).expect("create the plugin copy");
        fs::write(&to, text).expect("write the plugin copy");
        fs::set_permissions(&to, fs::Permissions::from_mode(0o755)).expect("chmod");
    }
}

/// Where a case keeps its files: HOME, working directory, audit database.
/// Outside the repository on purpose: Claude Code reads project settings and
/// CLAUDE.md from the enclosing git repository, and ours must not leak in.
struct Sandbox {
    root: PathBuf,
}

impl Sandbox {
    fn new(case: &str) -> Sandbox {
        let root = std::env::temp_dir()
            .join(format!("mesh-guard-e2e-{}", std::process::id()))
            .join(case);
        // Left over from an earlier run: a stale sentinel would fake a pass.
        let _ = fs::remove_dir_all(&root);
        for dir in ["home", "work", "etc"] {
            fs::create_dir_all(root.join(dir)).expect("create sandbox");
        }
        fs::copy(
            repo_root().join("examples/catalog.toml"),
            root.join("etc/catalog.toml"),
        )
        .expect("copy the catalog");
        Sandbox { root }
    }
    /// The operator's catalog, with `allowed_signers` beside it once a grant is signed.
    fn catalog(&self) -> PathBuf {
        self.root.join("etc/catalog.toml")
    }
    /// A grant signed by the operator's key (listed in `allowed_signers`) with
    /// `mesh-guard override grant`: the `MESH_GUARD_OVERRIDE` value.
    fn grant(&self, args: &[&str]) -> String {
        let key = self.root.join("operator_key");
        if !key.exists() {
            let made = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", "operator", "-f"])
                .arg(&key)
                .status()
                .expect("ssh-keygen");
            assert!(made.success());
            let public = fs::read_to_string(key.with_extension("pub")).unwrap();
            fs::write(
                self.root.join("etc/allowed_signers"),
                format!("operator namespaces=\"mesh-guard-override\" {public}"),
            )
            .unwrap();
        }
        let out = Command::new(guard_binary())
            .arg("--catalog")
            .arg(self.catalog())
            .args(["override", "grant"])
            .args(args)
            .arg("-f")
            .arg(&key)
            .output()
            .expect("mesh-guard override grant");
        let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
        line.strip_prefix("export MESH_GUARD_OVERRIDE=")
            .unwrap_or_else(|| panic!("{line} {}", String::from_utf8_lossy(&out.stderr)))
            .to_string()
    }
    fn home(&self) -> PathBuf {
        self.root.join("home")
    }
    fn work(&self) -> PathBuf {
        self.root.join("work")
    }
    fn db(&self) -> PathBuf {
        self.root.join("audit.db")
    }
    /// A file the scripted command writes if, and only if, it runs.
    fn sentinel(&self) -> PathBuf {
        self.root.join("sentinel")
    }
    /// Writes an executable script into the sandbox and returns its path.
    fn script(&self, name: &str, text: &str) -> PathBuf {
        let path = self.root.join(name);
        fs::write(&path, text).expect("write script");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod script");
        path
    }
    /// The record's rows as (kind, command, tool_use_id, session_id, reason).
    fn records(&self) -> Vec<Record> {
        let db = rusqlite::Connection::open(self.db()).expect("open the audit database");
        let mut stmt = db
            .prepare(
                "SELECT kind, command, tool_use_id, session_id, reason FROM events ORDER BY id",
            )
            .expect("read the audit database");
        stmt.query_map([], |row| {
            Ok(Record {
                kind: row.get(0)?,
                command: row.get(1)?,
                tool_use_id: row.get(2)?,
                session_id: row.get(3)?,
                reason: row.get(4)?,
            })
        })
        .expect("query the audit database")
        .collect::<Result<_, _>>()
        .expect("decode the audit database")
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        // Kept when a case fails, for a look at what the CLI left behind.
        if !thread::panicking() {
            let _ = fs::remove_dir_all(&self.root);
            // The process's directory goes with its last case (fails, and
            // stays, while other cases still use it).
            if let Some(parent) = self.root.parent() {
                let _ = fs::remove_dir(parent);
            }
        }
    }
}

#[derive(Debug)]
struct Record {
    kind: String,
    command: String,
    tool_use_id: String,
    session_id: String,
    reason: String,
}

/// How the plugin reaches the CLI.
enum Plugin {
    /// `--plugin-dir plugin`, as a developer tries it.
    Dir,
    /// Installed beforehand in the sandbox's HOME through the marketplace.
    Installed,
}

/// One run of `claude -p` against a fake API.
struct Run<'a> {
    sandbox: &'a Sandbox,
    cli: &'a Path,
    call: ToolCall,
    plugin: Plugin,
    /// Environment beyond the defaults; `None` removes a variable.
    env: Vec<(&'static str, Option<String>)>,
    /// Where the plugin copy's launcher finds the guard.
    guard: PathBuf,
}

struct Outcome {
    output: Output,
    api: FakeApi,
    elapsed: Duration,
}

impl Outcome {
    fn stdout(&self) -> &str {
        &self.output.stdout
    }

    /// The stream-json events the CLI printed.
    fn events(&self) -> Vec<Value> {
        self.stdout()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// The `init` event: session id, loaded plugins, version.
    fn init(&self) -> Value {
        self.events()
            .into_iter()
            .find(|e| e["type"] == "system" && e["subtype"] == "init")
            .unwrap_or_else(|| panic!("no init event\n{}", self.explain()))
    }

    fn session_id(&self) -> String {
        self.init()["session_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Everything worth showing when an assertion fails.
    fn explain(&self) -> String {
        format!(
            "claude exited {:?} after {:.1?}\n--- requests\n{}\n--- tool results\n{:#?}\n\
             --- stdout\n{}\n--- stderr\n{}",
            self.output.status,
            self.elapsed,
            self.api.log(),
            claude_api::tool_results(&self.api),
            self.stdout(),
            self.output.stderr,
        )
    }

    /// The tool result the model received for the scripted call.
    fn tool_result(&self) -> String {
        let results = claude_api::tool_results(&self.api);
        assert!(
            !results.is_empty(),
            "the model never received a tool_result\n{}",
            self.explain()
        );
        results.last().unwrap().clone()
    }

    /// Says on stderr what this CLI showed the model for `case` (docs/agents/README.md keeps
    /// the table), and gives back the words it put before the guard's own.
    fn shown(&self, case: &str, guard_words: &str) -> String {
        let result = self.tool_result();
        let before = result
            .split(guard_words)
            .next()
            .unwrap_or_default()
            .to_owned();
        let shown: String = result.chars().take(600).collect();
        let version = claude_cli().map(|c| cli_version(&c)).unwrap_or_default();
        let _ = writeln!(
            std::io::stderr(),
            "e2e: {version}: {case}: the model read {shown:?}"
        );
        before
    }

    /// The conversation ran to the scripted end: the CLI took the tool
    /// result back to the model, and exited cleanly.
    fn assert_completed(&self) {
        assert!(
            self.output.status.success(),
            "claude failed\n{}",
            self.explain()
        );
        self.tool_result();
    }
}

impl<'a> Run<'a> {
    fn new(sandbox: &'a Sandbox, cli: &'a Path, call: ToolCall) -> Run<'a> {
        Run {
            sandbox,
            cli,
            call,
            plugin: Plugin::Dir,
            env: Vec::new(),
            guard: guard_binary(),
        }
    }

    /// The guard the plugin's launcher finds (default: this build's).
    fn guard(mut self, guard: PathBuf) -> Self {
        self.guard = guard;
        self
    }

    fn bash(sandbox: &'a Sandbox, cli: &'a Path, command: &str) -> Run<'a> {
        Run::new(sandbox, cli, ToolCall::bash(command))
    }

    fn env(mut self, key: &'static str, value: impl Into<String>) -> Self {
        self.env.push((key, Some(value.into())));
        self
    }

    fn plugin(mut self, plugin: Plugin) -> Self {
        self.plugin = plugin;
        self
    }

    fn go(self) -> Outcome {
        let api = claude_api::start(self.call.clone());
        let mut cmd = Command::new(self.cli);
        cmd.arg("-p")
            .arg("Run the command you were scripted to run.")
            .args(["--output-format", "stream-json", "--verbose"])
            .args(["--permission-mode", "bypassPermissions"]);
        if let Plugin::Dir = self.plugin {
            let dir = self.sandbox.root.join("plugin");
            plugin_copy(
                &dir,
                &self.guard,
                &self.sandbox.catalog(),
                &self.sandbox.db(),
            );
            cmd.arg("--plugin-dir").arg(dir);
        }
        base_env(&mut cmd, self.sandbox);
        cmd.env("ANTHROPIC_BASE_URL", api.base_url());
        for (key, value) in &self.env {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        cmd.current_dir(self.sandbox.work());
        let start = Instant::now();
        // common_e2e::run kills a run stuck past its timeout (a hook waiting
        // on stdin, the CLI retrying a request); the case then fails.
        let output = run(cmd);
        let outcome = Outcome {
            output,
            api,
            elapsed: start.elapsed(),
        };
        // For finding out what a new CLI version does (endpoints, timings).
        if std::env::var_os("MESH_GUARD_E2E_VERBOSE").is_some() {
            println!("{}", outcome.explain());
        }
        outcome
    }
}

/// The environment every CLI run gets: nothing inherited but PATH, so the
/// developer's own Claude Code settings, keys and plugins stay out.
fn base_env(cmd: &mut Command, sandbox: &Sandbox) {
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sandbox.home())
        .env("LANG", "C.UTF-8")
        // Any key will do: only the fake API sees it.
        .env("ANTHROPIC_API_KEY", "sk-ant-e2e-not-a-real-key")
        // No update checks, telemetry, feature-flag fetches: offline and quick.
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        // bypassPermissions is refused to root outside a declared sandbox.
        .env("IS_SANDBOX", "1")
        // For the plugin's MCP server, an operator's command: the hooks take theirs from
        // their command line.
        .env("MESH_GUARD_CATALOG", sandbox.catalog())
        .env("MESH_GUARD_DB", sandbox.db());
}

/// The message the guard gives for `command`, from `mesh-guard check --json`
/// (the contract: "`message` is the exact text an agent would receive"), with
/// `--mcp` as the plugin's hook runs: the plugin also declares the MCP server.
fn refusal_message(sandbox: &Sandbox, command: &str) -> String {
    let output = Command::new(guard_binary())
        .args(["check", "--json", "--mcp", "--", command])
        .env("MESH_GUARD_CATALOG", sandbox.catalog())
        .env("MESH_GUARD_DB", sandbox.root.join("check.db"))
        .output()
        .expect("run mesh-guard check");
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "mesh-guard check --json gave no JSON for {command:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert_eq!(
        answer["decision"], "refuse",
        "the case's command must be refused: {answer}"
    );
    answer["message"].as_str().expect("a message").to_owned()
}

/// Installs the plugin into the sandbox's HOME the way a user would:
/// `claude plugin marketplace add <repo>` then `claude plugin install`.
fn install_from_marketplace(sandbox: &Sandbox, cli: &Path) -> String {
    let manifest: Value = serde_json::from_str(
        &fs::read_to_string(repo_root().join(".claude-plugin/marketplace.json"))
            .expect("read marketplace.json"),
    )
    .expect("marketplace.json is JSON");
    let marketplace = manifest["name"].as_str().expect("a marketplace name");
    let plugin = format!("mesh-guard@{marketplace}");
    // The repository's marketplace, its plugin the case's copy (`plugin_copy`).
    let market = sandbox.root.join("market");
    fs::create_dir_all(market.join(".claude-plugin")).expect("create the marketplace copy");
    fs::copy(
        repo_root().join(".claude-plugin/marketplace.json"),
        market.join(".claude-plugin/marketplace.json"),
    )
    .expect("copy marketplace.json");
    plugin_copy(
        &market.join("plugin"),
        &guard_binary(),
        &sandbox.catalog(),
        &sandbox.db(),
    );
    let steps: [Vec<String>; 2] = [
        vec![
            "plugin".into(),
            "marketplace".into(),
            "add".into(),
            market.display().to_string(),
        ],
        vec!["plugin".into(), "install".into(), plugin.clone()],
    ];
    // Left at the default API host, CLI 2.1.332's plugin commands resolve it
    // (DNS retried with backoff, ~18 s each when offline). Pointed at loopback
    // they make no request at all and finish at once.
    let api = claude_api::start(ToolCall::bash("true"));
    for args in steps {
        let mut cmd = Command::new(cli);
        cmd.args(&args).current_dir(sandbox.work());
        base_env(&mut cmd, sandbox);
        cmd.env("ANTHROPIC_BASE_URL", api.base_url());
        let output = run(cmd);
        assert!(
            output.status.success(),
            "claude {} failed\n--- stdout\n{}\n--- stderr\n{}",
            args.join(" "),
            output.stdout,
            output.stderr,
        );
    }
    if std::env::var_os("MESH_GUARD_E2E_VERBOSE").is_some() {
        println!("--- requests while installing\n{}", api.log());
    }
    plugin
}

// ---------------------------------------------------------------- the cases

/// A command that reaches a mesh machine is stopped before it runs, and the
/// model is handed the guard's message (naming the mesh tool) as the result.
#[test]
fn refused_command_does_not_run_and_the_model_reads_why() {
    let Some(cli) = claude_cli() else { return };
    let sandbox = Sandbox::new("refused");
    // The touch comes first: if any part of the command ran, the file exists.
    let command = format!("touch {}; ssh atlas uptime", sandbox.sentinel().display());
    let out = Run::bash(&sandbox, &cli, &command).go();
    out.assert_completed();

    assert!(
        !sandbox.sentinel().exists(),
        "the refused command ran\n{}",
        out.explain()
    );
    let result = out.tool_result();
    let message = refusal_message(&sandbox, &command);
    assert!(
        result.contains(&message),
        "the model did not get the guard's message\n{}",
        out.explain()
    );
    // The first words the model reads of the guard's say it is a decision, whatever label
    // the CLI puts before them (2.1.332: "PreToolUse:Bash hook error: ").
    assert!(
        message.starts_with(mesh_guard::message::DECISION),
        "{message}"
    );
    let label = out.shown("refusal (exit 2, deny JSON)", &message);
    assert!(
        label.len() < 60 && !label.contains("mesh"),
        "the CLI put more than a label before the refusal: {label:?}"
    );
    assert!(
        result.contains("mesh exec atlas"),
        "no mesh tool named: {result}"
    );
    assert!(
        result.contains("`mesh_search`"),
        "the plugin's refusal does not point at its MCP tool: {result}"
    );

    let records = sandbox.records();
    assert!(
        records.iter().any(|r| r.kind == "refusal"
            && r.command == command
            && r.tool_use_id == TOOL_USE_ID
            && r.session_id == out.session_id()),
        "the refusal is not in the record as this session's tool call: {records:#?}"
    );

    // Replay finds the session's transcript under ~/.claude/projects and reads the command.
    common_e2e::assert_replayed(&common_e2e::replay_home("claude", &sandbox.home()), 1);
}

/// An ordinary command is none of the guard's business.
#[test]
fn passing_command_runs() {
    let Some(cli) = claude_cli() else { return };
    let sandbox = Sandbox::new("passing");
    let command = format!("touch {}", sandbox.sentinel().display());
    let out = Run::bash(&sandbox, &cli, &command).go();
    out.assert_completed();
    assert!(
        sandbox.sentinel().exists(),
        "the command did not run\n{}",
        out.explain()
    );
}

/// ssh as the forge's git account passes. ssh itself fails here (there is no
/// forge to reach); `;` lets the sentinel show that the guard let it through.
#[test]
fn forge_git_account_runs() {
    let Some(cli) = claude_cli() else { return };
    let sandbox = Sandbox::new("forge");
    let command = format!(
        "ssh -o BatchMode=yes -o ConnectTimeout=2 git@forge true; touch {}",
        sandbox.sentinel().display()
    );
    let out = Run::bash(&sandbox, &cli, &command).go();
    out.assert_completed();
    assert!(
        sandbox.sentinel().exists(),
        "the forge command was stopped\n{}",
        out.explain()
    );
}

/// An operator's override in the session's environment lets a refused
/// command run, and it is recorded: the session start and the command.
#[test]
fn override_runs_and_is_recorded() {
    let Some(cli) = claude_cli() else { return };
    let sandbox = Sandbox::new("override");
    let command = format!("touch {}; ssh atlas uptime", sandbox.sentinel().display());
    let reason = "e2e: operator repairs atlas";
    let out = Run::bash(&sandbox, &cli, &command)
        .env("MESH_GUARD_OVERRIDE", sandbox.grant(&["--reason", reason]))
        .go();
    out.assert_completed();
    assert!(
        sandbox.sentinel().exists(),
        "the overridden command did not run\n{}",
        out.explain()
    );

    let records = sandbox.records();
    let session = out.session_id();
    assert!(
        records.iter().any(|r| r.kind == "override"
            && r.command == command
            && r.reason == reason
            && r.tool_use_id == TOOL_USE_ID
            && r.session_id == session),
        "no override row for the command: {records:#?}"
    );
    assert!(
        records
            .iter()
            .any(|r| r.kind == "session-start" && r.reason == reason && r.session_id == session),
        "the SessionStart hook did not record the override: {records:#?}"
    );
    let verify = Command::new(guard_binary())
        .args(["audit", "verify"])
        .env("MESH_GUARD_DB", sandbox.db())
        .output()
        .expect("run mesh-guard audit verify");
    assert!(
        verify.status.success(),
        "the record's chain is broken: {verify:?}"
    );
}

/// No mesh-guard where the launcher looks: every command is refused, and the
/// model is told how to install it.
#[test]
fn missing_binary_blocks() {
    let Some(cli) = claude_cli() else { return };
    let sandbox = Sandbox::new("missing");
    let path = "/usr/bin:/bin";
    for dir in path.split(':') {
        // Not a skip: with a mesh-guard there, this case could not prove anything.
        assert!(
            !Path::new(dir).join("mesh-guard").exists(),
            "{dir}/mesh-guard exists, so this machine cannot show a missing binary"
        );
    }
    let command = format!("touch {}", sandbox.sentinel().display());
    let out = Run::bash(&sandbox, &cli, &command)
        .guard(sandbox.root.join("no-such-mesh-guard"))
        .env("PATH", path)
        .go();
    out.assert_completed();
    assert!(
        !sandbox.sentinel().exists(),
        "ran without a guard\n{}",
        out.explain()
    );
    let result = out.tool_result();
    assert!(
        result.contains("mesh-guard is not installed"),
        "{}",
        out.explain()
    );
    out.shown(
        "missing binary (the launcher's refusal)",
        "Decided by mesh-guard",
    );
    assert!(result.contains(mesh_guard::message::DECISION), "{result}");
    assert!(
        result.contains("cargo install"),
        "no install hint: {result}"
    );
}

/// A binary a variable names is not run (decision 0059): with none in the
/// launcher's places, MESH_GUARD_BIN naming the real guard changes nothing.
#[test]
fn a_binary_named_by_a_variable_is_not_run() {
    let Some(cli) = claude_cli() else { return };
    let sandbox = Sandbox::new("missing-env");
    let command = format!("touch {}", sandbox.sentinel().display());
    let nowhere = sandbox.root.join("no-such-mesh-guard");
    let out = Run::bash(&sandbox, &cli, &command)
        .guard(nowhere)
        .env("MESH_GUARD_BIN", guard_binary().display().to_string())
        .go();
    out.assert_completed();
    assert!(
        !sandbox.sentinel().exists(),
        "ran without a guard\n{}",
        out.explain()
    );
    assert!(
        out.tool_result().contains("mesh-guard is not installed"),
        "{}",
        out.explain()
    );
}

/// A guard that dies of a signal (exit 139, which Claude Code would treat as
/// a non-blocking error) still blocks, through the hook's `|| exit 2`.
#[test]
fn crashing_binary_blocks() {
    let Some(cli) = claude_cli() else { return };
    let sandbox = Sandbox::new("crash");
    let crash = sandbox.script("crashing-mesh-guard", "#!/bin/sh\nkill -SEGV $$\n");
    let command = format!("touch {}", sandbox.sentinel().display());
    let out = Run::bash(&sandbox, &cli, &command).guard(crash).go();
    out.assert_completed();
    assert!(
        !sandbox.sentinel().exists(),
        "ran past a crashed guard\n{}",
        out.explain()
    );
    out.shown("crash (killed by a signal)", "\u{0}");
}

/// The file-writing tools go through the guard too: the model cannot grant
/// itself the override by writing it into a file.
#[test]
fn write_tool_cannot_set_the_override() {
    let Some(cli) = claude_cli() else { return };
    let sandbox = Sandbox::new("write");
    let target = sandbox.work().join(".envrc");
    let call = ToolCall {
        name: "Write".into(),
        input: json!({
            "file_path": target.display().to_string(),
            "content": "export MESH_GUARD_OVERRIDE=\"the agent says so\"\n",
        }),
    };
    let out = Run::new(&sandbox, &cli, call).go();
    out.assert_completed();
    assert!(
        !target.exists(),
        "the Write went through\n{}",
        out.explain()
    );
    assert!(
        out.tool_result().contains("MESH_GUARD_OVERRIDE"),
        "{}",
        out.explain()
    );
    let records = sandbox.records();
    assert!(
        records
            .iter()
            .any(|r| r.kind == "override-attempt" && r.tool_use_id == TOOL_USE_ID),
        "the attempt is not in the record: {records:#?}"
    );
}

/// An override the agent planted in the project's `settings.local.json` reaches
/// the hook through the settings' `env` (issue 11); unsigned, it is not the
/// operator's, so the command is refused and the attempt recorded, never an
/// override (decision 0058).
#[test]
fn an_override_planted_in_project_settings_is_not_honoured() {
    let Some(cli) = claude_cli() else { return };
    let sandbox = Sandbox::new("planted");
    let settings = sandbox.work().join(".claude/settings.local.json");
    fs::create_dir_all(settings.parent().unwrap()).expect("create .claude");
    fs::write(
        &settings,
        r#"{"env":{"MESH_GUARD_OVERRIDE":"the agent says so"}}"#,
    )
    .expect("plant the settings");
    let command = format!("touch {}; ssh atlas uptime", sandbox.sentinel().display());
    let out = Run::bash(&sandbox, &cli, &command).go();
    out.assert_completed();
    assert!(
        !sandbox.sentinel().exists(),
        "the planted override was honoured\n{}",
        out.explain()
    );
    assert!(
        out.tool_result().contains("not a signed grant"),
        "the refusal does not say why: {}",
        out.explain()
    );
    let records = sandbox.records();
    assert!(
        records
            .iter()
            .any(|r| r.kind == "override-attempt" && r.command == command),
        "the attempt is not in the record: {records:#?}"
    );
    assert!(
        !records
            .iter()
            .any(|r| r.kind == "override" || r.kind == "session-start"),
        "the planted override is recorded as the operator's: {records:#?}"
    );
}

/// `{"env":{"MESH_GUARD_BIN":"/bin/true"}}` in the project's settings would make
/// the launcher run a binary that passes everything (issue 11). The launcher
/// reads no variable (decision 0059): the guard runs and refuses.
#[test]
fn a_binary_planted_in_project_settings_is_not_run() {
    let Some(cli) = claude_cli() else { return };
    let sandbox = Sandbox::new("planted-bin");
    let settings = sandbox.work().join(".claude/settings.local.json");
    fs::create_dir_all(settings.parent().unwrap()).expect("create .claude");
    fs::write(&settings, r#"{"env":{"MESH_GUARD_BIN":"/bin/true"}}"#).expect("plant the settings");
    let command = format!("touch {}; ssh atlas uptime", sandbox.sentinel().display());
    let out = Run::bash(&sandbox, &cli, &command).go();
    out.assert_completed();
    assert!(
        !sandbox.sentinel().exists(),
        "the planted binary let the command run\n{}",
        out.explain()
    );
    assert!(
        out.tool_result()
            .contains(&refusal_message(&sandbox, &command)),
        "the model did not get the guard's message\n{}",
        out.explain()
    );
}

/// A scoped override (decision 0015): ssh to the machine in scope runs and is
/// recorded with the scope; ssh to another machine is refused.
#[test]
fn a_scoped_override_covers_its_machine_only() {
    let Some(cli) = claude_cli() else { return };
    for (machine, runs) in [("atlas", true), ("orion", false)] {
        let sandbox = Sandbox::new(&format!("scope-{machine}"));
        let command = format!(
            "touch {}; ssh -o BatchMode=yes -o ConnectTimeout=1 {machine} true",
            sandbox.sentinel().display()
        );
        let grant = sandbox.grant(&["--reason", "e2e: incident on atlas", "--machine", "atlas"]);
        let out = Run::bash(&sandbox, &cli, &command)
            .env("MESH_GUARD_OVERRIDE", grant)
            .go();
        out.assert_completed();
        assert_eq!(
            sandbox.sentinel().exists(),
            runs,
            "{machine}: ran or not against the scope\n{}",
            out.explain()
        );
        let db = rusqlite::Connection::open(sandbox.db()).expect("open the record");
        let (kind, scope): (String, String) = db
            .query_row(
                "SELECT kind, scope FROM events WHERE command = ?1",
                [&command],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("the command's row");
        let want = if runs { "override" } else { "refusal" };
        assert_eq!((kind.as_str(), scope.as_str()), (want, "machine:atlas"));
    }
}

/// Installed the way users install it (marketplace, then install), without
/// `--plugin-dir`, the plugin guards just the same.
#[test]
fn marketplace_install_blocks_too() {
    let Some(cli) = claude_cli() else { return };
    let sandbox = Sandbox::new("marketplace");
    let plugin = install_from_marketplace(&sandbox, &cli);
    let command = format!("touch {}; ssh atlas uptime", sandbox.sentinel().display());
    let out = Run::bash(&sandbox, &cli, &command)
        .plugin(Plugin::Installed)
        .go();
    out.assert_completed();

    let sources: Vec<String> = out.init()["plugins"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["source"].as_str().map(str::to_owned))
        .collect();
    // Later CLIs load builtin plugins as well; what matters is that ours
    // came from the marketplace install, not from a plugin directory.
    let ours: Vec<&String> = sources
        .iter()
        .filter(|s| s.starts_with("mesh-guard@"))
        .collect();
    assert_eq!(
        ours,
        [&plugin],
        "the installed plugin was not the one loaded: {sources:?}"
    );
    assert!(
        !sandbox.sentinel().exists(),
        "the refused command ran\n{}",
        out.explain()
    );
    assert!(
        out.tool_result()
            .contains(&refusal_message(&sandbox, &command)),
        "the model did not get the guard's message\n{}",
        out.explain()
    );
}

/// How Claude Code names a plugin's MCP tool: `mcp__plugin_<plugin>_<server>__<tool>`.
const MESH_SEARCH_TOOL: &str = "mcp__plugin_mesh-guard_mesh-guard__mesh_search";

/// The plugin's MCP server reaches the model: the CLI offers `mesh_search`,
/// the model asks it about an ssh command, and the answer it gets back names
/// the mesh tool with its usage filled in from the command, as a refusal would.
#[test]
fn mcp_search_answers_the_model() {
    let Some(cli) = claude_cli() else { return };
    let sandbox = Sandbox::new("mcp");
    let call = ToolCall {
        name: MESH_SEARCH_TOOL.into(),
        input: json!({"command": "ssh atlas journalctl -u mesh-controller"}),
    };
    let out = Run::new(&sandbox, &cli, call).go();
    // Offered in the request's tools (2.1.197), or deferred: named to the model and loaded
    // through the CLI's tool search (2.1.332), which the scripted model then asks for it.
    let requests = out.api.requests();
    let offered = |r: &common_e2e::Request| {
        r.body["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == MESH_SEARCH_TOOL))
    };
    let deferred = |r: &common_e2e::Request| {
        !offered(r)
            && r.body["tools"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["name"] == claude_api::TOOL_SEARCH))
            && r.body.to_string().contains(MESH_SEARCH_TOOL)
    };
    assert!(
        requests.iter().any(|r| offered(r) || deferred(r)),
        "the CLI neither offers {MESH_SEARCH_TOOL} nor names it for its tool search\n{}",
        out.explain()
    );
    out.assert_completed();
    let result = out.tool_result();
    assert!(
        result.contains("mesh logs controller --machine atlas"),
        "the model did not get the filled usage\n{}",
        out.explain()
    );
    // The same answer as the CLI's own search, best first.
    let search = Command::new(guard_binary())
        .args(["search", "ssh atlas journalctl -u mesh-controller"])
        .env("MESH_GUARD_CATALOG", sandbox.catalog())
        .output()
        .expect("run mesh-guard search");
    let best = String::from_utf8_lossy(&search.stdout)
        .lines()
        .next()
        .and_then(|l| l.split('\t').next())
        .unwrap_or_default()
        .to_owned();
    assert_eq!(best, "mesh logs controller --machine atlas");
}
