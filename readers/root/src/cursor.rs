//! A bounds-checked big-endian reader over a byte slice.
//!
//! Every read checks the remaining length and returns [`Error::Truncated`] instead of panicking.
//! Positions are relative to an `origin`, so that object streaming can use ROOT's key-relative
//! coordinates (a payload is read as if the key header were in front of it, see the format
//! reference §4.1).

use crate::error::{Error, Result};

/// Cursor over a byte slice.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    /// Added to `pos` to give the position reported in errors and used as a ROOT reference key.
    origin: u64,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(data: &'a [u8], origin: u64, what: &'static str) -> Self {
        Self {
            data,
            pos: 0,
            origin,
            what,
        }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Position in the origin's coordinates (e.g. key-relative).
    pub(crate) fn abs_pos(&self) -> u64 {
        self.origin + self.pos as u64
    }

    pub(crate) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub(crate) fn truncated(&self, need: usize) -> Error {
        Error::Truncated {
            what: self.what,
            offset: self.abs_pos(),
            need: need as u64,
            have: self.remaining() as u64,
        }
    }

    pub(crate) fn corrupt(&self, detail: impl Into<String>) -> Error {
        Error::corrupt(self.what, self.abs_pos(), detail)
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len());
        match end {
            Some(end) => {
                let out = self
                    .data
                    .get(self.pos..end)
                    .ok_or_else(|| self.truncated(n))?;
                self.pos = end;
                Ok(out)
            }
            None => Err(self.truncated(n)),
        }
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let b = self.bytes(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    pub(crate) fn skip(&mut self, n: usize) -> Result<()> {
        self.bytes(n).map(|_| ())
    }

    /// Moves to an absolute position in the origin's coordinates.
    pub(crate) fn seek_abs(&mut self, abs: u64) -> Result<()> {
        let rel = abs
            .checked_sub(self.origin)
            .and_then(|r| usize::try_from(r).ok())
            .filter(|&r| r <= self.data.len())
            .ok_or_else(|| self.corrupt(format!("jump to position {abs} outside the buffer")))?;
        self.pos = rel;
        Ok(())
    }

    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array()?))
    }
    pub(crate) fn i16(&mut self) -> Result<i16> {
        Ok(i16::from_be_bytes(self.array()?))
    }
    pub(crate) fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    pub(crate) fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array()?))
    }
    pub(crate) fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array()?))
    }
    pub(crate) fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_be_bytes(self.array()?))
    }

    /// A ROOT short string: u8 length (255 => u32 length follows), then the bytes.
    pub(crate) fn string(&mut self) -> Result<String> {
        let n = self.u8()?;
        let len = if n == 255 {
            self.u32()? as usize
        } else {
            usize::from(n)
        };
        let b = self.bytes(len)?;
        Ok(String::from_utf8_lossy(b).into_owned())
    }

    /// A NUL-terminated C string (class names in object tags).
    pub(crate) fn cstring(&mut self) -> Result<String> {
        let rest = self.data.get(self.pos..).unwrap_or_default();
        let nul = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| self.corrupt("unterminated class name"))?;
        let s = String::from_utf8_lossy(rest.get(..nul).unwrap_or_default()).into_owned();
        self.pos += nul + 1;
        Ok(s)
    }

    /// A 32- or 64-bit file offset.
    pub(crate) fn seek(&mut self, large: bool) -> Result<u64> {
        let v = if large {
            self.i64()?
        } else {
            i64::from(self.i32()?)
        };
        u64::try_from(v).map_err(|_| self.corrupt(format!("negative file offset {v}")))
    }

    /// Reads `n` elements through `f`, checking first that at least `n * min_size` bytes remain
    /// so a corrupt count can never cause a huge allocation.
    pub(crate) fn counted<T>(
        &mut self,
        n: i64,
        min_size: usize,
        mut f: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        let n = usize::try_from(n).map_err(|_| self.corrupt(format!("negative count {n}")))?;
        if n.saturating_mul(min_size) > self.remaining() {
            return Err(self.truncated(n.saturating_mul(min_size)));
        }
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(f(self)?);
        }
        Ok(out)
    }
}
