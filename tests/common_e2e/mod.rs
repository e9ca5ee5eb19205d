//! What the end-to-end tests with a real agent CLI share: finding the CLI (or saying loudly that
//! the test did not run), a scripted fake model API on loopback, the scene (a home, a working
//! directory, sentinel files, the audit database), running the CLI with a timeout, and reading
//! the record back.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Longest a CLI run may take before it is killed (and the test fails).
pub const RUN_TIMEOUT: Duration = Duration::from_secs(180);

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The agent CLI: `$env_var`, or `tests/e2e-<agent>/node_modules/.bin/<bin>` (installed by
/// `npm ci --prefix tests/e2e-<agent>`). None, after saying so loudly, when it or node is
/// missing; a panic instead when `MESH_GUARD_E2E_REQUIRED=1`.
pub fn agent_cli(agent: &str, env_var: &str, bin: &str) -> Option<PathBuf> {
    let cli = std::env::var_os(env_var)
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(format!("tests/e2e-{agent}/node_modules/.bin/{bin}")));
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if cli.is_file() && node {
        return Some(cli);
    }
    let message = format!(
        "e2e: {agent} not installed ({} missing{}; run npm ci --prefix tests/e2e-{agent}) \
         — end-to-end test NOT run",
        cli.display(),
        if node { "" } else { ", and no node" }
    );
    if std::env::var("MESH_GUARD_E2E_REQUIRED").as_deref() == Ok("1") {
        panic!("{message} (MESH_GUARD_E2E_REQUIRED=1)");
    }
    // Straight to the process's stderr: libtest captures eprintln! of a passing test.
    let _ = writeln!(std::io::stderr(), "\n{message}\n");
    None
}

/// The `n`th fenced code block (from 0) of language `lang` in `docs/agents/<doc>`: the tests
/// install the guard with the configuration the documentation gives, not a copy of it.
pub fn doc_block(doc: &str, lang: &str, n: usize) -> String {
    let path = root().join("docs/agents").join(doc);
    let text = std::fs::read_to_string(&path).unwrap();
    let fence = format!("```{lang}\n");
    text.split(&fence)
        .skip(1)
        .nth(n)
        .and_then(|rest| rest.split("```").next())
        .unwrap_or_else(|| panic!("no {lang} block #{n} in {}", path.display()))
        .to_string()
}

/// A documented hook configuration with the guard's catalog and record named on the hook's
/// command line: a hook takes its paths from there, never from its environment
/// (decision 0059), and this home is not the account's.
pub fn with_guard_paths(block: &str, db: &Path) -> String {
    let options = format!(
        "mesh-guard --catalog {} --db {}",
        root().join("examples/catalog.toml").display(),
        db.display()
    );
    block
        .replace("mesh-guard hook", &format!("{options} hook"))
        .replace(
            "mesh-guard session-start",
            &format!("{options} session-start"),
        )
}

/// One request the CLI made to the fake API.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// The body as JSON (Null when it is not JSON).
    pub body: Value,
}

/// What the fake API answers.
pub struct Reply {
    pub status: &'static str,
    pub content_type: &'static str,
    pub body: String,
}

impl Reply {
    pub fn json(body: &Value) -> Reply {
        Reply {
            status: "200 OK",
            content_type: "application/json",
            body: body.to_string(),
        }
    }

    /// Server-sent events, each with its `event:` name.
    pub fn sse(events: &[(&str, Value)]) -> Reply {
        Reply {
            status: "200 OK",
            content_type: "text/event-stream",
            body: events
                .iter()
                .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
                .collect(),
        }
    }

    pub fn not_found() -> Reply {
        Reply {
            status: "404 Not Found",
            content_type: "application/json",
            body: r#"{"error":{"message":"not scripted in the fake API"}}"#.to_string(),
        }
    }
}

