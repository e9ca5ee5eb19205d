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

mod common_e2e;

use common_e2e::{FakeApi, Reply, Request, Scene, agent_cli, doc_block, run, with_guard_paths};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The Gemini CLI, or None (after saying so loudly) when it cannot run here.
fn gemini_cli() -> Option<PathBuf> {
    agent_cli("gemini", "MESH_GUARD_GEMINI", "gemini")
}

/// A scripted Gemini API: each streaming turn proposes the next shell command, until none are
/// left; then it answers with text.
fn fake_gemini(commands: Vec<String>) -> FakeApi {
    FakeApi::start(move |request: &Request| {
        let answered = function_responses_in(&request.body).len();
        let part = if !request.path.contains(":streamGenerateContent") {
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
        if request.path.contains("alt=sse") {
            Reply {
                status: "200 OK",
                content_type: "text/event-stream",
                body: format!("data: {chunk}\r\n\r\n"),
            }
        } else {
            Reply::json(&chunk)
        }
    })
}

/// The `response` of each `functionResponse` part in a request's contents, in order.
fn function_responses_in(body: &Value) -> Vec<Value> {
    body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p.get("functionResponse").map(|f| f["response"].clone()))
        .collect()
}

/// What the CLI told the model about each shell call, in order: the last conversation request.
fn function_responses(api: &FakeApi) -> Vec<Value> {
    api.requests()
        .iter()
        .rev()
        .find(|r| r.body.get("contents").is_some())
        .map(|r| function_responses_in(&r.body))
        .unwrap_or_default()
}

/// The configuration from docs/agents/gemini.md (its first JSON block, the launcher line
/// included), plus API-key auth.
fn install_hook(home: &Path, db: &Path) {
    let mut settings: Value =
        serde_json::from_str(&with_guard_paths(&doc_block("gemini.md", "json", 0), db)).unwrap();
    settings["security"] = json!({"auth": {"selectedType": "gemini-api-key"}});
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::write(home.join(".gemini/settings.json"), settings.to_string()).unwrap();
}

struct Run {
    context: String,
    stdout: String,
    responses: Vec<Value>,
    scene: Scene,
    /// The session-start hook's instead-of table reached the model.
    table: bool,
}

/// One headless Gemini CLI run with the hook installed; `guard_on_path` false leaves the
/// `mesh-guard` binary off PATH, as a broken install would.
fn run_gemini(cli: &Path, guard_on_path: bool) -> Run {
    let scene = Scene::new();
    install_hook(&scene.home, &scene.db);
    let api = fake_gemini(scene.commands());
    let mut command = scene.command(cli, guard_on_path);
    command
        .args([
            "-m",
            "gemini-2.5-flash",
            "-p",
            "check the uptime of atlas",
            "--yolo",
        ])
        .env("GEMINI_API_KEY", "e2e-not-a-key")
        .env("GOOGLE_GEMINI_BASE_URL", api.base_url())
        // Headless runs refuse an untrusted folder outright.
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env_remove("GOOGLE_API_KEY")
        .env_remove("GOOGLE_CLOUD_PROJECT");
    let out = run(command);
    let context = format!("gemini {}", out.context(&api));
    assert!(out.status.success(), "{context}");
    // Whether the session-start hook's table reached the model (docs/agents/README.md).
    let table = api
        .requests()
        .iter()
        .any(|r| r.body.to_string().contains("| instead of | use | tool |"));
    Run {
        table,
        context,
        stdout: out.stdout,
        responses: function_responses(&api),
        scene,
    }
}

#[test]
fn gemini_cli_blocks_a_mesh_command_tells_the_model_why_and_runs_a_harmless_one() {
    let Some(cli) = gemini_cli() else { return };
    let run = run_gemini(&cli, true);
    let context = &run.context;

    // What really happened.
    run.scene.assert_only_the_harmless_command_ran(context);

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
    assert!(blocked.contains(mesh_guard::message::DECISION), "{blocked}");
    assert!(
        run.table,
        "the session-start hook's table did not reach the model\n{context}"
    );
    let _ = writeln!(
        std::io::stderr(),
        "e2e: gemini: refusal: the model read {blocked:?}"
    );
    assert!(
        responses[1].get("error").is_none(),
        "the harmless command was refused: {:?}",
        responses[1]
    );
    assert_eq!(run.stdout.trim(), "done", "{context}");

    // The record: one refusal, by gemini, of the whole command.
    assert_eq!(run.scene.record(), run.scene.one_refusal_by("gemini"));

    // Replay finds the transcript the CLI wrote where it keeps them, and reads both commands.
    common_e2e::assert_replayed(&common_e2e::replay_home("gemini", &run.scene.home), 2);
}

#[test]
fn gemini_cli_with_the_guard_missing_blocks_every_shell_call_through_the_launcher() {
    // Gemini fails open on a hook that exits 127: the launcher line turns it into exit 2 with
    // a reason on stderr, which Gemini blocks.
    let Some(cli) = gemini_cli() else { return };
    let run = run_gemini(&cli, false);
    let context = &run.context;
    run.scene.assert_nothing_ran(context);
    assert_eq!(run.responses.len(), 2, "{:?}\n{context}", run.responses);
    for response in &run.responses {
        let error = response["error"].as_str().unwrap_or_default();
        let _ = writeln!(
            std::io::stderr(),
            "e2e: gemini: missing binary: the model read {error:?}"
        );
        assert!(
            error.contains(
                "mesh-guard could not run (exit 127), so it refuses every command until it can."
            ),
            "{response:?}"
        );
    }
    assert!(!run.scene.db.exists(), "nothing could have recorded");
}
