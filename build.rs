//! Compiles the built-in rules (`rules/*.toml`) into the binary (decision 0083): the hook
//! reads its rules on every call, and an entry compiled to a length-prefixed form is read
//! without scanning, unescaping or validating anything. The TOML stays the source of truth.

// The rules' format and its reader, as the crate has them: a built-in file is checked
// here key by key, and one that does not read stops the build.
#[allow(dead_code)]
#[path = "src/rules/agent.rs"]
mod agent;
#[allow(dead_code)]
#[path = "src/rules/embedded.rs"]
mod embedded;
#[allow(dead_code)]
#[path = "src/rules/role.rs"]
mod role;
#[allow(dead_code)]
#[path = "src/rules/runner.rs"]
mod runner;
#[allow(dead_code)]
#[path = "src/rules/schema.rs"]
mod schema;
#[allow(dead_code)]
#[path = "src/rules/syntax.rs"]
mod syntax;
#[allow(dead_code)]
#[path = "src/rules/validate.rs"]
mod validate;

/// The kinds of rules table, in the order of `rules::Kind`.
const KINDS: [&str; 12] = [
    "program",
    "wrapper",
    "shell",
    "interpreter",
    "command_env",
    "declaration",
    "environment_setter",
    "writer",
    "agent",
    "guard_cli",
    "arguments",
    "runner",
];

/// The entries a rules file defines, as `(kind, names, the entry compiled)`, so the hook can
/// find and read the one entry a name needs without reading the rest (decision 0030).
fn entries(value: &toml::Value) -> Vec<(usize, Vec<String>, String)> {
    let mut out = Vec::new();
    for (kind, key) in KINDS.iter().enumerate() {
        let entries = value.get(key).and_then(toml::Value::as_array);
        for entry in entries.into_iter().flatten() {
            let list = entry.get("names").and_then(toml::Value::as_array);
            let names = list.into_iter().flatten().filter_map(toml::Value::as_str);
            let compiled = embedded::compile(entry);
            // What the hook will read, read here first: an entry that does not read back as
            // its TOML stops the build.
            let leaked: &'static str = compiled.clone().leak();
            match embedded::read::<toml::Value>(leaked) {
                Ok(read) if read == *entry => {}
                other => panic!("a compiled entry does not read back: {other:?}"),
            }
            out.push((kind, names.map(String::from).collect(), compiled));
        }
    }
    out
}

/// `s` as a Rust string literal, every character that is not printable ASCII escaped
/// (`Debug` writes `\0` before a digit, which clippy reads as an octal escape).
fn str_literal(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ if c.is_ascii() => out.push_str(&format!("\\x{:02x}", c as u32)),
            _ => out.extend(c.escape_unicode()),
        }
    }
    out.push('"');
    out
}