/// A scripted model API on loopback: every request is kept, and answered by `reply`.
/// One request per connection (`connection: close`), a thread each.
pub struct FakeApi {
    pub port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl FakeApi {
    pub fn start(reply: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> FakeApi {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        let reply = Arc::new(reply);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let seen = Arc::clone(&seen);
                let reply = Arc::clone(&reply);
                std::thread::spawn(move || serve(stream, &*reply, &seen));
            }
        });
        FakeApi { port, requests }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// One line per request, for failure messages.
    pub fn log(&self) -> String {
        self.requests()
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn serve(stream: TcpStream, reply: &dyn Fn(&Request) -> Reply, seen: &Mutex<Vec<Request>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let (mut length, mut chunked) = (0, false);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.trim().eq_ignore_ascii_case("chunked");
            }
        }
    }
    let body = if chunked {
        read_chunked(&mut reader)
    } else {
        let mut body = vec![0; length];
        let _ = reader.read_exact(&mut body);
        body
    };
    let mut words = request_line.split_whitespace();
    let request = Request {
        method: words.next().unwrap_or_default().to_string(),
        path: words.next().unwrap_or_default().to_string(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    seen.lock().unwrap().push(request.clone());
    let answer = reply(&request);
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {}\r\ncontent-type: {}\r\ncontent-length: {}\r\ncache-control: no-cache\r\n\
         connection: close\r\n\r\n{}",
        answer.status,
        answer.content_type,
        answer.body.len(),
        answer.body
    );
    let _ = stream.flush();
}

