use super::*;

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
fn tilde_forms_expand_or_are_unknown() {
    let p = Protected::new(vec![], Some(PathBuf::from("/w")), Some(PathBuf::from("/h")));
    assert_eq!(p.expand_tilde("~/x"), "/h/x");
    assert_eq!(p.expand_tilde("~"), "/h");
    assert_eq!(p.expand_tilde("~+/x"), "/w/x");
    // A user from this machine's password file, whoever the first one is.
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let fields: Vec<&str> = passwd.lines().next().unwrap_or("").split(':').collect();
    if fields.len() >= 6 {
        let expected = format!("{}/x", fields[5].trim_end_matches('/'));
        assert_eq!(p.expand_tilde(&format!("~{}/x", fields[0])), expected);
    }
    assert_eq!(p.expand_tilde("~nosuchuser0/x"), format!("{UNKNOWN}/x"));
    assert_eq!(p.expand_tilde("~-/x"), format!("{UNKNOWN}/x"));
    assert_eq!(p.expand_tilde("a~/x"), "a~/x");
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
fn paths_resolve_through_cd_and_links() {
    let dir = std::env::temp_dir().join(format!("mesh-guard-protect-{}", std::process::id()));
    let guarded = dir.join("guarded");
    std::fs::create_dir_all(&guarded).unwrap();
    std::fs::write(guarded.join("catalog.toml"), "").unwrap();
    let link = dir.join("link");
    let _ = std::os::unix::fs::symlink(&guarded, &link);
    let protected = Protected::new(vec![guarded.clone()], Some(PathBuf::from("/")), None);
    assert!(protected.covers("catalog.toml", Some(&guarded)));
    assert!(protected.covers(&link.join("catalog.toml").to_string_lossy(), None));
    assert!(protected.covers(&link.join("new.toml").to_string_lossy(), None));
    assert!(!protected.covers("catalog.toml", Some(&dir)));
    let _ = std::fs::remove_dir_all(&dir);
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
