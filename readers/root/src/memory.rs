//! Giving freed memory back to the operating system, when the program asks for it.
//!
//! Evicted baskets are freed, but glibc's allocator keeps small and medium chunks in its heap
//! and only returns memory at the top of it: after a scan through thousands of small baskets
//! the process keeps their pages although the cache no longer holds them, and the resident
//! memory of a scan exceeds the cache bound by up to the bound again. Returning them (glibc's
//! `malloc_trim`) walks the whole heap of the whole process, which is the program's business,
//! not a library's: the program installs a hook with [`set_memory_release`], and the cache calls
//! it after evicting a sixteenth of its bound. Without a hook nothing is called. `root-tool`
//! and `examples/lazy_scan.rs` install [`malloc_trim`].
#![allow(unsafe_code)]

use std::sync::OnceLock;

static RELEASE: OnceLock<fn()> = OnceLock::new();

/// Installs the function the basket caches call after evicting a good share of their bound, to
/// hand freed memory back to the operating system (e.g. glibc's `malloc_trim(0)`). The first
/// call wins; returns false when a hook was already installed.
pub fn set_memory_release(release: fn()) -> bool {
    RELEASE.set(release).is_ok()
}

/// Calls the installed hook, if any.
pub(crate) fn release_free_memory() {
    if let Some(release) = RELEASE.get() {
        release();
    }
}

/// glibc's `malloc_trim(0)`: returns the free pages anywhere in the heap to the operating system
/// (elsewhere a no-op). Made for [`set_memory_release`]; the library never calls it by itself.
pub fn malloc_trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointers and only touches the allocator's own free lists,
    // under the allocator's locks; it is safe to call at any time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}
