//! `catalog check`: errors in the format's words and warnings about what can never match,
//! each naming its file and line (issue 15).

mod common;
use common::*;
use std::path::Path;

fn check(catalog: &Path) -> Output {
    run(
        &["catalog", "check"],
        &[("MESH_GUARD_CATALOG", catalog)],
        b"",
    )
}

/// The lines of stderr, as a reader sees them.
fn lines(out: &Output) -> Vec<String> {
    out.stderr.lines().map(String::from).collect()
}

#[test]
fn warnings_name_file_and_line_and_keep_exit_zero() {
    let dir = Scratch::new("catalog-warnings");
    let file = dir.write(
        "c.toml",
        r#"version = 1
[mesh]
networks = ["10.20.0.5/16", "10.30.0.0/16"]
[[machine]]
name = "atlas"
[[verb]]
name = "exec"
usage = "mesh exec <machine>"
replaces = ["sssh <machine>", "ssh <machin>", "/usr/bin/sudo journalctl", "journalctl -u <unit>"]
"#,
    );
    let out = check(&file);
    let f = file.display();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        lines(&out),
        vec![
            format!(
                "warning: {f}:3: `10.20.0.5/16` has host bits set: it is read as the network `10.20.0.0/16`"
            ),
            format!(
                "warning: {f}:9: `sssh <machine>`: no rule guards `sssh`, so the guard never refuses it and this entry never matches"
            ),
            format!(
                "warning: {f}:9: `ssh <machin>`: `<machin>` is not a known placeholder (`<machine>`, `<module>`, `<container>`, `<unit>`); it matches any one word"
            ),
        ]
    );
    assert_eq!(
        out.stdout,
        format!("{f}: valid (1 machine, 1 tool)\ncompiled cache: absent\n")
    );
}

#[test]
fn a_catalog_with_no_machine_is_warned_about_also_at_session_start() {
    let dir = Scratch::new("catalog-empty");
    let file = dir.write("c.toml", "version = 1\n");
    let out = check(&file);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        format!(
            "warning: {}: the catalog has no `[[machine]]`: no machine is guarded by name, only what `[mesh]` domains and networks cover\n",
            file.display()
        )
    );
    let out = run(
        &strs(&with_paths(&file, &dir.path("a.db"), &["session-start"])),
        &[],
        b"{}",
    );
    assert_eq!(out.code, 0);
    assert_eq!(
        out.stderr,
        format!(
            "mesh-guard: warning: the catalog {} has no machine: no machine is guarded by name, only what `[mesh]` domains and networks cover\n",
            file.display()
        )
    );
}

#[test]
fn the_example_catalog_has_no_warning() {
    let out = check(&example_catalog());
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
}

#[test]
fn a_duplicate_says_where_the_first_definition_is() {
    let dir = Scratch::new("catalog-duplicates");
    let a = dir.write(
        "mesh/a.toml",
        "version = 1\n[[machine]]\nname = \"atlas\"\n[[module]]\nname = \"db\"\nunits = [\"pg.service\"]\n[[verb]]\nname = \"logs\"\nusage = \"mesh logs\"\n",
    );
    let b = dir.write(
        "mesh/b.toml",
        "[[machine]]\nname = \"orion\"\naliases = [\"ATLAS.\"]\n[[module]]\nname = \"db\"\nunits = [\"pg\"]\ncontainers = [\"x\", \"x\"]\n[[verb]]\nname = \"logs\"\nusage = \"mesh logs\"\n",
    );
    let out = check(&dir.path("mesh"));
    let (a, b) = (a.display(), b.display());
    assert_eq!(out.code, 1);
    assert_eq!(
        lines(&out),
        vec![
            format!("error: {b}:3: duplicate machine name `ATLAS.`, first defined at {a}:3"),
            format!("error: {b}:5: duplicate module `db`, first defined at {a}:5"),
            format!("error: {b}:7: duplicate container `x`, first defined at {b}:7"),
            format!("error: {b}:6: duplicate unit `pg`, first defined at {a}:6"),
            format!("error: {b}:9: duplicate tool or verb `logs`, first defined at {a}:8"),
        ]
    );
}

/// A `[[machine]] pattern` that is not a regular expression is an error at its line; a
/// valid one is accepted and reaches the machines it names.
#[test]
fn a_bad_machine_pattern_names_its_line() {
    let dir = Scratch::new("catalog-pattern");
    let file = dir.write(
        "c.toml",
        "version = 1\n[[machine]]\nname = \"nodes\"\npattern = \"node-[0-9]{4}\"\n[[machine]]\nname = \"gpus\"\npattern = \"gpu-[a-z\"\n",
    );
    let out = check(&file);
    assert_eq!(out.code, 1);
    let got = lines(&out);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with(&format!(
            "error: {}:7: `gpu-[a-z` is not a valid pattern",
            file.display()
        )),
        "{got:?}"
    );
    let good = dir.write(
        "good.toml",
        "version = 1\n[[machine]]\nname = \"nodes\"\npattern = \"node-[0-9]{4}\"\n",
    );
    let decide = |command: &str| {
        run(
            &["check", "--", command],
            &[("MESH_GUARD_CATALOG", good.as_path())],
            b"",
        )
        .code
    };
    assert_eq!(decide("ssh NODE-0417 uptime"), 1);
    assert_eq!(decide("ssh node-417 uptime"), 0);
    assert_eq!(decide("ssh node-04170 uptime"), 0);
}

