//! The binary's memory allocator (decision 0052): free lists of power-of-two blocks carved
//! from large chunks, never given back. A hook is a process of a few milliseconds that
//! allocates and frees small blocks many thousand times; musl's allocator returns memory to
//! the system as soon as it is free, which cost a refusal ~70 `mmap`/`munmap` pairs and their
//! page faults, more than the rest of the work. Here a freed block waits on its size's list
//! for the next allocation of that size, and a chunk's pages, once touched, stay mapped.
//!
//! Blocks up to 64 KiB are carved from chunks; blocks of 128 KiB to 4 MiB are each had from the
//! system's allocator, and kept on their list too when freed (musl's maps and unmaps each one,
//! and a growing `Vec` of a long command frees and asks for them many times). Blocks above
//! 4 MiB, or aligned above 16 bytes, go to the system's allocator as they are.
//!
//! Each thread has its own lists and its own chunk (decision 0079): no lock and no atomic
//! instruction on the way. A block may be freed by another thread than the one that had it;
//! it then waits on the freeing thread's list, which is as good a place as any for memory
//! that is never given back, unless blocks flow one way between two threads for long: the
//! freeing thread's lists then grow with every block. So the threads besides the main one
//! pass no blocks: the hook's deadline watchdog ends the process, and `audit verify`'s
//! hashing thread hands back links that hold their hashes inline (decision 0082). A thread
//! that ends leaves its lists behind, unused.
//!
//! Out of memory, a hook refuses: the abort Rust would make is an exit status agents take
//! for "the hook failed", and run the command (decision 0002).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::ptr;

/// The smallest block, 16 bytes: room for the free list's link, and the alignment every
/// block has (chunks are page-aligned and every block size is a multiple of 16).
const MIN_SHIFT: u32 = 4;
/// The largest block the lists keep, 4 MiB.
const MAX_SHIFT: u32 = 22;
/// The largest block carved from a chunk, 64 KiB; larger ones are had one by one.
const CARVED_SHIFT: u32 = 16;
const CLASSES: usize = (MAX_SHIFT - MIN_SHIFT + 1) as usize;
const BLOCK_ALIGN: usize = 1 << MIN_SHIFT;
/// Each chunk is mapped whole but only the pages that blocks are carved from are touched.
const CHUNK: usize = 1 << 20;
const CHUNK_ALIGN: usize = 4096;

/// The allocator: a handle on the calling thread's lists. It holds nothing itself, so every
/// `Pool` a thread uses shares that thread's lists.
pub struct Pool {
    _private: (),
}

struct State {
    /// The head of each size's list of free blocks; a free block's first word is the next.
    free: [*mut u8; CLASSES],
    /// The part of the current chunk not yet carved, `next..end`.
    next: *mut u8,
    end: *mut u8,
}

thread_local! {
    // A constant initialiser and no destructor: std keeps this in the thread's static TLS
    // block (a `%fs`-relative address), reached without a lazy-init check or an allocation,
    // and valid until the thread's last instruction, after every other TLS destructor (which
    // may still free memory) has run.
    static STATE: UnsafeCell<State> = const {
        UnsafeCell::new(State {
            free: [ptr::null_mut(); CLASSES],
            next: ptr::null_mut(),
            end: ptr::null_mut(),
        })
    };
}

/// Runs `f` on the calling thread's lists.
///
/// SAFETY (for the callers): `f` neither allocates nor frees through this allocator, so the
/// one `&mut State` it gets is the only reference to the thread's state while it runs; no
/// other thread ever reaches it. (Signal handlers do not allocate: the deadline's writes and
/// exits, `deadline.rs`.)
fn with_state<T>(f: impl FnOnce(&mut State) -> T) -> T {
    // SAFETY: see above; `System` (the C library's allocator) does not call back into Rust's.
    STATE.with(|state| f(unsafe { &mut *state.get() }))
}

impl Default for Pool {
    fn default() -> Self {
        Self::new()
    }
}

