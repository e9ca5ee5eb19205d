//! An operator's `--rules`: a typo or a silent redefinition of a built-in program is an
//! error naming the file and line, and ssh to the mesh is still refused under it; extending
//! a built-in program needs no flag (issue 15).

mod common;
use common::*;

fn check(dir: &Scratch, command: &str) -> Output {
    run(
        &["check", command],
        &[
            ("MESH_GUARD_CATALOG", &example_catalog()),
            ("MESH_GUARD_DB", &dir.path("a.db")),
            ("MESH_GUARD_RULES", &dir.path("rules")),
        ],
        b"",
    )
}

/// The hook's answer to `command` under the rules in `dir`.
fn hook(dir: &Scratch, command: &str) -> Output {
    let mut args = with_paths(&example_catalog(), &dir.path("a.db"), &["--rules"]);
    args.extend([
        dir.path("rules").to_string_lossy().into_owned(),
        "hook".into(),
    ]);
    run(&strs(&args), &[], &bash_event(command))
}

fn rules(dir: &Scratch, text: &str) -> String {
    std::fs::create_dir_all(dir.path("rules")).unwrap();
    dir.write("rules/ops.toml", text).display().to_string()
}

#[test]
fn a_typo_in_a_rules_table_is_an_error_naming_file_and_line() {
    let dir = Scratch::new("rules-typo");
    let file = rules(
        &dir,
        "[[program]]\nnames = [\"kubectl\"]\nover = \"kubectl\"\n\n[program.optoin]\n\"--server\" = \"host\"\n",
    );
    let out = check(&dir, "kubectl --server https://atlas:6443 get pods");
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert_eq!(
        out.stderr,
        format!(
            "error: {file}:5: unknown field `optoin`, expected one of `names`, `over`, \
             `options`, `env`, `operands`, `inert`, `subcommand`, `parent_subcommands`, \
             `same_as`, `ranks_as`, `only_by_target`, `replace`, `methods`, `short_value`, `long_value`, \
             `stop_at_operand`, `options_after_first_operand`, `single_dash_long`, \
             `long_two_values`, `short_flag`, `long_flag`, `optional_value`, `abbreviations`\n"
        )
    );
}

#[test]
fn a_misspelt_syntax_key_is_an_error_too() {
    let dir = Scratch::new("rules-typo-syntax");
    let file = rules(
        &dir,
        "[[wrapper]]\nnames = [\"mywrap\"]\nshort_values = \"u\"\n",
    );
    let out = check(&dir, "ls");
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .starts_with(&format!("error: {file}:3: unknown field `short_values`")),
        "{}",
        out.stderr
    );
}

#[test]
fn a_silent_redefinition_of_ssh_is_an_error_and_ssh_is_still_refused() {
    let dir = Scratch::new("rules-redefine");
    let file = rules(&dir, "[[program]]\nnames = [\"ssh\"]\nover = \"ssh\"\n");
    let out = check(&dir, "ssh atlas uptime");
    assert_eq!(
        out.stderr,
        format!(
            "error: {file}:1: `ssh` is a built-in program, and `over` redefines it: add \
             `replace = true` to replace it whole, or leave `over` out to extend it\n"
        )
    );
    assert_ne!(out.code, 0, "ssh to the mesh passed");

    // The hook itself refuses under the broken rules.
    let hook = hook(&dir, "ssh atlas uptime");
    assert_eq!(hook.code, 2, "{}", hook.stdout);
}

