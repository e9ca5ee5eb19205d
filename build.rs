//! Converts the built-in rules (`rules/*.toml`) to JSON at build time: the hook reads its
//! rules on every call, and serde_json reads them several times faster than the TOML
//! parser, which builds a whole document first. The TOML stays the source of truth.

/// The names a rules file defines, one `KIND NAME` a line between newlines, so the hook
/// can tell which file to read for a program without reading any.
fn names(value: &toml::Value) -> String {
    let mut out = String::from("\n");
    for kind in ["program", "wrapper", "shell", "interpreter", "command_env"] {
        let entries = value.get(kind).and_then(toml::Value::as_array);
        for entry in entries.into_iter().flatten() {
            let list = entry.get("names").and_then(toml::Value::as_array);
            for name in list.into_iter().flatten().filter_map(toml::Value::as_str) {
                out.push_str(&format!("{kind} {name}\n"));
            }
        }
    }
    out
}

fn main() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed=rules");
    for name in [
        "ssh",
        "docker",
        "systemd",
        "wrappers",
        "shells",
        "interpreters",
    ] {
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
            Err(_) => (String::new(), String::new()),
        };
        std::fs::write(out.join(format!("{name}.json")), json).expect("OUT_DIR is writable");
        std::fs::write(out.join(format!("{name}.names")), names).expect("OUT_DIR is writable");
    }
}
