//! End-to-end: mesh-guard as the PreToolUse hook of the real Codex CLI (`codex exec`), installed
//! as docs/agents/codex.md says, against a local fake OpenAI Responses API (a custom
//! `model_providers` entry pointing at loopback; no network, no account).
//!
//! The fake model proposes two shell commands in turn through Codex's shell tool
//! (`exec_command`, argument `cmd`): one aimed at the mesh (with a sentinel `touch` in front) and
//! a harmless one. Then we look at what really happened: the sentinel files, what Codex told the
//! model about each call (the `function_call_output` items it sends back), and the audit record.
//!
//! The CLI comes from npm (`npm ci --prefix tests/e2e-codex`, pinned by the lockfile there) or
//! from `MESH_GUARD_CODEX`. Without it (or without node) this test cannot run: it says so
//! loudly, and fails when `MESH_GUARD_E2E_REQUIRED=1`.

mod common_e2e;

use common_e2e::{
    FakeApi, Output, Reply, Request, Scene, agent_cli, doc_block, run, with_guard_paths,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn codex_cli() -> Option<PathBuf> {
    agent_cli("codex", "MESH_GUARD_CODEX", "codex")
}

/// A scripted Responses API: each turn proposes the next command through `exec_command`, until
/// none are left; then it answers with the text `done`. The turn is counted by the
/// `function_call_output` items the request carries (one per call answered so far).
fn fake_responses_api(commands: Vec<String>) -> FakeApi {
    FakeApi::start(move |request: &Request| {
        if request.method != "POST" || !request.path.ends_with("/responses") {
            return Reply::not_found();
        }
        let answered = function_call_outputs(&request.body).len();
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

/// The `output` of each `function_call_output` in a request's input, in order.
fn function_call_outputs(body: &Value) -> Vec<String> {
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

/// What Codex told the model about each shell call: the outputs in its last request.
fn told_the_model(api: &FakeApi) -> Vec<String> {
    api.requests()
        .iter()
        .rev()
        .find(|r| r.path.ends_with("/responses"))
        .map(|r| function_call_outputs(&r.body))
        .unwrap_or_default()
}

/// Where the hook goes, as docs/agents/codex.md gives it.
enum Install {
    /// `~/.codex/hooks.json`, the doc's first (JSON) block.
    HooksJson,
    /// Inline in `~/.codex/config.toml`, the doc's TOML block.
    ConfigToml,
}

struct CodexRun {
    scene: Scene,
    api: FakeApi,
    out: Output,
    context: String,
}

/// One `codex exec` run with the hook installed. `guard_on_path` false leaves the mesh-guard
/// binary off PATH; `bypass_trust` false leaves out `--dangerously-bypass-hook-trust`.
fn run_codex(cli: &Path, install: Install, guard_on_path: bool, bypass_trust: bool) -> CodexRun {
    let scene = Scene::new();
    let api = fake_responses_api(scene.commands());
    let codex_home = scene.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let mut config = format!(
        "model = \"e2e-model\"\nmodel_provider = \"fake\"\n\n\
         [model_providers.fake]\nname = \"fake\"\nbase_url = \"{}/v1\"\n\
         env_key = \"MESH_GUARD_E2E_KEY\"\nwire_api = \"responses\"\n\n",
        api.base_url()
    );
    match install {
        Install::HooksJson => std::fs::write(
            codex_home.join("hooks.json"),
            with_guard_paths(&doc_block("codex.md", "json", 0), &scene.db),
        )
        .unwrap(),
        Install::ConfigToml => config.push_str(&with_guard_paths(
            &doc_block("codex.md", "toml", 0),
            &scene.db,
        )),
    }
    std::fs::write(codex_home.join("config.toml"), config).unwrap();

    let mut command = scene.command(cli, guard_on_path);
    command.arg("exec");
    if bypass_trust {
        command.arg("--dangerously-bypass-hook-trust");
    }
    command
        .args([
            // The working directory is a scratch directory, not a git repository.
            "--skip-git-repo-check",
            // No approval prompts and no sandbox: only the hook stands between the model and
            // the shell (a sandbox could stop or allow the sentinel `touch` for its own reasons).
            "--dangerously-bypass-approvals-and-sandbox",
            "check the uptime of atlas",
        ])
        .env("CODEX_HOME", &codex_home)
        .env("MESH_GUARD_E2E_KEY", "e2e-not-a-key")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("CODEX_API_KEY");
    let out = run(command);
    let context = out.context(&api);
    assert!(out.status.success(), "{context}");
    CodexRun {
        scene,
        api,
        out,
        context,
    }
}

/// The guard did its job in a run: the mesh command blocked (the model told why, the refusal
/// recorded as Codex's), the harmless one run.
fn assert_blocked_and_told(run: &CodexRun) {
    let context = &run.context;
    run.scene.assert_only_the_harmless_command_ran(context);

    let told = told_the_model(&run.api);
    assert_eq!(told.len(), 2, "{told:?}\n{context}");
    assert!(
        told[0].starts_with("Command blocked by PreToolUse hook: "),
        "{told:?}"
    );
    assert!(told[0].contains("mesh exec atlas"), "{told:?}");
    assert!(told[0].contains("Nothing else is disabled"), "{told:?}");
    assert!(
        !told[1].contains("blocked") && told[1].contains("exited with code 0"),
        "the harmless command was not run: {told:?}"
    );
    assert_eq!(run.out.stdout.trim(), "done", "{context}");

    assert_eq!(run.scene.record(), run.scene.one_refusal_by("codex"));

    // Replay finds the transcript the CLI wrote where it keeps them, and reads both commands.
    common_e2e::assert_replayed(&common_e2e::replay_home("codex", &run.scene.home), 2);
}

#[test]
fn codex_cli_blocks_a_mesh_command_tells_the_model_why_and_runs_a_harmless_one() {
    let Some(cli) = codex_cli() else { return };
    assert_blocked_and_told(&run_codex(&cli, Install::HooksJson, true, true));
}

#[test]
fn codex_cli_with_the_hook_inline_in_config_toml_blocks_the_same() {
    let Some(cli) = codex_cli() else { return };
    assert_blocked_and_told(&run_codex(&cli, Install::ConfigToml, true, true));
}

#[test]
fn codex_cli_with_the_guard_missing_blocks_every_shell_call_through_the_launcher() {
    // Codex fails open on a hook that exits 127: the launcher line turns it into exit 2 with a
    // reason on stderr, which Codex blocks and passes on to the model.
    let Some(cli) = codex_cli() else { return };
    let run = run_codex(&cli, Install::HooksJson, false, true);
    let context = &run.context;
    run.scene.assert_nothing_ran(context);
    let told = told_the_model(&run.api);
    assert_eq!(told.len(), 2, "{told:?}\n{context}");
    for output in &told {
        assert!(
            output.starts_with("Command blocked by PreToolUse hook: ")
                && output.contains(
                    "mesh-guard could not run (exit 127), so it refuses every command until it can."
                ),
            "{output:?}"
        );
    }
    assert!(!run.scene.db.exists(), "nothing could have recorded");
}

#[test]
fn codex_cli_skips_an_untrusted_hook_so_the_trust_step_is_part_of_the_install() {
    // What docs/agents/codex.md warns about: a new user hook is skipped until it is trusted
    // (in `/hooks`, or for this run by --dangerously-bypass-hook-trust). Without either, the mesh
    // command runs (the `ssh` it reaches is the scene's do-nothing stub) and nothing is
    // recorded. This also shows the fake model really can make a command run: the blocking in
    // the other tests is the hook's doing.
    let Some(cli) = codex_cli() else { return };
    let run = run_codex(&cli, Install::HooksJson, true, false);
    let context = &run.context;
    assert!(
        run.scene.refused_ran(),
        "an untrusted hook blocked; update docs/agents/codex.md\n{context}"
    );
    assert!(run.scene.passed_ran(), "{context}");
    assert!(!run.scene.db.exists(), "the untrusted hook ran\n{context}");
}
