//! How much of a set of files the operating system holds in its page cache, and evicting them
//! from it: what seed 001's "Beware of caching" asks a reader of a throughput to know. A file
//! read a moment ago is read again from memory, not from the storage, and a throughput measured
//! on it is the throughput of memory.
//!
//! Residency is asked of the kernel (`mincore` over a read-only map, nothing read); eviction is
//! `posix_fadvise(POSIX_FADV_DONTNEED)` per file, which needs no superuser, unlike
//! `echo 3 > /proc/sys/vm/drop_caches`, and leaves every other file's pages alone. Both exist on
//! Linux with glibc; elsewhere they say they are unsupported.
#![allow(unsafe_code)]

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The bytes of some files held in the page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Residency {
    /// Bytes of the files' pages held in memory (whole pages: the last page of a file counts
    /// for what the file has of it).
    pub resident_bytes: u64,
    /// The files' sizes, summed.
    pub total_bytes: u64,
}

impl Residency {
    /// Resident share of the files' bytes, 0 to 1 (1 for no bytes at all).
    #[must_use]
    pub fn fraction(&self) -> f64 {
        if self.total_bytes == 0 {
            return 1.0;
        }
        self.resident_bytes as f64 / self.total_bytes as f64
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// How many bytes of `paths` the page cache holds now.
///
/// # Errors
/// A file that cannot be opened or mapped; [`std::io::ErrorKind::Unsupported`] off Linux/glibc.
pub fn residency(paths: &[PathBuf]) -> Result<Residency> {
    let mut sum = Residency::default();
    for path in paths {
        let one = file_residency(path)?;
        sum.resident_bytes += one.resident_bytes;
        sum.total_bytes += one.total_bytes;
    }
    Ok(sum)
}

/// Asks the kernel to drop the cached pages of `paths` (after writing back any dirty ones), so
/// that the next read of them comes from the storage.
///
/// # Errors
/// A file that cannot be opened or advised; [`std::io::ErrorKind::Unsupported`] off Linux/glibc.
pub fn evict(paths: &[PathBuf]) -> Result<()> {
    for path in paths {
        let file = File::open(path).map_err(io(path))?;
        // Dirty pages are not dropped: write them back first.
        file.sync_data().map_err(io(path))?;
        fadvise_dontneed(&file).map_err(io(path))?;
    }
    Ok(())
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn fadvise_dontneed(file: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: posix_fadvise takes a file descriptor this function borrows for the call and no
    // pointers; it only advises the kernel about the file's cached pages.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(rc))
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn fadvise_dontneed(_: &File) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn file_residency(path: &Path) -> Result<Residency> {
    let file = File::open(path).map_err(io(path))?;
    let len = file.metadata().map_err(io(path))?.len();
    if len == 0 {
        // Nothing to map (an empty map is refused) and nothing to hold.
        return Ok(Residency::default());
    }
    // SAFETY: a read-only private map, never read here: mincore only asks which of its pages
    // are in memory. A file truncated meanwhile cannot fault this code, which touches no page.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io(path))?;
    // SAFETY: sysconf takes no pointers.
    let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
        .ok()
        .filter(|&p| p > 0)
        .unwrap_or(4096);
    let pages = usize::try_from(len.div_ceil(page)).map_err(|_| Error::Io {
        path: path.to_path_buf(),
        source: std::io::ErrorKind::FileTooLarge.into(),
    })?;
    let mut flags = vec![0u8; pages];
    // SAFETY: the map is `map.len()` bytes at a page-aligned address; `flags` has one byte for
    // each of its pages, as mincore writes.
    let rc = unsafe {
        libc::mincore(
            map.as_ptr().cast_mut().cast(),
            map.len(),
            flags.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(io(path)(std::io::Error::last_os_error()));
    }
    let held: u64 = flags.iter().map(|f| u64::from(f & 1)).sum();
    let last_page_short = (pages as u64 * page).saturating_sub(len);
    let last_held = flags.last().is_some_and(|f| f & 1 == 1);
    Ok(Residency {
        resident_bytes: held * page - if last_held { last_page_short } else { 0 },
        total_bytes: len,
    })
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn file_residency(path: &Path) -> Result<Residency> {
    Err(io(path)(std::io::ErrorKind::Unsupported.into()))
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn a_file_just_written_is_resident_and_eviction_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, vec![7u8; 3 * 4096 + 100]).unwrap();
        let paths = vec![path.clone()];
        let before = residency(&paths).unwrap();
        assert_eq!(before.total_bytes, 3 * 4096 + 100);
        assert!(before.resident_bytes <= before.total_bytes);
        // Read it whole: now every page is in memory.
        let _ = std::fs::read(&path).unwrap();
        let after = residency(&paths).unwrap();
        assert_eq!(after.resident_bytes, after.total_bytes);
        // Some filesystems (tmpfs) cannot drop pages; the advice must still be accepted, and
        // never make more of the file resident.
        evict(&paths).unwrap();
        assert!(residency(&paths).unwrap().resident_bytes <= before.total_bytes);
    }

    #[test]
    fn empty_and_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        let r = residency(&[empty]).unwrap();
        assert_eq!(r.total_bytes, 0);
        assert!(
            r.fraction() > 0.999,
            "no bytes: nothing missing from memory"
        );
        let missing = dir.path().join("missing");
        assert!(residency(std::slice::from_ref(&missing)).is_err());
        assert!(evict(&[missing]).is_err());
    }
}
