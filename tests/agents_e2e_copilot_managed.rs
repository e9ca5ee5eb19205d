//! End-to-end: `mesh-guard install copilot --scope managed` with the real Copilot CLI
//! (`copilot -p`, offline against a fake Messages API on loopback). The policy hook the install
//! writes (`/etc/github-copilot/policy.d/mesh-guard.json`, bind-mounted from a `--root` staging
//! tree in a private mount namespace, `common_e2e::namespaced`) holds against the user's own
//! `disableAllHooks` in their settings and in the repository's. The CLI runs as the unprivileged `meshguard-agent`. Needs root, `unshare` and `runuser`, and
//! the CLI (`npm ci --prefix tests/e2e-copilot`, or `MESH_GUARD_COPILOT`).

mod common_e2e;

use common_e2e::{FakeApi, Reply, Request, Scene, agent_cli, run};
use serde_json::{Value, json};
use std::path::PathBuf;

fn prerequisites() -> Option<PathBuf> {
    let cli = agent_cli("copilot", "MESH_GUARD_COPILOT", "copilot")?;
    let message = if !common_e2e::can_namespace() {
        "needs root, unshare, useradd and runuser".to_string()
    } else if !common_e2e::agent_can_run(&cli) {
        // A CLI under a directory only root may enter (CI's private copy of the checkout).
        format!(
            "{} cannot be run by {} (point MESH_GUARD_COPILOT at a copy it can reach)",
            cli.display(),
            common_e2e::AGENT_USER
        )
    } else {
        return Some(cli);
    };
    let message = format!("e2e copilot managed install: {message} — end-to-end test NOT run");
    if std::env::var("MESH_GUARD_E2E_REQUIRED").as_deref() == Ok("1") {
        panic!("{message} (MESH_GUARD_E2E_REQUIRED=1)");
    }
    eprintln!("\n{message}\n");
    None
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
#[test]
fn a_managed_copilot_policy_hook_holds_against_disable_all_hooks() {
    let Some(cli) = prerequisites() else { return };
    let scene = Scene::new();
    let stage = scene.install_managed("copilot", &[]);
    // The user's switches: every hook off, in their own settings and in the repository's.
    let copilot_home = scene.home.join(".copilot");
    std::fs::create_dir_all(&copilot_home).unwrap();
    let off = json!({"disableAllHooks": true}).to_string();
    std::fs::write(copilot_home.join("settings.json"), &off).unwrap();
    std::fs::create_dir_all(scene.work.join(".github/copilot")).unwrap();
    std::fs::write(scene.work.join(".github/copilot/settings.json"), &off).unwrap();

    let api = fake_messages_api(scene.commands());
    // The agent runs as an unprivileged user who owns its home and project.
    scene.give_to(common_e2e::agent_user());
    let mut command = scene.command(&cli, false);
    command
        .args([
            "-p",
            "check the uptime of atlas",
            "--allow-all-tools",
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
    let out = run(common_e2e::namespaced_as_agent(
        &command,
        &[
            (&stage.join("etc/github-copilot"), "/etc/github-copilot"),
            (&stage.join("etc/mesh-guard"), "/etc/mesh-guard"),
        ],
    ));
    let context = out.context(&api);
    scene.assert_only_the_harmless_command_ran(&context);
    // It ran as the agent's user, not as root.
    let ran = scene.work.join("harmless-command-ran");
    assert_eq!(
        std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&ran).unwrap()),
        common_e2e::agent_user().0,
        "{context}"
    );
    assert_eq!(scene.record(), scene.one_refusal_by("copilot"), "{context}");
}
