//! End-to-end: mesh-guard as the BeforeTool hook of the real Gemini CLI, installed exactly as
//! docs/agents/gemini.md says, against a local fake Gemini API (no network, no account).
//!
//! The fake model proposes two shell commands in turn: one aimed at the mesh (with a sentinel
//! `touch` in front, so we can see whether it ran) and a harmless one (which must run). Then we
//! look at what really happened: the sentinel files, what the CLI told the model about each call,
//! and the audit record.
//!
//! The CLI comes from npm (`npm ci --prefix tests/e2e-gemini`, pinned by the lockfile there) or
//! from `MESH_GUARD_GEMINI`. Without it (or without node) this test cannot run: it says so
//! loudly, and fails when `MESH_GUARD_E2E_REQUIRED=1`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const RUN_TIMEOUT: Duration = Duration::from_secs(180);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Gemini CLI, or None (after saying so loudly) when it cannot run here.
fn gemini_cli() -> Option<PathBuf> {
    let cli = std::env::var_os("MESH_GUARD_GEMINI")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("tests/e2e-gemini/node_modules/.bin/gemini"));
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if cli.is_file() && node {
        return Some(cli);
    }
    let message = format!(
        "e2e: gemini not installed ({} missing{}; run npm ci --prefix tests/e2e-gemini) \
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

/// A scripted Gemini API: each streaming turn proposes the next shell command, until none are
/// left; then it answers with text. Every request body is kept.
struct FakeGemini {
    port: u16,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl FakeGemini {
    fn start(commands: Vec<String>) -> FakeGemini {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let seen = Arc::clone(&seen);
                let commands = commands.clone();
                std::thread::spawn(move || serve(stream, &commands, &seen));
            }
        });
        FakeGemini { port, requests }
    }

    /// What the CLI told the model about each shell call, in order.
    fn function_responses(&self) -> Vec<Value> {
        let requests = self.requests.lock().unwrap();
        let last = requests.iter().rev().find(|r| r.get("contents").is_some());
        last.and_then(|r| r["contents"].as_array())
            .into_iter()
            .flatten()
            .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
            .filter_map(|p| p.get("functionResponse").map(|f| f["response"].clone()))
            .collect()
    }
}

fn serve(stream: TcpStream, commands: &[String], seen: &Mutex<Vec<Value>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    seen.lock().unwrap().push(request.clone());

    let path = request_line.split_whitespace().nth(1).unwrap_or_default();
    let answered = request["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p.get("functionResponse").is_some())
        .count();
    let part = if !path.contains(":streamGenerateContent") {
        // A side request (the model router, a classifier): a plain, low-complexity answer.
        json!({"text": json!({"complexity_reasoning": "simple", "complexity_score": 10}).to_string()})
    } else if let Some(command) = commands.get(answered) {
        json!({"functionCall": {"name": "run_shell_command", "args": {"command": command, "description": "e2e"}}})
    } else {
        json!({"text": "done"})
    };
    let chunk = json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-2.5-flash",
    });
    let (kind, body) = if path.contains("alt=sse") {
        ("text/event-stream", format!("data: {chunk}\r\n\r\n"))
    } else {
        ("application/json", chunk.to_string())
    };
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// The configuration from docs/agents/gemini.md, word for word (the launcher line included).
fn install_hook(home: &Path) {
    let command = "mesh-guard hook --agent gemini || { s=$?; [ \"$s\" -eq 2 ] || echo \"mesh-guard failed (exit $s); command refused\" >&2; exit 2; }";
    let settings = json!({
        "hooks": {"BeforeTool": [{"matcher": "*", "hooks": [{
            "name": "mesh-guard", "type": "command", "command": command,
            "timeout": 30000, "description": "Refuses shell commands aimed at the mesh",
        }]}]},
        "security": {"auth": {"selectedType": "gemini-api-key"}},
    });
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::write(home.join(".gemini/settings.json"), settings.to_string()).unwrap();
}

struct Run {
    context: String,
    stdout: String,
    refused_ran: bool,
    passed_ran: bool,
    responses: Vec<Value>,
    db: PathBuf,
    refused_command: String,
    _dir: tempfile::TempDir,
}

