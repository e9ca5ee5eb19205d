use super::*;

#[test]
fn tilde_forms_expand_or_are_unknown() {
    let p = World::new(vec![], Some(PathBuf::from("/w")), Some(PathBuf::from("/h")));
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
fn paths_resolve_through_cd_and_links() {
    let dir = std::env::temp_dir().join(format!("mesh-guard-protect-{}", std::process::id()));
    let guarded = dir.join("guarded");
    std::fs::create_dir_all(&guarded).unwrap();
    std::fs::write(guarded.join("catalog.toml"), "").unwrap();
    let link = dir.join("link");
    let _ = std::os::unix::fs::symlink(&guarded, &link);
    let world = World::new(vec![guarded.clone()], Some(PathBuf::from("/")), None);
    assert!(world.covers("catalog.toml", Some(&guarded)));
    assert!(world.covers(&link.join("catalog.toml").to_string_lossy(), None));
    assert!(world.covers(&link.join("new.toml").to_string_lossy(), None));
    assert!(!world.covers("catalog.toml", Some(&dir)));
    let _ = std::fs::remove_dir_all(&dir);
}
