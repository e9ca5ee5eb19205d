//! Every subcommand's help has a description and an example, and lists only the global
//! options it reads (issue 15).

mod common;
use common::*;

const SUBCOMMANDS: &[&[&str]] = &[
    &["hook"],
    &["check"],
    &["audit"],
    &["audit", "verify"],
    &["audit", "export"],
    &["audit", "prune"],
    &["audit", "missing"],
    &["catalog"],
    &["catalog", "check"],
    &["catalog", "compile"],
    &["instead-of"],
    &["search"],
    &["mcp"],
    &["test"],
    &["session-start"],
    &["install"],
    &["uninstall"],
    &["doctor"],
];

fn help(words: &[&str]) -> String {
    let mut args = words.to_vec();
    args.push("--help");
    let out = run(&args, &[], b"");
    assert_eq!(out.code, 0, "{words:?}: {}", out.stderr);
    out.stdout
}

#[test]
fn every_subcommand_has_a_description_and_an_example() {
    for words in SUBCOMMANDS {
        let text = help(words);
        let first = text.lines().next().unwrap_or_default();
        assert!(!first.starts_with("Usage"), "{words:?} has no description");
        assert!(
            text.contains("Example:"),
            "{words:?} has no example:\n{text}"
        );
    }
}

#[test]
fn options_and_operands_are_documented() {
    for words in SUBCOMMANDS {
        let text = help(words);
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !line.trim_start().starts_with("--") {
                continue;
            }
            // Clap puts a long description on the lines below the option.
            let own = line.trim_start().split_once("  ").map(|(_, d)| d.trim());
            let below = lines
                .get(i + 1)
                .map(|l| l.trim())
                .filter(|l| !l.is_empty() && !l.starts_with('-') && !l.starts_with('<'));
            let described = own
                .or(below)
                .is_some_and(|d| !d.is_empty() && !d.starts_with('['));
            assert!(described, "{words:?}: {line:?} is not described");
        }
    }
    assert!(help(&["search"]).contains("<COMMAND>...  The command:"));
    assert!(help(&["check"]).contains("<COMMAND>...  The command:"));
}

#[test]
fn global_options_a_subcommand_ignores_are_not_listed_but_accepted() {
    let audit = help(&["audit"]);
    assert!(
        !audit.contains("--catalog") && !audit.contains("--rules"),
        "{audit}"
    );
    assert!(audit.contains("--db"));
    let instead = help(&["instead-of"]);
    assert!(
        !instead.contains("--db") && instead.contains("--catalog"),
        "{instead}"
    );

    // Still accepted where the contract puts them: on every subcommand.
    let dir = Scratch::new("help-globals");
    let out = run(
        &[
            "audit",
            "--catalog",
            "/nowhere",
            "--rules",
            "/nowhere",
            "--db",
            &dir.path("a.db").display().to_string(),
        ],
        &[],
        b"",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("a.db"), "{}", out.stderr);
}

#[test]
fn a_hooks_help_lists_no_variable_it_does_not_read() {
    // A hook takes its paths from its command line only (decision 0059).
    for words in [
        &["hook"][..],
        &["session-start"],
        &["--catalog", "c.toml", "hook"],
    ] {
        let text = help(words);
        assert!(text.contains("--catalog <PATH>"), "{words:?}: {text}");
        assert!(!text.contains("[env:"), "{words:?}: {text}");
    }
    let out = run(&["help", "hook"], &[], b"");
    assert!(out.stdout.contains("--catalog <PATH>"), "{}", out.stdout);
    assert!(!out.stdout.contains("[env:"), "{}", out.stdout);
    // The operator's commands read them, and say so.
    assert!(help(&["check"]).contains("[env: MESH_GUARD_CATALOG="));
}
