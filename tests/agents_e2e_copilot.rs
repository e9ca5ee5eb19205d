//! End-to-end: mesh-guard as the preToolUse hook of the real GitHub Copilot CLI (`copilot -p`),
//! installed as docs/agents/copilot.md says, offline (`COPILOT_OFFLINE=true`, no GitHub login)
//! with a BYOK provider of type `anthropic` pointing at a local fake Anthropic Messages API.
//!
//! The fake model proposes two shell commands in turn through Copilot's `bash` tool: one aimed
//! at the mesh (with a sentinel `touch` in front) and a harmless one. Then we look at what
//! really happened: the sentinel files, what Copilot told the model about each call (the
//! `tool_result` blocks it sends back), and the audit record.
//!
//! The CLI comes from npm (`npm ci --prefix tests/e2e-copilot`, pinned by the lockfile there) or
//! from `MESH_GUARD_COPILOT`. Without it (or without node) this test cannot run: it says so
//! loudly, and fails when `MESH_GUARD_E2E_REQUIRED=1`.

mod common_e2e;

use common_e2e::{
    FakeApi, Output, Reply, Request, Scene, agent_cli, doc_block, run, with_guard_paths,
};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};

fn copilot_cli() -> Option<PathBuf> {
    agent_cli("copilot", "MESH_GUARD_COPILOT", "copilot")
}

/// A scripted Messages API: while the request offers the `bash` tool and commands are left,
/// the turn calls `bash` with the next one (counted by the `tool_result` blocks so far); else it
/// answers with the text `done`. Streamed as the real API streams: the tool input arrives in an
/// `input_json_delta`.
fn fake_messages_api(commands: Vec<String>) -> FakeApi {
    FakeApi::start(move |request: &Request| {
        if request.method != "POST" || request.path.split('?').next() != Some("/v1/messages") {
            return Reply::not_found();
        }
        let body = &request.body;
        let answered = tool_results(body).len();
        let offers_bash = body["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|t| t["name"] == "bash"));
        let (block, delta, stop) = match commands.get(answered).filter(|_| offers_bash) {
            Some(command) => (
                json!({"type": "tool_use", "id": format!("toolu_e2e_{answered}"), "name": "bash", "input": {}}),
                json!({"type": "input_json_delta", "partial_json":
                    json!({"command": command, "description": "e2e"}).to_string()}),
                "tool_use",
            ),
            None => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": "done"}),
                "end_turn",
            ),
        };
        let message = json!({
            "id": "msg_e2e", "type": "message", "role": "assistant",
            "model": body["model"], "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        });
        Reply::sse(&[
            (
                "message_start",
                json!({"type": "message_start", "message": message}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": block}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": delta}),
            ),
            (
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                    "usage": {"output_tokens": 10}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ])
    })
}

/// The text of each `tool_result` block in a request's messages, in order.
fn tool_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|block| block["type"] == "tool_result")
        .map(|block| match &block["content"] {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            other => other.to_string(),
        })
        .collect()
}

/// What Copilot told the model about each shell call: the results in its last request.
fn told_the_model(api: &FakeApi) -> Vec<String> {
    api.requests()
        .iter()
        .rev()
        .find(|r| r.body["messages"].is_array())
        .map(|r| tool_results(&r.body))
        .unwrap_or_default()
}

struct CopilotRun {
    scene: Scene,
    api: FakeApi,
    out: Output,
    context: String,
}

