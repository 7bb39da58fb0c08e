//! Giving freed memory back to the operating system.
//!
//! Evicted baskets are freed, but glibc's allocator keeps small and medium chunks in its heap
//! and only returns memory at the top of it: after a scan through thousands of small baskets
//! the process keeps their pages although the cache no longer holds them, and the resident
//! memory of a scan exceeds the cache bound by up to the bound again. `malloc_trim` returns the
//! free pages anywhere in the heap. It walks the heap, so the cache calls it only after evicting
//! a good share of its bound.
#![allow(unsafe_code)]

/// Returns free heap pages to the operating system (glibc only; elsewhere a no-op).
pub(crate) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointers and only touches the allocator's own free lists,
    // under the allocator's locks; it is safe to call at any time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}
