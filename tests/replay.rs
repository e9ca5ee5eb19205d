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
        csv.stdout.starts_with(
            "section,name,count,agent,session,time,file,mode,command,reason\r\nsummary,files,1,"
        ),
        "{}",
        csv.stdout
    );
    // An example says its file and mode, in their own columns.
    let shown = transcript.display().to_string();
    assert!(
        csv.stdout.contains(&format!(
            "\r\nexample,mesh-container mesh-controller,,claude,s,2026-12-01T10:00:00Z,{shown},report,docker kill mesh-controller,\r\n"
        )),
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

/// `replay ARGS` in this process on another thread: a replay that never returns fails the
/// test at the guard's limit instead of hanging the suite (the limit is no speed assertion).
fn replay_returning(dir: &Scratch, args: &[String]) -> common::Output {
    let (send, receive) = std::sync::mpsc::channel();
    let args = args.to_vec();
    let env = env(dir, &example_catalog());
    std::thread::spawn(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let _ = send.send(call_env(&args, &env, b""));
    });
    receive
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("replay returned")
}

#[test]
fn what_is_not_a_regular_file_is_named_and_never_opened() {
    let dir = Scratch::new("replay-special");
    dir.write(
        "t/real.jsonl",
        &std::fs::read_to_string(fixture("claude.jsonl")).unwrap(),
    );
    let fifo = dir.path("t/a-fifo.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let socket = dir.path("t/socket.jsonl");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    std::os::unix::fs::symlink("loop-b.jsonl", dir.path("t/loop-a.jsonl")).unwrap();
    std::os::unix::fs::symlink("loop-a.jsonl", dir.path("t/loop-b.jsonl")).unwrap();
    // A loop through a directory link, named like nothing.
    std::fs::create_dir(dir.path("t/sub")).unwrap();
    std::os::unix::fs::symlink("..", dir.path("t/sub/up")).unwrap();
    dir.write("empty/notes.txt", "not a transcript\n");
    let args: Vec<String> = ["replay", "--format", "json"]
        .iter()
        .map(|s| s.to_string())
        .chain(
            [
                dir.path("t"),
                PathBuf::from("/dev/zero"),
                fifo.clone(),
                dir.path("empty"),
            ]
            .iter()
            .map(|p| p.display().to_string()),
        )
        .collect();
    let out = replay_returning(&dir, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["files"], 1, "{report:#}");
    let skipped: Vec<(String, String)> = report["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["file"].as_str().unwrap().into(),
                s["why"].as_str().unwrap().into(),
            )
        })
        .collect();
    let why = |path: &Path| {
        let path = path.display().to_string();
        skipped
            .iter()
            .filter(|(f, _)| *f == path)
            .map(|(_, w)| w.clone())
            .collect::<Vec<_>>()
    };
    assert!(
        why(&fifo).iter().all(|w| w.starts_with("a FIFO")),
        "{skipped:?}"
    );
    assert_eq!(
        why(&fifo).len(),
        2,
        "in the directory and given: {skipped:?}"
    );
    assert_eq!(
        why(Path::new("/dev/zero")),
        ["a character device, not a regular file: not opened"]
    );
    assert!(why(&socket)[0].starts_with("a socket"), "{skipped:?}");
    assert_eq!(
        why(&dir.path("t/loop-a.jsonl")),
        ["a loop of symbolic links"]
    );
    assert!(
        why(&dir.path("t/sub/up"))[0].contains("a loop, not followed"),
        "{skipped:?}"
    );
    for (file, _) in &skipped {
        assert!(
            out.stderr.contains(&format!("skipped {file}: ")),
            "{}",
            out.stderr
        );
    }
    let empty = dir.path("empty").display().to_string();
    assert_eq!(
        report["empty"][0]["directory"],
        empty.as_str(),
        "{report:#}"
    );
    assert!(
        out.stderr
            .contains(&format!("no transcript in {empty} (looked for *.jsonl")),
        "{}",
        out.stderr
    );
}

#[test]
fn an_unreadable_subdirectory_is_named() {
    // Root reads any directory whatever its mode: as root the replay runs as `nobody`
    // (uid 65534), spawned, on a scratch directory opened to it; otherwise in process.
    let dir = Scratch::new("replay-unreadable");
    dir.write(
        "t/a/real.jsonl",
        &std::fs::read_to_string(fixture("claude.jsonl")).unwrap(),
    );
    dir.write(
        "t/b/hidden.jsonl",
        &std::fs::read_to_string(fixture("claude.jsonl")).unwrap(),
    );
    let catalog = dir.write(
        "catalog.toml",
        &std::fs::read_to_string(example_catalog()).unwrap(),
    );
    use std::os::unix::fs::PermissionsExt;
    let open = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    for path in [dir.path(""), dir.path("t"), dir.path("t/a")] {
        open(&path, 0o755);
    }
    open(&dir.path("t/a/real.jsonl"), 0o644);
    open(&catalog, 0o644);
    open(&dir.path("t/b"), 0o000);
    let t = dir.path("t").display().to_string();
    let args = ["replay", "--format", "json", t.as_str()];
    let out = if unsafe { libc::geteuid() } == 0 {
        use std::os::unix::process::CommandExt;
        // A copy `nobody` may run: the checkout may sit under a directory closed to it (CI
        // runs from a 0700 copy, issue 33).
        let reachable =
            common::reachable_by_every_user(&[Path::new(env!("CARGO_BIN_EXE_mesh-guard"))]);
        let out = std::process::Command::new(&reachable.files[0])
            .args(args)
            .env_clear()
            .env("MESH_GUARD_CATALOG", &catalog)
            .env("HOME", dir.path("home"))
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap();
        common::Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    } else {
        call_env(&args, &env(&dir, &catalog), b"")
    };
    open(&dir.path("t/b"), 0o755);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["files"], 1, "{report:#}");
    let b = dir.path("t/b").display().to_string();
    assert_eq!(report["skipped"][0]["file"], b.as_str(), "{report:#}");
    assert!(
        report["skipped"][0]["why"]
            .as_str()
            .unwrap()
            .starts_with("the directory cannot be read: Permission denied"),
        "{report:#}"
    );
    assert!(
        out.stderr
            .contains(&format!("skipped {b}: the directory cannot be read")),
        "{}",
        out.stderr
    );
}