fn read_chunked(reader: &mut impl BufRead) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        if reader.read_line(&mut size).unwrap_or(0) == 0 {
            return body;
        }
        let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16);
        let size = size.unwrap_or(0);
        let mut chunk = vec![0; size + 2]; // the chunk and its CRLF
        if size == 0 || reader.read_exact(&mut chunk).is_err() {
            return body;
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

/// A run's world: a home for the CLI's configuration, a working directory, the audit database,
/// and two commands whose sentinel files show whether they ran: one aimed at the mesh (the
/// sentinel `touch` is in front of the `ssh`, so it exists only if the whole command ran) and a
/// harmless one.
pub struct Scene {
    pub home: PathBuf,
    pub work: PathBuf,
    pub db: PathBuf,
    refused: PathBuf,
    passed: PathBuf,
    pub refused_command: String,
    pub passed_command: String,
    stubs: PathBuf,
    _dir: tempfile::TempDir,
}

impl Scene {
    pub fn new() -> Scene {
        let dir = tempfile::tempdir().unwrap();
        let (home, work, stubs) = (
            dir.path().join("home"),
            dir.path().join("work"),
            dir.path().join("stubs"),
        );
        for d in [&home, &work, &stubs] {
            std::fs::create_dir_all(d).unwrap();
        }
        // Should a command aimed at the mesh get through, it reaches no machine: `ssh` here is a
        // stub that does nothing (first on PATH).
        let ssh = stubs.join("ssh");
        std::fs::write(&ssh, "#!/bin/sh\nexit 0\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let refused = work.join("refused-command-ran");
        let passed = work.join("harmless-command-ran");
        Scene {
            db: dir.path().join("audit.db"),
            refused_command: format!("touch {} && ssh atlas uptime", refused.display()),
            passed_command: format!("touch {}", passed.display()),
            home,
            work,
            refused,
            passed,
            stubs,
            _dir: dir,
        }
    }

    /// The two commands, in the order the scripted model proposes them.
    pub fn commands(&self) -> Vec<String> {
        vec![self.refused_command.clone(), self.passed_command.clone()]
    }

    pub fn refused_ran(&self) -> bool {
        self.refused.exists()
    }

    pub fn passed_ran(&self) -> bool {
        self.passed.exists()
    }

    /// The guard's work in a run: the mesh command blocked, the harmless one run.
    pub fn assert_only_the_harmless_command_ran(&self, context: &str) {
        assert!(
            !self.refused_ran(),
            "the mesh command ran despite the hook\n{context}"
        );
        assert!(
            self.passed_ran(),
            "the harmless command did not run\n{context}"
        );
    }

    /// With the guard missing, the launcher blocks every shell call.
    pub fn assert_nothing_ran(&self, context: &str) {
        assert!(
            !self.refused_ran(),
            "the mesh command ran with the guard missing\n{context}"
        );
        assert!(
            !self.passed_ran(),
            "a command ran with the guard missing\n{context}"
        );
    }

    /// `cli` in the working directory, with this home, and mesh-guard as installed: on PATH
    /// (unless `guard_on_path` is false, as a broken install would leave it), its catalog and
    /// record in the environment for its MCP server (the hooks take them from their command
    /// line, `with_guard_paths`), no operator override.
    pub fn command(&self, cli: &Path, guard_on_path: bool) -> Command {
        let bin_dir = Path::new(env!("CARGO_BIN_EXE_mesh-guard"))
            .parent()
            .unwrap();
        // Without any mesh-guard installed on this machine (the README's install puts one in
        // ~/.cargo/bin, on PATH): the guard under test is this build's, or none.
        let system_path = std::env::var("PATH").unwrap_or_default();
        let system_path = system_path
            .split(':')
            .filter(|dir| !Path::new(dir).join("mesh-guard").exists())
            .collect::<Vec<_>>()
            .join(":");
        let path = if guard_on_path {
            format!(
                "{}:{}:{system_path}",
                self.stubs.display(),
                bin_dir.display()
            )
        } else {
            format!("{}:{system_path}", self.stubs.display())
        };
        let mut command = Command::new(cli);
        command
            .current_dir(&self.work)
            .env("HOME", &self.home)
            .env("PATH", path)
            .env("MESH_GUARD_CATALOG", root().join("examples/catalog.toml"))
            .env("MESH_GUARD_DB", &self.db)
            .env_remove("MESH_GUARD_OVERRIDE")
            .env_remove("MESH_GUARD_RULES");
        command
    }

    /// The record: (kind, agent, command, rule) of every event.
    pub fn record(&self) -> Vec<(String, String, String, String)> {
        let conn = rusqlite::Connection::open(&self.db).unwrap();
        conn.prepare("SELECT kind, agent, command, rule FROM events")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// The record a blocked mesh command leaves: one refusal, by `agent`, of the whole command.
    pub fn one_refusal_by(&self, agent: &str) -> Vec<(String, String, String, String)> {
        vec![(
            "refusal".to_string(),
            agent.to_string(),
            self.refused_command.clone(),
            "remote-access".to_string(),
        )]
    }
}

/// What a CLI run left.
pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// For failure messages.
    pub fn context(&self, api: &FakeApi) -> String {
        format!(
            "exit {:?}\nstdout:\n{}\nstderr:\n{}\nrequests:\n{}",
            self.status,
            self.stdout,
            self.stderr,
            api.log()
        )
    }
}

/// The output of a program copied a moment ago. While the copy was written, another test
/// thread of this binary may have forked: its child holds the copy open for writing until it
/// execs, and running the copy meanwhile fails with ETXTBSY ("Text file busy", seen in CI).
/// That lasts only until the child's exec, so the run is tried again for up to two seconds.
fn output_of_fresh_copy(command: &mut Command) -> std::process::Output {
    let started = Instant::now();
    loop {
        match command.output() {
            Err(e)
                if e.kind() == std::io::ErrorKind::ExecutableFileBusy
                    && started.elapsed() < Duration::from_secs(2) =>
            {
                std::thread::sleep(Duration::from_millis(10))
            }
            done => return done.unwrap(),
        }
    }
}

/// Runs `command` (stdin closed, outputs read as they come), killing it after `RUN_TIMEOUT`.
pub fn run(mut command: Command) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// `mesh-guard replay --format json` over the transcripts an agent CLI left in `home`, found
/// where replay looks by default (the CLI's own directories under that home), with the
/// example catalog. With `MESH_GUARD_E2E_KEEP_TRANSCRIPTS=DIR` the home is first copied to
/// `DIR/<agent>`: how tests/fixtures/replay was captured.
pub fn replay_home(agent: &str, home: &Path) -> Value {
    if let Some(keep) = std::env::var_os("MESH_GUARD_E2E_KEEP_TRANSCRIPTS") {
        let to = Path::new(&keep).join(agent);
        let _ = std::fs::remove_dir_all(&to);
        std::fs::create_dir_all(&to).unwrap();
        let copied = Command::new("cp")
            .arg("-a")
            .arg(home.join("."))
            .arg(&to)
            .status()
            .unwrap();
        assert!(copied.success());
    }
    let out = Command::new(env!("CARGO_BIN_EXE_mesh-guard"))
        .args(["replay", "--format", "json"])
        .env("HOME", home)
        .env("MESH_GUARD_CATALOG", root().join("examples/catalog.toml"))
        .env_remove("CODEX_HOME")
        .env_remove("COPILOT_HOME")
        .env_remove("GEMINI_CLI_HOME")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "replay exited {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// What a replay of one blocked `ssh atlas` among `commands` shell commands reports.
pub fn assert_replayed(replay: &Value, commands: u64) {
    assert_eq!(replay["commands"], commands, "{replay:#}");
    assert_eq!(replay["would_refuse"], 1, "{replay:#}");
    assert_eq!(replay["by_rule"]["remote-access"], 1, "{replay:#}");
    assert_eq!(replay["by_target"]["atlas"], 1, "{replay:#}");
    assert_eq!(
        replay["skipped"].as_array().map(Vec::len),
        Some(0),
        "{replay:#}"
    );
}

/// The unprivileged user a managed install's end-to-end test runs the agent as (the one
/// tests/e2e_hardened.rs creates).
pub const AGENT_USER: &str = "meshguard-agent";

/// The agent's user's uid and gid, created (a system account, no home) when absent.
pub fn agent_user() -> (u32, u32) {
    let id = |flag: &str| {
        Command::new("id")
            .args([flag, AGENT_USER])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
    };
    if id("-u").is_none() {
        let made = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/bin/sh",
                AGENT_USER,
            ])
            .status()
            .expect("useradd");
        assert!(made.success(), "useradd {AGENT_USER}");
    }
    (id("-u").expect("a uid"), id("-g").expect("a gid"))
}

impl Scene {
    /// A staged system tree beside the scene, `stage/`, holding a copy of mesh-guard in
    /// `usr/local/bin` and what `install AGENT --scope managed` (with `extra`) wrote for the
    /// example catalog: as an administrator installs for every user.
    pub fn install_managed(&self, agent: &str, extra: &[&str]) -> PathBuf {
        let stage = self.home.parent().unwrap().join("stage");
        let bin = stage.join("usr/local/bin/mesh-guard");
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_mesh-guard"), &bin).unwrap();
        let install = output_of_fresh_copy(
            Command::new(&bin)
                .arg("--catalog")
                .arg(root().join("examples/catalog.toml"))
                .arg("--db")
                .arg(&self.db)
                .args(["install", agent, "--scope", "managed"])
                .args(extra)
                .arg("--root")
                .arg(&stage)
                .arg("--bin")
                .arg(&bin),
        );
        assert!(
            install.status.success(),
            "{install:?}\n{}",
            String::from_utf8_lossy(&install.stderr)
        );
        stage
    }

    /// Hands the scene to the agent's user: its home and working directory theirs, the
    /// scene's directory open to them (sticky, so the record may be made there); anything
    /// else in it (a staged system tree) stays root's.
    pub fn give_to(&self, (uid, gid): (u32, u32)) {
        use std::os::unix::fs::PermissionsExt;
        let dir = self.home.parent().unwrap();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
        for top in [&self.home, &self.work] {
            let status = Command::new("chown")
                .arg("-R")
                .arg(format!("{uid}:{gid}"))
                .arg(top)
                .status()
                .unwrap();
            assert!(status.success());
        }
    }
}

/// Whether the agent's user can run `cli`: a CLI under a directory only root may enter (CI's
/// private copy of the checkout) cannot be the one the agent's user runs.
pub fn agent_can_run(cli: &Path) -> bool {
    agent_user();
    Command::new("runuser")
        .args(["-u", AGENT_USER, "--", "test", "-x"])
        .arg(cli)
        .status()
        .is_ok_and(|s| s.success())
}

/// `command` run in a private mount namespace where each `(from, to)` directory is
/// bind-mounted over `to` (a managed install's system files without touching the machine's),
/// as the unprivileged `AGENT_USER`, its environment kept.
pub fn namespaced_as_agent(command: &Command, binds: &[(&Path, &str)]) -> Command {
    let mut as_agent = Command::new("runuser");
    as_agent
        .args(["-p", "-u", AGENT_USER, "--"])
        .arg(command.get_program())
        .args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => as_agent.env(key, value),
            None => as_agent.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        as_agent.current_dir(dir);
    }
    namespaced(&as_agent, binds)
}

/// `command` run (as root) in a private mount namespace where each `(from, to)` directory is
/// bind-mounted over `to`: a managed install's system files without touching the machine's.
pub fn namespaced(command: &Command, binds: &[(&Path, &str)]) -> Command {
    let mut script = String::new();
    for (n, (_, to)) in binds.iter().enumerate() {
        // The mount points must exist; empty directories change nothing on the machine.
        let _ = std::fs::create_dir_all(to);
        script.push_str(&format!("mount --bind \"${}\" {to} && ", n + 1));
    }
    script.push_str(&format!("shift {} && exec \"$@\"", binds.len()));
    let mut wrapped = Command::new("unshare");
    wrapped
        .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
        .arg(script)
        .arg("sh");
    for (from, _) in binds {
        wrapped.arg(from);
    }
    wrapped.arg(command.get_program()).args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

/// Whether this process may make a private mount namespace (root, with `unshare`).
pub fn can_namespace() -> bool {
    let tool = |name: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !tool("runuser") || !tool("useradd") {
        return false;
    }
    let root =
        std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    root && Command::new("sh")
        .args(["-c", "command -v unshare"])
        .output()
        .is_ok_and(|o| o.status.success())
}
