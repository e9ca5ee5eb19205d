//! The code's shape, checked (issue 12, docs/architecture.md): the decision core names no
//! I/O, and top-level modules do not import each other in a cycle. A file is as long as its
//! one job: the 400-line cap went with issue 38 (it split files by length, not by concept). Each check reads src/ as text, so it fails on the line that breaks it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The decision core: pure functions over data. Files, the environment, processes and the
/// record are the commands' and the boundary modules' business (catalog, config, protect,
/// record), never these.
const CORE: [&str; 7] = [
    "src/shell",
    "src/unwrap",
    "src/decide",
    "src/instead",
    "src/message",
    "src/rules/schema.rs",
    "src/rules/role.rs",
];
const IO: [&str; 4] = ["std::fs", "std::env", "std::process", "rusqlite"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for entry in entries {
            rust_files(&entry, out);
        }
    } else if path.is_file() && path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

/// The file's code lines: comments are not code, and a doc comment may name anything.
fn code_lines(path: &Path) -> Vec<(usize, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect()
}

/// `std::fs` written out, or reached through a grouped import (`use std::{fs, io}`).
fn names_io(line: &str) -> Option<&'static str> {
    if let Some(io) = IO.iter().find(|io| line.contains(**io)) {
        return Some(io);
    }
    let group = line.split_once("std::{")?.1;
    ["fs", "env", "process"]
        .into_iter()
        .find(|m| {
            group
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|w| w == *m)
        })
        .map(|m| match m {
            "fs" => "std::fs",
            "env" => "std::env",
            _ => "std::process",
        })
}

#[test]
fn the_decision_core_names_no_io() {
    let mut found = Vec::new();
    for part in CORE {
        let mut files = Vec::new();
        rust_files(&root().join(part), &mut files);
        assert!(
            !files.is_empty(),
            "{part} is gone: update CORE and docs/architecture.md"
        );
        for file in files {
            for (n, line) in code_lines(&file) {
                if let Some(io) = names_io(&line) {
                    found.push(format!("{}:{n}: {io}", file.display()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "the decision core names I/O (move it to a command or a boundary module):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_sees_io_however_it_is_imported() {
    assert_eq!(names_io("use std::fs::File;"), Some("std::fs"));
    assert_eq!(names_io("use std::{env, io};"), Some("std::env"));
    assert_eq!(
        names_io("let c = rusqlite::Connection::open(p);"),
        Some("rusqlite")
    );
    assert_eq!(names_io("use std::{collections::HashMap, fmt};"), None);
    assert_eq!(names_io("let x = env!(\"OUT_DIR\");"), None);
}

/// Top-level module → the top-level modules its non-test code names as `crate::…`.
fn module_imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = root().join("src");
    let modules: BTreeSet<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_stem()?.to_str()?.to_string();
            (p.is_dir() || p.extension().is_some_and(|e| e == "rs")).then_some(name)
        })
        .filter(|n| n != "lib" && n != "main")
        .collect();
    let mut imports = BTreeMap::new();
    for module in &modules {
        let mut files = Vec::new();
        rust_files(&src.join(module), &mut files);
        rust_files(&src.join(format!("{module}.rs")), &mut files);
        // Unit tests may drive the whole crate; the shape is the product code's.
        files.retain(|f| {
            let name = f.file_stem().unwrap().to_string_lossy();
            name != "tests" && !name.ends_with("_tests")
        });
        let mut named = BTreeSet::new();
        for file in files {
            for (_, line) in code_lines(&file) {
                for (at, _) in line.match_indices("crate::") {
                    let rest = &line[at + "crate::".len()..];
                    let word: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if &word != module && modules.contains(&word) {
                        named.insert(word);
                    }
                }
            }
        }
        imports.insert(module.clone(), named);
    }
    imports
}

/// A cycle through `from`, if there is one: the path back to it.
fn cycle_from(imports: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    let mut stack = vec![vec![from.to_string()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last().unwrap();
        for next in &imports[last] {
            if next == from {
                let mut cycle = path.clone();
                cycle.push(next.clone());
                return Some(cycle);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push(longer);
            }
        }
    }
    None
}

#[test]
fn top_level_modules_do_not_import_each_other_in_a_cycle() {
    let imports = module_imports();
    assert!(imports.contains_key("decide") && imports.contains_key("commands"));
    let cycles: Vec<String> = imports
        .keys()
        .filter_map(|m| cycle_from(&imports, m))
        .map(|c| c.join(" → "))
        .collect();
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let mut imports = BTreeMap::new();
    imports.insert("app".to_string(), BTreeSet::from(["session".to_string()]));
    imports.insert("session".to_string(), BTreeSet::from(["app".to_string()]));
    imports.insert("shell".to_string(), BTreeSet::new());
    assert_eq!(
        cycle_from(&imports, "app"),
        Some(vec!["app".into(), "session".into(), "app".into()])
    );
    assert_eq!(cycle_from(&imports, "shell"), None);
}
