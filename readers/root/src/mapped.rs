//! A read-only memory map of a ROOT file, for [`crate::readspeed`]: basket records are
//! decompressed straight from the page cache instead of being copied into a buffer first.
//!
//! The basket cache and the readers keep using positioned reads (see [`crate::source`]), so
//! the resident memory of an analysis stays what the reader keeps, not the mapped file.
#![allow(unsafe_code)]

use std::fs::File;
use std::path::Path;

use crate::error::{Error, Result};

/// A whole file, mapped read-only.
pub(crate) struct Mapped {
    map: memmap2::Mmap,
}

impl Mapped {
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        // SAFETY: the map is read-only and private to this process. If another process
        // truncates the file while it is mapped, reads past the new end fault (SIGBUS), as
        // with any mmap reader; ROOT files are not modified while they are being read.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        // Baskets are read in file order: let the kernel read ahead.
        let _ = map.advise(memmap2::Advice::Sequential);
        Ok(Self { map })
    }

    /// `len` bytes at `offset`, or a truncation error.
    pub(crate) fn get(&self, what: &'static str, offset: u64, len: usize) -> Result<&[u8]> {
        usize::try_from(offset)
            .ok()
            .and_then(|start| self.map.get(start..start.checked_add(len)?))
            .ok_or(Error::Truncated {
                what,
                offset,
                need: len as u64,
                have: (self.map.len() as u64).saturating_sub(offset),
            })
    }
}