/// Links the `mesh-guard` binary statically, at a fixed address, on glibc Linux (decisions
/// 0014, 0034): the hook starts on every command an agent runs, and a dynamic binary spends
/// more on the loader (mapping and relocating libgcc_s, libm, libc) than the hook spends
/// deciding; a static PIE still relocates its own 12,000 pointers and copies every page that
/// holds one, a tenth of a pass.
///
/// `-C target-feature=+crt-static` would do it, but no build script can set it, and only
/// `cargo install --path` reads the repository's `.cargo/config.toml` (an install from git or
/// a registry does not), so the link must not depend on it. The std that rustup ships
/// is the same for both links; crt-static only changes what the link asks for: `-static-pie`
/// and the static archives (`libc.a`, `libgcc_eh.a`) instead of `libgcc_s.so`, `libc.so`.
/// So the binary's link gets `-no-pie -static` (std's position-independent code links at a
/// fixed address as it is), and a search directory searched first in which
/// each library std names for a dynamic link is a linker script naming its static archive.
/// Tests and the library are untouched (`-bins` only).
fn link_static(out: &std::path::Path) -> Vec<String> {
    println!("cargo:rerun-if-env-changed=MESH_GUARD_DYNAMIC");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let features = var("CARGO_CFG_TARGET_FEATURE");
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        // Already static (RUSTFLAGS with --target): nothing to add.
        || features.split(',').any(|f| f == "crt-static")
        || std::env::var_os("MESH_GUARD_DYNAMIC").is_some()
    {
        return Vec::new();
    }
    // glibc's static archives are a separate package on some systems (glibc-static on
    // Fedora): without them the build stays dynamic, and says so.
    for archive in ["libc.a", "libgcc_eh.a"] {
        let found = std::process::Command::new("cc")
            .arg(format!("-print-file-name={archive}"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .is_some_and(|o| {
                std::path::Path::new(String::from_utf8_lossy(&o.stdout).trim()).is_absolute()
            });
        if !found {
            println!(
                "cargo:warning=mesh-guard is linked dynamically: {archive} not found \
                 (install glibc's static libraries for the faster static binary)"
            );
            return Vec::new();
        }
    }
    let dir = out.join("static-link");
    std::fs::create_dir_all(&dir).expect("OUT_DIR is writable");
    let scripts = [
        ("libgcc_s.so", "GROUP(-l:libgcc_eh.a -l:libgcc.a)"),
        ("libc.so", "GROUP(-l:libc.a -l:libgcc.a -l:libgcc_eh.a)"),
        ("libm.so", "INPUT(-l:libm.a)"),
        ("librt.so", "INPUT(-l:librt.a)"),
        ("libpthread.so", "INPUT(-l:libpthread.a)"),
        ("libdl.so", "INPUT(-l:libdl.a)"),
        ("libutil.so", "INPUT(-l:libutil.a)"),
    ];
    for (name, script) in scripts {
        std::fs::write(dir.join(name), format!("{script}\n")).expect("OUT_DIR is writable");
    }
    let args = vec![
        "-no-pie".to_string(),
        "-static".to_string(),
        format!("-L{}", dir.display()),
    ];
    for arg in &args {
        println!("cargo:rustc-link-arg-bins={arg}");
    }
    args
}

/// Lays the code a hook runs out together, at the front of the text (decision 0048): a hook
/// touches about a sixth of the binary's code, spread over all of it, and each page it touches
/// is a page fault that maps its neighbours too. Gathered, far fewer pages are mapped: the most
/// when the binary's pages came into the page cache from disk (after a reboot, say) rather
/// than from the write that installed it.
///
/// `link/hot-text` lists the functions (see `scripts/hot-text`), with the hashes in their
/// mangled names left to a wildcard, so the list holds across builds, compilers and
/// dependency versions; a function it no longer names only stays where the linker puts it.
/// The script only adds a section before `.text` (`INSERT`), which LLD (Rust's default linker
/// here) and GNU ld fill; mold reads no `SECTIONS` and fails the link. So a small program is
/// linked first the way this build links (its flags, its linker), with the script: if that
/// fails, the layout is left out and the build goes on without it.
fn hot_text(out: &std::path::Path, link_args: &[String]) {
    println!("cargo:rerun-if-changed=link/hot-text");
    // What the probe's link depends on beyond the flags, which rebuild everything anyway:
    // a configured linker, and `mold -run`, which swaps the linker through LD_PRELOAD.
    for var in ["RUSTC_LINKER", "LD_PRELOAD", "MOLD_PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let env = var("CARGO_CFG_TARGET_ENV");
    if var("CARGO_CFG_TARGET_OS") != "linux" || !(env == "gnu" || env == "musl") {
        println!("cargo:rustc-env=MESH_GUARD_HOT_TEXT=left out: not a glibc or musl Linux target");
        return;
    }
    let list =
        std::fs::read_to_string("link/hot-text").expect("link/hot-text is in the repository");
    let mut script = String::from("SECTIONS\n{\n  .text.hook : {\n");
    for (number, line) in list.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fits = |p: &str| {
            !p.is_empty() && !p.contains(|c: char| c.is_whitespace() || "(){};,\"'".contains(c))
        };
        match line.split_once(' ') {
            Some(("member", m)) if fits(m) && m.contains(':') => {
                script.push_str(&format!("    *{m}(.text .text.*)\n"));
            }
            Some(("fn", p)) if fits(p) => {
                script.push_str(&format!("    *(.text.{p} .text.unlikely.{p})\n"));
            }
            _ => panic!(
                "link/hot-text:{}: not `fn PATTERN` or `member ARCHIVE:OBJECT`: {line}",
                number + 1
            ),
        }
    }
    script.push_str("  }\n}\nINSERT BEFORE .text;\n");
    let path = out.join("hot-text.ld");
    std::fs::write(&path, script).expect("OUT_DIR is writable");
    // A link argument is a line of text to cargo.
    let Some(shown) = path.to_str().filter(|p| !p.contains('\n')) else {
        println!("cargo:rustc-env=MESH_GUARD_HOT_TEXT=left out: OUT_DIR is not plain text");
        return;
    };
    if let Err(why) = links_with(&path, link_args, out) {
        println!("cargo:warning=mesh-guard is built without its code layout: {why}");
        println!("cargo:rustc-env=MESH_GUARD_HOT_TEXT=left out: {why}");
        return;
    }
    // `-T` and the path as two arguments: through `-Wl,` a comma in the path would split it.
    println!("cargo:rustc-link-arg-bins=-T");
    println!("cargo:rustc-link-arg-bins={shown}");
    println!("cargo:rustc-env=MESH_GUARD_HOT_TEXT=applied");
    // The names in the list are a compiler's (its mangling, its standard library): another
    // compiler's build still links, laid out as far as the names match, and its test says it
    // did not check.
    println!("cargo:rerun-if-env-changed=RUSTC");
    let written_for = list
        .lines()
        .find_map(|l| l.strip_prefix("# rustc "))
        .unwrap_or("unknown")
        .trim()
        .to_string();
    let built_by = std::process::Command::new(var("RUSTC"))
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|v| v.split_whitespace().nth(1).map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=MESH_GUARD_HOT_TEXT_WRITTEN_FOR={written_for}");
    println!("cargo:rustc-env=MESH_GUARD_HOT_TEXT_BUILT_BY={built_by}");
}

/// Whether this build's linker takes `script`: `fn main() {}` compiled and linked by the
/// build's rustc, for its target, with its flags, its configured linker and the binary's
/// `link_args` (the static link's), and the script.
fn links_with(
    script: &std::path::Path,
    link_args: &[String],
    out: &std::path::Path,
) -> Result<(), String> {
    let source = out.join("layout-probe.rs");
    std::fs::write(&source, "fn main() {}\n").expect("OUT_DIR is writable");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let mut probe = std::process::Command::new(rustc);
    probe
        .args([
            "--crate-name",
            "layout_probe",
            "--crate-type",
            "bin",
            "--edition",
            "2021",
        ])
        .arg("--target")
        .arg(std::env::var("TARGET").expect("cargo sets TARGET"))
        .arg("-o")
        .arg(out.join("layout-probe"))
        .arg(&source);
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    probe.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    if let Some(linker) = std::env::var_os("RUSTC_LINKER") {
        let mut arg = std::ffi::OsString::from("linker=");
        arg.push(linker);
        probe.arg("-C").arg(arg);
    }
    for arg in link_args {
        probe.arg("-C").arg(format!("link-arg={arg}"));
    }
    probe.arg("-C").arg("link-arg=-T").arg("-C").arg({
        let mut arg = std::ffi::OsString::from("link-arg=");
        arg.push(script);
        arg
    });
    match probe.output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => {
            // rustc prints the whole link command; the linker's own complaint says more.
            let stderr = String::from_utf8_lossy(&o.stderr);
            let said = |word: &str| stderr.lines().find(|l| l.contains(word));
            let line = said("fatal").or_else(|| said("error")).unwrap_or("");
            Err(format!(
                "the linker did not take its script ({})",
                line.trim()
            ))
        }
        Err(e) => Err(format!("rustc could not be run to check the linker: {e}")),
    }
}

fn main() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let link_args = link_static(&out);
    hot_text(&out, &link_args);
    println!("cargo:rerun-if-changed=rules");
    // (kind, name) → the last entry (in `ENTRIES`) that defines it: a later definition
    // wins, as when whole files are merged.
    let mut index = std::collections::BTreeMap::new();
    let mut all_entries: Vec<String> = Vec::new();
    for name in [
        "ssh",
        "docker",
        "systemd",
        "wrappers",
        "shells",
        "interpreters",
        "self",
        "arguments",
        "runners",
    ] {
        let path = format!("rules/{name}.toml");
        println!("cargo:rerun-if-changed={path}");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        if let Err(e) = validate::parse(&path, &text) {
            panic!("the built-in rules do not read: {e}");
        }
        let value: toml::Value = toml::from_str(&text).expect("checked above");
        for (kind, names, entry) in entries(&value) {
            for name in names {
                index.insert((kind, name), all_entries.len());
            }
            all_entries.push(entry);
        }
    }
    // One sorted table per kind, which the hook binary-searches: no start-up cost at all.
    // The names, and the entries, are each one string: what a hook reads of them lies
    // together, not wherever the compiler places a thousand literals (decision 0083).
    let mut table = String::from("// Made by build.rs from rules/*.toml.\n");
    let mut name_text = String::new();
    table.push_str(&format!(
        "static NAMES: [&[(u32, u16, u16)]; {}] = [\n",
        KINDS.len()
    ));
    for kind in 0..KINDS.len() {
        table.push_str("    &[\n");
        for ((_, name), entry) in index.range((kind, String::new())..(kind + 1, String::new())) {
            let len = u16::try_from(name.len()).expect("a built-in name under 64k");
            let entry = u16::try_from(*entry).expect("under 64k built-in entries");
            table.push_str(&format!("        ({}, {len}, {entry}),\n", name_text.len()));
            name_text.push_str(name);
        }
        table.push_str("    ],\n");
    }
    table.push_str("];\n");
    table.push_str(&format!(
        "static NAME_TEXT: &str = {};\n",
        str_literal(&name_text)
    ));
    let mut starts = vec![0];
    for entry in &all_entries {
        starts.push(starts.last().unwrap() + entry.len());
    }
    let starts: Vec<String> = starts.iter().map(ToString::to_string).collect();
    table.push_str(&format!(
        "static ENTRY_STARTS: [u32; {}] = [{}];\n",
        starts.len(),
        starts.join(", ")
    ));
    table.push_str(&format!(
        "static ENTRY_TEXT: &str = {};\n",
        str_literal(&all_entries.concat())
    ));
    std::fs::write(out.join("names.rs"), table).expect("OUT_DIR is writable");
}
