//! Code that arrives late (issue 29), against hostile files: a file too large, a FIFO, a
//! device, a recipe loop, a decoder bomb. Each is answered (no read blocks, no bound is
//! passed) and fails closed: what could not be read is unknown, never empty, and is refused
//! where the command names the mesh, as other unknown code is.

mod common;

use std::path::Path;
use std::process::Command;

/// `mesh-guard check --json -- COMMAND` in `dir`, against the example catalog.
fn check(dir: &Path, command: &str) -> (String, String) {
    let db = dir.join(".record.db");
    let output = Command::new(common::BIN)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("MESH_GUARD_CATALOG", common::example_catalog())
        .env("MESH_GUARD_DB", db)
        .current_dir(dir)
        .args(["check", "--json", "--", command])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "{command}: not JSON: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let text = |key: &str| json[key].as_str().unwrap_or_default().to_string();
    (text("decision"), text("message"))
}

fn fifo(path: &Path) {
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
}

#[test]
fn a_recipe_file_that_cannot_be_read_is_unknown_code() {
    let scratch = common::Scratch::new("late-hostile");
    let dir = &scratch.0;
    // A package.json past the read bound, a justfile that is a FIFO, a taskfile that is
    // the zero device.
    std::fs::write(dir.join("package.json"), vec![b' '; 300 * 1024]).unwrap();
    fifo(&dir.join("justfile"));
    std::os::unix::fs::symlink("/dev/zero", dir.join("Taskfile.yml")).unwrap();
    for runner in ["npm run deploy", "just deploy", "task deploy"] {
        // Naming the mesh, the unknown code is refused and the refusal says what it is.
        let (decision, message) = check(dir, &format!("{runner}; echo atlas"));
        assert_eq!(decision, "refuse", "{runner}");
        assert!(message.contains("cannot be known"), "{runner}: {message}");
        // Naming nothing of it, unknown code passes, as any unknown code does.
        assert_eq!(check(dir, runner).0, "pass", "{runner}");
    }
}

#[test]
fn a_recipe_loop_ends_at_the_bound_and_is_refused() {
    let scratch = common::Scratch::new("late-loop");
    let dir = &scratch.0;
    scratch.write(
        "package.json",
        r#"{"scripts": {"a": "npm run b", "b": "npm run a"}}"#,
    );
    let (decision, message) = check(dir, "npm run a");
    assert_eq!(decision, "refuse");
    assert!(message.contains("deep"), "{message}");
    // just runs a recipe once however often it is depended on: a cycle runs no more.
    scratch.write("justfile", "a: b\n    echo a\nb: a\n    ssh atlas uptime\n");
    assert_eq!(check(dir, "just a").0, "refuse");
    scratch.write("justfile", "a: b\n    echo a\nb: a\n    echo b\n");
    assert_eq!(check(dir, "just a").0, "pass");
}

#[test]
fn an_input_file_that_cannot_be_read_leaves_its_values_unknown() {
    let scratch = common::Scratch::new("late-inputs");
    let dir = &scratch.0;
    scratch.write("hosts.txt", "atlas\n");
    fifo(&dir.join("pipe.txt"));
    std::fs::write(dir.join("huge.txt"), "atlas\n".repeat(60_000)).unwrap();
    assert_eq!(
        check(dir, "xargs -I{} ssh {} uptime < hosts.txt").0,
        "refuse"
    );
    for file in ["pipe.txt", "huge.txt", "/dev/zero", "missing.txt"] {
        // The values are unknown, not empty: the target is judged as an unknown one.
        let command = format!("while read -r h; do ssh \"$h\" uptime; done < {file}");
        assert_eq!(check(dir, &command).0, "pass", "{file}");
        let command = format!("H=atlas; xargs -I{{}} ssh {{}} \"$H\" < {file}");
        assert_eq!(check(dir, &command).0, "refuse", "{file}");
    }
}

