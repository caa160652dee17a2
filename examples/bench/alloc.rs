//! Counting the allocations of this process: the global allocator is the system's, wrapped to
//! count each allocation, so a run's allocations per ID show what the client does for each
//! insert besides sending it (a plain `insert_one` against `insert_with_id`, say), and to keep
//! the bytes allocated and not yet freed, so that `--scale` sees what the process holds.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

/// The system allocator, counting allocations (a reallocation counts as one) and the bytes
/// they hold.
pub struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// Bytes allocated and not freed.
static LIVE: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call goes to the system allocator with the same arguments; the counters are
// only updated.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            LIVE.fetch_add(layout.size() as u64, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            LIVE.fetch_add(layout.size() as u64, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        // On failure the old block stays as it was.
        if !moved.is_null() {
            LIVE.fetch_add(new_size as u64, Ordering::Relaxed);
            LIVE.fetch_sub(layout.size() as u64, Ordering::Relaxed);
        }
        moved
    }
}

/// The allocations of this process so far.
pub fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// The bytes this process has allocated and not freed (the heap it holds, without the
/// allocator's own overhead and free lists).
pub fn live_bytes() -> u64 {
    LIVE.load(Ordering::Relaxed)
}

/// Gives the allocator's free memory back to the system where it can (glibc's `malloc_trim`),
/// so that a reading of the resident set that follows counts what the process holds rather
/// than what it has freed (such as the latency histograms of the runs of a thousand tasks).
pub fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases free memory of the allocator's own heaps.
    unsafe {
        libc::malloc_trim(0);
    }
}
