//! The code's shape, checked (issue 12, docs/architecture.md): the decision core names no
//! I/O and, of the rest of the crate, only what it may (its world's type, the rules, the
//! catalog's types, pure parsers); top-level modules do not import each other in a cycle. A
//! file is as long as its one job: the 400-line cap went with issue 38 (it split files by
//! length, not by concept). Each check reads src/ as text, so it fails on the line that breaks
//! it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The decision core: pure functions over data and the world it is given. Files, the
/// environment, processes and the record are the commands' and the boundary modules'
/// business (catalog, config, world, ondisk, record), never these.
const CORE: [&str; 8] = [
    "src/rule.rs",
    "src/shell",
    "src/unwrap",
    "src/decide",
    "src/instead",
    "src/message",
    "src/rules/schema.rs",
    "src/rules/role.rs",
];
const IO: [&str; 4] = ["std::fs", "std::env", "std::process", "rusqlite"];
/// Macros that write to the process's own output.
const IO_MACROS: [&str; 8] = [
    "println!",
    "eprintln!",
    "print!",
    "eprint!",
    "dbg!",
    "outln!",
    "out!",
    "errln!",
];

/// What the core may name of the rest of the crate, as a path or the start of one
/// (`crate::decide` allows `crate::decide::walk::Walk`). Anything else it names (`crate::io`,
/// `crate::config`, `crate::perm`, `crate::record`, `crate::ondisk::disk::OnDisk`, the
/// catalog's loader) fails: the world is reached through `World`, built by the boundary.
const CORE_MAY_NAME: &[&str] = &[
    // The core itself.
    "crate::shell",
    "crate::unwrap",
    "crate::decide",
    "crate::instead",
    "crate::message",
    "crate::rules::schema",
    "crate::rules::role",
    // The rules' ids, every layer's vocabulary.
    "crate::rule",
    // Pure functions over words and text.
    "crate::argv",
    "crate::bash_eval",
    // The command's world: its type and the disk's trait, with what the disk answers.
    "crate::world::World",
    "crate::world::Disk",
    "crate::world::Definition",
    "crate::world::SshRoute",
    "crate::world::Own",
    // The rules' types (loading them is `rules::load`'s, the boundary's).
    "crate::rules::Rules",
    "crate::rules::Role",
    "crate::rules::Program",
    "crate::rules::Syntax",
    "crate::rules::Wrapper",
    "crate::rules::WrapperKind",
    "crate::rules::Writer",
    "crate::rules::GuardCli",
    "crate::rules::Agent",
    "crate::rules::Arguments",
    "crate::rules::Interpreter",
    "crate::rules::agent",
    "crate::rules::syntax",
    "crate::rules::runner::Runner",
    // The catalog's types; `LazyCatalog` reads it once a guarded program names a target.
    "crate::catalog::Catalog",
    "crate::catalog::LazyCatalog",
    "crate::catalog::MeshObject",
    "crate::catalog::ToolEntry",
    "crate::catalog::Mode",
    "crate::catalog::Decided",
    "crate::catalog::is_glob",
    // Pure parsers of what the disk gives, and their types.
    "crate::ondisk::Value",
    "crate::ondisk::startup::scan",
    "crate::ondisk::make::parse",
    "crate::ondisk::recipes::Found",
    "crate::ondisk::recipes::Lookup",
    "crate::ondisk::recipes::Recipes",
    "crate::ondisk::recipes::Step",
    "crate::ondisk::podman::Flags",
    "crate::ondisk::podman::Endpoint",
    "crate::ondisk::compose::Query",
    "crate::ondisk::compose::Project",
    // Self-protection's lists and its tests over text.
    "crate::protect::GUARD_VARIABLES",
    "crate::protect::lexical",
    "crate::protect::assigns_guard_variable",
    "crate::protect::is_startup_file",
    "crate::protect::names_guard_variable",
];

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

