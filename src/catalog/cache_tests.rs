//! The compiled cache: answers as the catalog does, is rebuilt when the catalog changes or
//! the cache is damaged, and a damaged cache never turns a refusal into a pass.

use super::*;
use crate::rule::Rule;
use std::time::{Duration, SystemTime};

const EXAMPLE: &str = include_str!("../../examples/catalog.toml");

fn age(path: &Path) {
    // Old enough that the file's stamp alone proves its content (not "racy").
    let old = SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(old)
        .unwrap();
}

fn setup(text: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog.toml");
    std::fs::write(&catalog, text).unwrap();
    let cache = cache_file_for(&dir.path().join("cache"), &catalog);
    (dir, catalog, cache)
}

fn lazy(catalog: &Path, cache: &Path) -> LazyCatalog {
    LazyCatalog::with_cache(catalog.to_path_buf(), cache.to_path_buf())
}

fn from_cache(l: &LazyCatalog) -> bool {
    l.get().unwrap().memory().is_none()
}

#[test]
fn the_cache_answers_as_the_catalog_does() {
    let (_dir, catalog, cache) = setup(EXAMPLE);
    age(&catalog);
    let parsed = load(&catalog).unwrap();
    assert!(
        !from_cache(&lazy(&catalog, &cache)),
        "the first call parses and writes the cache"
    );
    let l = lazy(&catalog, &cache);
    assert!(from_cache(&l), "the second call reads the cache");
    let cached = l.get().unwrap();
    for word in [
        "atlas",
        "ATLAS.",
        "db1",
        "10.20.0.11",
        "10.20.9.9",
        "fd00:20::13",
        "x.mesh.lan",
        "example.com",
        "mesh-controller",
        "mesh-postgres.service",
        "mesh-postgres",
        "pgbackup.timer",
        "controller",
        "nothing",
        "",
    ] {
        assert_eq!(cached.object(word), parsed.object(word), "{word}");
    }
    assert_eq!(
        cached.module_entry("gateway"),
        parsed.module_entry("gateway")
    );
    assert_eq!(cached.forge_account(), parsed.forge_account());
    assert!(cached.is_forge_account(Some("git"), "forge"));
    assert_eq!(cached.tools(), parsed.tools());
    assert_eq!(cached.machine_count(), parsed.machine_count());
    let words = ["ssh", "atlas", "journalctl", "-u", "mesh-controller"];
    assert_eq!(cached.tools_named_by(words), parsed.tools_named_by(words));
    assert!(!cached.is_broken());
}

#[test]
fn a_changed_catalog_is_seen_on_the_next_call() {
    let (_dir, catalog, cache) = setup(EXAMPLE);
    assert!(
        lazy(&catalog, &cache)
            .get()
            .unwrap()
            .host("atlas")
            .is_some()
    );
    // Same size, written at once: within the timestamp's resolution of the first write.
    std::fs::write(&catalog, EXAMPLE.replace("\"atlas\"", "\"altas\"")).unwrap();
    let l = lazy(&catalog, &cache);
    assert!(l.get().unwrap().host("atlas").is_none());
    assert!(l.get().unwrap().host("altas").is_some());
}

#[test]
fn a_change_that_keeps_size_and_mtime_is_seen() {
    let (_dir, catalog, cache) = setup(EXAMPLE);
    age(&catalog);
    let _ = lazy(&catalog, &cache).get().unwrap();
    assert!(from_cache(&lazy(&catalog, &cache)));
    let mtime = std::fs::metadata(&catalog).unwrap().modified().unwrap();
    std::fs::write(&catalog, EXAMPLE.replace("\"atlas\"", "\"altas\"")).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&catalog)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let l = lazy(&catalog, &cache);
    assert!(
        l.get().unwrap().host("atlas").is_none(),
        "the inode change time gives it away"
    );
}

#[test]
fn a_directory_catalog_sees_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("catalog.d");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.toml"), EXAMPLE).unwrap();
    let cache = cache_file_for(&dir.path().join("cache"), &root);
    assert!(lazy(&root, &cache).get().unwrap().host("newhost").is_none());
    std::fs::write(root.join("b.toml"), "[[machine]]\nname = \"newhost\"\n").unwrap();
    assert!(lazy(&root, &cache).get().unwrap().host("newhost").is_some());
}

