//! Tests of the use-time check's candidates and listings.

use super::*;
use std::collections::HashSet;

/// A folder the agent can fill (its home) with case variants of a few names must not pass
/// the bound once the variants are folded together: the entries read count, so a
/// `.bashrc` beyond the part read is probed, not taken as absent.
#[test]
fn a_folder_of_case_variants_is_not_taken_as_listed_whole() {
    let dir = std::env::temp_dir().join(format!("mesh-guard-variants-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for mask in 0..(MAX_LISTED as u32 + 1) {
        let name: String = "abcdefghijklmn"
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if mask & (1 << i) != 0 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect();
        std::fs::write(dir.join(name), "").unwrap();
    }
    let listed = names_in(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        listed.is_none(),
        "more entries than MAX_LISTED, yet listed whole"
    );
}

#[test]
fn a_listing_spares_only_the_probes_of_names_it_lacks() {
    let dir = PathBuf::from("/home/a");
    let names = [".bashrc", ".config"].into();
    let existing = Existing {
        listed: vec![(dir.clone(), names)],
        absent: vec![PathBuf::from("/etc/zsh")],
    };
    assert!(existing.may_hold(&dir.join(".bashrc")));
    assert!(existing.may_hold(&dir.join(".config/fish/config.fish")));
    assert!(!existing.may_hold(&dir.join(".bashrc.d")));
    assert!(!existing.may_hold(&dir.join(".gemini/.env")));
    assert!(existing.may_hold(Path::new("/home/a/./.bashrc")));
    assert!(existing.may_hold(Path::new("/home/ab/.zshrc")));
    assert!(existing.may_hold(Path::new("/etc/profile")));
    assert!(existing.may_hold(&dir));
    // An absent folder spares what lies in it, and only that.
    assert!(!existing.may_hold(Path::new("/etc/zsh/zshenv")));
    assert!(!existing.may_hold(Path::new("/etc/zsh/zshrc.d")));
    assert!(existing.may_hold(Path::new("/etc/zshenv")));
    assert!(existing.may_hold(Path::new("/etc/zsh.d/x")));
}

/// The byte reading of a path's first name below a folder agrees with the component walk, and
/// leaves every other spelling to it.
#[test]
fn a_first_name_is_read_from_the_bytes_only_when_plainly_spelled() {
    let name =
        |p: &str, d: &str| first_name_after(Path::new(p), Path::new(d)).map(|n| n.to_owned());
    assert_eq!(name("/home/a/.bashrc", "/home/a"), Some(".bashrc".into()));
    assert_eq!(
        name("/home/a/.config/fish/x", "/home/a"),
        Some(".config".into())
    );
    assert_eq!(name("/root/.zshrc", "/root/"), Some(".zshrc".into()));
    for (path, dir) in [
        ("/home/ab/.zshrc", "/home/a"),
        ("/home/a", "/home/a"),
        ("/home/a/./.bashrc", "/home/a"),
        ("/home/a//.bashrc", "/home/a"),
        ("/home/a/../b/.bashrc", "/home/a"),
    ] {
        assert_eq!(name(path, dir), None, "{path} below {dir}");
    }
    let existing = Existing {
        listed: vec![(PathBuf::from("/root/"), [".zshrc"].into())],
        absent: Vec::new(),
    };
    assert!(existing.may_hold(Path::new("/root/.zshrc")));
    assert!(!existing.may_hold(Path::new("/root/.bashrc")));
    assert!(existing.may_hold(Path::new("/root//.zshrc")));
}

/// A home whose name is not UTF-8 still has its startup files' snippet folders read: the
/// folder's name is made from the file's bytes, not from a lossy display of them.
#[test]
fn a_snippet_folder_under_a_name_that_is_not_utf8_is_read() {
    use std::os::unix::ffi::OsStringExt;
    let mut name = format!("mesh-guard-bytes-{}-", std::process::id()).into_bytes();
    name.push(0xff);
    let home = std::env::temp_dir().join(std::ffi::OsString::from_vec(name));
    let snippet = home.join(".bashrc.d/plant.sh");
    std::fs::create_dir_all(snippet.parent().unwrap()).unwrap();
    std::fs::write(&snippet, "export MESH_GUARD_OVERRIDE=x\n").unwrap();
    let io = crate::io::Io {
        stdin: Box::new(std::io::empty()),
        stdout: Box::new(std::io::sink()),
        stderr: Box::new(std::io::sink()),
        env: [("HOME".into(), home.clone().into_os_string())].into(),
    };
    let found = crate::io::with(io, || sources(None, &Existing::list()));
    let _ = std::fs::remove_dir_all(&home);
    assert!(found.iter().any(|(f, _)| *f == snippet), "{found:?}");
}

#[test]
fn later_copies_go_and_the_order_stays() {
    let entry = |p: &str, f| (PathBuf::from(p), f);
    let files = vec![
        entry("/h/.env", Format::Text),
        entry("/h/.bashrc", Format::Text),
        entry("/h/.env", Format::Text),
        entry("/h/.env", Format::Settings),
        entry("/a", Format::Text),
    ];
    let kept = first_of_each(files);
    assert_eq!(
        kept,
        vec![
            entry("/h/.env", Format::Text),
            entry("/h/.bashrc", Format::Text),
            entry("/h/.env", Format::Settings),
            entry("/a", Format::Text),
        ]
    );
}

#[test]
fn a_file_reached_twice_is_read_once() {
    let home = std::env::temp_dir().join(format!("mesh-guard-twice-{}", std::process::id()));
    let snippet = home.join(".profile.d/a.sh");
    std::fs::create_dir_all(snippet.parent().unwrap()).unwrap();
    std::fs::write(&snippet, "").unwrap();
    std::fs::write(home.join(".env"), "").unwrap();
    let io = crate::io::Io {
        stdin: Box::new(std::io::empty()),
        stdout: Box::new(std::io::sink()),
        stderr: Box::new(std::io::sink()),
        env: [("HOME".into(), home.clone().into_os_string())].into(),
    };
    // `.profile`'s snippet folder is also listed on its own, and the home directory is
    // an ancestor of the event's folder: each file still comes once.
    let cwd = home.join("project");
    let found = crate::io::with(io, || sources(Some(&cwd), &Existing::list()));
    let _ = std::fs::remove_dir_all(&home);
    for file in [snippet, home.join(".env")] {
        let times = found.iter().filter(|(f, _)| *f == file).count();
        assert_eq!(times, 1, "{}", file.display());
    }
    let mut seen = HashSet::new();
    assert!(found.iter().all(|entry| seen.insert(entry.clone())));
}

#[test]
fn a_listing_matches_names_in_any_case_and_is_not_used_with_other_names() {
    let dir = std::env::temp_dir().join(format!("mesh-guard-names-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(".ZSHENV"), "").unwrap();
    let existing = Existing {
        listed: vec![(dir.clone(), names_in(&dir).unwrap())],
        absent: Vec::new(),
    };
    assert!(existing.may_hold(&dir.join(".zshenv")));
    assert!(!existing.may_hold(&dir.join(".bashrc")));
    std::fs::write(dir.join(".zſhenv"), "").unwrap();
    let listed = names_in(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(listed.is_none(), "a name that is not ASCII");
}
