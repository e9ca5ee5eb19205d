//! Converts the built-in rules (`rules/*.toml`) to JSON at build time: the hook reads its
//! rules on every call, and serde_json reads them several times faster than the TOML
//! parser, which builds a whole document first. The TOML stays the source of truth.

/// The names a rules file defines, as `(kind, name)`, so the hook can tell which file to
/// read for a program without reading any.
fn names(value: &toml::Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for kind in [
        "program",
        "wrapper",
        "shell",
        "interpreter",
        "command_env",
        "writer",
        "agent",
    ] {
        let entries = value.get(kind).and_then(toml::Value::as_array);
        for entry in entries.into_iter().flatten() {
            let list = entry.get("names").and_then(toml::Value::as_array);
            for name in list.into_iter().flatten().filter_map(toml::Value::as_str) {
                out.push((kind.to_string(), name.to_string()));
            }
        }
    }
    out
}

fn main() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed=rules");
    // (kind, name) → index of the last file that defines it: a later file's definition wins.
    let mut index = std::collections::BTreeMap::new();
    for (file, name) in [
        "ssh",
        "docker",
        "systemd",
        "wrappers",
        "shells",
        "interpreters",
        "self",
    ]
    .into_iter()
    .enumerate()
    {
        let path = format!("rules/{name}.toml");
        println!("cargo:rerun-if-changed={path}");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        // An invalid file is reported (with its line) by the tests and `Rules::load`'s
        // fallback below; here it must only not stop the build.
        let (json, names) = match toml::from_str::<toml::Value>(&text) {
            Ok(value) => (
                serde_json::to_string(&value).expect("TOML values are JSON values"),
                names(&value),
            ),
            Err(_) => (String::new(), Vec::new()),
        };
        std::fs::write(out.join(format!("{name}.json")), json).expect("OUT_DIR is writable");
        for key in names {
            index.insert(key, file);
        }
    }
    // A sorted table the hook binary-searches: no start-up cost at all.
    let mut table = String::from(
        "/// (kind, name, built-in file) sorted by kind and name; made by build.rs.\n",
    );
    table.push_str("pub(crate) static NAMES: &[(&str, &str, usize)] = &[\n");
    for ((kind, name), file) in &index {
        table.push_str(&format!("    ({kind:?}, {name:?}, {file}),\n"));
    }
    table.push_str("];\n");
    std::fs::write(out.join("names.rs"), table).expect("OUT_DIR is writable");
}
