//! `mesh-guard test FILE...`: the operator's policy tests. Each `[[case]]` is a command
//! and what the guard must do with it, decided exactly as `check` decides it, so that a
//! catalog or rules change that lets a command through fails in the operator's CI.

use crate::app::{Outcome, decide};
use crate::config::Paths;
use crate::decide::{Decision, PassReason};
use crate::error::exit;
use crate::rule::Rule;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    case: Vec<Spanned<Case>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    command: String,
    expect: Spanned<String>,
    /// The name of the tool the refusal must name first.
    instead: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Refuse,
    Pass,
}

/// One case, checked and located.
struct Checked {
    at: String,
    command: String,
    expect: Expect,
    instead: Option<String>,
}

/// Runs every file's cases: 0 when all hold, 1 when some fail, 2 when a file is bad (or
/// the rules or catalog cannot be read, so nothing could be decided).
pub fn run(paths: &Paths, files: &[PathBuf]) -> i32 {
    let mut cases = Vec::new();
    let mut bad = false;
    for file in files {
        match read(file) {
            Ok(found) => cases.extend(found),
            Err(e) => {
                errln!("error: {e}");
                bad = true;
            }
        }
    }
    let rules = match crate::rules::Rules::load(paths.rules.as_deref()) {
        Ok(r) => r,
        Err(e) => {
            errln!("error: {e}");
            return exit::ERROR;
        }
    };
    let catalog = paths.lazy_catalog();
    let cwd = std::env::current_dir().ok();
    let mut failed = 0;
    for case in &cases {
        let outcome = decide(paths, &rules, &catalog, &case.command, cwd.clone());
        if let Decision::Refuse(r) = &outcome.decision
            && r.rule == Rule::FailClosed
            && let Err(errors) = catalog.get()
        {
            for e in errors {
                errln!("error: {e}");
            }
            return exit::ERROR;
        }
        if let Some(why) = failure(case, &outcome) {
            failed += 1;
            outln!("FAIL {} `{}`: {why}", case.at, case.command);
        }
    }
    let total = cases.len();
    outln!(
        "{total} {}: {} hold, {failed} {}",
        if total == 1 { "case" } else { "cases" },
        total - failed,
        if failed == 1 { "fails" } else { "fail" }
    );
    if bad {
        exit::ERROR
    } else if failed > 0 {
        exit::NO
    } else {
        exit::OK
    }
}

/// Why a case does not hold, or `None` when it does.
fn failure(case: &Checked, outcome: &Outcome) -> Option<String> {
    let first = outcome.instead.first().map(|s| s.tool.as_str());
    // A case tests the policy, whatever the mode: a refusal only reported (decision 0060)
    // is the policy's refusal.
    let got = match (outcome.decision.refusal(), &outcome.decision) {
        (Some(r), _) => match first {
            Some(tool) => format!("refuse [{}], first tool `{tool}`", r.rule.id()),
            None => format!("refuse [{}], no tool named", r.rule.id()),
        },
        (None, Decision::Pass(PassReason::ForgeAccount { .. })) => {
            "pass [forge-account]".to_string()
        }
        (None, _) => "pass".to_string(),
    };
    let refused = outcome.decision.refusal().is_some();
    let want = match (case.expect, &case.instead) {
        (Expect::Pass, _) => "pass".to_string(),
        (Expect::Refuse, None) => "refuse".to_string(),
        (Expect::Refuse, Some(tool)) => format!("refuse, first tool `{tool}`"),
    };
    let holds = match case.expect {
        Expect::Pass => !refused,
        Expect::Refuse => refused && case.instead.as_deref().is_none_or(|t| first == Some(t)),
    };
    (!holds).then(|| format!("expected {want}, got {got}"))
}

