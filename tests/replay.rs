//! `mesh-guard replay` (decision 0061) on transcripts the real agent CLIs wrote
//! (tests/fixtures/replay), found where each agent keeps them, and on damaged ones.

mod common;

use common::{Scratch, call_env, example_catalog};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const FIXTURES: [(&str, &str); 4] = [
    ("claude", "claude.jsonl"),
    ("codex", "codex-rollout.jsonl"),
    ("gemini", "gemini-session.jsonl"),
    ("copilot", "copilot-events.jsonl"),
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/replay")
        .join(name)
}

fn env(dir: &Scratch, catalog: &Path) -> Vec<(&'static str, String)> {
    vec![
        ("MESH_GUARD_CATALOG", catalog.display().to_string()),
        ("MESH_GUARD_DB", dir.path("audit.db").display().to_string()),
        ("HOME", dir.path("home").display().to_string()),
    ]
}

fn replay(dir: &Scratch, catalog: &Path, paths: &[&Path]) -> (Value, String) {
    let mut args = vec!["replay".to_string(), "--format".into(), "json".into()];
    args.extend(paths.iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = call_env(&args, &env(dir, catalog), b"");
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let json = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    (json, out.stderr)
}

#[test]
fn replays_the_transcripts_the_real_clis_wrote() {
    let dir = Scratch::new("replay-real");
    let files: Vec<PathBuf> = FIXTURES.iter().map(|(_, f)| fixture(f)).collect();
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (report, stderr) = replay(&dir, &example_catalog(), &paths);
    assert_eq!(stderr, "", "nothing to warn about");
    assert_eq!(report["files"], 4);
    assert_eq!(report["commands"], 7, "{report:#}");
    assert_eq!(
        report["by_agent"],
        json!({"codex": 2, "copilot": 2, "gemini": 2, "claude": 1})
    );
    assert_eq!(report["would_refuse"], 4);
    assert_eq!(report["by_rule"], json!({"remote-access": 4}));
    assert_eq!(report["by_target"], json!({"atlas": 4}));
    assert_eq!(report["tools"], json!([{"tool": "exec", "count": 4}]));
    assert_eq!(report["missing"], json!([]));
    // Examples with the session and the time each CLI wrote.
    let examples = report["examples"].as_array().unwrap();
    assert_eq!(examples.len(), 3, "three per rule");
    let sessions: Vec<(&str, &str, &str)> = examples
        .iter()
        .map(|e| {
            (
                e["agent"].as_str().unwrap(),
                e["session"].as_str().unwrap(),
                e["time"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        sessions,
        [
            (
                "claude",
                "41762675-1afe-4970-bd85-393d011e8ac9",
                "2026-12-06T00:52:28.817Z"
            ),
            (
                "codex",
                "01a248d6-91e1-7762-9ce9-b8ab96a3dc62",
                "2026-12-06T00:52:31.490Z"
            ),
            (
                "gemini",
                "a89bb3e3-a778-4b5a-a961-8e0bbe00a00a",
                "2026-12-06T00:52:42.967Z"
            ),
        ]
    );
    assert!(
        examples[1]["command"]
            .as_str()
            .unwrap()
            .ends_with("&& ssh atlas uptime")
    );
    assert_eq!(examples[0]["mode"], "enforce");
    assert!(!dir.path("audit.db").exists(), "replay records nothing");
}

#[test]
fn finds_the_transcripts_where_each_agent_keeps_them() {
    let dir = Scratch::new("replay-home");
    let home = dir.path("home");
    for (to, from) in [
        (".claude/projects/-srv-app/s1.jsonl", "claude.jsonl"),
        (
            ".codex/sessions/2026/12/06/rollout-x.jsonl",
            "codex-rollout.jsonl",
        ),
        (
            ".gemini/tmp/app/chats/session-x.jsonl",
            "gemini-session.jsonl",
        ),
        (
            ".copilot/session-state/x/events.jsonl",
            "copilot-events.jsonl",
        ),
    ] {
        let to = home.join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(fixture(from), to).unwrap();
    }
    // Beside them, files that are not transcripts are not read.
    dir.write("home/.gemini/tmp/app/logs.json", "[]");
    dir.write("home/.codex/sessions/index.jsonl", "{\"x\":1}\n");
    dir.write("home/.copilot/session-state/x/workspace.yaml", "id: x\n");
    let (report, stderr) = replay(&dir, &example_catalog(), &[]);
    assert_eq!(stderr, "");
    assert_eq!(report["files"], 4, "{report:#}");
    assert_eq!(report["commands"], 7);
    assert_eq!(report["would_refuse"], 4);
}

#[test]
fn a_damaged_transcript_is_skipped_or_read_as_far_as_it_goes_with_a_warning() {
    let dir = Scratch::new("replay-damaged");
    let codex = std::fs::read(fixture("codex-rollout.jsonl")).unwrap();
    // Cut in the middle of the line of the second command: the first is still read.
    let second = String::from_utf8_lossy(&codex)
        .find("harmless-command-ran")
        .unwrap();
    dir.write("t/cut.jsonl", &String::from_utf8_lossy(&codex[..second]));
    dir.write("t/garbage.jsonl", "this is not json\n{{{{\n");
    std::fs::write(
        dir.path("t/binary.jsonl"),
        [0u8, 159, 146, 150, 255, b'\n', 1, 2],
    )
    .unwrap();
    dir.write("t/empty.jsonl", "");
    dir.write(
        "t/other.jsonl",
        "{\"level\":\"info\",\"msg\":\"ssh atlas\"}\n",
    );
    dir.write(
        "t/deep.jsonl",
        &format!("{}{}\n", "[".repeat(100_000), "]".repeat(100_000)),
    );
    let missing = dir.path("no/such/file.jsonl");
    let (report, stderr) = replay(&dir, &example_catalog(), &[&dir.path("t"), &missing]);
    assert_eq!(report["files"], 1, "{report:#}");
    assert_eq!(report["commands"], 1);
    assert_eq!(report["would_refuse"], 1);
    let skipped: Vec<&str> = report["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["file"].as_str().unwrap())
        .collect();
    for name in ["binary", "deep", "empty", "garbage", "other"] {
        let path = dir.path(&format!("t/{name}.jsonl")).display().to_string();
        assert!(skipped.contains(&path.as_str()), "{name}: {skipped:?}");
        assert!(
            stderr.contains(&format!("skipped {path}")),
            "{name}: {stderr}"
        );
    }
    let missing = missing.display().to_string();
    assert!(skipped.contains(&missing.as_str()), "{skipped:?}");
    let cut = dir.path("t/cut.jsonl").display().to_string();
    assert!(
        stderr.contains(&format!("{cut}: 1 line could not be read")),
        "{stderr}"
    );
    assert_eq!(report["damaged"], json!([{"file": cut, "lines": 1}]));
}

#[test]
fn counts_the_shapes_that_need_a_tool_and_the_mode_in_force() {
    let dir = Scratch::new("replay-missing");
    let line = |id: &str, command: &str| {
        json!({"type": "assistant", "sessionId": "s", "timestamp": "2026-12-01T10:00:00Z",
               "message": {"content": [{"type": "tool_use", "id": id, "name": "Bash",
                                        "input": {"command": command}}]}})
        .to_string()
    };
    let transcript = dir.write(
        "t.jsonl",
        &[
            line("1", "docker kill mesh-controller"),
            line("2", "docker kill mesh-gateway"),
            line("3", "docker logs mesh-gateway"),
            line("4", "ls -la"),
        ]
        .join("\n"),
    );
    let mut catalog = std::fs::read_to_string(example_catalog()).unwrap();
    catalog.push_str("\n[mode]\nmesh-container = \"report\"\n");
    let catalog = dir.write("catalog.toml", &catalog);
    let (report, _) = replay(&dir, &catalog, &[&transcript]);
    assert_eq!(report["commands"], 4);
    assert_eq!(report["would_refuse"], 3);
    assert_eq!(report["reported"], 3);
    assert_eq!(
        report["missing"],
        json!([{"shape": "docker kill <container>", "count": 2}])
    );
    assert_eq!(
        report["by_target"],
        json!({"mesh-gateway": 2, "mesh-controller": 1})
    );
    assert_eq!(report["examples"][0]["mode"], "report");

    let out = call_env(
        &["replay", &transcript.display().to_string()],
        &env(&dir, &catalog),
        b"",
    );
    assert!(out.stdout.starts_with("replayed 1 transcript: 4 shell commands (claude 4); 3 would be refused (3 of them in report-only mode"), "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "SHAPES THAT NEED A TOOL (one must be created)\n      2  docker kill <container>"
        ),
        "{}",
        out.stdout
    );
    let csv = call_env(
        &[
            "replay",
            "--format",
            "csv",
            &transcript.display().to_string(),
        ],
        &env(&dir, &catalog),
        b"",
    );
    assert!(
        csv.stdout
            .starts_with("section,name,count,agent,session,time,command\r\nsummary,files,1,"),
        "{}",
        csv.stdout
    );
    assert!(
        csv.stdout
            .contains("\r\nmissing,docker kill <container>,2,"),
        "{}",
        csv.stdout
    );
}