/// Wrappers, shells, writers and the rest have no `replace`: a second definition of a
/// built-in name (a `bash` whose `-c` is lost, a `sudo` without its value-taking `-u`), or
/// a name given a second kind, is an error, and the hook refuses under it.
#[test]
fn a_built_in_name_redefined_in_another_table_is_an_error() {
    for (table, name, other, shown) in [
        ("shell", "bash", "command_flag = \"x\"\n", "[[shell]]"),
        ("wrapper", "sudo", "", "[[wrapper]]"),
        ("program", "sudo", "over = \"sudo\"\n", "[[wrapper]]"),
        ("declaration", "ssh", "", "[[program]]"),
        ("writer", "tee", "", "[[writer]]"),
        (
            "program",
            "python3.11",
            "over = \"py\"\n",
            "[[interpreter]]",
        ),
    ] {
        let dir = Scratch::new("rules-kind");
        let file = rules(
            &dir,
            &format!("# ops\n\n[[{table}]]\nnames = [\"{name}\"]\n{other}"),
        );
        let out = check(&dir, "ls");
        assert_eq!(
            out.stderr,
            format!(
                "error: {file}:3: `{name}` is built in as {shown}: a [[{table}]] with that \
                 name would change what the guard sees behind it; give it another name\n"
            )
        );
        let hook = hook(&dir, "bash -c 'ssh atlas uptime'");
        assert_eq!(hook.code, 2, "{table} {name}: {}", hook.stdout);
    }
    // A new name in the same tables is fine, and a name list may repeat its own kind.
    let dir = Scratch::new("rules-kind-ok");
    rules(
        &dir,
        "[[wrapper]]\nnames = [\"mywrap\"]\n[[declaration]]\nnames = [\"export\"]\n",
    );
    let out = check(&dir, "mywrap ssh atlas uptime");
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
}

#[test]
fn changing_a_built_in_options_role_is_a_redefinition() {
    let dir = Scratch::new("rules-role");
    let file = rules(
        &dir,
        "[[program]]\nnames = [\"ssh\"]\n[program.options]\n\"-J\" = \"ignore\"\n",
    );
    let out = check(&dir, "ssh -J atlas example.org");
    assert_eq!(
        out.stderr,
        format!(
            "error: {file}:1: `ssh` is a built-in program, and the option `-J` is a \
             `jump` there, not a `ignore`: add `replace = true` to replace it whole\n"
        )
    );
}

#[test]
fn replace_true_replaces_and_must_name_a_built_in_program() {
    let dir = Scratch::new("rules-replace");
    rules(
        &dir,
        "[[program]]\nnames = [\"ssh\"]\nover = \"ssh\"\nreplace = true\n",
    );
    // Replaced by a program with no operand roles: the operator asked for it.
    assert_eq!(check(&dir, "ssh atlas uptime").code, 0);

    let file = rules(&dir, "[[program]]\nnames = [\"sshh\"]\nreplace = true\n");
    let out = check(&dir, "ls");
    assert_eq!(
        out.stderr,
        format!(
            "error: {file}:1: `replace = true`, but no built-in program is named `sshh`: \
             it replaces nothing\n"
        )
    );
}

#[test]
fn extending_a_built_in_program_needs_no_flag() {
    let dir = Scratch::new("rules-extend");
    rules(
        &dir,
        "# An ssh wrapper the mesh ships, and an option it adds.\n[[program]]\nnames = [\"ssh\", \"mssh\"]\nshort_value = \"Z\"\n[program.options]\n\"-Z\" = \"host\"\n",
    );
    for command in [
        "ssh atlas uptime",
        "mssh atlas uptime",
        "ssh -Z atlas example.org",
    ] {
        let out = check(&dir, command);
        assert_eq!(out.code, 1, "{command}: {} {}", out.stdout, out.stderr);
    }
    assert_eq!(check(&dir, "ssh example.org uptime").code, 0);
}

