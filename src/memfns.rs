//! `memcpy`, `memmove`, `memset`, `memcmp` and `bcmp` for the musl build (decision 0052):
//! musl's copy a short block with `rep movsq` (tens of cycles to start for a 20-byte string)
//! and compare byte by byte, and SQLite and the record's views call them for every column of
//! every row. Measured at a million rows (issue 39, docs/performance.md): these are where
//! the musl binary lost to glibc's. Here short blocks are moved with two loads and two stores
//! that may overlap (every load before any store, so a short `memmove` is the same code),
//! longer ones 16 bytes at a time, and compares go 8 bytes at a time.
//!
//! Written for x86_64 with SSE2 only (every x86_64 CPU has it). Assembled on every x86_64
//! Linux build under `mesh_guard_*` names, so the tests check them on any host; only the musl
//! build also gives them the C library's names, which the static link then takes instead of
//! musl's (an archive member is pulled in only for a symbol still undefined).

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
core::arch::global_asm!(
    ".text",
    // memcpy and memmove share the short paths: every load before any store.
    ".p2align 4",
    ".globl mesh_guard_memcpy",
    ".type mesh_guard_memcpy,@function",
    "mesh_guard_memcpy:",
    "    mov rax, rdi",
    "    cmp rdx, 32",
    "    ja 50f",
    "mesh_guard_mem_short:",
    "    cmp rdx, 16",
    "    jae 40f",
    "    cmp rdx, 8",
    "    jae 30f",
    "    cmp rdx, 4",
    "    jae 20f",
    "    test rdx, rdx",
    "    jz 10f",
    "    movzx ecx, byte ptr [rsi]",
    "    movzx r8d, byte ptr [rsi + rdx - 1]",
    "    mov r9, rdx",
    "    shr r9, 1",
    "    movzx r10d, byte ptr [rsi + r9]",
    "    mov byte ptr [rdi], cl",
    "    mov byte ptr [rdi + r9], r10b",
    "    mov byte ptr [rdi + rdx - 1], r8b",
    "10:",
    "    ret",
    "20:",
    "    mov ecx, dword ptr [rsi]",
    "    mov r8d, dword ptr [rsi + rdx - 4]",
    "    mov dword ptr [rdi], ecx",
    "    mov dword ptr [rdi + rdx - 4], r8d",
    "    ret",
    "30:",
    "    mov rcx, qword ptr [rsi]",
    "    mov r8, qword ptr [rsi + rdx - 8]",
    "    mov qword ptr [rdi], rcx",
    "    mov qword ptr [rdi + rdx - 8], r8",
    "    ret",
    "40:",
    "    movups xmm0, xmmword ptr [rsi]",
    "    movups xmm1, xmmword ptr [rsi + rdx - 16]",
    "    movups xmmword ptr [rdi], xmm0",
    "    movups xmmword ptr [rdi + rdx - 16], xmm1",
    "    ret",
    // Longer than 32: a large copy with the string instruction, else 16 bytes at a time.
    "50:",
    "    cmp rdx, 2048",
    "    jae 60f",
    "mesh_guard_mem_forward:",
    // The last 16 bytes are loaded first and stored last: the loop may stop short of them,
    // and a forward memmove may have written over them.
    "    movups xmm2, xmmword ptr [rsi + rdx - 16]",
    "    lea r8, [rdi + rdx - 16]",
    "    mov rcx, rdi",
    "51:",
    "    movups xmm0, xmmword ptr [rsi]",
    "    movups xmmword ptr [rcx], xmm0",
    "    add rsi, 16",
    "    add rcx, 16",
    "    sub rdx, 16",
    "    cmp rdx, 16",
    "    ja 51b",
    "    movups xmmword ptr [r8], xmm2",
    "    ret",
    "60:",
    "    mov rcx, rdx",
    "    rep movsb",
    "    ret",
    ".size mesh_guard_memcpy, . - mesh_guard_memcpy",
    //
    ".p2align 4",
    ".globl mesh_guard_memmove",
    ".type mesh_guard_memmove,@function",
    "mesh_guard_memmove:",
    "    mov rax, rdi",
    "    cmp rdx, 32",
    "    jbe mesh_guard_mem_short",
    // dst - src, unsigned, at least n: dst is below src or past its end, forward is safe.
    "    mov rcx, rdi",
    "    sub rcx, rsi",
    "    cmp rcx, rdx",
    "    jae mesh_guard_mem_forward",
    // dst inside the source: backward, the first 16 bytes loaded first and stored last.
    "    movups xmm2, xmmword ptr [rsi]",
    "    mov r8, rdi",
    "    add rsi, rdx",
    "    add rdi, rdx",
    "70:",
    "    sub rsi, 16",
    "    sub rdi, 16",
    "    movups xmm0, xmmword ptr [rsi]",
    "    movups xmmword ptr [rdi], xmm0",
    "    sub rdx, 16",
    "    cmp rdx, 16",
    "    ja 70b",
    "    movups xmmword ptr [r8], xmm2",
    "    ret",
    ".size mesh_guard_memmove, . - mesh_guard_memmove",
    //
    ".p2align 4",
    ".globl mesh_guard_memset",
    ".type mesh_guard_memset,@function",
    "mesh_guard_memset:",
    "    mov rax, rdi",
    "    movzx ecx, sil",
    "    mov r8, 0x0101010101010101",
    "    imul rcx, r8",
    "    cmp rdx, 16",
    "    jae 40f",
    "    cmp rdx, 8",
    "    jae 30f",
    "    cmp rdx, 4",
    "    jae 20f",
    "    test rdx, rdx",
    "    jz 10f",
    "    mov byte ptr [rdi], cl",
    "    mov byte ptr [rdi + rdx - 1], cl",
    "    cmp rdx, 2",
    "    jbe 10f",
    "    mov byte ptr [rdi + 1], cl",
    "10:",
    "    ret",
    "20:",
    "    mov dword ptr [rdi], ecx",
    "    mov dword ptr [rdi + rdx - 4], ecx",
    "    ret",
    "30:",
    "    mov qword ptr [rdi], rcx",
    "    mov qword ptr [rdi + rdx - 8], rcx",
    "    ret",
    "40:",
    "    movq xmm0, rcx",
    "    punpcklqdq xmm0, xmm0",
    "    cmp rdx, 32",
    "    ja 50f",
    "    movups xmmword ptr [rdi], xmm0",
    "    movups xmmword ptr [rdi + rdx - 16], xmm0",
    "    ret",
    "50:",
    "    cmp rdx, 2048",
    "    jae 60f",
    "    lea r8, [rdi + rdx - 16]",
    "    mov r9, rdi",
    "51:",
    "    movups xmmword ptr [r9], xmm0",
    "    add r9, 16",
    "    sub rdx, 16",
    "    cmp rdx, 16",
    "    ja 51b",
    "    movups xmmword ptr [r8], xmm0",
    "    ret",
    "60:",
    "    mov r9, rdi",
    "    mov eax, esi",
    "    mov rcx, rdx",
    "    rep stosb",
    "    mov rax, r9",
    "    ret",
    ".size mesh_guard_memset, . - mesh_guard_memset",
    //
    ".p2align 4",
    ".globl mesh_guard_memcmp",
    ".type mesh_guard_memcmp,@function",
    "mesh_guard_memcmp:",
    "    cmp rdx, 8",
    "    jb 20f",
    "10:",
    "    mov rcx, qword ptr [rdi]",
    "    mov r8, qword ptr [rsi]",
    "    cmp rcx, r8",
    "    jne 40f",
    "    add rdi, 8",
    "    add rsi, 8",
    "    sub rdx, 8",
    "    cmp rdx, 8",
    "    jae 10b",
    "20:",
    "    test rdx, rdx",
    "    jz 30f",
    "21:",
    "    movzx eax, byte ptr [rdi]",
    "    movzx ecx, byte ptr [rsi]",
    "    sub eax, ecx",
    "    jnz 31f",
    "    inc rdi",
    "    inc rsi",
    "    dec rdx",
    "    jnz 21b",
    "30:",
    "    xor eax, eax",
    "31:",
    "    ret",
    // The first differing byte decides: compared as big-endian words, it is the highest.
    "40:",
    "    bswap rcx",
    "    bswap r8",
    "    cmp rcx, r8",
    "    sbb eax, eax",
    "    or eax, 1",
    "    ret",
    ".size mesh_guard_memcmp, . - mesh_guard_memcmp",
);