/// Overwrites every byte from `from` on with `byte`, in place.
fn damage(cache: &Path, from: usize, byte: u8) {
    let mut bytes = std::fs::read(cache).unwrap();
    for b in &mut bytes[from..] {
        *b = byte;
    }
    std::fs::write(cache, bytes).unwrap();
}

fn decide(catalog: &LazyCatalog, command: &str) -> crate::decide::Decision {
    let paths = crate::config::Paths::resolve(
        Some(catalog.path().to_path_buf()),
        Some(PathBuf::from("/nonexistent/audit.db")),
        None,
    );
    let rules = crate::rules::Rules::load(None).unwrap();
    crate::app::decide(&paths, &rules, catalog, command, None).decision
}

#[test]
fn a_damaged_body_never_makes_a_refusal_pass() {
    let (_dir, catalog, cache) = setup(EXAMPLE);
    age(&catalog);
    let _ = lazy(&catalog, &cache).get().unwrap();
    let len = std::fs::metadata(&cache).unwrap().len() as usize;
    let header_end = len - 4000.min(len / 2);
    for byte in [0u8, 0xff, 0x41] {
        damage(&cache, header_end, byte);
        let l = lazy(&catalog, &cache);
        assert!(
            from_cache(&l),
            "the header is whole, so the cache is opened"
        );
        let decision = decide(&l, "docker logs mesh-controller && ssh atlas uptime");
        assert!(
            matches!(decision, crate::decide::Decision::Refuse(_)),
            "{decision:?}"
        );
        assert!(l.recover() || !l.get().unwrap().is_broken());
        // The fallback parsed the catalog and rewrote a whole cache.
        let again = lazy(&catalog, &cache);
        assert!(from_cache(&again));
        assert!(again.get().unwrap().host("atlas").is_some());
        assert!(!again.get().unwrap().is_broken());
    }
}

#[test]
fn a_damaged_or_truncated_header_is_rebuilt() {
    let (_dir, catalog, cache) = setup(EXAMPLE);
    age(&catalog);
    let _ = lazy(&catalog, &cache).get().unwrap();
    let whole = std::fs::read(&cache).unwrap();
    for cut in [0, 7, 30, 60, 200, whole.len() - 1] {
        std::fs::write(&cache, &whole[..cut]).unwrap();
        assert!(
            !from_cache(&lazy(&catalog, &cache)),
            "cut at {cut}: not trusted"
        );
        assert_eq!(
            std::fs::read(&cache).unwrap(),
            whole,
            "cut at {cut}: rebuilt"
        );
    }
    let mut flipped = whole.clone();
    flipped[100] ^= 1;
    std::fs::write(&cache, &flipped).unwrap();
    assert!(!from_cache(&lazy(&catalog, &cache)));
    assert!(from_cache(&lazy(&catalog, &cache)));
}

#[test]
fn an_unreadable_catalog_is_not_answered_from_the_cache() {
    let (_dir, catalog, cache) = setup(EXAMPLE);
    age(&catalog);
    let _ = lazy(&catalog, &cache).get().unwrap();
    std::fs::remove_file(&catalog).unwrap();
    assert!(lazy(&catalog, &cache).get().is_err());
}

/// Issue 11: a cache written with the real catalog's stamps but another catalog's names
/// is trusted by the hook; `catalog check` must say it does not match.
#[test]
fn catalog_check_finds_a_forged_cache() {
    let (dir, catalog, cache) = setup(EXAMPLE);
    age(&catalog);
    assert_eq!(
        check_cache(&catalog, &cache),
        CacheState::NotInUse("absent")
    );
    let _ = lazy(&catalog, &cache).get();
    assert_eq!(check_cache(&catalog, &cache), CacheState::Agrees);

    // Forged: the real catalog's stamps and content hash, an index without `atlas`.
    let forged_text = EXAMPLE.replace("\"atlas\"", "\"atlas-gone\"");
    let other = dir.path().join("other.toml");
    std::fs::write(&other, &forged_text).unwrap();
    let forged = load(&other).expect("the forged catalog is valid");
    let sources = read_sources(&catalog).unwrap();
    cache::write(
        &cache,
        &catalog,
        &cache::stamps(&catalog).unwrap(),
        cache::content_hash(&sources),
        forged.memory().unwrap(),
    )
    .unwrap();
    let l = lazy(&catalog, &cache);
    assert!(from_cache(&l), "the hook trusts the forged cache");
    assert!(
        matches!(check_cache(&catalog, &cache), CacheState::Disagrees(_)),
        "catalog check reports it"
    );
}

