//! The little-endian building blocks of RNTuple metadata: a bounds-checked reader, frames,
//! locators, envelope links and envelopes with their XXH3 checksums.
//!
//! ```text
//! envelope:  u64 (type id: bits 0-15, length: bits 16-63) | payload | u64 XXH3 of all before
//! frame:     i64 size (< 0: list frame, then u32 item count) | payload, `|size|` bytes in all
//! locator:   i32 size (>= 0) | u64 offset                          (on-disk)
//!            u32 (size of locator: bits 0-15, type: -(bits 24-31) as i8) | payload  (other)
//! ```
//!
//! Frames are always left through their size, never by summing what was read inside them, so
//! that records grown by later format versions are skipped cleanly.

use crate::error::{Error, Result};

/// A bounds-checked little-endian reader over a metadata buffer.
#[derive(Debug, Clone)]
pub(crate) struct Le<'a> {
    data: &'a [u8],
    pos: usize,
    what: &'static str,
}

impl<'a> Le<'a> {
    pub(crate) fn new(data: &'a [u8], what: &'static str) -> Self {
        Self { data, pos: 0, what }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub(crate) fn truncated(&self, need: usize) -> Error {
        Error::Truncated {
            what: self.what,
            offset: self.pos as u64,
            need: need as u64,
            have: self.remaining() as u64,
        }
    }

    pub(crate) fn corrupt(&self, detail: impl Into<String>) -> Error {
        Error::corrupt(self.what, self.pos as u64, detail)
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| self.truncated(n))?;
        let out = self
            .data
            .get(self.pos..end)
            .ok_or_else(|| self.truncated(n))?;
        self.pos = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    pub(crate) fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    pub(crate) fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub(crate) fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_le_bytes(self.array()?))
    }
    pub(crate) fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    pub(crate) fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    pub(crate) fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    /// A string: u32 length, then the bytes (UTF-8; invalid bytes replaced).
    pub(crate) fn string(&mut self) -> Result<String> {
        let n = self.u32()? as usize;
        Ok(String::from_utf8_lossy(self.bytes(n)?).into_owned())
    }

    /// Enters a frame: returns a reader over its payload (after the size and, for list frames,
    /// the item count) and the item count (`None` for a record frame); `self` moves past it.
    pub(crate) fn frame(&mut self) -> Result<(Le<'a>, Option<u32>)> {
        let start = self.pos;
        let size = self.i64()?;
        let list = size < 0;
        let len = usize::try_from(size.unsigned_abs()).map_err(|_| self.corrupt("frame size"))?;
        let head = if list { 12 } else { 8 };
        if len < head {
            return Err(self.corrupt(format!("frame of {len} bytes, shorter than its preamble")));
        }
        let items = if list { Some(self.u32()?) } else { None };
        let end = start
            .checked_add(len)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| Error::Truncated {
                what: self.what,
                offset: start as u64,
                need: len as u64,
                have: (self.data.len() - start) as u64,
            })?;
        let inner = Le {
            data: self.data.get(..end).unwrap_or_default(),
            pos: start + head,
            what: self.what,
        };
        self.pos = end;
        Ok((inner, items))
    }

    /// A record frame, read by `f` (bytes `f` leaves unread are skipped).
    pub(crate) fn record<T>(&mut self, f: impl FnOnce(&mut Le<'a>) -> Result<T>) -> Result<T> {
        let (mut inner, items) = self.frame()?;
        if items.is_some() {
            return Err(self.corrupt("list frame where a record frame belongs"));
        }
        f(&mut inner)
    }

    /// A list frame whose items (each at least `min_item` bytes) are read by `f`; a corrupt
    /// count cannot allocate more than the frame's bytes justify.
    pub(crate) fn list<T>(
        &mut self,
        min_item: usize,
        mut f: impl FnMut(&mut Le<'a>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let (mut inner, items) = self.frame()?;
        let n = items.ok_or_else(|| self.corrupt("record frame where a list frame belongs"))?;
        let n = n as usize;
        if n.saturating_mul(min_item.max(1)) > inner.remaining() {
            return Err(inner.corrupt(format!(
                "{n} list items cannot fit in {} bytes",
                inner.remaining()
            )));
        }
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(f(&mut inner)?);
        }
        Ok(out)
    }

    /// A locator.
    pub(crate) fn locator(&mut self) -> Result<Locator> {
        let start = self.pos;
        let head = self.i32()?;
        if head >= 0 {
            let offset = self.u64()?;
            return Ok(Locator {
                offset,
                size: u64::from(head.unsigned_abs()),
            });
        }
        let bits = u32::from_le_bytes(head.to_le_bytes());
        let own = (bits & 0xffff) as usize;
        let kind = i8::from_le_bytes([(bits >> 24) as u8]).unsigned_abs();
        if kind != 0x01 {
            return Err(Error::corrupt(
                self.what,
                start as u64,
                format!("locator of type {kind:#04x} (only on-disk locators can be read)"),
            ));
        }
        let size = self.u64()?;
        let offset = self.u64()?;
        // The locator says how long it is: skip what a later version may have appended.
        let end = start.checked_add(own).filter(|&e| e >= self.pos);
        match end {
            Some(end) if end <= self.data.len() => self.pos = end,
            _ => {
                return Err(Error::corrupt(
                    self.what,
                    start as u64,
                    format!("large locator claims {own} bytes"),
                ));
            }
        }
        Ok(Locator { offset, size })
    }

    /// An envelope link: the uncompressed length, then a locator.
    pub(crate) fn envelope_link(&mut self) -> Result<EnvelopeLink> {
        let length = self.u64()?;
        let locator = self.locator()?;
        Ok(EnvelopeLink { length, locator })
    }
}