impl Pool {
    pub const fn new() -> Self {
        Pool { _private: () }
    }

    /// The list a block of `layout` belongs to, or `None` for the system's allocator. It
    /// depends on the layout alone, so `dealloc` finds the list `alloc` took the block from.
    fn class(size: usize, align: usize) -> Option<usize> {
        if align > BLOCK_ALIGN || size > 1 << MAX_SHIFT {
            return None;
        }
        let size = size.max(1 << MIN_SHIFT);
        Some((usize::BITS - (size - 1).leading_zeros() - MIN_SHIFT) as usize)
    }

    const fn block_size(class: usize) -> usize {
        1 << (class + MIN_SHIFT as usize)
    }

    /// A block of `class`: the last one freed, else carved from the chunk, else from a new
    /// chunk (the old chunk's rest is left unused), or for the largest classes had from the
    /// system alone. Null when the system has no memory.
    fn take(&self, class: usize) -> *mut u8 {
        with_state(|state| Self::take_from(state, class))
    }

    fn take_from(state: &mut State, class: usize) -> *mut u8 {
        let head = state.free[class];
        if !head.is_null() {
            // SAFETY: a block on a list is free and its first word is the list's next link.
            state.free[class] = unsafe { head.cast::<*mut u8>().read() };
            return head;
        }
        let size = Self::block_size(class);
        if size > 1 << CARVED_SHIFT {
            // SAFETY: the size is non-zero and BLOCK_ALIGN a power of two.
            return out_of_memory_refuses(unsafe {
                System.alloc(Layout::from_size_align_unchecked(size, BLOCK_ALIGN))
            });
        }
        if (state.end as usize) - (state.next as usize) < size {
            // SAFETY: CHUNK is non-zero and CHUNK_ALIGN a power of two.
            let chunk = out_of_memory_refuses(unsafe {
                System.alloc(Layout::from_size_align_unchecked(CHUNK, CHUNK_ALIGN))
            });
            if chunk.is_null() {
                return chunk;
            }
            state.next = chunk;
            // SAFETY: the chunk is CHUNK bytes long.
            state.end = unsafe { chunk.add(CHUNK) };
        }
        let block = state.next;
        // SAFETY: at least `size` bytes are left in the chunk (checked above).
        state.next = unsafe { block.add(size) };
        block
    }

    /// Puts a block back on its list.
    ///
    /// SAFETY: `block` came from `take(class)` and is no longer used.
    unsafe fn give(&self, block: *mut u8, class: usize) {
        with_state(|state| {
            // SAFETY: the block is at least 16 bytes, 16-aligned, and ours again.
            unsafe { block.cast::<*mut u8>().write(state.free[class]) };
            state.free[class] = block;
        })
    }
}

/// The block, unless it is null: then a hook whose deadline is armed ends in its refusal at
/// once (`deadline::refuse_now`, which allocates nothing); any other command gets the null,
/// and Rust's usual abort.
fn out_of_memory_refuses(block: *mut u8) -> *mut u8 {
    if block.is_null() {
        crate::deadline::refuse_now();
    }
    block
}