#[test]
fn a_damaged_length_is_not_allocated() {
    // Found by fuzz/cache_read: a header length of 2 GiB in a file of a few bytes made the
    // reader allocate it all before the read failed.
    let (dir, catalog, _) = setup("version = 1\n[[machine]]\nname = \"atlas\"\n");
    let path = dir.path().join("short.idx");
    std::fs::write(&path, b"MGIDX\0\0\n").unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let huge = 1usize << 40;
    assert!(cache::read_at(&file, 0, huge).is_err());
    assert!(cache::read_at(&file, u64::MAX, 1 << 20).is_err());
    assert_eq!(cache::read_at(&file, 0, 8).unwrap(), b"MGIDX\0\0\n");
    // The same file as a compiled index: the catalog itself answers.
    let lazy = LazyCatalog::with_compiled_index(catalog, path);
    assert!(lazy.get().is_ok_and(|c| c.object("atlas").is_some()));
}

#[test]
fn a_stamp_from_metadata_already_taken_is_the_stamp() {
    let (dir, catalog, _cache) = setup(EXAMPLE);
    let seen = std::fs::metadata(&catalog).unwrap();
    assert_eq!(
        cache::stamps_seen(&catalog, Some(&seen)).unwrap(),
        cache::stamps(&catalog).unwrap()
    );
    // A folder's metadata stamps nothing itself: its files are each stamped.
    let folder = dir.path().join("catalog.d");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("a.toml"), EXAMPLE).unwrap();
    let seen = std::fs::metadata(&folder).unwrap();
    let stamps = cache::stamps_seen(&folder, Some(&seen)).unwrap();
    assert_eq!(stamps, cache::stamps(&folder).unwrap());
    assert_eq!(stamps.len(), 1);
    assert!(stamps[0].path.ends_with(b"a.toml"));
}

#[test]
fn the_cache_keeps_the_modes() {
    let text = EXAMPLE.replacen(
        "name       = \"gateway\"",
        "name       = \"gateway\"\nmode       = \"enforce\"",
        1,
    ) + "\n[mode]\ndefault = \"report\"\nmesh-unit = \"enforce\"\n";
    let (_dir, catalog, cache) = setup(&text);
    age(&catalog);
    let parsed = load(&catalog).unwrap();
    assert!(!parsed.modes().all_enforced());
    let _ = lazy(&catalog, &cache).get().unwrap();
    let l = lazy(&catalog, &cache);
    assert!(from_cache(&l), "the second call reads the cache");
    let cached = l.get().unwrap();
    assert_eq!(cached.modes(), parsed.modes());
    for (rule, word, mode) in [
        (Rule::RemoteAccess, "atlas", Mode::Report),
        (Rule::RemoteAccess, "orion", Mode::Enforce),
        (Rule::MeshContainer, "mesh-gateway", Mode::Enforce),
        (Rule::MeshContainer, "mesh-controller", Mode::Report),
        (Rule::MeshUnit, "mesh-controller.service", Mode::Enforce),
    ] {
        let object = parsed.object(word);
        assert!(object.is_some(), "{word}");
        assert_eq!(
            cached.mode(rule, object.as_ref()).mode,
            mode,
            "{rule} {word}"
        );
        assert_eq!(
            parsed.mode(rule, object.as_ref()).mode,
            mode,
            "{rule} {word}"
        );
    }
    // The modules without a mode of their own and their machines are kept too: a machine
    // is reported only when every module on it is.
    assert!(!cached.modes().unset.is_empty());
    let text = EXAMPLE.replacen(
        "name       = \"controller\"",
        "name       = \"controller\"\nmode       = \"report\"",
        1,
    );
    let (_dir, catalog, cache) = setup(&text);
    age(&catalog);
    let _ = lazy(&catalog, &cache).get().unwrap();
    let l = lazy(&catalog, &cache);
    assert!(from_cache(&l), "the second call reads the cache");
    let cached = l.get().unwrap();
    let atlas = cached.object("atlas");
    let decided = cached.mode(Rule::RemoteAccess, atlas.as_ref());
    assert_eq!(decided.mode, Mode::Enforce);
    assert_eq!(decided.by.module(), Some("metrics"));
    assert_eq!(check_cache(&catalog, &cache), CacheState::Agrees);
}