/// `std::fs` written out, or reached through a grouped import (`use std::{fs, io}`), or a
/// macro that prints.
fn names_io(line: &str) -> Option<&'static str> {
    if let Some(io) = IO.iter().find(|io| line.contains(**io)) {
        return Some(io);
    }
    if let Some(mac) = IO_MACROS.iter().find(|m| {
        line.match_indices(**m).any(|(at, _)| {
            !line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
        })
    }) {
        return Some(mac);
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
    for file in core_files() {
        for (n, line) in code_lines(&file) {
            if let Some(io) = names_io(&line) {
                found.push(format!("{}:{n}: {io}", file.display()));
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
    assert_eq!(names_io("    println!(\"{x}\");"), Some("println!"));
    assert_eq!(names_io("outln!(\"{x}\")"), Some("outln!"));
    assert_eq!(names_io("use std::{collections::HashMap, fmt};"), None);
    assert_eq!(names_io("let x = env!(\"OUT_DIR\");"), None);
    assert_eq!(names_io("let s = layout!(x);"), None);
}

fn core_files() -> Vec<PathBuf> {
    let mut all = Vec::new();
    for part in CORE {
        let mut files = Vec::new();
        rust_files(&root().join(part), &mut files);
        assert!(
            !files.is_empty(),
            "{part} is gone: update CORE and docs/architecture.md"
        );
        all.extend(files);
    }
    all
}

/// The module a file under src/ is (`src/decide/walk.rs` → `["decide", "walk"]`).
fn module_of(file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(root().join("src")).unwrap_or(file);
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// Every crate path a piece of code names, absolute: `crate::…` as written, `super::…` from
/// `module`, grouped imports (`use crate::{a::{self, B}, c}`) spelled out one by one.
fn named_paths(code: &str, module: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let starts = rest.starts_with("crate::") || rest.starts_with("super::");
        let boundary = at == 0 || {
            let c = bytes[at - 1] as char;
            !(c.is_alphanumeric() || c == '_' || c == ':' || c == '$')
        };
        if !(starts && boundary) {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let (base, len) = absolute_start(rest, module);
        let used = expand(&rest[len..], &base, &mut out);
        at += len + used;
    }
    out
}

/// The absolute module a `crate::`/`super::` chain starts from, and how much of it it took.
fn absolute_start(text: &str, module: &[String]) -> (String, usize) {
    if text.starts_with("crate::") {
        return ("crate".to_string(), "crate::".len());
    }
    let mut up = 0;
    let mut len = 0;
    while text[len..].starts_with("super::") {
        up += 1;
        len += "super::".len();
    }
    let kept = module.len().saturating_sub(up);
    let mut base = vec!["crate".to_string()];
    base.extend(module[..kept].iter().cloned());
    (base.join("::"), len)
}

/// Reads a path's rest (`a::b::C`, or `a::{…}`) after `base::`; pushes each full path to
/// `out`; returns how many bytes it read.
fn expand(text: &str, base: &str, out: &mut Vec<String>) -> usize {
    let mut path = base.to_string();
    let mut at = 0;
    loop {
        let rest = &text[at..];
        if rest.starts_with('{') {
            let close = matching_brace(rest);
            let inner = &rest[1..close];
            for item in split_top(inner) {
                let item = item.trim();
                let item = item.split(" as ").next().unwrap_or(item).trim();
                if item.is_empty() {
                    continue;
                }
                if item == "self" || item == "*" {
                    out.push(path.clone());
                } else {
                    expand(item, &path, out);
                }
            }
            return at + close + 1;
        }
        if rest.starts_with('*') {
            out.push(path);
            return at + 1;
        }
        let word: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if word.is_empty() {
            out.push(path);
            return at;
        }
        path = format!("{path}::{word}");
        at += word.len();
        if text[at..].starts_with("::") && !text[at + 2..].starts_with('<') {
            at += 2;
        } else {
            out.push(path);
            return at;
        }
    }
}

fn matching_brace(text: &str) -> usize {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    text.len() - 1
}

fn split_top(text: &str) -> Vec<&str> {
    let (mut items, mut depth, mut from) = (Vec::new(), 0, 0);
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&text[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    items.push(&text[from..]);
    items
}

/// Whether the core may name `path` (see [`CORE_MAY_NAME`]).
fn may_name(path: &str) -> bool {
    CORE_MAY_NAME
        .iter()
        .any(|allowed| path == *allowed || path.starts_with(&format!("{allowed}::")))
}

/// The paths a file's code names that the core may not, with the line that names each. A
/// grouped import spread over lines is read whole and reported at its first line.
fn forbidden_names(file: &Path) -> Vec<(usize, String)> {
    let mut module = module_of(file);
    let lines = code_lines(file);
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (n, first) = &lines[i];
        // An inline module (`mod tests {`, at a file's end): `super` is the file's module.
        if let Some(name) = first
            .trim_start()
            .strip_prefix("mod ")
            .and_then(|rest| rest.strip_suffix(" {"))
        {
            module.push(name.to_string());
        }
        let mut code = first.clone();
        // An import whose braces close on a later line.
        while code.matches('{').count() > code.matches('}').count() && i + 1 < lines.len() {
            let import = code.trim_start();
            if !(import.starts_with("use ")
                || import.starts_with("pub") && import.contains(" use "))
            {
                break;
            }
            i += 1;
            code.push(' ');
            code.push_str(&lines[i].1);
        }
        for path in named_paths(&code, &module) {
            if !may_name(&path) {
                found.push((*n, path));
            }
        }
        i += 1;
    }
    found
}

#[test]
fn the_decision_core_names_only_what_it_may() {
    let mut found = Vec::new();
    for file in core_files() {
        for (n, path) in forbidden_names(&file) {
            found.push(format!("{}:{n}: {path}", file.display()));
        }
    }
    assert!(
        found.is_empty(),
        "the decision core names what it may not (ask the world, `crate::world::World`, or \
         move the code to a boundary module; see CORE_MAY_NAME):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_name_check_sees_a_path_however_it_is_written() {
    let walk = vec!["decide".to_string(), "walk".to_string()];
    let top = vec!["decide".to_string()];
    assert_eq!(
        named_paths("use crate::io::var;", &walk),
        ["crate::io::var"]
    );
    assert_eq!(
        named_paths("use crate::{argv::{self, Arg}, config::Paths};", &walk),
        ["crate::argv", "crate::argv::Arg", "crate::config::Paths"]
    );
    assert_eq!(
        named_paths("let h = crate::perm::account_home();", &walk),
        ["crate::perm::account_home"]
    );
    assert_eq!(named_paths("use super::*;", &walk), ["crate::decide"]);
    assert_eq!(named_paths("use super::io;", &top), ["crate::io"]);
    assert_eq!(
        named_paths("use super::super::record::Row;", &walk),
        ["crate::record::Row"]
    );
    assert_eq!(
        named_paths("let v = Vec::<u8>::new();", &walk),
        Vec::<String>::new()
    );
    assert!(!may_name("crate::io::var"));
    assert!(!may_name("crate::ondisk::disk::OnDisk"));
    assert!(!may_name("crate::ondisk"));
    assert!(!may_name("crate::config::Paths"));
    assert!(!may_name("crate::record"));
    assert!(!may_name("crate::world"));
    assert!(may_name("crate::world::World"));
    assert!(may_name("crate::decide::walk::Walk"));
    assert!(!may_name("crate::decidex"));
    // A grouped import over several lines is read whole.
    let dir = std::env::temp_dir().join(format!("mesh-guard-arch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("walk.rs");
    std::fs::write(
        &file,
        "use crate::{\n    argv::Arg,\n    io,\n};\n// crate::perm in a comment\nfn f() {}\n",
    )
    .unwrap();
    assert_eq!(forbidden_names(&file), [(1, "crate::io".to_string())]);
    let _ = std::fs::remove_dir_all(&dir);
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

/// Modules every layer names (`rule`: the rules' ids, which `decide`, `catalog`, `record`
/// and `cli` share): a leaf names nothing of the crate, so naming it makes no cycle.
const LEAVES: [&str; 1] = ["rule"];

#[test]
fn the_shared_vocabulary_names_nothing_of_the_crate() {
    let imports = module_imports();
    for leaf in LEAVES {
        let named = imports
            .get(leaf)
            .unwrap_or_else(|| panic!("src/{leaf} is gone"));
        assert!(named.is_empty(), "{leaf} names {named:?}: keep it a leaf");
    }
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
