//! Property: a wrapper changes no decision. Every case of `tests/corpus/*.toml` is decided
//! bare, then behind wrappers the compiled rules know (`Rules::wrapper_names`, each with the
//! words its table says must come before the program: `skip` operands, its command option,
//! its shell-string option) and inside the shell's own forms (a subshell, a group,
//! `cd /tmp &&`, a pipe, `bash -c`); each must decide as the bare case did. And for every
//! wrapper W and each option its table says makes it run nothing (`inert`), `W ssh OPTION
//! atlas` is refused: the option is ssh's, not W's (issue 40).
//!
//! In process (`app::decide`, rules and catalog loaded once). Every wrapper name and every
//! shell form sees every case: the wrappers are spread over the cases by a fixed rotation
//! (`PER_CASE` names per case), so each name sees about a tenth of the corpus and the run
//! stays in seconds; `MESH_GUARD_WRAPPERS_ALL=1` puts every case behind every name.

use mesh_guard::catalog::{self, LazyCatalog};
use mesh_guard::config::Paths;
use mesh_guard::decide::Decision;
use mesh_guard::rules::{Rules, Wrapper, WrapperKind};
use serde::Deserialize;
use std::path::PathBuf;

const FILES: [&str; 4] = [
    "must_refuse.toml",
    "must_pass.toml",
    "bypass_attempts.toml",
    "edge_cases.toml",
];

/// Wrapper names each case is put behind, in the default run.
const PER_CASE: usize = 8;

