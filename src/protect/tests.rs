use super::*;
use crate::shell::UNKNOWN;

#[test]
fn startup_files_and_others() {
    for path in [
        "/root/.bashrc",
        "~/.profile",
        ".zshenv",
        "/etc/environment",
        "x/run.sh",
        ".envrc",
        "/root/.claude/settings.json",
        "/etc/profile.d/a",
        "/root/.bash_aliases",
        "/etc/profile",
        "/etc/bash.bashrc",
        "/root/.bashrc.d/extra",
        "/etc/zsh/zshenv",
        "/root/.config/fish/conf.d/x.fish",
    ] {
        assert!(is_startup_file(path), "{path}");
    }
    for path in ["README.md", "docs/override.md", "src/main.rs", "notes.txt"] {
        assert!(!is_startup_file(path), "{path}");
    }
}

#[test]
fn patterns_match_as_bash_globs_and_unknown_spans_slashes() {
    let u = UNKNOWN;
    assert!(matches("/h/.claude/sett*.json", "/h/.claude/settings.json"));
    assert!(matches(
        "/h/.cl?ude/settings.json",
        "/h/.claude/settings.json"
    ));
    assert!(matches("/h/.[a-c]laude/s*", "/h/.claude/settings.json"));
    assert!(!matches("/h/*/settings.json", "/h/a/b/settings.json"));
    assert!(matches(
        &format!("{u}/settings.json"),
        "/h/a/b/settings.json"
    ));
    assert!(!matches(
        &format!("{u}/settings.json"),
        "/h/a/settings.jsonx"
    ));
    assert!(!matches("/h/[!.]claude", "/h/.claude"));
}

#[test]
fn the_append_form_assigns() {
    assert!(assigns_guard_variable("export MESH_GUARD_OVERRIDE+=x"));
    assert!(assigns_guard_variable("MESH_GUARD_DB=/tmp/x"));
    assert!(!assigns_guard_variable(
        "see MESH_GUARD_OVERRIDE in the README"
    ));
}

#[test]
fn every_guard_variable_is_seen_assigned_wherever_it_stands() {
    for v in super::GUARD_VARIABLES {
        for text in [
            format!("{v}=x"),
            format!("a=b {v}+=x"),
            format!("echo {v} MESH_GUARD_; {v}=x"),
            format!("MESH_GUARD_{v}=x"),
        ] {
            assert!(assigns_guard_variable(&text), "{text}");
        }
        for text in [format!("{v}X=x"), format!("{v} = x"), format!("echo ${v}")] {
            assert!(!assigns_guard_variable(&text), "{text}");
        }
    }
}

#[test]
fn the_launcher_places_are_the_launchers() {
    let script = include_str!("../../plugin/bin/mesh-guard");
    let line = script
        .lines()
        .find_map(|l| l.strip_prefix("PLACES='"))
        .expect("the launcher's PLACES line");
    let places: Vec<&str> = line.trim_end_matches('\'').split(' ').collect();
    assert_eq!(places, super::LAUNCHER_PLACES);
}