// The C library's names, in the musl build only.
#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "musl"))]
core::arch::global_asm!(
    ".globl memcpy",
    ".type memcpy,@function",
    ".set memcpy, mesh_guard_memcpy",
    ".globl memmove",
    ".type memmove,@function",
    ".set memmove, mesh_guard_memmove",
    ".globl memset",
    ".type memset,@function",
    ".set memset, mesh_guard_memset",
    ".globl memcmp",
    ".type memcmp,@function",
    ".set memcmp, mesh_guard_memcmp",
    ".globl bcmp",
    ".type bcmp,@function",
    ".set bcmp, mesh_guard_memcmp",
);

#[cfg(all(test, target_arch = "x86_64", target_os = "linux"))]
mod tests {
    unsafe extern "C" {
        fn mesh_guard_memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8;
        fn mesh_guard_memmove(dst: *mut u8, src: *const u8, n: usize) -> *mut u8;
        fn mesh_guard_memset(dst: *mut u8, c: i32, n: usize) -> *mut u8;
        fn mesh_guard_memcmp(a: *const u8, b: *const u8, n: usize) -> i32;
    }

    /// Sizes around every branch, and the string instruction's.
    fn sizes() -> impl Iterator<Item = usize> {
        (0..=300).chain([511, 512, 2047, 2048, 2049, 4099, 70_001])
    }

    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    #[test]
    fn memcpy_copies_every_size_at_every_alignment_and_nothing_else() {
        for n in sizes() {
            for (s, d) in [(0, 0), (1, 0), (0, 3), (7, 5), (15, 1), (8, 9)] {
                let src = pattern(n + 32, 1);
                let mut dst = vec![0xAAu8; n + 32];
                // SAFETY: both buffers hold n bytes past the offsets, and do not overlap.
                let r =
                    unsafe { mesh_guard_memcpy(dst.as_mut_ptr().add(d), src.as_ptr().add(s), n) };
                assert_eq!(r, dst.as_mut_ptr().wrapping_add(d));
                assert_eq!(&dst[d..d + n], &src[s..s + n], "n {n} s {s} d {d}");
                assert!(
                    dst[..d].iter().chain(&dst[d + n..]).all(|&b| b == 0xAA),
                    "n {n}"
                );
            }
        }
    }

