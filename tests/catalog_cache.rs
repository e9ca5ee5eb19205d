//! The compiled catalog cache across processes: hooks that rebuild it at the same time
//! all answer correctly, and leave a cache the next hook uses.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

fn catalog(machines: usize, renamed: bool) -> String {
    let mut out = String::from("version = 1\n[mesh]\ndomains = [\"mesh.lan\"]\n");
    for i in 0..machines {
        let name = if renamed {
            format!("n{i:05}")
        } else {
            format!("m{i:05}")
        };
        out.push_str(&format!(
            "[[machine]]\nname = \"{name}\"\naliases = [\"{name}.dc.example\"]\n"
        ));
    }
    for j in 0..machines / 10 {
        out.push_str(&format!(
            "[[module]]\nname = \"mod{j}\"\nmachines = [\"{}\"]\ncontainers = [\"mod{j}-app\"]\n",
            if renamed {
                format!("n{:05}", j * 10)
            } else {
                format!("m{:05}", j * 10)
            }
        ));
    }
    out.push_str("[[verb]]\nname = \"exec\"\nusage = \"mesh exec <machine>\"\nreplaces = [\"ssh <machine>\"]\n");
    out
}

/// Runs `count` hooks at once on `command`; returns their exit codes.
fn hooks_at_once(dir: &Path, count: usize, command: &str) -> Vec<i32> {
    let event = serde_json::json!({"session_id": "s", "cwd": "/tmp", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "t"});
    let children: Vec<_> = (0..count)
        .map(|_| {
            let mut child = Command::new(env!("CARGO_BIN_EXE_mesh-guard"))
                .arg("--catalog")
                .arg(dir.join("catalog.toml"))
                .arg("--db")
                .arg(dir.join("data/audit.db"))
                .arg("hook")
                .env_remove("MESH_GUARD_OVERRIDE")
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(event.to_string().as_bytes())
                .unwrap();
            child
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap().status.code().unwrap_or(-1))
        .collect()
}

#[test]
fn hooks_rebuilding_the_cache_at_once_all_answer_correctly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("catalog.toml"), catalog(3000, false)).unwrap();
    assert_eq!(
        hooks_at_once(dir.path(), 4, "ssh m01234 uptime"),
        [2; 4],
        "all refuse while rebuilding"
    );
    assert_eq!(
        hooks_at_once(dir.path(), 4, "ssh n01234 uptime"),
        [0; 4],
        "all pass"
    );
    // The catalog changes: every hook sees it, whichever rebuilds.
    std::fs::write(dir.path().join("catalog.toml"), catalog(3000, true)).unwrap();
    assert_eq!(
        hooks_at_once(dir.path(), 4, "ssh n01234 uptime && docker logs mod7-app"),
        [2; 4]
    );
    assert_eq!(hooks_at_once(dir.path(), 4, "ssh m01234 uptime"), [0; 4]);
    let caches: Vec<_> = std::fs::read_dir(dir.path().join("data/catalog-cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        caches.len(),
        1,
        "one cache, no temporary file left: {caches:?}"
    );
}

#[test]
fn a_command_with_no_guarded_program_reads_neither_catalog_nor_cache() {
    let dir = tempfile::tempdir().unwrap();
    // An invalid catalog: reading it would refuse.
    std::fs::write(dir.path().join("catalog.toml"), "this is not toml [").unwrap();
    let command = "cargo build --release 2>&1 | tail -n 20 && git commit -m 'ssh atlas'";
    assert_eq!(hooks_at_once(dir.path(), 1, command), [0]);
    assert!(
        !dir.path().join("data").exists(),
        "no cache written, no record opened"
    );
    assert_eq!(hooks_at_once(dir.path(), 1, "ssh atlas uptime"), [2]);
}

/// The catalog's source (an operator's compiled index, else the hook's own cache) is chosen
/// when the catalog is first needed, not when the hook starts: a command with no guarded
/// program makes no file check for it (issue 19).
#[test]
fn the_catalogs_source_is_chosen_when_first_needed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("catalog.toml");
    std::fs::write(&file, catalog(20, false)).unwrap();
    // Older than the cache's racy window, so its stamps alone prove an index current.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let paths = mesh_guard::config::Paths::resolve(
        Some(file.clone()),
        Some(dir.path().join("data/audit.db")),
        None,
    );
    let lazy = paths.lazy_catalog();
    // The operator compiles an index after the catalog was set up, before it is needed.
    let index = mesh_guard::catalog::compiled_index_for(&file);
    mesh_guard::catalog::compile(&file, &index).unwrap();
    assert!(lazy.get().is_ok());
    assert!(
        !paths.cache_dir().exists(),
        "the catalog was read through a cache chosen before it was needed, not the operator's index"
    );
}