/// Every way a value can have the wrong type, and every missing key, in the format's words.
#[test]
fn type_errors_read_as_the_format() {
    let cases: &[(&str, &str)] = &[
        (
            "forge = \"forge\"\n",
            "2: `forge` must be a table with `machine` and `git_user`, not a string",
        ),
        (
            "[forge]\nmachine = \"atlas\"\n",
            "2: `[forge]` has no `git_user` (`forge` must be a table with `machine` and `git_user`)",
        ),
        (
            "[forge]\nmachine = 5\ngit_user = \"git\"\n",
            "3: `forge.machine` must be a string, not an integer",
        ),
        (
            "[forge]\nmachine = \"atlas\"\ngit_user = true\n",
            "4: `forge.git_user` must be a string, not a boolean",
        ),
        (
            "mesh = 3\n",
            "2: `mesh` must be a table with `domains` and `networks`, not an integer",
        ),
        (
            "[mesh]\ndomains = \"mesh.lan\"\n",
            "3: `mesh.domains` must be an array of strings, not a string",
        ),
        (
            "[mesh]\nnetworks = [10]\n",
            "3: `mesh.networks` must be an array of strings, not an array holding an integer",
        ),
        (
            "[machine]\nname = \"atlas\"\n",
            "2: `machine` must be an array of tables, written `[[machine]]`, each with `name`, not a table",
        ),
        (
            "machine = [\"atlas\"]\n",
            "2: `machine` must be an array of tables, written `[[machine]]`, each with `name`, not an array holding a string",
        ),
        (
            "[[machine]]\naliases = [\"a\"]\n",
            "2: `[[machine]]` has no `name` (`machine` must be an array of tables, written `[[machine]]`, each with `name`)",
        ),
        (
            "[[machine]]\nname = \"atlas\"\naliases = \"a\"\n",
            "4: `machine.aliases` must be an array of strings, not a string",
        ),
        (
            "[[module]]\nname = 1\n",
            "3: `module.name` must be a string, not an integer",
        ),
        (
            "[[module]]\nname = \"m\"\nunits = [1.5]\n",
            "4: `module.units` must be an array of strings, not an array holding a number",
        ),
        (
            "[[module]]\nname = \"m\"\ntool = {name = \"t\"}\n",
            "4: `module.tool` must be an array of tables, written `[[module.tool]]`, each with `name` and `usage`, not a table",
        ),
        (
            "[[module]]\nname = \"m\"\n[[module.tool]]\nname = \"t\"\n",
            "4: `[[module.tool]]` has no `usage` (`module.tool` must be an array of tables, written `[[module.tool]]`, each with `name` and `usage`)",
        ),
        (
            "verb = \"logs\"\n",
            "2: `verb` must be an array of tables, written `[[verb]]`, each with `name` and `usage`, not a string",
        ),
        (
            "[[verb]]\nname = \"v\"\nusage = [\"u\"]\n",
            "4: `verb.usage` must be a string, not an array",
        ),
        (
            "[[verb]]\nname = \"v\"\nusage = \"u\"\nreplaces = \"ssh\"\n",
            "5: `verb.replaces` must be an array of strings, not a string",
        ),
        (
            "[record]\nsyslog = 514\n",
            "3: `record.syslog` must be a string, not an integer",
        ),
        (
            "[[verb]]\nname = \"v\"\nusage = \"u\"\nreplace = [\"ssh\"]\n",
            "5: unknown key `replace` (the keys here are `name`, `usage`, `replaces`)",
        ),
    ];
    let dir = Scratch::new("catalog-types");
    for (i, (body, want)) in cases.iter().enumerate() {
        let file = dir.write(&format!("c{i}.toml"), &format!("version = 1\n{body}"));
        let out = check(&file);
        assert_eq!(out.code, 1, "{body}");
        assert_eq!(
            out.stderr,
            format!("error: {}:{want}\n", file.display()),
            "{body}"
        );
    }
    let file = dir.write("n.toml", "version = -1\n");
    assert_eq!(
        check(&file).stderr,
        format!(
            "error: {}:1: `version` must be the integer 1, not integer `-1`\n",
            file.display()
        )
    );
    let file = dir.write("v.toml", "version = \"1\"\n");
    assert_eq!(
        check(&file).stderr,
        format!(
            "error: {}:1: `version` must be the integer 1, not a string\n",
            file.display()
        )
    );
}
