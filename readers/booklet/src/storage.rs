//! Byte access to the open file: either a memory map or positioned `pread`/`pwrite` calls.
//!
//! Every read is bounds-checked against the length this handle knows, so a pointer read from
//! a corrupted file yields [`Error::Corrupt`] instead of a panic or a read past the end.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::map::Mapping;

/// How a handle reads its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadMode {
    /// Memory-map the file (the default): lookups and scans are plain memory reads.
    #[default]
    Mmap,
    /// Positioned reads (`pread`) for lookups and 256 KiB read-ahead chunks for scans, like
    /// Python booklet's write-mode file I/O.
    Buffered,
}

pub(crate) struct Storage {
    file: File,
    path: PathBuf,
    len: u64,
    map: Option<Mapping>,
    writable: bool,
    /// Writable maps: the end of the bytes whose pages are mapped or fault one by one; pages
    /// appended after it are prefaulted together on the first write through the map there.
    populated_to: u64,
}

impl Storage {
    pub(crate) fn new(file: File, path: &Path, writable: bool, mode: ReadMode) -> Result<Self> {
        let len = file.metadata().map_err(|e| io_err(path, e))?.len();
        let mut s = Storage {
            file,
            path: path.to_path_buf(),
            len,
            map: None,
            writable,
            populated_to: len,
        };
        if mode == ReadMode::Mmap {
            // A placeholder so remap() knows to map; replaced immediately.
            s.map = Some(Mapping::new(&s.file, 0, writable).map_err(|e| io_err(path, e))?);
            s.remap()?;
        }
        Ok(s)
    }

    #[inline]
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    pub(crate) fn is_mapped(&self) -> bool {
        self.map.is_some()
    }

    fn remap(&mut self) -> Result<()> {
        if let Some(m) = self.map.as_mut() {
            // Grow in place (mremap keeps the page-table entries of touched pages); map afresh
            // when that is not possible (an empty placeholder mapping, or mremap failing).
            let old = m.bytes().len() as u64;
            let grown = old > 0 && old <= self.len && m.grow(self.len).is_ok();
            if !grown {
                self.populated_to = self.len;
                self.map = None;
                self.map = Some(
                    Mapping::new(&self.file, self.len, self.writable)
                        .map_err(|e| io_err(&self.path, e))?,
                );
            }
        }
        Ok(())
    }

    #[inline]
    fn check(&self, off: u64, n: usize) -> Result<usize> {
        let end = off.checked_add(n as u64);
        match end {
            Some(end) if end <= self.len => {
                usize::try_from(off).map_err(|_| Error::corrupt(off, "offset overflows usize"))
            }
            _ => Err(Error::corrupt(
                off,
                format!(
                    "read of {n} bytes past the end of the file ({} bytes)",
                    self.len
                ),
            )),
        }
    }

    /// The whole file as mapped bytes (None if not mapped).
    #[inline]
    pub(crate) fn mapped(&self) -> Option<&[u8]> {
        let m = self.map.as_ref()?;
        m.bytes().get(..usize::try_from(self.len).ok()?)
    }

    /// Borrow `n` bytes at `off` from the mapping (None if not mapped).
    #[inline]
    pub(crate) fn slice(&self, off: u64, n: usize) -> Result<Option<&[u8]>> {
        match &self.map {
            Some(m) => {
                let start = self.check(off, n)?;
                let bytes = m
                    .bytes()
                    .get(start..start + n)
                    .ok_or_else(|| Error::corrupt(off, "mapping shorter than file"))?;
                Ok(Some(bytes))
            }
            None => Ok(None),
        }
    }

    /// Fill `buf` from `off`.
    #[inline]
    pub(crate) fn read_into(&self, off: u64, buf: &mut [u8]) -> Result<()> {
        if let Some(s) = self.slice(off, buf.len())? {
            buf.copy_from_slice(s);
            return Ok(());
        }
        self.check(off, buf.len())?;
        self.file
            .read_exact_at(buf, off)
            .map_err(|e| io_err(&self.path, e))
    }

    /// Read `n` bytes at `off` into a new vector (bounds-checked before allocating).
    pub(crate) fn read_vec(&self, off: u64, n: usize) -> Result<Vec<u8>> {
        self.check(off, n)?;
        let mut v = vec![0u8; n];
        self.read_into(off, &mut v)?;
        Ok(v)
    }