// Not inlined: with LTO each method would otherwise be copied into every call site that
// allocates, 1.2 MB more code for no measurable gain.
unsafe impl GlobalAlloc for Pool {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match Self::class(layout.size(), layout.align()) {
            Some(class) => self.take(class),
            // SAFETY: the caller's layout has a non-zero size.
            None => out_of_memory_refuses(unsafe { System.alloc(layout) }),
        }
    }

    #[inline(never)]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match Self::class(layout.size(), layout.align()) {
            Some(class) => {
                let block = self.take(class);
                if !block.is_null() {
                    // SAFETY: the block holds at least `layout.size()` bytes.
                    unsafe { block.write_bytes(0, layout.size()) };
                }
                block
            }
            // The system's zeroed memory may be fresh pages it need not write.
            // SAFETY: the caller's layout has a non-zero size.
            None => out_of_memory_refuses(unsafe { System.alloc_zeroed(layout) }),
        }
    }

    #[inline(never)]
    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        match Self::class(layout.size(), layout.align()) {
            // SAFETY: the caller allocated `block` with this layout, so from this class.
            Some(class) => unsafe { self.give(block, class) },
            // SAFETY: as above, from the system's allocator.
            None => unsafe { System.dealloc(block, layout) },
        }
    }

    #[inline(never)]
    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = Self::class(layout.size(), layout.align());
        let new = Self::class(new_size, layout.align());
        match (old, new) {
            // Within its class the block stays: a `Vec` that doubles moves once per class. A
            // block that shrinks into a smaller class moves, so that it goes back on its own
            // list (staying, it would end on the smaller one, and its own list would have to
            // be refilled from new memory every time).
            (Some(old), Some(new)) if old == new => block,
            // SAFETY: the caller's block and layout are from `alloc`, which took them from
            // the system's allocator for this layout.
            (None, None) => {
                out_of_memory_refuses(unsafe { System.realloc(block, layout, new_size) })
            }
            _ => {
                // SAFETY: the caller guarantees the new layout is valid and non-zero.
                let new_layout =
                    unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
                // SAFETY: as above.
                let moved = unsafe { self.alloc(new_layout) };
                if !moved.is_null() {
                    // SAFETY: both blocks hold at least the smaller size and do not overlap.
                    unsafe {
                        ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                        self.dealloc(block, layout);
                    }
                }
                moved
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_the_next_power_of_two_from_16_bytes_to_4_mib() {
        assert_eq!(Pool::class(1, 1), Some(0));
        assert_eq!(Pool::class(16, 8), Some(0));
        assert_eq!(Pool::class(17, 8), Some(1));
        assert_eq!(Pool::class(4096, 16), Some(8));
        assert_eq!(Pool::class(4097, 16), Some(9));
        assert_eq!(Pool::class(65536, 1), Some(12));
        assert_eq!(Pool::class(65537, 1), Some(13));
        assert_eq!(Pool::class(4 << 20, 1), Some(CLASSES - 1));
        assert_eq!(Pool::class((4 << 20) + 1, 1), None);
        assert_eq!(Pool::class(8, 32), None, "above 16-byte alignment");
        for size in 1..=65536 {
            let class = Pool::class(size, 1).unwrap();
            assert!(Pool::block_size(class) >= size);
            assert!(class == 0 || Pool::block_size(class - 1) < size);
        }
    }

    #[test]
    fn a_freed_block_is_the_next_one_of_its_size_and_no_other() {
        let pool = Pool::new();
        let layout = Layout::from_size_align(100, 8).unwrap();
        unsafe {
            let a = pool.alloc(layout);
            let b = pool.alloc(layout);
            assert_ne!(a, b);
            pool.dealloc(a, layout);
            let other = pool.alloc(Layout::from_size_align(300, 8).unwrap());
            assert_ne!(
                other, a,
                "a 300-byte block is not taken from the 128-byte list"
            );
            assert_eq!(pool.alloc(layout), a);
        }
    }

    #[test]
    fn realloc_keeps_the_contents_in_place_within_a_class_and_moved_beyond() {
        let pool = Pool::new();
        unsafe {
            let layout = Layout::from_size_align(20, 1).unwrap();
            let block = pool.alloc(layout);
            for i in 0..20 {
                block.add(i).write(i as u8);
            }
            let same = pool.realloc(block, layout, 32);
            assert_eq!(same, block, "20 and 32 bytes share the 32-byte class");
            let moved = pool.realloc(same, Layout::from_size_align(32, 1).unwrap(), 70_000);
            assert_ne!(moved, block);
            let big = Layout::from_size_align(70_000, 1).unwrap();
            moved.add(69_999).write(7);
            let back = pool.realloc(moved, big, 40);
            for i in 0..20 {
                assert_eq!(back.add(i).read(), i as u8);
            }
            pool.dealloc(back, Layout::from_size_align(40, 1).unwrap());
        }
    }

    /// Many blocks of mixed sizes alive at once, each filled with its own byte, freed and
    /// reallocated in an order that mixes the lists: no block may overlap another.
    #[test]
    fn live_blocks_never_overlap() {
        let pool = Pool::new();
        let mut live: Vec<(*mut u8, Layout, u8)> = Vec::new();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        unsafe {
            for step in 0..20_000u32 {
                let roll = next();
                if roll % 3 == 0 && !live.is_empty() {
                    let (block, layout, byte) = live.swap_remove((roll as usize / 3) % live.len());
                    for i in 0..layout.size() {
                        assert_eq!(block.add(i).read(), byte, "block overwritten");
                    }
                    pool.dealloc(block, layout);
                } else {
                    let size = 1 + (next() % if step % 50 == 0 { 100_000 } else { 600 }) as usize;
                    let align = [1, 8, 16, 64][(next() % 4) as usize];
                    let layout = Layout::from_size_align(size, align).unwrap();
                    let block = pool.alloc(layout);
                    assert!(!block.is_null());
                    assert_eq!(block as usize % align, 0);
                    let byte = step as u8;
                    block.write_bytes(byte, size);
                    live.push((block, layout, byte));
                }
            }
            for (block, layout, byte) in live {
                for i in 0..layout.size() {
                    assert_eq!(block.add(i).read(), byte, "block overwritten");
                }
                pool.dealloc(block, layout);
            }
        }
    }

    /// A block that shrinks into a smaller class moves, and its own list gets it back: a
    /// 60 KB buffer shrunk and dropped, again and again, reuses one block.
    #[test]
    fn a_shrunk_block_goes_back_on_its_own_list() {
        let pool = Pool::new();
        let big = Layout::from_size_align(60_000, 8).unwrap();
        unsafe {
            let first = pool.alloc(big);
            pool.dealloc(first, big);
            for _ in 0..100 {
                let block = pool.alloc(big);
                assert_eq!(block, first);
                block.write(9);
                let small = pool.realloc(block, big, 100);
                assert_ne!(small, block);
                assert_eq!(small.read(), 9);
                pool.dealloc(small, Layout::from_size_align(100, 8).unwrap());
            }
            // Larger than a chunk's carving: had from the system, kept when freed.
            let large = Layout::from_size_align(3 << 20, 16).unwrap();
            let block = pool.alloc(large);
            pool.dealloc(block, large);
            assert_eq!(pool.alloc(large), block);
        }
    }

    /// Each thread has its own lists: a block freed on one thread is not handed to another
    /// that asks, and a block had on one thread and freed on another serves the freeing one.
    #[test]
    fn threads_keep_their_own_lists() {
        let layout = Layout::from_size_align(200, 8).unwrap();
        let pool = Pool::new();
        unsafe {
            let mine = pool.alloc(layout);
            pool.dealloc(mine, layout);
            let theirs = std::thread::spawn(move || {
                let pool = Pool::new();
                let block = pool.alloc(layout);
                block.write_bytes(3, 200);
                block as usize
            })
            .join()
            .unwrap() as *mut u8;
            assert_ne!(theirs, mine, "another thread's free list is not this one's");
            assert_eq!(pool.alloc(layout), mine);
            pool.dealloc(theirs, layout);
            assert_eq!(pool.alloc(layout), theirs, "freed here, so kept here");
        }
    }

    #[test]
    fn zeroed_blocks_are_zero_after_reuse() {
        let pool = Pool::new();
        let layout = Layout::from_size_align(64, 8).unwrap();
        unsafe {
            let block = pool.alloc(layout);
            block.write_bytes(0xff, 64);
            pool.dealloc(block, layout);
            let again = pool.alloc_zeroed(layout);
            assert_eq!(again, block);
            assert!((0..64).all(|i| again.add(i).read() == 0));
        }
    }
}
