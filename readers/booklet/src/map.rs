//! Unsafe code for memory maps: creating the maps of a booklet file, and releasing their pages.
//!
//! # Safety argument
//!
//! A memory map is only sound while no one truncates or rewrites the mapped file behind our
//! back. A [`crate::Booklet`] maps its file only while it holds the file's `flock` lock:
//! shared for read-only handles, exclusive for writers. Python booklet and this crate both
//! take these locks for the whole life of a handle, so no cooperating process changes the
//! file while it is mapped. Within the process, the owning handle is the only writer and it
//! remaps after every change of the file length. A process that ignores the locks can still
//! break that promise; this is the same trust Python booklet's own mmap read path places in
//! its lock.
//!
//! [`Mapping::release`] gives a range's pages back with `madvise(MADV_DONTNEED)`. That is
//! sound here because every mapping is a *shared file* mapping (`MAP_SHARED`, never private or
//! anonymous): the kernel drops the page-table entries, keeps the page cache (dirty pages of a
//! writable mapping stay dirty there and are written back as usual), and the next access maps
//! the same file bytes again. A slice borrowed from the mapping therefore reads the same bytes
//! before and after, and the lock above keeps the file itself from changing.

#![allow(
    unsafe_code,
    reason = "memory maps are unsafe to create; see the module docs"
)]

use std::fs::File;
use std::io;

use memmap2::{Advice, Mmap, MmapMut, MmapOptions, RemapOptions, UncheckedAdvice};

/// A read-only or read-write shared mapping of a whole file.
pub(crate) enum Mapping {
    /// `PROT_READ`, for handles opened with flag `r`.
    ReadOnly(Mmap),
    /// `PROT_READ | PROT_WRITE`, `MAP_SHARED`: writes go to the page cache like `pwrite`.
    ReadWrite(MmapMut),
}

impl Mapping {
    /// Map the first `len` bytes of `file` (the caller's view of the file length).
    pub(crate) fn new(file: &File, len: u64, writable: bool) -> io::Result<Self> {
        let len = usize::try_from(len).map_err(|_| io::Error::other("file too large to map"))?;
        let mut opts = MmapOptions::new();
        opts.len(len);
        if writable {
            // SAFETY: see the module docs: we hold the exclusive flock on `file`, and the
            // owning handle remaps after every change of the file length.
            let m = unsafe { opts.map_mut(file) }?;
            Ok(Mapping::ReadWrite(m))
        } else {
            // SAFETY: see the module docs: we hold a shared flock on `file`, so no cooperating
            // writer can modify or truncate it while this mapping lives.
            let m = unsafe { opts.map(file) }?;
            Ok(Mapping::ReadOnly(m))
        }
    }

    /// Grow the mapping to the first `len` bytes of the (already longer) file with `mremap`,
    /// which keeps the page-table entries of the pages already touched.
    pub(crate) fn grow(&mut self, len: u64) -> io::Result<()> {
        let len = usize::try_from(len).map_err(|_| io::Error::other("file too large to map"))?;
        let remap = |m: &mut Self| {
            let opts = RemapOptions::new().may_move(true);
            // SAFETY: as in `new`: the lock keeps other processes from shrinking the file, the
            // caller has just extended the file to at least `len` bytes, and `&mut self`
            // guarantees that no slice of the old mapping is alive while it moves.
            match m {
                Mapping::ReadOnly(m) => unsafe { m.remap(len, opts) },
                Mapping::ReadWrite(m) => unsafe { m.remap(len, opts) },
            }
        };
        if remap(self).is_ok() {
            return Ok(());
        }
        // `mremap` only moves a single kernel mapping (VMA), and range advice splits one: the
        // random advice on the bucket index or the sequential advice of a scan makes it fail
        // with EFAULT. Normal advice on the whole range merges the pieces back.
        let whole = self.bytes().len();
        self.advise_with(Advice::Normal, 0, whole);
        remap(self)
    }

    /// The mapped bytes.
    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Mapping::ReadOnly(m) => m,
            Mapping::ReadWrite(m) => m,
        }
    }

    /// Whether writes go through this mapping.
    pub(crate) fn is_writable(&self) -> bool {
        matches!(self, Mapping::ReadWrite(_))
    }

    /// The mapped bytes, writable (None for a read-only mapping).
    #[inline]
    pub(crate) fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        match self {
            Mapping::ReadOnly(_) => None,
            Mapping::ReadWrite(m) => Some(m),
        }
    }

    /// Prefault the page tables of a byte range of a writable mapping (`MADV_POPULATE_WRITE`,
    /// one call instead of a page fault per page for data just appended with `pwrite` and then
    /// linked through the map). Errors (old kernels) are ignored: pages then fault on demand.
    pub(crate) fn populate(&self, offset: usize, len: usize) {
        let len = len.min(self.bytes().len().saturating_sub(offset));
        if let (Mapping::ReadWrite(m), true) = (self, len > 0) {
            #[cfg(target_os = "linux")]
            let _ignored = m.advise_range(Advice::PopulateWrite, offset, len);
            #[cfg(not(target_os = "linux"))]
            let _ = m;
        }
    }

    /// `madvise` a byte range; errors are ignored because advice is only a hint.
    pub(crate) fn advise(&self, random: bool, offset: usize, len: usize) {
        let advice = if random {
            Advice::Random
        } else {
            Advice::Sequential
        };
        self.advise_with(advice, offset, len);
    }

    /// Give the pages of a byte range back to the OS (`MADV_DONTNEED`): the process's resident
    /// set shrinks, the file's pages stay in the page cache. Errors are ignored (a hint).
    pub(crate) fn release(&self, offset: usize, len: usize) {
        let len = len.min(self.bytes().len().saturating_sub(offset));
        if len == 0 {
            return;
        }
        // SAFETY: a shared file mapping (see the module docs): after MADV_DONTNEED the range
        // reads the same file bytes again, so no borrowed slice sees its contents change.
        let _ignored = unsafe {
            match self {
                Mapping::ReadOnly(m) => {
                    m.unchecked_advise_range(UncheckedAdvice::DontNeed, offset, len)
                }
                Mapping::ReadWrite(m) => {
                    m.unchecked_advise_range(UncheckedAdvice::DontNeed, offset, len)
                }
            }
        };
    }

    fn advise_with(&self, advice: Advice, offset: usize, len: usize) {
        let len = len.min(self.bytes().len().saturating_sub(offset));
        if len == 0 {
            return;
        }
        let _ignored = match self {
            Mapping::ReadOnly(m) => m.advise_range(advice, offset, len),
            Mapping::ReadWrite(m) => m.advise_range(advice, offset, len),
        };
    }
}
