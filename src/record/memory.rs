//! SQLite's memory, taken from the program's allocator (decision 0052). SQLite calls the C
//! library's `malloc` by default; on musl that allocator gives every freed page back to the
//! system at once, and a refusal's one connection cost ~40 `mmap`/`munmap` pairs for it. The
//! binary's allocator keeps freed blocks for the next allocation instead.
//!
//! Each block carries its size in a 16-byte header, which SQLite's `xSize` needs and Rust's
//! `dealloc` needs back, and which keeps the block 16-aligned, as `malloc`'s are.

use std::alloc::{self, Layout};
use std::ffi::{c_int, c_void};

use rusqlite::ffi;

const HEADER: usize = 16;

/// Hands SQLite's allocations to the program's allocator. Process-wide, so it must come before
/// SQLite initialises; where it already has, SQLite refuses (`SQLITE_MISUSE`) and keeps
/// `malloc`: nothing else changes.
pub(super) fn use_the_programs_allocator() {
    let methods = ffi::sqlite3_mem_methods {
        xMalloc: Some(malloc),
        xFree: Some(free),
        xRealloc: Some(realloc),
        xSize: Some(size),
        xRoundup: Some(roundup),
        xInit: Some(init),
        xShutdown: Some(shutdown),
        pAppData: std::ptr::null_mut(),
    };
    // SAFETY: `SQLITE_CONFIG_MALLOC` takes a pointer to the methods, which SQLite copies
    // before returning; it only records them while SQLite is not initialised, and the caller
    // runs once, before any other use of SQLite in the program.
    let _ = unsafe { ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &methods) };
}

fn layout(bytes: usize) -> Option<Layout> {
    Layout::from_size_align(bytes.checked_add(HEADER)?, HEADER).ok()
}

/// The allocation behind a block handed out, and the layout it was allocated with.
///
/// SAFETY: `block` came from `malloc` or `realloc` here and is live.
unsafe fn allocation(block: *mut c_void) -> (*mut u8, Layout) {
    // SAFETY: the header is the 16 bytes before every block handed out.
    let start = unsafe { block.cast::<u8>().sub(HEADER) };
    // SAFETY: as above; it holds the block's size, which `layout` took when allocating.
    let bytes = unsafe { start.cast::<usize>().read() };
    // SAFETY: the same size and alignment made a valid layout then.
    (start, unsafe {
        Layout::from_size_align_unchecked(bytes + HEADER, HEADER)
    })
}

/// The block to hand SQLite from an allocation of `layout`, its size written before it; null
/// stays null.
///
/// SAFETY: `start` is null or a live allocation of `layout`.
unsafe fn hand_out(start: *mut u8, layout: Layout) -> *mut c_void {
    if start.is_null() {
        return start.cast();
    }
    // SAFETY: the allocation is 16-aligned and holds the header and the block.
    unsafe {
        start.cast::<usize>().write(layout.size() - HEADER);
        start.add(HEADER).cast()
    }
}

unsafe extern "C" fn malloc(bytes: c_int) -> *mut c_void {
    let Some(layout) = usize::try_from(bytes).ok().and_then(layout) else {
        return std::ptr::null_mut();
    };
    // SAFETY: the layout is at least 16 bytes; the allocation is of it.
    unsafe { hand_out(alloc::alloc(layout), layout) }
}

unsafe extern "C" fn free(block: *mut c_void) {
    if block.is_null() {
        return;
    }
    // SAFETY: SQLite frees only what its `xMalloc`/`xRealloc` returned.
    unsafe {
        let (start, layout) = allocation(block);
        alloc::dealloc(start, layout);
    }
}

unsafe extern "C" fn realloc(block: *mut c_void, bytes: c_int) -> *mut c_void {
    if block.is_null() {
        // SAFETY: as `malloc`.
        return unsafe { malloc(bytes) };
    }
    let Some(new) = usize::try_from(bytes).ok().and_then(layout) else {
        return std::ptr::null_mut();
    };
    // SAFETY: SQLite reallocates only what its `xMalloc`/`xRealloc` returned; the old layout
    // is the one it was allocated with, and the new size is non-zero and fits a layout.
    unsafe {
        let (start, old) = allocation(block);
        hand_out(alloc::realloc(start, old, new.size()), new)
    }
}

unsafe extern "C" fn size(block: *mut c_void) -> c_int {
    if block.is_null() {
        return 0;
    }
    // SAFETY: SQLite asks only about what its `xMalloc`/`xRealloc` returned.
    let (_, layout) = unsafe { allocation(block) };
    c_int::try_from(layout.size() - HEADER).unwrap_or(c_int::MAX)
}

/// SQLite's own rounding (to 8 bytes): the sizes SQLite then asks for are the ones it would
/// ask `malloc` for.
unsafe extern "C" fn roundup(bytes: c_int) -> c_int {
    bytes.checked_add(7).map_or(bytes, |b| b & !7)
}

unsafe extern "C" fn init(_: *mut c_void) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn shutdown(_: *mut c_void) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_size_and_contents_through_realloc() {
        unsafe {
            let block = malloc(13);
            assert_eq!(block as usize % 16, 0);
            assert_eq!(size(block), 13);
            block.cast::<u8>().write_bytes(0xab, 13);
            let grown = realloc(block, 5000);
            assert_eq!(size(grown), 5000);
            assert!((0..13).all(|i| grown.cast::<u8>().add(i).read() == 0xab));
            let shrunk = realloc(grown, 3);
            assert_eq!(size(shrunk), 3);
            free(shrunk);
            free(std::ptr::null_mut());
            assert!(malloc(-1).is_null());
            assert_eq!(roundup(13), 16);
            assert_eq!(roundup(c_int::MAX), c_int::MAX);
        }
    }
}