/// A byte range of the file: where a page or an envelope is stored (compressed size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Locator {
    /// Offset from the start of the file.
    pub offset: u64,
    /// Bytes stored.
    pub size: u64,
}

/// Where an envelope is and how long it is once decompressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvelopeLink {
    /// Uncompressed length of the envelope (preamble and checksum included).
    pub length: u64,
    /// Where its (possibly compressed) bytes are.
    pub locator: Locator,
}

/// The envelope types of the format, with their permanent ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum EnvelopeType {
    /// The schema.
    Header = 0x01,
    /// Cluster groups and the schema extension.
    Footer = 0x02,
    /// Cluster summaries and page locations.
    PageList = 0x03,
}

/// An envelope, checked: its type, its stated length and its XXH3 checksum.
#[derive(Debug, Clone)]
pub(crate) struct Envelope {
    /// The whole envelope, preamble and checksum included.
    bytes: Vec<u8>,
    /// The stored checksum (the header's is repeated in the footer and the page lists).
    pub(crate) checksum: u64,
}

impl Envelope {
    /// Checks an uncompressed envelope of `expected` type.
    pub(crate) fn parse(bytes: Vec<u8>, expected: EnvelopeType) -> Result<Self> {
        let what = "RNTuple envelope";
        let n = bytes.len();
        if n < 16 {
            return Err(Error::Truncated {
                what,
                offset: 0,
                need: 16,
                have: n as u64,
            });
        }
        let mut le = Le::new(&bytes, what);
        let preamble = le.u64()?;
        let kind = (preamble & 0xffff) as u16;
        let length = preamble >> 16;
        if kind != expected as u16 {
            return Err(Error::corrupt(
                what,
                0,
                format!("envelope type {kind:#x}, expected {:#x}", expected as u16),
            ));
        }
        if length != n as u64 {
            return Err(Error::corrupt(
                what,
                0,
                format!("envelope says {length} bytes, its link {n}"),
            ));
        }
        let (body, tail) = bytes.split_at(n - 8);
        let mut t = [0u8; 8];
        t.copy_from_slice(tail);
        let stored = u64::from_le_bytes(t);
        let computed = xxhash_rust::xxh3::xxh3_64(body);
        if stored != computed {
            return Err(Error::Checksum {
                what: "RNTuple envelope",
                offset: 0,
                stored,
                computed,
            });
        }
        Ok(Self {
            bytes,
            checksum: stored,
        })
    }

