//! `mesh-guard test`: operator policy tests hold, fail naming the case, or reject a bad
//! file (issue 15).

mod common;
use common::*;
use std::path::Path;

fn test(dir: &Scratch, files: &[&Path]) -> Output {
    let mut args = vec!["test".to_string()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(
        &args,
        &[
            ("MESH_GUARD_CATALOG", &example_catalog()),
            ("MESH_GUARD_DB", &dir.path("a.db")),
        ],
        b"",
    )
}

#[test]
fn the_example_policy_holds_for_the_example_catalog() {
    let dir = Scratch::new("policy-example");
    let policy = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/policy.toml");
    let out = test(&dir, &[&policy]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (0, "8 cases: 8 hold, 0 fail\n", "")
    );
}

#[test]
fn a_wrong_policy_fails_naming_each_case_and_what_happened() {
    let dir = Scratch::new("policy-fail");
    let right = dir.write(
        "right.toml",
        "[[case]]\ncommand = \"docker logs mesh-controller\"\nexpect = \"refuse\"\ninstead = \"logs\"\n",
    );
    let wrong = dir.write(
        "wrong.toml",
        r#"[[case]]
command = "ssh atlas uptime"
expect = "pass"

[[case]]
command = "ssh atlas uptime"
expect = "refuse"
instead = "logs"

[[case]]
command = "ssh example.org uptime"
expect = "refuse"

[[case]]
command = "ssh git@forge"
expect = "refuse"
"#,
    );
    let out = test(&dir, &[&right, &wrong]);
    let w = wrong.display();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "FAIL {w}:1 `ssh atlas uptime`: expected pass, got refuse [remote-access], first tool `exec`\n\
             FAIL {w}:5 `ssh atlas uptime`: expected refuse, first tool `logs`, got refuse [remote-access], first tool `exec`\n\
             FAIL {w}:10 `ssh example.org uptime`: expected refuse, got pass\n\
             FAIL {w}:14 `ssh git@forge`: expected refuse, got pass [forge-account]\n\
             5 cases: 1 hold, 4 fail\n"
        )
    );
}

#[test]
fn a_bad_file_exits_2_naming_file_and_line() {
    let dir = Scratch::new("policy-bad");
    let cases: &[(&str, &str)] = &[
        (
            "[[case]]\ncommand = \"ssh atlas\"\nexpected = \"refuse\"\n",
            ":3: unknown key `expected` (the keys here are `command`, `expect`, `instead`)",
        ),
        (
            "[[case]]\ncommand = \"ssh atlas\"\nexpect = \"deny\"\n",
            ":3: `expect` must be \"refuse\" or \"pass\", not \"deny\"",
        ),
        (
            "[[case]]\ncommand = \"ssh atlas\"\n",
            ":1: a `[[case]]` has no `expect` (each needs `command` and `expect`)",
        ),
        (
            "[[case]]\ncommand = \"ls\"\nexpect = \"pass\"\ninstead = \"exec\"\n",
            ":1: `instead` names the tool a refusal offers; a case that expects \"pass\" cannot have it",
        ),
        ("[[case]\n", ":1: unclosed array table, expected `]`"),
        (
            "",
            ": the policy file holds no `[[case]]` (each needs `command` and `expect`)",
        ),
    ];
    for (i, (body, want)) in cases.iter().enumerate() {
        let file = dir.write(&format!("p{i}.toml"), body);
        let out = test(&dir, &[&file]);
        assert_eq!(out.code, 2, "{body}");
        assert_eq!(
            out.stderr,
            format!("error: {}{want}\n", file.display()),
            "{body}"
        );
    }
    let missing = dir.path("missing.toml");
    let out = test(&dir, &[&missing]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.starts_with(&format!(
            "error: {}: cannot read the policy file: ",
            missing.display()
        )),
        "{}",
        out.stderr
    );
}
