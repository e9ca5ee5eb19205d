//! Issue 40, item 5: precision that needs files on disk (a sourced library, a script, an
//! ssh configuration, a home): each case is `mesh-guard check` run in a scratch directory,
//! against the example catalog.

mod common;

use std::path::Path;
use std::process::Command;

/// `mesh-guard check --json -- COMMAND` in `dir`, with `HOME` set to `home`.
fn check_with_home(dir: &Path, home: &Path, command: &str) -> serde_json::Value {
    let output = Command::new(common::BIN)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("MESH_GUARD_CATALOG", common::example_catalog())
        .env("MESH_GUARD_DB", dir.join(".record.db"))
        .current_dir(dir)
        .args(["check", "--json", "--", command])
        .output()
        .unwrap();
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "{command}: not JSON: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn decision(dir: &Path, command: &str) -> String {
    check_with_home(dir, dir, command)["decision"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_function_a_sourced_file_defines_is_followed_where_it_is_called() {
    let scratch = common::Scratch::new("sourced");
    let dir = &scratch.0;
    scratch.write("lib.sh", "f() { ssh atlas uptime; }\ng() { echo hello; }\n");
    for command in [
        ". ./lib.sh; f",
        "source lib.sh && f",
        "cd . && . ./lib.sh; f x",
    ] {
        assert_eq!(decision(dir, command), "refuse", "{command}");
    }
    // Defined and not called, or a harmless one called: nothing reaches the mesh.
    assert_eq!(decision(dir, ". ./lib.sh"), "pass");
    assert_eq!(decision(dir, ". ./lib.sh; g"), "pass");
}

#[test]
fn a_shells_n_runs_nothing_but_only_before_its_script() {
    let scratch = common::Scratch::new("noexec");
    let dir = &scratch.0;
    scratch.write("s.sh", "ssh atlas uptime\n");
    assert_eq!(decision(dir, "bash s.sh"), "refuse");
    assert_eq!(decision(dir, "bash -n s.sh"), "pass");
    assert_eq!(decision(dir, "bash -n < s.sh"), "pass");
    // After the script, `-n` is the script's own word: the script runs.
    assert_eq!(decision(dir, "bash s.sh -n"), "refuse");
}

#[test]
fn check_reads_the_disk_under_one_home() {
    let scratch = common::Scratch::new("one-home");
    let dir = &scratch.0;
    scratch.write(".ssh/config", "Host cache\n  HostName atlas\n");
    // `check` takes its environment's HOME, for every reader: the alias is followed to
    // atlas, which is the destination (never a jump of another home's route).
    let json = check_with_home(dir, dir, "ssh cache uptime");
    assert_eq!(json["decision"], "refuse", "{json}");
    assert_eq!(
        json["instead"][0]["usage"], "mesh exec atlas -- uptime",
        "{json}"
    );
    let message = json["message"].as_str().unwrap_or_default();
    assert!(!message.contains("-J"), "{message}");
}

#[test]
fn a_user_from_the_ssh_configuration_counts_for_the_forge_account() {
    let scratch = common::Scratch::new("forge-user");
    let dir = &scratch.0;
    scratch.write(
        ".ssh/config",
        "Host forge\n  User git\nHost gitbox\n  HostName forge\n  User git\nHost rootbox\n  HostName forge\n  User root\n",
    );
    // The example catalog's forge account is git: ssh logs in as git either way.
    assert_eq!(decision(dir, "ssh forge"), "pass");
    assert_eq!(decision(dir, "ssh gitbox"), "pass");
    // The command line's user wins over the configuration's, and another user is refused.
    assert_eq!(decision(dir, "ssh root@forge"), "refuse");
    assert_eq!(decision(dir, "ssh -l admin forge"), "refuse");
    assert_eq!(decision(dir, "ssh rootbox"), "refuse");
}