    #[test]
    fn memmove_is_right_for_every_overlap() {
        for n in sizes().filter(|&n| n <= 5000) {
            for delta in [-40isize, -17, -16, -9, -1, 0, 1, 8, 15, 16, 33, 40] {
                let mut buf = pattern(n + 100, 7);
                let mut want = buf.clone();
                let (s, d) = (50usize, (50 + delta) as usize);
                want.copy_within(s..s + n, d);
                // SAFETY: both ranges lie inside `buf`.
                unsafe { mesh_guard_memmove(buf.as_mut_ptr().add(d), buf.as_ptr().add(s), n) };
                assert_eq!(buf, want, "n {n} delta {delta}");
            }
        }
    }

    #[test]
    fn memset_fills_every_size_and_nothing_else() {
        for n in sizes() {
            for d in [0, 1, 7] {
                let mut buf = vec![0x11u8; n + 16];
                // SAFETY: the buffer holds n bytes past d.
                let r = unsafe { mesh_guard_memset(buf.as_mut_ptr().add(d), 0x1C3, n) };
                assert_eq!(r, buf.as_mut_ptr().wrapping_add(d));
                assert!(buf[d..d + n].iter().all(|&b| b == 0xC3), "n {n}");
                assert!(
                    buf[..d].iter().chain(&buf[d + n..]).all(|&b| b == 0x11),
                    "n {n}"
                );
            }
        }
    }

    #[test]
    fn memcmp_orders_as_the_first_differing_byte_does() {
        for n in (0..=70).chain([255, 4096]) {
            let a = pattern(n + 1, 3);
            // SAFETY: both hold n bytes.
            assert_eq!(
                unsafe { mesh_guard_memcmp(a.as_ptr(), a.clone().as_ptr(), n) },
                0
            );
            for at in 0..n {
                for (x, y) in [(0u8, 1u8), (0x7F, 0x80), (0xFF, 0x00), (5, 4)] {
                    let (mut l, mut r) = (a.clone(), a.clone());
                    l[at] = x;
                    r[at] = y;
                    // A later difference must not count.
                    if at + 1 < n {
                        l[at + 1] = 0;
                        r[at + 1] = 0xFF;
                    }
                    // SAFETY: both hold n bytes.
                    let got = unsafe { mesh_guard_memcmp(l.as_ptr(), r.as_ptr(), n) };
                    let want = l[..n].cmp(&r[..n]) as i32;
                    assert_eq!(got.signum(), want, "n {n} at {at} {x} {y}");
                }
            }
        }
    }
}
