//! The corpus: every case in `tests/corpus/*.toml` is run through the program in this
//! process (`mesh-guard check --json`; the hook, spawned, for a case without a catalog)
//! against `examples/catalog.toml`, and every mismatch is listed at once. Cases marked `known_gap` are reported but do not fail the run; a
//! known gap that starts passing fails it, so the mark is removed with the fix.
//! A refusal case may also say which tool comes first (`first`) and what its filled
//! usage holds (`usage_contains`). The unseen mesh's corpus is tests/corpus_unseen.rs.

mod common;

use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

const FILES: [&str; 4] = [
    "must_refuse.toml",
    "must_pass.toml",
    "bypass_attempts.toml",
    "edge_cases.toml",
];

/// Every rule id a refusal can carry; each must be expected by at least one case.
const RULE_IDS: [&str; 8] = [
    "remote-access",
    "remote-daemon",
    "mesh-container",
    "mesh-unit",
    "self-override",
    "unverifiable",
    "self-protection",
    "fail-closed",
];

#[derive(Deserialize)]
struct File {
    case: Vec<Case>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Case {
    command: String,
    expected: String,
    rule: Option<String>,
    why: String,
    /// The case is wrong today for a reason too large to fix here; it is reported, not failed.
    known_gap: Option<String>,
    /// `"absent"`: run with a catalog path that does not exist.
    catalog: Option<String>,
    /// The tool a refusal must name first (issue 14).
    first: Option<String>,
    /// Substrings the first tool's filled usage must hold.
    usage_contains: Option<Vec<String>>,
    #[serde(skip)]
    file: &'static str,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn load() -> Vec<Case> {
    let mut all = Vec::new();
    for name in FILES {
        let path = root().join("tests/corpus").join(name);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file: File = toml::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        for mut case in file.case {
            assert!(
                matches!(case.expected.as_str(), "refuse" | "pass"),
                "{name}: `{}`: expected must be refuse or pass",
                case.command
            );
            if let Some(rule) = &case.rule {
                assert!(
                    RULE_IDS.contains(&rule.as_str()),
                    "{name}: `{}`: unknown rule id {rule}",
                    case.command
                );
                assert_eq!(
                    case.expected, "refuse",
                    "{name}: `{}`: a rule only goes with a refusal",
                    case.command
                );
            }
            assert!(
                case.expected == "refuse"
                    || (case.first.is_none() && case.usage_contains.is_none()),
                "{name}: `{}`: a tool or a usage only goes with a refusal",
                case.command
            );
            assert!(
                !case.why.trim().is_empty(),
                "{name}: `{}`: every case says why it is there",
                case.command
            );
            if let Some(catalog) = &case.catalog {
                assert_eq!(
                    catalog, "absent",
                    "{name}: `{}`: catalog may only be \"absent\"",
                    case.command
                );
            }
            case.file = name;
            all.push(case);
        }
    }
    all
}

struct Got {
    decision: String,
    rule: String,
    /// The first tool named and its usage; empty through the hook, which gives no JSON.
    first: (String, String),
}

fn run(case: &Case, db: &Path) -> Result<Got, String> {
    if case.catalog.is_some() {
        return run_hook(case, db);
    }
    // In this process (`mesh_guard::run`), whose working directory cargo sets to the root.
    let catalog = root().join("examples/catalog.toml");
    let output = common::call(
        &["check", "--json", "--", &case.command],
        &[("MESH_GUARD_CATALOG", &catalog), ("MESH_GUARD_DB", db)],
        b"",
    );
    let stdout = &output.stdout;
    let json: serde_json::Value = serde_json::from_str(stdout.trim())
        .map_err(|_| format!("exit {}, not JSON: {stdout} {}", output.code, output.stderr))?;
    let decision = json["decision"].as_str().unwrap_or_default().to_string();
    let expected_code = if decision == "refuse" { 1 } else { 0 };
    if output.code != expected_code {
        return Err(format!("decision {decision} but exit {}", output.code));
    }
    if decision == "refuse" && json["message"].as_str().unwrap_or_default().is_empty() {
        return Err("a refusal with no message".into());
    }
    Ok(Got {
        decision,
        rule: json["rule"].as_str().unwrap_or_default().to_string(),
        first: (
            json["instead"][0]["tool"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            json["instead"][0]["usage"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        ),
    })
}

/// A case whose catalog is absent goes through the hook, where failing closed matters
/// (`check` reports a missing catalog as a configuration error, exit 2). The rule is
/// read back from the record, which gets a fresh database per case.
fn run_hook(case: &Case, db_hint: &Path) -> Result<Got, String> {
    let db = db_hint.with_file_name(format!("hook-{}.db", unique()));
    let guard = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mesh-guard"));
        command
            .current_dir(root())
            .arg("--catalog")
            .arg(root().join("tests/corpus/no-such-catalog.toml"))
            .arg("--db")
            .arg(&db)
            .env_remove("MESH_GUARD_RULES")
            .env_remove("MESH_GUARD_OVERRIDE")
            .env_remove("CLAUDE_PLUGIN_ROOT")
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        command
    };
    let event = serde_json::json!({
        "session_id": "corpus", "cwd": root(), "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": case.command}, "tool_use_id": "toolu_corpus",
    });
    let mut child = guard(&["hook"])
        .spawn()
        .map_err(|e| format!("could not run the binary: {e}"))?;
    std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        event.to_string().as_bytes(),
    )
    .map_err(|e| e.to_string())?;
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    match output.status.code() {
        Some(0) if stdout.trim().is_empty() => Ok(Got {
            decision: "pass".into(),
            rule: String::new(),
            first: Default::default(),
        }),
        Some(2) if stdout.contains("\"permissionDecision\":\"deny\"") => {
            let audit = guard(&["audit", "--format", "json", "--limit", "1"])
                .output()
                .map_err(|e| e.to_string())?;
            let rows: serde_json::Value = serde_json::from_slice(&audit.stdout)
                .map_err(|_| "the record is not JSON".to_string())?;
            Ok(Got {
                decision: "refuse".into(),
                rule: rows[0]["rule"].as_str().unwrap_or_default().to_string(),
                first: Default::default(),
            })
        }
        code => Err(format!("hook exit {code:?}, stdout {stdout:?}")),
    }
}

