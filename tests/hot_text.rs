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