/// One `copilot -p` run with the hook file from docs/agents/copilot.md in
/// `$COPILOT_HOME/hooks/`; `guard_on_path` false leaves the mesh-guard binary off PATH.
fn run_copilot(cli: &Path, guard_on_path: bool) -> CopilotRun {
    let scene = Scene::new();
    let api = fake_messages_api(scene.commands());
    let copilot_home = scene.home.join(".copilot");
    std::fs::create_dir_all(copilot_home.join("hooks")).unwrap();
    // `install` writes the instead-of table into the instructions file Copilot reads at the
    // start of a session (it drops a sessionStart hook's output); the hook file is then the
    // page's own, below.
    let install = std::process::Command::new(env!("CARGO_BIN_EXE_mesh-guard"))
        .arg("--catalog")
        .arg(common_e2e::root().join("examples/catalog.toml"))
        .arg("--db")
        .arg(&scene.db)
        .args(["install", "copilot"])
        .env("HOME", &scene.home)
        .env("COPILOT_HOME", &copilot_home)
        .output()
        .unwrap();
    assert!(install.status.success(), "{install:?}");
    assert!(copilot_home.join("copilot-instructions.md").is_file());
    std::fs::write(
        copilot_home.join("hooks/mesh-guard.json"),
        with_guard_paths(&doc_block("copilot.md", "json", 0), &scene.db),
    )
    .unwrap();

    let mut command = scene.command(cli, guard_on_path);
    command
        .args([
            "-p",
            "check the uptime of atlas",
            // Required for non-interactive mode: no approval prompts, so only the hook stands
            // between the model and the shell.
            "--allow-all-tools",
            // Only the agent's answer on stdout.
            "--silent",
            "--disable-client-telemetry",
        ])
        .env("COPILOT_HOME", &copilot_home)
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_PROVIDER_TYPE", "anthropic")
        .env("COPILOT_PROVIDER_BASE_URL", api.base_url())
        .env("COPILOT_PROVIDER_API_KEY", "e2e-not-a-key")
        .env("COPILOT_MODEL", "claude-sonnet-4.5")
        .env_remove("COPILOT_ALLOW_ALL")
        .env_remove("COPILOT_GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .env_remove("GITHUB_TOKEN");
    let out = run(command);
    let context = out.context(&api);
    assert!(out.status.success(), "{context}");
    CopilotRun {
        scene,
        api,
        out,
        context,
    }
}

#[test]
fn copilot_cli_blocks_a_mesh_command_tells_the_model_why_and_runs_a_harmless_one() {
    let Some(cli) = copilot_cli() else { return };
    let run = run_copilot(&cli, true);
    let context = &run.context;

    run.scene.assert_only_the_harmless_command_ran(context);

    // What the model was told: the refusal (the reason from the deny JSON), naming the mesh
    // tool; then the harmless command's completion.
    let told = told_the_model(&run.api);
    assert_eq!(told.len(), 2, "{told:?}\n{context}");
    assert!(
        told[0].starts_with("Denied by preToolUse hook: Decided by mesh-guard, not an error"),
        "{told:?}"
    );
    assert!(told[0].contains("mesh exec atlas"), "{told:?}");
    assert!(told[0].contains("Nothing else is disabled"), "{told:?}");
    let _ = writeln!(
        std::io::stderr(),
        "e2e: copilot: refusal: the model read {:?}",
        told[0]
    );
    // Whether the session-start hook's table reached the model (docs/agents/README.md).
    let table = run
        .api
        .requests()
        .iter()
        .any(|r| r.body.to_string().contains("| instead of | use | tool |"));
    assert!(
        table,
        "the instructions file's table did not reach the model\n{context}"
    );
    assert!(
        !told[1].contains("Denied") && told[1].contains("exit code 0"),
        "the harmless command was not run: {told:?}"
    );
    assert_eq!(run.out.stdout.trim(), "done", "{context}");

    assert_eq!(run.scene.record(), run.scene.one_refusal_by("copilot"));

    // Replay finds the transcript the CLI wrote where it keeps them, and reads both commands.
    common_e2e::assert_replayed(&common_e2e::replay_home("copilot", &run.scene.home), 2);
}

#[test]
fn copilot_cli_with_the_guard_missing_blocks_every_shell_call() {
    // The launcher turns "command not found" into exit 2; Copilot denies on exit 2 (and on any
    // other non-zero exit of a preToolUse hook). With no deny JSON on stdout, the model would be
    // told only "hook exited with code 2".
    let Some(cli) = copilot_cli() else { return };
    let run = run_copilot(&cli, false);
    let context = &run.context;
    run.scene.assert_nothing_ran(context);
    let told = told_the_model(&run.api);
    // The launcher's tail writes the deny answer on stdout too, so the model reads why.
    assert_eq!(
        told,
        ["Denied by preToolUse hook: Decided by mesh-guard, not an error: do not retry or work \
          round it. Tell the operator: mesh-guard could not run (exit 127), so it refuses every \
          command until it can."; 2],
        "{context}"
    );
    assert!(!run.scene.db.exists(), "nothing could have recorded");
}