#[test]
fn a_d_bus_method_is_added_and_a_built_in_one_cannot_change_silently() {
    let dir = Scratch::new("rules-methods");
    rules(
        &dir,
        "[[program]]\nnames = [\"busctl\"]\n[program.methods]\nBounceUnit = \"systemctl restart\"\n",
    );
    // The call's refusal as JSON, with the operator's rules or without them.
    let call = |with_rules: bool| -> serde_json::Value {
        let (catalog, db, rules_dir) = (example_catalog(), dir.path("a.db"), dir.path("rules"));
        let mut env: Vec<(&str, &std::path::Path)> =
            vec![("MESH_GUARD_CATALOG", &catalog), ("MESH_GUARD_DB", &db)];
        if with_rules {
            env.push(("MESH_GUARD_RULES", &rules_dir));
        }
        let out = run(
            &[
                "check",
                "--json",
                "busctl call org.example.Ops /ops org.example.Ops BounceUnit s mesh-controller.service",
            ],
            &env,
            b"",
        );
        assert_eq!(out.code, 1, "{} {}", out.stdout, out.stderr);
        serde_json::from_str(&out.stdout).unwrap()
    };
    let json = call(true);
    assert_eq!(json["instead"][0]["tool"], "restart", "{json}");
    // Without the operator's method the call is refused still, but nothing ranks for it.
    let json = call(false);
    assert_eq!(json["rule"], "mesh-unit", "{json}");
    assert_eq!(json["instead"], serde_json::json!([]), "{json}");

    let file = rules(
        &dir,
        "[[program]]\nnames = [\"busctl\"]\n[program.methods]\nRestartUnit = \"systemctl status\"\n",
    );
    let out = check(&dir, "ls");
    assert_eq!(
        out.stderr,
        format!(
            "error: {file}:1: `busctl` is a built-in program, and the method `RestartUnit` is \
             `systemctl restart` there, not `systemctl status`: add `replace = true` to replace \
             it whole\n"
        )
    );
}

#[test]
fn the_example_rules_hold_their_policy() {
    let dir = Scratch::new("rules-example");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = run(
        &[
            "--rules",
            &root.join("examples/rules").display().to_string(),
            "test",
            &root
                .join("examples/rules/policy.toml")
                .display()
                .to_string(),
        ],
        &[
            ("MESH_GUARD_CATALOG", &example_catalog()),
            ("MESH_GUARD_DB", &dir.path("a.db")),
        ],
        b"",
    );
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (0, "8 cases: 8 hold, 0 fail\n", "")
    );
}

/// Task runners are rules tables too (issue 40): an operator's `[[runner]]` adds a runner
/// whose recipes are read as the built-in ones are, and a built-in runner's name is not
/// theirs to redefine.
#[test]
fn an_operators_runner_reads_its_recipes() {
    let dir = Scratch::new("rules-runner");
    rules(
        &dir,
        "[[runner]]\nnames = [\"xjust\"]\nformat = \"justfile\"\nfiles = [\"justfile\"]\n\
         file_options = [\"-f\"]\nbare = true\nmany = true\ntrailing = true\n",
    );
    dir.write(
        "proj/justfile",
        "build:\n    cargo build\n\ndeploy:\n    ssh atlas uptime\n",
    );
    let hook_in = |command: &str| {
        let mut args = with_paths(&example_catalog(), &dir.path("a.db"), &["--rules"]);
        args.extend([
            dir.path("rules").to_string_lossy().into_owned(),
            "hook".into(),
        ]);
        let event = serde_json::json!({
            "session_id": "sess-1",
            "transcript_path": "/tmp/t.jsonl",
            "cwd": dir.path("proj"),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": "toolu_1",
        });
        run(&strs(&args), &[], event.to_string().as_bytes())
    };
    let refused = hook_in("xjust -fjustfile deploy");
    assert_eq!(refused.code, 2, "{}{}", refused.stdout, refused.stderr);
    assert!(refused.stderr.contains("atlas"), "{}", refused.stderr);
    let passed = hook_in("xjust build");
    assert_eq!(passed.code, 0, "{}{}", passed.stdout, passed.stderr);

    let dir = Scratch::new("rules-runner-clash");
    let file = rules(
        &dir,
        "[[runner]]\nnames = [\"just\"]\nformat = \"justfile\"\nfiles = [\"justfile\"]\n",
    );
    let out = check(&dir, "ls");
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr
            .contains(&format!("{file}:1: `just` is built in as [[runner]]")),
        "{}",
        out.stderr
    );
}