/// One headless Gemini CLI run with the hook installed; `guard_on_path` false leaves the
/// `mesh-guard` binary off PATH, as a broken install would.
fn run_gemini(cli: &Path, guard_on_path: bool) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let (home, work, db) = (
        dir.path().join("home"),
        dir.path().join("work"),
        dir.path().join("audit.db"),
    );
    std::fs::create_dir_all(&work).unwrap();
    install_hook(&home);
    let refused = work.join("refused-command-ran");
    let passed = work.join("harmless-command-ran");
    let refused_command = format!("touch {} && ssh atlas uptime", refused.display());
    let api = FakeGemini::start(vec![
        refused_command.clone(),
        format!("touch {}", passed.display()),
    ]);

    // mesh-guard as installed: on PATH, its catalog and record from the environment.
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_mesh-guard"))
        .parent()
        .unwrap();
    let system_path = std::env::var("PATH").unwrap_or_default();
    let path = if guard_on_path {
        format!("{}:{system_path}", bin_dir.display())
    } else {
        system_path
    };
    let mut child = Command::new(cli)
        .args([
            "-m",
            "gemini-2.5-flash",
            "-p",
            "check the uptime of atlas",
            "--yolo",
        ])
        .current_dir(&work)
        .env("HOME", &home)
        .env("PATH", path)
        .env("GEMINI_API_KEY", "e2e-not-a-key")
        .env(
            "GOOGLE_GEMINI_BASE_URL",
            format!("http://127.0.0.1:{}", api.port),
        )
        // Headless runs refuse an untrusted folder outright.
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env("MESH_GUARD_CATALOG", root().join("examples/catalog.toml"))
        .env("MESH_GUARD_DB", &db)
        .env_remove("MESH_GUARD_OVERRIDE")
        .env_remove("MESH_GUARD_RULES")
        .env_remove("GOOGLE_API_KEY")
        .env_remove("GOOGLE_CLOUD_PROJECT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let context = format!(
        "gemini exit {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(out.status.success(), "{context}");
    Run {
        context,
        stdout,
        refused_ran: refused.exists(),
        passed_ran: passed.exists(),
        responses: api.function_responses(),
        db,
        refused_command,
        _dir: dir,
    }
}

#[test]
fn gemini_cli_blocks_a_mesh_command_tells_the_model_why_and_runs_a_harmless_one() {
    let Some(cli) = gemini_cli() else { return };
    let run = run_gemini(&cli, true);
    let context = &run.context;

    // What really happened.
    assert!(
        !run.refused_ran,
        "the mesh command ran despite the hook\n{context}"
    );
    assert!(
        run.passed_ran,
        "the harmless command did not run\n{context}"
    );

    // What the model was told: the refusal, naming the mesh tool; then the harmless output.
    let responses = &run.responses;
    assert_eq!(responses.len(), 2, "{responses:?}\n{context}");
    let blocked = responses[0]["error"].as_str().unwrap_or_default();
    assert!(
        blocked.contains("mesh exec atlas"),
        "the model was not told what to use: {:?}",
        responses[0]
    );
    assert!(blocked.contains("Nothing else is disabled"), "{blocked}");
    assert!(
        responses[1].get("error").is_none(),
        "the harmless command was refused: {:?}",
        responses[1]
    );
    assert_eq!(run.stdout.trim(), "done", "{context}");

    // The record: one refusal, by gemini, of the whole command.
    let conn = rusqlite::Connection::open(&run.db).unwrap();
    let rows: Vec<(String, String, String, String)> = conn
        .prepare("SELECT kind, agent, command, rule FROM events")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        rows,
        [(
            "refusal".to_string(),
            "gemini".to_string(),
            run.refused_command.clone(),
            "remote-access".to_string()
        )]
    );
}

#[test]
fn gemini_cli_with_the_guard_missing_blocks_every_shell_call_through_the_launcher() {
    // Gemini fails open on a hook that exits 127: the launcher line turns it into exit 2 with
    // a reason on stderr, which Gemini blocks.
    let Some(cli) = gemini_cli() else { return };
    let run = run_gemini(&cli, false);
    let context = &run.context;
    assert!(
        !run.refused_ran,
        "the mesh command ran with the guard missing\n{context}"
    );
    assert!(
        !run.passed_ran,
        "a command ran with the guard missing\n{context}"
    );
    assert_eq!(run.responses.len(), 2, "{:?}\n{context}", run.responses);
    for response in &run.responses {
        let error = response["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("mesh-guard failed (exit 127); command refused"),
            "{response:?}"
        );
    }
    assert!(!run.db.exists(), "nothing could have recorded");
}
