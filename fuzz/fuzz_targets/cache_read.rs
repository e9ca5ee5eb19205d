//! The compiled catalog's reader on damaged files: a valid index is compiled once, then
//! the fuzzer's bytes overwrite it. Opening and probing must answer or fall back to the
//! catalog (`LazyCatalog::recover`), never panic, hang or read out of bounds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mesh_guard::catalog::{self, LazyCatalog};
use std::path::PathBuf;
use std::sync::OnceLock;

const CATALOG: &str = r#"
version = 1
[mesh]
domains = ["mesh.lan"]
networks = ["10.20.0.0/16"]
[forge]
machine = "forge"
git_user = "git"
[[machine]]
name = "atlas"
aliases = ["atlas.mesh.lan", "10.20.0.11"]
[[machine]]
name = "forge"
[[module]]
name = "controller"
machines = ["atlas"]
containers = ["mesh-controller"]
units = ["mesh-controller.service"]
  [[module.tool]]
  name = "controller_status"
  usage = "mesh controller status"
  replaces = ["systemctl status <unit>"]
[[verb]]
name = "logs"
usage = "mesh logs <module> [--machine <machine>]"
replaces = ["journalctl", "docker logs"]
"#;

/// The catalog and a valid compiled index of it; the index's bytes seed the corpus.
fn catalog() -> &'static (tempfile::TempDir, PathBuf, Vec<u8>) {
    static CATALOG_FILES: OnceLock<(tempfile::TempDir, PathBuf, Vec<u8>)> = OnceLock::new();
    CATALOG_FILES.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a scratch directory");
        let path = dir.path().join("catalog.toml");
        std::fs::write(&path, CATALOG).expect("the catalog is written");
        let index = catalog::compiled_index_for(&path);
        catalog::compile(&path, &index).expect("the catalog compiles");
        let bytes = std::fs::read(&index).expect("the index is read");
        (dir, path, bytes)
    })
}

fuzz_target!(|data: &[u8]| {
    let (_dir, path, valid) = catalog();
    // Half the inputs damage the valid index in place, so the fuzzer reaches past the
    // header checks; the other half replace it whole.
    let bytes = match data.split_first() {
        Some((0, rest)) => {
            let mut bytes = valid.clone();
            for pair in rest.chunks(3) {
                if let [hi, lo, value] = pair {
                    let at = (usize::from(*hi) << 8 | usize::from(*lo)) % bytes.len().max(1);
                    bytes[at] = *value;
                }
            }
            bytes
        }
        _ => data.to_vec(),
    };
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let index = scratch.path().join("catalog.idx");
    std::fs::write(&index, &bytes).expect("the index is written");
    let lazy = LazyCatalog::with_compiled_index(path.clone(), index);
    for _ in 0..2 {
        if let Ok(catalog) = lazy.get() {
            for word in ["atlas", "ATLAS.", "10.20.0.11", "x.mesh.lan", "mesh-controller", "mesh-controller.service", "forge", "nothing"] {
                let _ = catalog.object(word);
            }
        }
        if !lazy.recover() {
            break;
        }
    }
});
