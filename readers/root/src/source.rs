//! Positioned reads from a file or an in-memory buffer.
//!
//! Reads go through `pread` (no shared cursor), so many threads can fetch baskets at once
//! without a lock, and nothing is mapped: the resident memory of a scan is what the reader
//! keeps, not the file size.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where the bytes of a ROOT file come from.
#[derive(Debug)]
pub(crate) enum Source {
    File { file: File, path: PathBuf, len: u64 },
    Memory(Vec<u8>),
}

impl Source {
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        Ok(Self::File {
            file,
            path: path.to_path_buf(),
            len,
        })
    }

    pub(crate) fn len(&self) -> u64 {
        match self {
            Self::File { len, .. } => *len,
            Self::Memory(v) => v.len() as u64,
        }
    }

    pub(crate) fn name(&self) -> String {
        match self {
            Self::File { path, .. } => path.display().to_string(),
            Self::Memory(_) => "<memory>".to_string(),
        }
    }

    fn check(&self, what: &'static str, offset: u64, len: usize) -> Result<()> {
        let have = self.len().saturating_sub(offset);
        if offset > self.len() || len as u64 > have {
            return Err(Error::Truncated {
                what,
                offset,
                need: len as u64,
                have,
            });
        }
        Ok(())
    }

    /// Reads exactly `len` bytes at `offset` into `buf` (resized).
    pub(crate) fn read_into(
        &self,
        what: &'static str,
        offset: u64,
        len: usize,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        self.check(what, offset, len)?;
        match self {
            Self::Memory(v) => {
                buf.clear();
                let start = usize::try_from(offset).unwrap_or(usize::MAX);
                let s = v
                    .get(start..start.saturating_add(len))
                    .ok_or(Error::Truncated {
                        what,
                        offset,
                        need: len as u64,
                        have: 0,
                    })?;
                buf.extend_from_slice(s);
            }
            Self::File { file, path, .. } => {
                // Every byte is overwritten by the read: only growth needs filling.
                buf.resize(len, 0);
                read_exact_at(file, buf, offset).map_err(|source| Error::Io {
                    path: path.clone(),
                    source,
                })?;
            }
        }
        Ok(())
    }

    pub(crate) fn read(&self, what: &'static str, offset: u64, len: usize) -> Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.read_into(what, offset, len, &mut buf)?;
        Ok(buf)
    }

    /// Reads up to `len` bytes at `offset` (fewer at the end of the file).
    pub(crate) fn read_up_to(
        &self,
        what: &'static str,
        offset: u64,
        len: usize,
    ) -> Result<Vec<u8>> {
        let avail = usize::try_from(self.len().saturating_sub(offset)).unwrap_or(usize::MAX);
        self.read(what, offset, len.min(avail))
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        let n = file.seek_read(buf, offset)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf = &mut buf[n..];
        offset += n as u64;
    }
    Ok(())
}