    /// Read a 6-byte little-endian pointer.
    #[inline]
    pub(crate) fn read_u48(&self, off: u64) -> Result<u64> {
        let mut b = [0u8; 8];
        self.read_into(off, &mut b[..6])?;
        Ok(u64::from_le_bytes(b))
    }

    /// Write `data` at `off`, extending the file if needed.
    pub(crate) fn write_at(&mut self, off: u64, data: &[u8]) -> Result<()> {
        let end = off
            .checked_add(data.len() as u64)
            .ok_or_else(|| Error::corrupt(off, "write offset overflows"))?;
        if end <= self.len && self.map.as_ref().is_some_and(Mapping::is_writable) {
            let start =
                usize::try_from(off).map_err(|_| Error::corrupt(off, "offset overflows usize"))?;
            if end > self.populated_to {
                self.populate_appended();
            }
            if let Some(dst) = self
                .map
                .as_mut()
                .and_then(Mapping::bytes_mut)
                .and_then(|m| m.get_mut(start..start + data.len()))
            {
                dst.copy_from_slice(data);
                return Ok(());
            }
        }
        self.file
            .write_all_at(data, off)
            .map_err(|e| io_err(&self.path, e))?;
        if end > self.len {
            self.len = end;
            self.remap()?;
        }
        Ok(())
    }

    /// Prefault the pages appended since the last write through the map, on the first write
    /// into them: writes through the map tend to follow there (links, tombstones), and one
    /// prefault of the whole range costs less than a write fault per page, while appends never
    /// written through the map (a file written once and closed) never pay for it.
    fn populate_appended(&mut self) {
        let from = self.populated_to;
        self.populated_to = self.len;
        if let (Some(map), Ok(o), Ok(n)) = (
            &self.map,
            usize::try_from(from),
            usize::try_from(self.len.saturating_sub(from)),
        ) {
            map.populate(o, n);
        }
    }

    /// Write a few bytes whose length is known at compile time: a plain store into the map
    /// when the pages there are already prepared, else [`Storage::write_at`].
    #[inline]
    pub(crate) fn write_small<const N: usize>(&mut self, off: u64, data: [u8; N]) -> Result<()> {
        let end = off.saturating_add(N as u64);
        if end <= self.populated_to.min(self.len)
            && let (Some(m), Ok(start)) = (
                self.map.as_mut().and_then(Mapping::bytes_mut),
                usize::try_from(off),
            )
            && let Some(dst) = m.get_mut(start..).and_then(|d| d.first_chunk_mut::<N>())
        {
            *dst = data;
            return Ok(());
        }
        self.write_at(off, &data)
    }

    /// Write a 6-byte little-endian pointer.
    #[inline]
    pub(crate) fn write_u48(&mut self, off: u64, v: u64) -> Result<()> {
        let b = v.to_le_bytes();
        self.write_small(off, [b[0], b[1], b[2], b[3], b[4], b[5]])
    }

    /// Truncate or extend the file to `len` bytes.
    pub(crate) fn set_len(&mut self, len: u64) -> Result<()> {
        // Drop the mapping first: touching mapped pages past a truncation faults.
        let mapped = self.map.is_some();
        if mapped {
            self.map = None;
        }
        self.file.set_len(len).map_err(|e| io_err(&self.path, e))?;
        self.len = len;
        self.populated_to = len;
        if mapped {
            self.map = Some(
                Mapping::new(&self.file, self.len, self.writable)
                    .map_err(|e| io_err(&self.path, e))?,
            );
        }
        Ok(())
    }

    /// `fsync` the file (prune and clear do this, like Python booklet).
    pub(crate) fn sync_all(&self) -> Result<()> {
        self.file.sync_all().map_err(|e| io_err(&self.path, e))
    }

    /// Give the mapped pages of a byte range back to the OS (`MADV_DONTNEED`; no-op without a
    /// mapping). The file's bytes are unchanged; later reads map them again.
    pub(crate) fn release(&self, off: u64, len: u64) {
        if let (Some(m), Ok(off), Ok(len)) = (&self.map, usize::try_from(off), usize::try_from(len))
        {
            m.release(off, len);
        }
    }

    /// Memory advice for a byte range (no-op without a mapping).
    pub(crate) fn advise(&self, random: bool, off: u64, len: u64) {
        if let Some(m) = &self.map {
            let (Ok(off), Ok(len)) = (usize::try_from(off), usize::try_from(len)) else {
                return;
            };
            m.advise(random, off, len);
        }
    }
}

pub(crate) fn io_err(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}
