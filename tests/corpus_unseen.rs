//! The unseen corpus: a second mesh (`tests/corpus/unseen/catalog.toml`) whose machines
//! are ordinary words, and cases grouped by the mechanism classes of issues 13 and 14. Each
//! file is one class; each case runs through the built binary (`mesh-guard check --json`)
//! with a clean environment: `HOME` and the working directory are fixture directories
//! (`tests/corpus/unseen/fixtures/`), so what is on disk is the corpus's, never the
//! machine's. The score of every class is printed, and each class fails below its floor.
//!
//! `cargo test --test corpus_unseen -- --nocapture` prints the scores and the failures.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The bar the mechanisms of issues 13 and 14 are built to: each class, each way.
const BAR: f64 = 97.0;

/// Per class: the lowest refused %, passed % and first-tool % the build may score.
/// These are what the build scored when the corpus was written, so CI stays green while
/// the mechanisms are missing. IMPLEMENTERS: raise a floor whenever your change lifts a
/// score, up to `BAR` (97%) each way; never lower one. A floor of 100 means "already all".
const FLOORS: [(&str, Floor); 10] = [
    ("expansions.toml", Floor::new(100.0, 100.0, 0.0)),
    ("one_job.toml", Floor::new(100.0, 100.0, 0.0)),
    ("runs_arguments.toml", Floor::new(100.0, 100.0, 0.0)),
    ("families.toml", Floor::new(100.0, 100.0, 0.0)),
    ("precision.toml", Floor::new(100.0, 100.0, 0.0)),
    ("on_disk.toml", Floor::new(100.0, 100.0, 0.0)),
    ("late_code.toml", Floor::new(100.0, 100.0, 0.0)),
    ("refusal.toml", Floor::new(97.3, 100.0, 100.0)),
    ("patterns.toml", Floor::new(95.0, 100.0, 0.0)),
    ("grammar.toml", Floor::new(97.0, 97.0, 100.0)),
];

const RULE_IDS: [&str; 6] = [
    "remote-access",
    "remote-daemon",
    "mesh-container",
    "mesh-unit",
    "self-override",
    "unverifiable",
];

#[derive(Clone, Copy)]
struct Floor {
    refused: f64,
    passed: f64,
    first: f64,
}

impl Floor {
    const fn new(refused: f64, passed: f64, first: f64) -> Self {
        Floor {
            refused,
            passed,
            first,
        }
    }
}

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
    /// The tool named first; `""`: none ("one must be created"); `"*"`: any tool.
    first: Option<String>,
    /// The first usage, exactly.
    usage: Option<String>,
    /// Substrings of the first usage.
    usage_contains: Option<Vec<String>>,
    /// Consecutive words of the first usage once a POSIX shell has split it.
    usage_words: Option<Vec<String>>,
    /// A directory under fixtures/ to run in (default `plain`).
    cwd: Option<String>,
    /// A directory under fixtures/ to use as HOME (default `home-plain`).
    home: Option<String>,
    /// Variables of the session's environment.
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// `"patterns"`: run against catalog-patterns.toml.
    catalog: Option<String>,
    #[serde(skip)]
    file: &'static str,
}

impl Case {
    fn judges_quality(&self) -> bool {
        self.first.is_some()
            || self.usage.is_some()
            || self.usage_contains.is_some()
            || self.usage_words.is_some()
    }
}

fn unseen() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/unseen")
}

fn load() -> Vec<Case> {
    let mut all = Vec::new();
    for (name, _) in FLOORS {
        let path = unseen().join(name);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file: File = toml::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        for mut case in file.case {
            let at = format!("{name}: `{}`", case.command);
            assert!(
                matches!(case.expected.as_str(), "refuse" | "pass"),
                "{at}: expected must be refuse or pass"
            );
            assert!(!case.why.trim().is_empty(), "{at}: every case says why");
            if let Some(rule) = &case.rule {
                assert!(RULE_IDS.contains(&rule.as_str()), "{at}: unknown rule");
            }
            assert!(
                case.expected == "refuse" || (case.rule.is_none() && !case.judges_quality()),
                "{at}: a rule, a tool or a usage only goes with a refusal"
            );
            for dir in [&case.cwd, &case.home].into_iter().flatten() {
                assert!(
                    unseen().join("fixtures").join(dir).is_dir(),
                    "{at}: no fixture directory {dir}"
                );
            }
            assert!(
                case.catalog.as_deref().is_none_or(|c| c == "patterns"),
                "{at}: catalog may only be \"patterns\""
            );
            case.file = name;
            all.push(case);
        }
    }
    all
}

struct Got {
    decision: String,
    rule: String,
    instead: Vec<(String, String)>,
    message: String,
}