fn unique() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

fn matches(case: &Case, got: &Got) -> bool {
    got.decision == case.expected
        && case.rule.as_ref().is_none_or(|rule| *rule == got.rule)
        && case.first.as_ref().is_none_or(|tool| *tool == got.first.0)
        && case
            .usage_contains
            .iter()
            .flatten()
            .all(|part| got.first.1.contains(part.as_str()))
}

#[test]
fn corpus() {
    let cases = load();
    assert!(
        cases.len() >= 300,
        "the corpus holds {} cases, fewer than 300",
        cases.len()
    );
    let dir = tempfile::tempdir().unwrap();
    let next = Mutex::new(0usize);
    let failures = Mutex::new(Vec::new());
    let gaps = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(4, |n| n.get())
        .min(16);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (cases, next, failures, gaps) = (&cases, &next, &failures, &gaps);
            let db = dir.path().join(format!("audit-{t}.db"));
            scope.spawn(move || {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap();
                        *n += 1;
                        *n - 1
                    };
                    let Some(case) = cases.get(i) else { break };
                    let expected = format!(
                        "{}{}{}{}",
                        case.expected,
                        case.rule
                            .as_ref()
                            .map(|r| format!(" ({r})"))
                            .unwrap_or_default(),
                        case.first
                            .as_ref()
                            .map(|t| format!(", first {t:?}"))
                            .unwrap_or_default(),
                        case.usage_contains
                            .as_ref()
                            .map(|u| format!(", usage containing {u:?}"))
                            .unwrap_or_default()
                    );
                    let line = |got: &str| {
                        format!(
                            "  [{}] {:?}\n      expected {expected}, got {got}\n      why: {}",
                            case.file, case.command, case.why
                        )
                    };
                    match (run(case, &db), &case.known_gap) {
                        (Err(e), _) => failures
                            .lock()
                            .unwrap()
                            .push(line(&format!("an error: {e}"))),
                        (Ok(got), None) if !matches(case, &got) => {
                            failures.lock().unwrap().push(line(&format!(
                                "{} ({}), first {:?} {:?}",
                                got.decision, got.rule, got.first.0, got.first.1
                            )))
                        }
                        (Ok(got), Some(gap)) if !matches(case, &got) => {
                            gaps.lock().unwrap().push(format!(
                                "{}\n      known gap: {gap}",
                                line(&format!("{} ({})", got.decision, got.rule))
                            ))
                        }
                        (Ok(_), Some(gap)) => failures.lock().unwrap().push(line(&format!(
                            "as expected, but the case is marked known_gap ({gap}): remove the mark"
                        ))),
                        (Ok(_), None) => {}
                    }
                }
            });
        }
    });
    let (failures, gaps) = (failures.into_inner().unwrap(), gaps.into_inner().unwrap());
    if !gaps.is_empty() {
        eprintln!(
            "{} known gap(s), reported and not failed:\n{}",
            gaps.len(),
            gaps.join("\n")
        );
    }
    eprintln!(
        "{} cases, {} mismatch(es), {} known gap(s)",
        cases.len(),
        failures.len(),
        gaps.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} corpus cases are wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The words of a command, for "does some case use this program".
fn words(command: &str) -> BTreeSet<String> {
    command
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn corpus_covers_every_rule_and_family() {
    let cases = load();
    let used_rules: BTreeSet<&str> = cases.iter().filter_map(|c| c.rule.as_deref()).collect();
    let missing_rules: Vec<&str> = RULE_IDS
        .iter()
        .copied()
        .filter(|id| !used_rules.contains(id))
        .collect();

    let mut all_words = BTreeSet::new();
    for case in &cases {
        all_words.extend(words(&case.command));
    }
    let mut missing_names = Vec::new();
    let mut entries = std::fs::read_dir(root().join("rules"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect::<Vec<_>>();
    entries.sort();
    for path in entries
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
    {
        let table: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        // The program families must each be covered; the wrappers, shells and interpreters as well.
        for kind in ["program", "wrapper", "shell", "interpreter"] {
            let Some(items) = table.get(kind).and_then(|v| v.as_array()) else {
                continue;
            };
            for item in items {
                for name in item
                    .get("names")
                    .and_then(|n| n.as_array())
                    .into_iter()
                    .flatten()
                {
                    let name = name.as_str().unwrap();
                    // `/etc/init.d/*`: a directory's scripts, covered by a case run from it.
                    let covered = match name.strip_suffix('*') {
                        Some(dir) => cases.iter().any(|c| c.command.contains(dir)),
                        None => all_words.contains(name),
                    };
                    if !covered {
                        missing_names.push(format!(
                            "{kind} `{name}` ({})",
                            path.file_name().unwrap().to_string_lossy()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        missing_rules.is_empty() && missing_names.is_empty(),
        "not covered by any corpus case:\n  rule ids: {missing_rules:?}\n  names: {}",
        missing_names.join(", ")
    );
}