    /// A reader over the payload (between the preamble and the checksum).
    pub(crate) fn payload(&self, what: &'static str) -> Le<'_> {
        let end = self.bytes.len().saturating_sub(8);
        Le::new(self.bytes.get(8..end).unwrap_or_default(), what)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn envelope(kind: u16, payload: &[u8]) -> Vec<u8> {
        let len = (payload.len() + 16) as u64;
        let mut out = ((len << 16) | u64::from(kind)).to_le_bytes().to_vec();
        out.extend_from_slice(payload);
        let sum = xxhash_rust::xxh3::xxh3_64(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    #[test]
    fn envelope_checksum_and_type_are_checked() {
        let good = envelope(2, b"abc");
        let env = Envelope::parse(good.clone(), EnvelopeType::Footer).unwrap();
        assert_eq!(env.payload("t").bytes(3).unwrap(), b"abc");
        assert!(Envelope::parse(good.clone(), EnvelopeType::Header).is_err());
        let mut bad = good.clone();
        bad[9] ^= 1;
        assert!(matches!(
            Envelope::parse(bad, EnvelopeType::Footer),
            Err(Error::Checksum { .. })
        ));
        assert!(Envelope::parse(good[..10].to_vec(), EnvelopeType::Footer).is_err());
    }

    #[test]
    fn frames_are_left_through_their_size() {
        // A record frame of 8 + 6 bytes (a u32 read, 2 bytes unread), then a list frame of two
        // u16 items, then a trailing byte.
        let mut b = 14i64.to_le_bytes().to_vec();
        b.extend_from_slice(&7u32.to_le_bytes());
        b.extend_from_slice(&[0xee, 0xee]);
        b.extend_from_slice(&(-16i64).to_le_bytes());
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(&[1, 0, 2, 0, 9]);
        let mut le = Le::new(&b, "t");
        assert_eq!(le.record(Le::u32).unwrap(), 7);
        assert_eq!(le.list(2, Le::u16).unwrap(), vec![1, 2]);
        assert_eq!(le.remaining(), 1);
    }

    #[test]
    fn hostile_frames_fail() {
        // A size past the end, a size shorter than the preamble, an absurd item count.
        for size in [100i64, 4, i64::MIN] {
            let mut b = size.to_le_bytes().to_vec();
            b.extend_from_slice(&[0; 8]);
            assert!(Le::new(&b, "t").frame().is_err(), "{size}");
        }
        let mut b = (-12i64).to_le_bytes().to_vec();
        b.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(Le::new(&b, "t").list(1, Le::u16).is_err());
    }

    #[test]
    fn locators() {
        let mut b = 100i32.to_le_bytes().to_vec();
        b.extend_from_slice(&5000u64.to_le_bytes());
        // A large locator: 20 bytes, type 1 stored as -1 in the top byte.
        b.extend_from_slice(&(0xff00_0014u32).to_le_bytes());
        b.extend_from_slice(&(1u64 << 33).to_le_bytes());
        b.extend_from_slice(&77u64.to_le_bytes());
        let mut le = Le::new(&b, "t");
        assert_eq!(
            le.locator().unwrap(),
            Locator {
                offset: 5000,
                size: 100
            }
        );
        assert_eq!(
            le.locator().unwrap(),
            Locator {
                offset: 77,
                size: 1 << 33
            }
        );
        // An object-store locator (type 2) is refused.
        let b = 0xfe00_0010u32.to_le_bytes();
        assert!(Le::new(&b, "t").locator().is_err());
    }
}