#[derive(Deserialize)]
struct File {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    command: String,
    catalog: Option<String>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The cases decided with the example catalog (an absent-catalog case is the hook's).
fn cases() -> Vec<String> {
    let mut out = Vec::new();
    for name in FILES {
        let text = std::fs::read_to_string(root().join("tests/corpus").join(name)).unwrap();
        let file: File = toml::from_str(&text).unwrap();
        out.extend(
            file.case
                .into_iter()
                .filter(|c| c.catalog.is_none())
                .map(|c| c.command),
        );
    }
    out
}

fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// One simple command: it can follow a wrapper's words as the program and its arguments.
/// Anything else (a list, a pipe, a redirection, an assignment first) is given to the
/// wrapper as `sh -c 'CASE'`, the program the wrapper runs.
fn simple(case: &str) -> bool {
    !case.contains(['\n', ';', '&', '|', '(', ')', '{', '}', '<', '>', '`', '#'])
        && !case.contains("$(")
        && case
            .split_whitespace()
            .next()
            .is_some_and(|w| !w.contains('=') && !matches!(w, "!" | "if" | "for" | "while"))
}

/// `case` behind the wrapper `name`, as its table says the wrapper is written.
fn behind(name: &str, w: &Wrapper, case: &str) -> String {
    let program = || {
        if simple(case) {
            case.to_string()
        } else {
            format!("sh -c {}", quoted(case))
        }
    };
    let operands = || vec!["1"; w.skip].join(" ");
    let text = match w.kind {
        WrapperKind::Find => format!("{name} . {} {} \\;", w.command_option[0], program()),
        WrapperKind::Fd => format!("{name} {} {}", w.command_option[0], program()),
        WrapperKind::Xargs | WrapperKind::Parallel => format!("{name} {}", program()),
        _ if !w.command_option.is_empty() => {
            format!("{name} {} {}", w.command_option[0], program())
        }
        _ if w.no_program || w.shell_operands => {
            let option = w.shell_option.first().map_or("", String::as_str);
            format!("{name} {option} {}", quoted(case))
        }
        _ if w.shell_rest => format!("{name} {} {}", operands(), quoted(case)),
        _ => format!("{name} {} {}", operands(), program()),
    };
    text.split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `case` in the shell's own forms.
fn forms(case: &str) -> Vec<String> {
    vec![
        format!("( {case}\n)"),
        format!("{{ {case}\n}}"),
        format!("cd /tmp && {case}"),
        format!("{{ {case}\n}} | cat"),
        format!("bash -c {}", quoted(case)),
    ]
}

struct Judge {
    paths: Paths,
    rules: Rules,
    catalog: LazyCatalog,
}

impl Judge {
    fn new() -> Judge {
        let paths = Paths {
            catalog: root().join("examples/catalog.toml"),
            db: std::env::temp_dir().join("mesh-guard-property-wrappers.db"),
            rules: None,
        };
        let catalog = LazyCatalog::ready(catalog::load(&paths.catalog).unwrap());
        Judge {
            paths,
            rules: Rules::load(None).unwrap(),
            catalog,
        }
    }

    fn refuses(&self, command: &str) -> bool {
        let outcome =
            mesh_guard::app::decide(&self.paths, &self.rules, &self.catalog, command, None);
        matches!(outcome.decision, Decision::Refuse(_))
    }
}

fn on_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn say(label: &str, failures: &[String], checked: usize) {
    eprintln!("{label}: {} of {checked} changed", failures.len());
    assert!(
        failures.is_empty(),
        "{label}: {} of {checked} decisions changed:\n{}",
        failures.len(),
        failures
            .iter()
            .take(60)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn no_wrapper_changes_a_decision() {
    let (failures, checked) = on_big_stack(|| {
        let judge = Judge::new();
        let names = judge.rules.wrapper_names();
        assert!(names.len() > 40, "the rules know {} wrappers", names.len());
        let all = std::env::var_os("MESH_GUARD_WRAPPERS_ALL").is_some();
        let per_case = if all { names.len() } else { PER_CASE };
        let (mut failures, mut checked) = (Vec::new(), 0);
        for (i, case) in cases().iter().enumerate() {
            let bare = judge.refuses(case);
            for j in 0..per_case {
                let name = &names[(i * per_case + j) % names.len()];
                let wrapper = judge.rules.wrapper(name).unwrap();
                let command = behind(name, wrapper, case);
                checked += 1;
                if judge.refuses(&command) != bare {
                    failures.push(format!(
                        "  {} → {}: {command}",
                        verdict(bare),
                        verdict(!bare)
                    ));
                }
            }
        }
        (failures, checked)
    });
    say("behind a wrapper", &failures, checked);
}

#[test]
fn no_shell_form_changes_a_decision() {
    let (failures, checked) = on_big_stack(|| {
        let judge = Judge::new();
        let (mut failures, mut checked) = (Vec::new(), 0);
        for case in cases() {
            let bare = judge.refuses(&case);
            for command in forms(&case) {
                checked += 1;
                if judge.refuses(&command) != bare {
                    failures.push(format!(
                        "  {} → {}: {command}",
                        verdict(bare),
                        verdict(!bare)
                    ));
                }
            }
        }
        (failures, checked)
    });
    say("in a shell form", &failures, checked);
}

/// `W ssh -v atlas`: an option that makes W run nothing, written after the program W
/// runs, is that program's.
#[test]
fn an_inert_option_after_the_program_is_the_programs() {
    let (failures, checked) = on_big_stack(|| {
        let judge = Judge::new();
        let ssh = judge.rules.program("ssh").unwrap().syntax.clone();
        let (mut failures, mut checked) = (Vec::new(), 0);
        for name in judge.rules.wrapper_names() {
            let wrapper = judge.rules.wrapper(&name).unwrap();
            for option in &wrapper.inert {
                // Where ssh's option takes a value, it is given one.
                let takes = match option.strip_prefix("--") {
                    Some(long) => ssh.long_value.iter().any(|l| l == long),
                    None => option.len() == 2 && ssh.short_value.contains(&option[1..]),
                };
                let value = if takes { " root" } else { "" };
                let bare = format!("ssh {option}{value} atlas");
                if !judge.refuses(&bare) {
                    // ssh itself runs nothing with it (`ssh -V`): nothing to keep.
                    continue;
                }
                let command = behind(&name, wrapper, &bare);
                checked += 1;
                if !judge.refuses(&command) {
                    failures.push(format!("  passes: {command}"));
                }
            }
        }
        (failures, checked)
    });
    assert!(checked > 10, "only {checked} inert options were checked");
    say("an inert option after the program", &failures, checked);
}

fn verdict(refuse: bool) -> &'static str {
    if refuse { "refuse" } else { "pass" }
}