fn run(case: &Case, db: &Path) -> Result<Got, String> {
    let fixtures = unseen().join("fixtures");
    let catalog = match case.catalog.as_deref() {
        Some("patterns") => "catalog-patterns.toml",
        _ => "catalog.toml",
    };
    let mut command = Command::new(env!("CARGO_BIN_EXE_mesh-guard"));
    // A clean environment: the machine's own DOCKER_HOST, ssh config or guard variables
    // must not decide a case.
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env(
            "HOME",
            fixtures.join(case.home.as_deref().unwrap_or("home-plain")),
        )
        .env("MESH_GUARD_CATALOG", unseen().join(catalog))
        .env("MESH_GUARD_DB", db)
        .env("CORPUS_SENTINEL", sentinel(db))
        .envs(&case.env)
        .current_dir(fixtures.join(case.cwd.as_deref().unwrap_or("plain")))
        .args(["check", "--json", "--", &case.command]);
    let output = command
        .output()
        .map_err(|e| format!("could not run the binary: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let json: serde_json::Value = serde_json::from_str(stdout.trim()).map_err(|_| {
        format!(
            "exit {:?}, not JSON: {} {}",
            output.status.code(),
            stdout.trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        )
    })?;
    let decision = json["decision"].as_str().unwrap_or_default().to_string();
    let expected_code = if decision == "refuse" { 1 } else { 0 };
    if output.status.code() != Some(expected_code) {
        return Err(format!(
            "decision {decision} but exit {:?}",
            output.status.code()
        ));
    }
    let instead = json["instead"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| {
            (
                i["tool"].as_str().unwrap_or_default().to_string(),
                i["usage"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    Ok(Got {
        decision,
        rule: json["rule"].as_str().unwrap_or_default().to_string(),
        instead,
        message: json["message"].as_str().unwrap_or_default().to_string(),
    })
}

/// A file that ssh's `Match exec` in fixtures/home-matchexec creates when it runs: the
/// guard must never run what a configuration file says to run.
fn sentinel(db: &Path) -> PathBuf {
    db.with_file_name("match-exec-ran")
}

/// What is wrong with the decision, if anything.
fn decision_fault(case: &Case, got: &Got) -> Option<String> {
    if got.decision != case.expected || case.rule.as_ref().is_some_and(|r| *r != got.rule) {
        return Some(format!("{} ({})", got.decision, got.rule));
    }
    if got.message.chars().any(char::is_control) {
        return Some(format!(
            "a control character in the message {:?}",
            got.message
        ));
    }
    if got.decision == "refuse" && got.message.is_empty() {
        return Some("a refusal with no message".into());
    }
    None
}

/// What is wrong with the tool named first and its usage, if anything.
fn quality_fault(case: &Case, got: &Got) -> Option<String> {
    let (tool, usage) = got
        .instead
        .first()
        .map(|(t, u)| (t.as_str(), u.as_str()))
        .unwrap_or_default();
    let shown = || format!("first {tool:?} with usage {usage:?}");
    match case.first.as_deref() {
        Some("") if !got.instead.is_empty() || !got.message.contains("one must be created") => {
            return Some(format!("{}, not \"one must be created\"", shown()));
        }
        Some("*") if got.instead.is_empty() => return Some("no tool named".into()),
        Some(want) if !matches!(want, "" | "*") && want != tool => return Some(shown()),
        _ => {}
    }
    if case.usage.as_deref().is_some_and(|u| u != usage) {
        return Some(shown());
    }
    if case
        .usage_contains
        .iter()
        .flatten()
        .any(|p| !usage.contains(p.as_str()))
    {
        return Some(shown());
    }
    if let Some(words) = &case.usage_words {
        match shell_words(usage) {
            Some(got) if got.windows(words.len()).any(|w| w == words.as_slice()) => {}
            Some(got) => return Some(format!("{}, which a shell splits as {got:?}", shown())),
            None => return Some(format!("{}, which a shell cannot split", shown())),
        }
    }
    None
}

/// The words a POSIX shell makes of `text` (quotes and escapes removed, nothing expanded);
/// `None` for an unterminated quote. Enough to compare quoting, not a shell.
fn shell_words(text: &str) -> Option<Vec<String>> {
    let (mut words, mut word, mut in_word) = (Vec::new(), String::new(), false);
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('$' | '`' | '"' | '\\') => word.push(c),
                            '\n' => {}
                            c => {
                                word.push('\\');
                                word.push(c);
                            }
                        },
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') | None => {}
                    Some(c) => word.push(c),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

#[derive(Default)]
struct Tally {
    refuse: (usize, usize),
    pass: (usize, usize),
    first: (usize, usize),
}

/// Rounded down to a tenth, so a floor copied from the printed score holds.
fn percent((right, all): (usize, usize)) -> f64 {
    if all == 0 {
        100.0
    } else {
        (1000.0 * right as f64 / all as f64).floor() / 10.0
    }
}

fn show((right, all): (usize, usize)) -> String {
    if all == 0 {
        "     -     ".into()
    } else {
        format!("{:5.1}% {:>3}/{:<3}", percent((right, all)), right, all)
    }
}

#[test]
fn shell_words_splits_as_a_shell_does() {
    assert_eq!(
        shell_words(r#"mesh exec build -- 'cd /srv/app && make' "a \"b\"" c\ d"#).unwrap(),
        [
            "mesh",
            "exec",
            "build",
            "--",
            "cd /srv/app && make",
            "a \"b\"",
            "c d"
        ]
    );
    assert_eq!(
        shell_words("mesh exec build -- cd /srv/app && make").unwrap(),
        [
            "mesh", "exec", "build", "--", "cd", "/srv/app", "&&", "make"
        ]
    );
    assert!(shell_words("echo 'open").is_none());
}

#[test]
fn unseen_catalog_is_valid() {
    let output = Command::new(env!("CARGO_BIN_EXE_mesh-guard"))
        .env_remove("MESH_GUARD_RULES")
        .arg("--catalog")
        .arg(unseen().join("catalog.toml"))
        .args(["catalog", "check"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn corpus_unseen() {
    let cases = load();
    let dir = tempfile::tempdir().unwrap();
    let next = Mutex::new(0usize);
    let results = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(4, |n| n.get())
        .min(16);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (cases, next, results) = (&cases, &next, &results);
            let db = dir.path().join(format!("audit-{t}.db"));
            scope.spawn(move || {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap();
                        *n += 1;
                        *n - 1
                    };
                    let Some(case) = cases.get(i) else { break };
                    let (decision, quality) = match run(case, &db) {
                        Err(e) => (Some(format!("an error: {e}")), None),
                        Ok(got) => {
                            let decision = decision_fault(case, &got);
                            let quality = case
                                .judges_quality()
                                .then(|| decision.clone().or_else(|| quality_fault(case, &got)));
                            (decision, quality.flatten())
                        }
                    };
                    results.lock().unwrap().push((i, decision, quality));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| r.0);

    let mut tallies: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut failures: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (i, decision, quality) in &results {
        let case = &cases[*i];
        let tally = tallies.entry(case.file).or_default();
        let way = if case.expected == "refuse" {
            &mut tally.refuse
        } else {
            &mut tally.pass
        };
        way.1 += 1;
        way.0 += usize::from(decision.is_none());
        if case.judges_quality() {
            tally.first.1 += 1;
            tally.first.0 += usize::from(quality.is_none());
        }
        let at = |fault: &str, kind: &str| {
            format!(
                "  {:?}\n      expected {}{}: {kind} {fault}\n      why: {}",
                case.command,
                case.expected,
                case.rule
                    .as_ref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default(),
                case.why
            )
        };
        if let Some(fault) = decision {
            failures
                .entry(case.file)
                .or_default()
                .push(at(fault, "got"));
        } else if let Some(fault) = quality {
            let want = [
                case.first.as_ref().map(|f| format!("first {f:?}")),
                case.usage.as_ref().map(|u| format!("usage {u:?}")),
                case.usage_contains
                    .as_ref()
                    .map(|u| format!("usage containing {u:?}")),
                case.usage_words
                    .as_ref()
                    .map(|u| format!("usage words {u:?}")),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ");
            failures
                .entry(case.file)
                .or_default()
                .push(at(fault, &format!("right, but wanted {want}; got")));
        }
    }

    for (file, lines) in &failures {
        eprintln!(
            "--- {file}: {} failure(s)\n{}",
            lines.len(),
            lines.join("\n")
        );
    }
    let mut report = vec![format!(
        "{:<22} {:>15} {:>15} {:>15}   (bar {BAR}% each way)",
        "class", "refused", "passed", "first tool"
    )];
    let mut below = Vec::new();
    let mut total = Tally::default();
    for (file, floor) in FLOORS {
        let tally = tallies.remove(file).unwrap_or_default();
        report.push(format!(
            "{:<22} {:>15} {:>15} {:>15}",
            file.trim_end_matches(".toml"),
            show(tally.refuse),
            show(tally.pass),
            show(tally.first)
        ));
        for (name, got, min) in [
            ("refused", tally.refuse, floor.refused),
            ("passed", tally.pass, floor.passed),
            ("first tool", tally.first, floor.first),
        ] {
            if percent(got) < min {
                below.push(format!(
                    "{file}: {name} {:.1}% is below its floor {min}%",
                    percent(got)
                ));
            }
        }
        for (sum, part) in [
            (&mut total.refuse, tally.refuse),
            (&mut total.pass, tally.pass),
            (&mut total.first, tally.first),
        ] {
            sum.0 += part.0;
            sum.1 += part.1;
        }
    }
    report.push(format!(
        "{:<22} {:>15} {:>15} {:>15}",
        "all",
        show(total.refuse),
        show(total.pass),
        show(total.first)
    ));
    eprintln!("{} cases\n{}", cases.len(), report.join("\n"));
    assert!(
        !sentinel(&dir.path().join("audit-0.db")).exists(),
        "the guard ran a `Match exec` command of an ssh configuration"
    );
    assert!(
        below.is_empty(),
        "the unseen corpus scores below its floors:\n{}",
        below.join("\n")
    );
}