/// The paths one `check` touched (opened or looked at), from `strace`; `None` after saying
/// loudly that the test did not run, where strace cannot trace.
fn touched(dir: &Path, command: &str) -> Option<String> {
    let log = dir.join("strace.log");
    let status = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=%file", "-o"])
        .arg(&log)
        .arg(common::BIN)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("MESH_GUARD_CATALOG", common::example_catalog())
        .env("MESH_GUARD_DB", dir.join(".record.db"))
        .current_dir(dir)
        .args(["check", "--", command])
        .output();
    match status {
        // The command line itself names the files: only the calls after the exec count.
        Ok(output) if output.status.code().is_some_and(|c| c <= 1) => Some(
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .filter(|line| !line.contains("execve("))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => {
            let message = "late code: strace missing or unable to trace (apt-get install strace) \
                           — the no-read test NOT run";
            if std::env::var("MESH_GUARD_E2E_REQUIRED").as_deref() == Ok("1") {
                panic!("{message} (MESH_GUARD_E2E_REQUIRED=1)");
            }
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "\n{message}\n");
            None
        }
    }
}

#[test]
fn nothing_is_read_for_a_command_that_runs_no_guarded_program() {
    let scratch = common::Scratch::new("late-quiet");
    let dir = &scratch.0;
    scratch.write("hosts.txt", "atlas\n");
    scratch.write("package.json", r#"{"scripts": {"build": "tsc"}}"#);
    let quiet = [
        "for h in $(cat hosts.txt); do echo $h; done",
        "cat hosts.txt | sort",
        "cargo build",
        "ls",
        "echo aGVsbG8= | base64 -d",
    ];
    for command in quiet {
        let Some(log) = touched(dir, command) else {
            return;
        };
        assert!(!log.contains("hosts.txt"), "{command} looked at hosts.txt");
        assert!(
            !log.contains("package.json"),
            "{command} looked at package.json"
        );
    }
    // The same files are read where a guarded program or a runner uses them.
    let log = touched(dir, "xargs -I{} ssh {} uptime < hosts.txt").unwrap();
    assert!(log.contains("hosts.txt"));
    let log = touched(dir, "npm run build").unwrap();
    assert!(log.contains("package.json"));
}

#[test]
fn cargo_make_is_read_behind_cargo_own_options() {
    let scratch = common::Scratch::new("late-cargo-make");
    let dir = &scratch.0;
    scratch.write(
        "Makefile.toml",
        "[tasks.a]\nscript = \"ssh atlas uptime\"\n",
    );
    for command in [
        "cargo make a",
        "cargo +nightly make a",
        "cargo --color never make a",
        "cargo --config net.offline=true make a",
        "cargo -Z unstable-options make a",
    ] {
        assert_eq!(check(dir, command).0, "refuse", "{command}");
    }
    for command in [
        "cargo build --bin make",
        "cargo +nightly build",
        "cargo --color never test make",
    ] {
        assert_eq!(check(dir, command).0, "pass", "{command}");
    }
}

/// An option the runner's rules do not know may take the next word: `npm --color false run a`
/// is read both ways, so the recipe behind it is found (it had been taken for a flag, and
/// `false` for the subcommand, which ran nothing). Known options still read one way.
#[test]
fn a_runner_option_the_rules_do_not_know_is_read_both_ways() {
    let scratch = common::Scratch::new("late-npm-unknown-option");
    let dir = &scratch.0;
    scratch.write(
        "package.json",
        r#"{"scripts": {"a": "ssh atlas uptime", "build": "tsc"}}"#,
    );
    for command in [
        "npm run a",
        "npm --color false run a",
        "npm --no-such-option value run a",
        "npm --silent run a",
    ] {
        assert_eq!(check(dir, command).0, "refuse", "{command}");
    }
    for command in [
        "npm --color false run build",
        "npm --silent run build",
        "npm --loglevel a run build",
    ] {
        assert_eq!(check(dir, command).0, "pass", "{command}");
    }
}
