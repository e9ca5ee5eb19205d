//! The binary's layout (decision 0048): the functions `link/hot-text` names are gathered in
//! their own section ahead of the rest of the code. The test fails if build.rs stops handing
//! the linker its script, or if the list stops matching the code's names (a change of
//! mangling, a list gone stale), which would otherwise only show as a slower hook.

const SHT_NOBITS: u32 = 8;

/// (name, address, size) of each section of a 64-bit little-endian ELF file.
fn sections(elf: &[u8]) -> Vec<(String, u64, u64)> {
    assert_eq!(
        &elf[..6],
        b"\x7fELF\x02\x01",
        "a 64-bit little-endian ELF file"
    );
    let u16_at = |at: usize| u16::from_le_bytes(elf[at..at + 2].try_into().unwrap()) as usize;
    let u32_at = |at: usize| u32::from_le_bytes(elf[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(elf[at..at + 8].try_into().unwrap());
    let (offset, size, count, names) = (
        u64_at(0x28) as usize,
        u16_at(0x3a),
        u16_at(0x3c),
        u16_at(0x3e),
    );
    let header = |i: usize| offset + i * size;
    let strings = u64_at(header(names) + 0x18) as usize;
    (0..count)
        .map(|i| {
            let h = header(i);
            let start = strings + u32_at(h) as usize;
            let end = start + elf[start..].iter().position(|&b| b == 0).unwrap();
            let name = String::from_utf8_lossy(&elf[start..end]).into_owned();
            let size = if u32_at(h + 4) == SHT_NOBITS {
                0
            } else {
                u64_at(h + 0x20)
            };
            (name, u64_at(h + 0x10), size)
        })
        .collect()
}

#[test]
fn the_hooks_functions_come_first_and_together() {
    // build.rs leaves the layout out where the linker does not take its script (mold, say),
    // and says why. CI, whose linker does, requires it.
    let applied = env!("MESH_GUARD_HOT_TEXT");
    if applied != "applied" {
        assert!(
            std::env::var_os("MESH_GUARD_LAYOUT_REQUIRED").is_none(),
            "build.rs did not lay the hook's functions out together: {applied}"
        );
        eprintln!("NOT CHECKED: this build has no layout to check ({applied})");
        return;
    }
    // The list names one compiler's symbols; another's (a user's newer rustup) may mangle
    // them otherwise. CI builds with the list's compiler and requires the check.
    let (written_for, built_by) = (
        env!("MESH_GUARD_HOT_TEXT_WRITTEN_FOR"),
        env!("MESH_GUARD_HOT_TEXT_BUILT_BY"),
    );
    if written_for != built_by && std::env::var_os("MESH_GUARD_LAYOUT_REQUIRED").is_none() {
        eprintln!(
            "NOT CHECKED: link/hot-text names rustc {written_for}'s symbols and this build is \
             rustc {built_by}'s (scripts/hot-text rewrites the list for it)"
        );
        return;
    }
    let elf = std::fs::read(env!("CARGO_BIN_EXE_mesh-guard")).unwrap();
    let sections = sections(&elf);
    let find = |name: &str| sections.iter().find(|s| s.0 == name);
    let hook = find(".text.hook").expect("a .text.hook section");
    let text = find(".text").expect("a .text section");
    assert!(
        hook.1 < text.1,
        "the hook's functions come before the rest: {hook:?} {text:?}"
    );
    // The list's functions take about 2 MB in a release build and in a debug build alike.
    // Well under that means most names no longer match.
    assert!(
        hook.2 >= 1 << 20,
        "only {} bytes of the hook's functions were found by their names",
        hook.2
    );
}

/// A callgrind profile naming `names` as callgrind does: each function's first mention
/// carries its name, later ones only its number; a recursion context (`'2`) is a suffix.
fn callgrind_profile(names: &[&str]) -> String {
    let mut text = String::from("version: 1\ncreator: callgrind\nevents: Ir\n");
    for (number, name) in names.iter().enumerate() {
        text.push_str(&format!("fl=(1) src/x.rs\nfn=({number}) {name}\n1 10\n"));
        text.push_str(&format!("cfn=({number})\ncalls=1 0\n1 5\n"));
    }
    text
}

/// The list scripts/hot-text writes from the profiles in `dir`.
fn list_from(dir: &std::path::Path) -> String {
    let out = dir.join("hot-text");
    let run = std::process::Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/hot-text"))
        .arg("--from")
        .arg(dir)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("this test needs python3, which runs scripts/hot-text");
    assert!(
        run.status.success(),
        "scripts/hot-text --from failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    std::fs::read_to_string(&out).unwrap()
}

#[test]
fn the_list_is_the_same_whatever_order_callgrind_names_functions_in() {
    // Callgrind names a profile's functions in the order of its hash tables, which moves from
    // run to run; each reordering used to move a pass's text faults by a page or two.
    let every_pass = [
        "_ZN10mesh_guard8pipeline4hook17h0123456789abcdefE",
        "_RNvNtCs1a2b3c_10mesh_guard5shell4walk",
        "_ZN4core3fmt5write17hfedcba9876543210E.llvm.123456",
    ];
    let startup_files = "_ZN10mesh_guard7startup4read17h00000000000000aaE";
    let (record, ranking) = (
        "_ZN10mesh_guard6record6append17h00000000000000bbE",
        "_ZN10mesh_guard5judge4rank17h00000000000000ccE",
    );
    // Two passes, named in the order the list favours them: a cheap one and a refusal.
    let mut refusal: Vec<&str> = every_pass.to_vec();
    refusal.extend([ranking, record, "0x0000000000401000"]); // the last without a symbol
    let mut cheaper: Vec<&str> = every_pass.to_vec();
    cheaper.extend([
        startup_files,
        "_ZN10mesh_guard8pipeline4hook17h0123456789abcdefE'2",
    ]);
    let lists: Vec<String> = [false, true]
        .into_iter()
        .map(|reversed| {
            let dir = tempfile::tempdir().unwrap();
            let (mut refusal, mut cheaper) = (refusal.clone(), cheaper.clone());
            if reversed {
                refusal.reverse();
                cheaper.reverse();
            }
            let write = |name: &str, names: &[&str]| {
                std::fs::write(dir.path().join(name), callgrind_profile(names)).unwrap()
            };
            write("callgrind-01-0-path.out", &refusal);
            write("callgrind-00-0-path.out", &cheaper);
            list_from(dir.path())
        })
        .collect();
    assert_eq!(lists[0], lists[1], "the same profiles gave two lists");
    let entries: Vec<&str> = lists[0].lines().filter(|l| !l.starts_with('#')).collect();
    // The first pass's functions first, of those first what the refusal runs as well; the
    // rest of the refusal's last; within each, by the line's text.
    assert_eq!(
        entries,
        [
            "fn _RNvNtCs*_10mesh_guard5shell4walk",
            "fn _ZN10mesh_guard8pipeline4hook17h*E",
            "fn _ZN4core3fmt5write17h*E",
            "fn _ZN10mesh_guard7startup4read17h*E",
            "fn _ZN10mesh_guard5judge4rank17h*E",
            "fn _ZN10mesh_guard6record6append17h*E",
        ]
    );
}