/// A policy file's cases, or what is wrong with it (named by file and line).
fn read(path: &Path) -> Result<Vec<Checked>, PolicyError> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|cause| PolicyError::Unreadable {
        path: path.to_path_buf(),
        cause,
    })?;
    let line = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let file: PolicyFile = toml::from_str(&text).map_err(|e| PolicyError::NotPolicy {
        path: path.to_path_buf(),
        line: e.span().map(|span| line(span.start)),
        message: policy_words(e.message().trim()),
    })?;
    if file.case.is_empty() {
        return Err(PolicyError::NoCases(path.to_path_buf()));
    }
    file.case
        .into_iter()
        .map(|case| {
            let case_line = line(case.span().start);
            let at = format!("{shown}:{case_line}");
            let case = case.into_inner();
            let expect = match case.expect.get_ref().as_str() {
                "refuse" => Expect::Refuse,
                "pass" => Expect::Pass,
                other => {
                    return Err(PolicyError::BadExpect {
                        path: path.to_path_buf(),
                        line: line(case.expect.span().start),
                        found: other.to_string(),
                    });
                }
            };
            if expect == Expect::Pass && case.instead.is_some() {
                return Err(PolicyError::InsteadOnPass {
                    path: path.to_path_buf(),
                    line: case_line,
                });
            }
            Ok(Checked {
                at,
                command: case.command,
                expect,
                instead: case.instead,
            })
        })
        .collect()
}

/// What is wrong with a policy file, named by file and line.
#[derive(Debug)]
enum PolicyError {
    /// The file cannot be read.
    Unreadable {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// The file is not TOML of the policy's shape; `message` is the TOML library's, put in
    /// the policy's words by [`policy_words`].
    NotPolicy {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },
    /// No `[[case]]`.
    NoCases(PathBuf),
    /// `expect` is neither "refuse" nor "pass".
    BadExpect {
        path: PathBuf,
        line: usize,
        found: String,
    },
    /// A case expecting "pass" names an `instead`.
    InsteadOnPass { path: PathBuf, line: usize },
}

impl std::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PolicyError::Unreadable { path, cause } => {
                write!(
                    f,
                    "{}: cannot read the policy file: {cause}",
                    path.display()
                )
            }
            PolicyError::NotPolicy {
                path,
                line: Some(line),
                message,
            } => write!(f, "{}:{line}: {message}", path.display()),
            PolicyError::NotPolicy {
                path,
                line: None,
                message,
            } => write!(f, "{}: {message}", path.display()),
            PolicyError::NoCases(path) => write!(
                f,
                "{}: the policy file holds no `[[case]]` (each needs `command` and `expect`)",
                path.display()
            ),
            PolicyError::BadExpect { path, line, found } => write!(
                f,
                "{}:{line}: `expect` must be \"refuse\" or \"pass\", not \"{found}\"",
                path.display()
            ),
            PolicyError::InsteadOnPass { path, line } => write!(
                f,
                "{}:{line}: `instead` names the tool a refusal offers; a case that expects \"pass\" cannot have it",
                path.display()
            ),
        }
    }
}

impl std::error::Error for PolicyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PolicyError::Unreadable { cause, .. } => Some(cause),
            _ => None,
        }
    }
}

/// serde's words in the policy format's: "unknown field `expected`, expected one of …".
fn policy_words(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let (key, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
        let expected = expected.trim_start_matches("one of ");
        return format!("unknown key {key} (the keys here are {expected})");
    }
    if let Some(key) = message.strip_prefix("missing field ") {
        return format!("a `[[case]]` has no {key} (each needs `command` and `expect`)");
    }
    if message.contains("expected struct Case") || message.contains("expected a sequence") {
        return "`case` must be an array of tables, written `[[case]]`, each with `command` and `expect`".into();
    }
    if let Some(found) = message
        .strip_prefix("invalid type: ")
        .and_then(|m| m.strip_suffix(", expected a string"))
    {
        return format!("`command`, `expect` and `instead` must be strings, not {found}");
    }
    message.to_string()
}
