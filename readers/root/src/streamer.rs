//! Object streaming primitives: byte-count/version headers, object pointers and class tags.
//!
//! Positions are key-relative (the payload is read as if the key header preceded it), which is
//! the coordinate system of ROOT's class-tag reference map (format reference §4.4).

use std::collections::HashMap;

use crate::cursor::Cursor;
use crate::error::Result;

const BYTE_COUNT_MASK: u32 = 0x4000_0000;
const NEW_CLASS_TAG: u32 = 0xFFFF_FFFF;
const CLASS_MASK: u32 = 0x8000_0000;
const MAP_OFFSET: u64 = 2;

/// A `bytecount + version` header.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bcv {
    pub(crate) version: u16,
    /// Absolute end of the object, when a byte count was present.
    pub(crate) end: Option<u64>,
}

/// What an object pointer resolved to.
#[derive(Debug)]
pub(crate) enum Pointer {
    Null,
    /// A back reference to an object read earlier (not resolved).
    Reference,
    /// An object of `class` follows at the cursor; `end` is where it ends, if known.
    Object {
        class: String,
        end: Option<u64>,
    },
    /// A class tag the reader cannot resolve; the object has been skipped.
    Skipped,
}

pub(crate) struct Streamer<'a> {
    pub(crate) cur: Cursor<'a>,
    classes: HashMap<u64, String>,
    depth: usize,
}

/// Deepest object nesting accepted (guards recursion on hostile input).
const MAX_DEPTH: usize = 48;

impl<'a> Streamer<'a> {
    pub(crate) fn new(cur: Cursor<'a>) -> Self {
        Self {
            cur,
            classes: HashMap::new(),
            depth: 0,
        }
    }

    pub(crate) fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.cur.corrupt("objects nested too deeply"));
        }
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    pub(crate) fn bcv(&mut self) -> Result<Bcv> {
        let start = self.cur.abs_pos();
        let word = self.cur.u32()?;
        if word & BYTE_COUNT_MASK != 0 {
            let count = u64::from(word & !BYTE_COUNT_MASK);
            let end = self.cur.abs_pos() + count;
            if count < 2 || count > self.cur.remaining() as u64 {
                return Err(self
                    .cur
                    .corrupt(format!("byte count {count} past the buffer")));
            }
            let version = self.cur.u16()?;
            Ok(Bcv {
                version,
                end: Some(end),
            })
        } else {
            self.cur.seek_abs(start)?;
            let version = self.cur.u16()?;
            Ok(Bcv { version, end: None })
        }
    }

    /// Jumps to the end of an object read with [`Self::bcv`], when it is known.
    pub(crate) fn finish(&mut self, bcv: Bcv) -> Result<()> {
        if let Some(end) = bcv.end {
            if end < self.cur.abs_pos() {
                return Err(self.cur.corrupt("object read past its byte count"));
            }
            self.cur.seek_abs(end)?;
        }
        Ok(())
    }

    /// Skips an object that starts with a byte count (TAtt*, TIOFeatures, ...).
    pub(crate) fn skip_object(&mut self) -> Result<()> {
        let bcv = self.bcv()?;
        if bcv.end.is_none() {
            return Err(self
                .cur
                .corrupt("object without byte count cannot be skipped"));
        }
        self.finish(bcv)
    }

    pub(crate) fn tobject(&mut self) -> Result<()> {
        let mut version = self.cur.u16()?;
        if version & 0x4000 != 0 {
            // That was the top half of a byte count: skip its bottom half, read the version.
            self.cur.skip(2)?;
            version = self.cur.u16()?;
        }
        let _ = version;
        let _unique_id = self.cur.u32()?;
        let bits = self.cur.u32()?;
        if bits & 0x10 != 0 {
            self.cur.skip(2)?;
        }
        Ok(())
    }

    /// TNamed: returns (name, title).
    pub(crate) fn tnamed(&mut self) -> Result<(String, String)> {
        let bcv = self.bcv()?;
        self.tobject()?;
        let name = self.cur.string()?;
        let title = self.cur.string()?;
        self.finish(bcv)?;
        Ok((name, title))
    }

    /// Reads an object pointer header; on [`Pointer::Object`] the cursor is at the object.
    pub(crate) fn pointer(&mut self) -> Result<Pointer> {
        let beg = self.cur.abs_pos();
        let w1 = self.cur.u32()?;
        if w1 == 0 {
            return Ok(Pointer::Null);
        }
        let (tag, end, tag_pos) = if w1 & BYTE_COUNT_MASK != 0 && w1 != NEW_CLASS_TAG {
            let count = u64::from(w1 & !BYTE_COUNT_MASK);
            if count > self.cur.remaining() as u64 {
                return Err(self
                    .cur
                    .corrupt(format!("object byte count {count} past the buffer")));
            }
            let tag_pos = self.cur.abs_pos();
            (self.cur.u32()?, Some(beg + 4 + count), tag_pos)
        } else {
            (w1, None, beg)
        };
        if tag == NEW_CLASS_TAG {
            let class = self.cur.cstring()?;
            self.classes.insert(tag_pos + MAP_OFFSET, class.clone());
            return Ok(Pointer::Object { class, end });
        }
        if tag & CLASS_MASK != 0 {
            let key = u64::from(tag & !CLASS_MASK);
            if let Some(class) = self.classes.get(&key) {
                return Ok(Pointer::Object {
                    class: class.clone(),
                    end,
                });
            }
            return match end {
                Some(end) => {
                    self.cur.seek_abs(end)?;
                    Ok(Pointer::Skipped)
                }
                None => Err(self.cur.corrupt(format!("unknown class reference {key}"))),
            };
        }
        Ok(Pointer::Reference)
    }

    /// Reads a TObjArray header; returns the number of elements that follow.
    pub(crate) fn tobjarray_header(&mut self) -> Result<(Bcv, usize)> {
        let bcv = self.bcv()?;
        self.tobject()?;
        let _name = self.cur.string()?;
        let n = self.cur.i32()?;
        let _low = self.cur.i32()?;
        let n = usize::try_from(n).map_err(|_| self.cur.corrupt(format!("negative count {n}")))?;
        if n.saturating_mul(4) > self.cur.remaining() {
            return Err(self.cur.truncated(n.saturating_mul(4)));
        }
        Ok((bcv, n))
    }

    /// `u8 flag` + `n` big-endian i32 (a basic pointer array member).
    pub(crate) fn i32_array(&mut self, n: usize) -> Result<Vec<i32>> {
        if self.cur.u8()? == 0 {
            return Ok(Vec::new());
        }
        self.cur.counted(n as i64, 4, Cursor::i32)
    }

    /// `u8 flag` + `n` big-endian i64.
    pub(crate) fn i64_array(&mut self, n: usize) -> Result<Vec<i64>> {
        if self.cur.u8()? == 0 {
            return Ok(Vec::new());
        }
        self.cur.counted(n as i64, 8, Cursor::i64)
    }
}
