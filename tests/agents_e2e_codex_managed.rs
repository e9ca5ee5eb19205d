//! End-to-end: `mesh-guard install codex --scope managed` with the real Codex CLI (`codex exec`,
//! offline against a fake Responses API on loopback), whose user tries to switch the hook off
//! with everything Codex lets a user set: `[features] hooks = false` in their own
//! `config.toml`, the same as a `-c` flag, and a user `hooks.json` of their own. The managed
//! hook holds: the mesh command does not run, the model reads the refusal, the harmless
//! command runs, and the session-start hook handed the model the "instead of" table.
//!
//! The install is staged with `--root` into a scratch tree whose `etc/codex` and
//! `etc/mesh-guard` are bind-mounted over the machine's in a private mount namespace
//! (`unshare --mount`, `common_e2e::namespaced`): the machine's own policy files are neither read nor changed. The CLI runs as the
//! unprivileged `meshguard-agent`. Needs root, `unshare` and `runuser`, and the CLI (`npm ci --prefix tests/e2e-codex`, or `MESH_GUARD_CODEX`):
//! without them it says so and passes, unless `MESH_GUARD_E2E_REQUIRED=1`.

mod common_e2e;

use common_e2e::{FakeApi, Reply, Request, Scene, agent_cli, run};
use serde_json::{Value, json};
use std::path::PathBuf;

fn prerequisites() -> Option<PathBuf> {
    let cli = agent_cli("codex", "MESH_GUARD_CODEX", "codex")?;
    let message = if !common_e2e::can_namespace() {
        "needs root, unshare, useradd and runuser".to_string()
    } else if !common_e2e::agent_can_run(&cli) {
        // A CLI under a directory only root may enter (CI's private copy of the checkout).
        format!(
            "{} cannot be run by {} (point MESH_GUARD_CODEX at a copy it can reach)",
            cli.display(),
            common_e2e::AGENT_USER
        )
    } else {
        return Some(cli);
    };
    let message = format!("e2e codex managed install: {message} — end-to-end test NOT run");
    if std::env::var("MESH_GUARD_E2E_REQUIRED").as_deref() == Ok("1") {
        panic!("{message} (MESH_GUARD_E2E_REQUIRED=1)");
    }
    eprintln!("\n{message}\n");
    None
}

fn fake_responses_api(commands: Vec<String>) -> FakeApi {
    FakeApi::start(move |request: &Request| {
        if request.method != "POST" || !request.path.ends_with("/responses") {
            return Reply::not_found();
        }
        let answered = outputs(&request.body).len();
        let item = match commands.get(answered) {
            Some(command) => json!({
                "type": "function_call", "id": format!("fc_{answered}"),
                "call_id": format!("call_{answered}"), "name": "exec_command",
                "arguments": json!({"cmd": command}).to_string(),
            }),
            None => json!({
                "type": "message", "id": "msg_e2e", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "done", "annotations": []}],
            }),
        };
        Reply::sse(&[
            (
                "response.created",
                json!({"type": "response.created", "response": {"id": "resp_e2e"}}),
            ),
            (
                "response.output_item.done",
                json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
            ),
            (
                "response.completed",
                json!({"type": "response.completed", "response": {"id": "resp_e2e", "usage": {
                    "input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}}),
            ),
        ])
    })
}

fn outputs(body: &Value) -> Vec<String> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| match &item["output"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[test]
fn a_managed_codex_hook_holds_against_the_users_own_switches() {
    let Some(cli) = prerequisites() else { return };
    let scene = Scene::new();
    let stage = scene.install_managed("codex", &["--managed-hooks-only"]);

    // The user's own switches: hooks off in their config, a hooks.json of their own that
    // would run nothing of the guard's.
    let api = fake_responses_api(scene.commands());
    let codex_home = scene.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"e2e-model\"\nmodel_provider = \"fake\"\n\n[features]\nhooks = false\n\n\
             [model_providers.fake]\nname = \"fake\"\nbase_url = \"{}/v1\"\n\
             env_key = \"MESH_GUARD_E2E_KEY\"\nwire_api = \"responses\"\n",
            api.base_url()
        ),
    )
    .unwrap();
    std::fs::write(
        codex_home.join("hooks.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "true"}]}]}})
        .to_string(),
    )
    .unwrap();

    // The agent runs as an unprivileged user who owns its home and project.
    scene.give_to(common_e2e::agent_user());
    let mut command = scene.command(&cli, false);
    command
        .args([
            "exec",
            "-c",
            "features.hooks=false",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "check the uptime of atlas",
        ])
        .env("CODEX_HOME", &codex_home)
        .env("MESH_GUARD_E2E_KEY", "e2e-not-a-key")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("CODEX_API_KEY");
    let out = run(common_e2e::namespaced_as_agent(
        &command,
        &[
            (&stage.join("etc/codex"), "/etc/codex"),
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
    let requests = api.requests();
    let last = requests
        .iter()
        .rev()
        .find(|r| r.path.ends_with("/responses"))
        .expect("a request");
    let told = outputs(&last.body);
    assert_eq!(told.len(), 2, "{told:?}\n{context}");
    assert!(
        told[0].starts_with("Command blocked by PreToolUse hook: Decided by mesh-guard"),
        "{told:?}"
    );
    assert!(told[0].contains("mesh exec atlas"), "{told:?}");
    assert_eq!(scene.record(), scene.one_refusal_by("codex"), "{context}");
    // The session-start hook's table reached the model before its first command.
    let first = requests
        .iter()
        .find(|r| r.path.ends_with("/responses"))
        .expect("a request");
    assert!(
        first
            .body
            .to_string()
            .contains("| instead of | use | tool |"),
        "the model was not given the instead-of table at session start\n{context}"
    );
    eprintln!("e2e: codex managed: the model read {:?}", told[0]);
}
