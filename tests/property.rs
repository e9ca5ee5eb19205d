//! Property: whatever comes in, the hook answers — exit 0 with nothing on stdout, or exit 2
//! with the deny JSON — never panics. Speed is measured in benches, never asserted here (a
//! loaded machine made a timed assert fail); a hang is still caught by the hook's own
//! deadline, which tests/hook.rs proves refuses. Inputs: random bytes, random mixes of shell
//! tokens, truncations of the corpus, and deep nesting. Each runs through the built binary
//! (`mesh-guard hook`); the cheap ones also run in-process many more times.
//!
//! The generator is a fixed-seed xorshift, so a failure names an input that reproduces.
//! `MESH_GUARD_PROPERTY_SEED` picks another seed.

use mesh_guard::catalog::{self, LazyCatalog};
use mesh_guard::config::Paths;
use mesh_guard::decide::Decision;
use mesh_guard::rules::Rules;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

#[allow(dead_code)]
#[path = "common/xorshift.rs"]
mod xorshift;
use xorshift::XorShift;

fn seed() -> u64 {
    std::env::var("MESH_GUARD_PROPERTY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_cafe_f00d)
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const TOKENS: &[&str] = &[
    "ssh",
    "atlas",
    "orion",
    "db1",
    "10.20.0.11",
    "fd00:20::13",
    "git@forge",
    "root@forge",
    "example.com",
    "scp",
    "f:/tmp",
    "atlas:/x",
    "rsync",
    "-e",
    "docker",
    "-H",
    "ssh://atlas",
    "logs",
    "exec",
    "mesh-controller",
    "compose",
    "journalctl",
    "-u",
    "-fu",
    "systemctl",
    "status",
    "mesh-gateway.service",
    "sudo",
    "-E",
    "env",
    "-S",
    "-i",
    "timeout",
    "5",
    "xargs",
    "-I{}",
    "{}",
    "find",
    "-exec",
    "\\;",
    "+",
    "bash",
    "-c",
    "sh",
    "-lc",
    "eval",
    "python3",
    "-c",
    "perl",
    "-e",
    "os.system(",
    "qx(",
    "$(",
    "`",
    ")",
    "(",
    "{",
    "}",
    "[[",
    "]]",
    "[",
    "]",
    "'",
    "\"",
    "$'\\x73sh'",
    "$'",
    "${",
    "${H:-atlas}",
    "$H",
    "H=atlas",
    "H=",
    "export",
    "MESH_GUARD_OVERRIDE=1",
    "for",
    "h",
    "in",
    "do",
    "done",
    "if",
    "then",
    "fi",
    "case",
    "esac",
    ";;",
    "while",
    "until",
    "function",
    "f()",
    "<<EOF",
    "<<'EOF'",
    "<<-EOF",
    "EOF",
    "<<<",
    "<(",
    ">(",
    ">",
    ">>",
    "2>&1",
    "|",
    "||",
    "&&",
    "&",
    ";",
    "\n",
    "\\\n",
    "#",
    "!",
    "=",
    "*",
    "?",
    "~",
    "\\",
    "\t",
    "\u{0}",
    "\u{feff}",
    "é",
    "𝕤𝕤𝕙",
    "{atlas,orion}",
    "coproc",
    "time",
    "-p",
    "select",
    "alias",
    "declare",
    "-x",
    "local",
    "readonly",
    "((",
    "))",
    "$((",
    "1+1",
    "let",
    "--",
    "-J",
    "-o",
    "ProxyJump=atlas",
    "-l",
    "git",
];

/// Random printable-ish and arbitrary bytes, sometimes valid UTF-8.
fn random_bytes(rng: &mut XorShift) -> Vec<u8> {
    let len = rng.below(600);
    (0..len)
        .map(|_| {
            if rng.below(4) == 0 {
                rng.next() as u8
            } else {
                0x20 + rng.below(0x5f) as u8
            }
        })
        .collect()
}

fn token_mix(rng: &mut XorShift) -> String {
    let n = 1 + rng.below(40);
    let mut out = String::new();
    for _ in 0..n {
        let token: &&str = rng.pick(TOKENS);
        out.push_str(token);
        if rng.below(4) != 0 {
            out.push(' ');
        }
    }
    out
}

fn corpus_commands() -> Vec<String> {
    let mut out = Vec::new();
    for name in [
        "must_refuse.toml",
        "must_pass.toml",
        "bypass_attempts.toml",
        "edge_cases.toml",
    ] {
        let text = std::fs::read_to_string(root().join("tests/corpus").join(name)).unwrap();
        let table: toml::Table = toml::from_str(&text).unwrap();
        for case in table["case"].as_array().unwrap() {
            out.push(case["command"].as_str().unwrap().to_string());
        }
    }
    out
}

fn truncation(rng: &mut XorShift, commands: &[String]) -> String {
    let command = rng.pick(commands);
    let mut cut = rng.below(command.len() + 1);
    while !command.is_char_boundary(cut) {
        cut -= 1;
    }
    if rng.below(2) == 0 {
        command[..cut].to_string()
    } else {
        command[cut..].to_string()
    }
}

/// The deep and the large: each must be answered, in well under the bound.
fn extremes() -> Vec<(String, String)> {
    let many = |s: &str, n: usize| s.repeat(n);
    vec![
        (
            "$( x100k".into(),
            format!("ssh atlas {}", many("$(", 100_000)),
        ),
        (
            "$( x100k closed".into(),
            format!("{}ssh atlas{}", many("$(", 100_000), many(")", 100_000)),
        ),
        ("( x100k".into(), many("(", 100_000)),
        (
            "( x100k closed".into(),
            format!("{}ssh atlas{}", many("(", 100_000), many(")", 100_000)),
        ),
        ("{ x50k".into(), many("{ ", 50_000)),
        (
            "{ x50k closed".into(),
            format!("{}ssh atlas{}", many("{ ", 50_000), many("; }", 50_000)),
        ),
        ("` x100k".into(), many("`", 100_000)),
        ("\" x100k".into(), many("\"$(", 100_000)),
        ("bash -c nested x200".into(), {
            let mut s = "ssh atlas".to_string();
            for _ in 0..200 {
                s = format!("bash -c {}", shell_words::quote(&s));
                if s.len() > 900_000 {
                    break;
                }
            }
            s
        }),
        (
            "eval x10k".into(),
            format!("{}ssh atlas", many("eval ", 10_000)),
        ),
        (
            "sudo x10k".into(),
            format!("{}ssh atlas", many("sudo ", 10_000)),
        ),
        (
            "1 MiB word".into(),
            format!("echo {}", "a".repeat(1024 * 1024)),
        ),
        (
            "1 MiB command".into(),
            many("echo atlas; ", 1024 * 1024 / 12),
        ),
        (
            "pipeline x10k".into(),
            format!("{}ssh atlas", many("cat | ", 10_000)),
        ),
        ("; x10k".into(), many(";", 10_000)),
        ("ssh atlas; x10k".into(), many("ssh atlas; ", 10_000)),
        (
            "heredocs x5k".into(),
            many("cat <<EOF\natlas\nEOF\n", 5_000),
        ),
        (
            "for x5k".into(),
            format!(
                "{}ssh $h{}",
                many("for h in atlas; do ", 5_000),
                many("; done", 5_000)
            ),
        ),
        (
            "if x5k".into(),
            format!(
                "{}ssh atlas{}",
                many("if true; then ", 5_000),
                many("; fi", 5_000)
            ),
        ),
        (
            "args x100k".into(),
            format!("ssh {}", many("atlas ", 100_000)),
        ),
        (
            "xargs ::: x50k".into(),
            format!("parallel ssh {{}} ::: {}", many("atlas ", 50_000)),
        ),
        ("brace x1k".into(), format!("ssh {}", many("{a,b}", 1_000))),
        (
            "brace nest x1k".into(),
            format!("ssh {}atlas{}", many("{a,", 1_000), many("}", 1_000)),
        ),
        // 10k of these take seconds: the walk is quadratic in them (see the report). 1k here.
        (
            "vars x1k".into(),
            // The value outgrows its bound and becomes unknown; `atlas` was assigned, so
            // the unknown target in a command that names the mesh is refused.
            format!("h=atlas; {}ssh $h", many("h=$h$h; ", 1_000)),
        ),
        (
            "python literals x50k".into(),
            format!(
                "python3 -c \"import os; os.system({})\"",
                many("'ssh atlas', ", 50_000)
            ),
        ),
    ]
}

struct Answer {
    code: Option<i32>,
    stdout: String,
}

fn hook(stdin: &[u8]) -> Answer {
    let dir = std::env::temp_dir();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mesh-guard"))
        .arg("--catalog")
        .arg(root().join("examples/catalog.toml"))
        .arg("--db")
        .arg(dir.join(format!("mesh-guard-property-{}.db", std::process::id())))
        .arg("hook")
        .current_dir(root())
        .env_remove("MESH_GUARD_OVERRIDE")
        .env_remove("MESH_GUARD_RULES")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().unwrap();
    let _ = writer.join();
    Answer {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
    }
}

fn event(command: &str) -> Vec<u8> {
    serde_json::json!({
        "session_id": "property", "transcript_path": "/tmp/t", "cwd": "/tmp", "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "toolu_p",
    })
    .to_string()
    .into_bytes()
}

/// An answer the protocol allows: pass (exit 0, empty stdout) or the exact deny shape.
fn well_formed(answer: &Answer) -> Result<(), String> {
    match answer.code {
        Some(0) if answer.stdout.is_empty() => Ok(()),
        Some(2) => {
            let json: serde_json::Value = serde_json::from_str(answer.stdout.trim())
                .map_err(|_| format!("exit 2 with stdout that is not JSON: {:?}", answer.stdout))?;
            let out = &json["hookSpecificOutput"];
            let keys_ok = json.as_object().is_some_and(|o| o.len() == 1)
                && out.as_object().is_some_and(|o| o.len() == 3);
            let ok = keys_ok
                && out["hookEventName"] == "PreToolUse"
                && out["permissionDecision"] == "deny"
                && out["permissionDecisionReason"]
                    .as_str()
                    .is_some_and(|r| !r.is_empty() && r.chars().count() < 1000);
            if ok {
                Ok(())
            } else {
                Err(format!("exit 2 with a malformed answer: {}", answer.stdout))
            }
        }
        code => Err(format!("exit {code:?}, stdout {:?}", answer.stdout)),
    }
}

fn show(input: &[u8]) -> String {
    let text = String::from_utf8_lossy(input);
    if text.len() > 160 {
        format!(
            "{:?}… ({} bytes)",
            &text[..text.floor_char_boundary(160)],
            input.len()
        )
    } else {
        format!("{text:?}")
    }
}

#[test]
fn the_hook_always_answers_pass_or_deny() {
    let mut rng = XorShift::new(seed());
    let corpus = corpus_commands();
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    for _ in 0..60 {
        inputs.push(("random bytes".into(), random_bytes(&mut rng)));
    }
    for _ in 0..60 {
        let bytes = random_bytes(&mut rng);
        inputs.push((
            "random bytes as command".into(),
            event(&String::from_utf8_lossy(&bytes)),
        ));
    }
    for _ in 0..120 {
        inputs.push(("token mix".into(), event(&token_mix(&mut rng))));
    }
    for _ in 0..120 {
        inputs.push((
            "corpus truncation".into(),
            event(&truncation(&mut rng, &corpus)),
        ));
    }
    for (name, command) in extremes() {
        inputs.push((name, event(&command)));
    }
    // A truncated event, and an event cut inside its command.
    let whole = event("ssh atlas uptime");
    for cut in [0, 1, whole.len() / 2, whole.len() - 1] {
        inputs.push(("truncated event".into(), whole[..cut].to_vec()));
    }

    let mut failures = Vec::new();
    let chunks: Vec<_> = inputs.chunks(inputs.len().div_ceil(8)).collect();
    let results: Vec<(String, Vec<u8>, Answer)> = std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|(name, input)| (name.clone(), input.clone(), hook(input)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    for (name, input, answer) in &results {
        if let Err(why) = well_formed(answer) {
            failures.push(format!("  [{name}] {}: {why}", show(input)));
        }
    }
    let refused = results.iter().filter(|(_, _, a)| a.code == Some(2)).count();
    eprintln!(
        "hook: {} inputs, {} refused, {} passed",
        results.len(),
        refused,
        results.len() - refused,
    );
    assert!(
        failures.is_empty(),
        "{} of {} hook answers are wrong:\n{}",
        failures.len(),
        results.len(),
        failures.join("\n")
    );
}

/// The extremes that contain a mesh name and a guarded program must not pass: depth and
/// size limits fail closed.
#[test]
fn deep_or_large_commands_that_name_the_mesh_are_refused() {
    let mut failures = Vec::new();
    for (name, command) in extremes() {
        let runs_ssh_at_atlas = !matches!(
            name.as_str(),
            "( x100k"
                | "{ x50k"
                | "` x100k"
                | "\" x100k"
                | "1 MiB word"
                | "1 MiB command"
                | "; x10k"
                | "heredocs x5k"
                | "brace x1k"
                    // bash makes it `ssh a a … atlas`: the host is `a`.
                    | "brace nest x1k"
        );
        if !runs_ssh_at_atlas {
            continue;
        }
        let answer = hook(&event(&command));
        if answer.code != Some(2) {
            failures.push(format!("  [{name}] exit {:?}", answer.code));
        }
    }
    assert!(
        failures.is_empty(),
        "deep commands that reach atlas were not refused:\n{}",
        failures.join("\n")
    );
}

/// In-process, many more inputs: `app::decide` never panics and a refusal has a message.
#[test]
fn deciding_in_process_never_panics() {
    let worker = std::thread::Builder::new()
        .stack_size(256 * 1024 * 1024)
        .spawn(|| {
            let mut rng = XorShift::new(seed() ^ 0x9e37_79b9_7f4a_7c15);
            let paths = Paths {
                catalog: root().join("examples/catalog.toml"),
                db: std::env::temp_dir().join("mesh-guard-property-inproc.db"),
                rules: None,
                home: mesh_guard::config::Home::Session,
            };
            let rules = Rules::load(None).unwrap();
            let catalog = LazyCatalog::ready(catalog::load(&paths.catalog).unwrap());
            let corpus = corpus_commands();
            let mut inputs: Vec<String> = Vec::new();
            for _ in 0..1500 {
                inputs.push(token_mix(&mut rng));
            }
            for _ in 0..1500 {
                inputs.push(truncation(&mut rng, &corpus));
            }
            for _ in 0..500 {
                inputs.push(String::from_utf8_lossy(&random_bytes(&mut rng)).into_owned());
            }
            inputs.extend(extremes().into_iter().map(|(_, c)| c));
            let mut failures = Vec::new();
            for input in &inputs {
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    mesh_guard::app::decide(&paths, &rules, &catalog, input, None)
                }));
                match result {
                    Err(_) => failures.push(format!("  panicked on {}", show(input.as_bytes()))),
                    Ok(outcome)
                        if matches!(outcome.decision, Decision::Refuse(_))
                            && (outcome.message.is_empty()
                                || outcome.message.chars().count() >= 1000) =>
                    {
                        failures.push(format!(
                            "  a refusal message of {} characters for {}",
                            outcome.message.chars().count(),
                            show(input.as_bytes())
                        ));
                    }
                    Ok(_) => {}
                }
            }
            eprintln!("in-process: {} inputs", inputs.len());
            failures
        });
    let failures = worker.unwrap().join().unwrap();
    assert!(
        failures.is_empty(),
        "{} in-process failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
