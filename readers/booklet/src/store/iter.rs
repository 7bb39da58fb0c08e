//! Iteration in file order: the data regions around a relocated index, the [`Iter`] over their
//! blocks (mapped, or through a read-ahead chunk) with its items [`Entry`] and [`Location`], and
//! `iter`, `keys`, `values`, `locations`.

use std::borrow::Cow;

use super::{Booklet, u48};
use crate::error::{Error, Result};
use crate::format::{N_BYTES_FILE, POS_FIRST_DATA, SUB_INDEX_INIT_POS, is_reserved_key};

/// One item of an iteration. Keys and values borrow from the memory map when the file is
/// mapped, and are owned copies in buffered mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Stored key bytes.
    pub key: Cow<'a, [u8]>,
    /// Stored value bytes.
    pub value: Cow<'a, [u8]>,
    /// Item timestamp (µs since the Unix epoch) when the file has timestamps.
    pub timestamp: Option<u64>,
    /// Offset of the data block.
    pub offset: u64,
}

/// Where a live value lies in the file (see [`Booklet::locations`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location<'a> {
    /// Stored key bytes.
    pub key: Cow<'a, [u8]>,
    /// Item timestamp (µs since the Unix epoch) when the file has timestamps.
    pub timestamp: Option<u64>,
    /// File offset of the stored value bytes.
    pub value_offset: u64,
    /// Length of the stored value bytes.
    pub value_len: u64,
}

impl Booklet {
    /// The data regions in file order: `[first_data, index_offset)` and
    /// `[index_offset + 6n, EOF)` for a relocated index, else `[first_data, EOF)`.
    pub(super) fn regions(&self) -> Result<Vec<(u64, u64)>> {
        let end = self.st.len();
        let h = &self.header;
        if h.index_offset != SUB_INDEX_INIT_POS {
            let mut v = vec![(h.first_data_block_pos, h.index_offset)];
            let start2 = h.index_offset + h.n_buckets * N_BYTES_FILE;
            if start2 < end {
                v.push((start2, end));
            }
            Ok(v)
        } else {
            if h.first_data_block_pos > end {
                return Err(Error::corrupt(
                    POS_FIRST_DATA,
                    "first data block past the end of the file",
                ));
            }
            Ok(vec![(h.first_data_block_pos, end)])
        }
    }

    pub(super) fn scan(&self, want_value: bool) -> Iter<'_> {
        let regions = self.regions();
        let (regions, err) = match regions {
            Ok(r) => (r, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        if want_value {
            for (s, e) in &regions {
                self.st.advise(false, *s, e - s);
            }
        }
        let pos = regions.first().map_or(0, |r| r.0);
        Iter {
            bk: self,
            regions,
            region: 0,
            pos,
            chunk: Vec::new(),
            chunk_start: 0,
            pending_err: err,
            done: false,
        }
    }

    /// Iterate over all items in file order (syncs buffered writes first). Reserved keys
    /// (metadata, slots) and deleted blocks are skipped.
    pub fn iter(&mut self) -> Result<Iter<'_>> {
        self.sync()?;
        Ok(self.scan(true))
    }

    /// Iterate over the stored keys.
    pub fn keys(&mut self) -> Result<impl Iterator<Item = Result<Cow<'_, [u8]>>>> {
        Ok(self.iter()?.map(|e| e.map(|e| e.key)))
    }

    /// Iterate over the stored values.
    pub fn values(&mut self) -> Result<impl Iterator<Item = Result<Cow<'_, [u8]>>>> {
        Ok(self.iter()?.map(|e| e.map(|e| e.value)))
    }

    /// Where every live value lies in the file, in file order (Python's `locations()`): key,
    /// item timestamp, and the offset and length of the stored value bytes, for reading them
    /// through another handle. Syncs first. Offsets stay valid across set, delete and reindex
    /// (blocks are append-only) and are invalidated by prune and clear.
    pub fn locations(&mut self) -> Result<impl Iterator<Item = Result<Location<'_>>>> {
        let skip = self.hdr_len + self.ts_len;
        Ok(self.iter()?.map(move |e| {
            e.map(|e| Location {
                value_offset: e.offset + skip + e.key.len() as u64,
                value_len: e.value.len() as u64,
                timestamp: e.timestamp,
                key: e.key,
            })
        }))
    }
}

/// Iterator over the items of a [`Booklet`], in file order.
pub struct Iter<'a> {
    bk: &'a Booklet,
    regions: Vec<(u64, u64)>,
    region: usize,
    pos: u64,
    chunk: Vec<u8>,
    chunk_start: u64,
    pending_err: Option<Error>,
    done: bool,
}

const CHUNK: usize = 256 * 1024;

impl<'a> Iter<'a> {
    /// Bytes [off, off+n) in buffered mode, refilling the read-ahead chunk within `end`.
    fn chunk_bytes(&mut self, off: u64, n: usize, end: u64) -> Result<&[u8]> {
        let have =
            off >= self.chunk_start && off + n as u64 <= self.chunk_start + self.chunk.len() as u64;
        if !have {
            let want = (end - off).min(CHUNK.max(n) as u64) as usize;
            let want = want.max(n);
            self.chunk.resize(want, 0);
            self.bk.st.read_into(off, &mut self.chunk)?;
            self.chunk_start = off;
        }
        let s = (off - self.chunk_start) as usize;
        self.chunk
            .get(s..s + n)
            .ok_or_else(|| Error::corrupt(off, "read-ahead chunk too short"))
    }

    fn step(&mut self) -> Result<Option<Entry<'a>>> {
        let bk = self.bk;
        let hl = bk.hdr_len;
        loop {
            let Some(&(_, end)) = self.regions.get(self.region) else {
                return Ok(None);
            };
            if self.pos >= end {
                self.region += 1;
                if let Some(&(s, _)) = self.regions.get(self.region) {
                    self.pos = s;
                }
                continue;
            }
            let pos = self.pos;
            if pos + hl > end {
                return Err(Error::corrupt(pos, "truncated data block header"));
            }
            let mut head = [0u8; 25];
            match bk.st.slice(pos, hl as usize)? {
                Some(s) => head[..hl as usize].copy_from_slice(s),
                None => {
                    let s = self.chunk_bytes(pos, hl as usize, end)?;
                    head[..hl as usize].copy_from_slice(s);
                }
            }
            let next = u48(&head[13..19]);
            let klen = u64::from(u16::from_le_bytes([head[19], head[20]]));
            let vlen = bk.vlen_of(&head[..hl as usize]);
            let body = bk.ts_len + klen + vlen;
            let total = hl + body;
            if pos + total > end {
                return Err(Error::corrupt(
                    pos,
                    format!("data block of {total} bytes runs past its region end {end}"),
                ));
            }
            self.pos = pos + total;
            if next == 0 {
                continue;
            }
            let body_n = body as usize;
            let (ts, key, value): (Option<u64>, Cow<'a, [u8]>, Cow<'a, [u8]>) =
                match bk.st.slice(pos + hl, body_n)? {
                    Some(b) => {
                        let (t, kv) = b.split_at(bk.ts_len as usize);
                        let (k, v) = kv.split_at(klen as usize);
                        (ts_of(t), Cow::Borrowed(k), Cow::Borrowed(v))
                    }
                    None => {
                        let ts_len = bk.ts_len as usize;
                        let b = self.chunk_bytes(pos + hl, body_n, end)?;
                        let (t, kv) = b.split_at(ts_len);
                        let (k, v) = kv.split_at(klen as usize);
                        (ts_of(t), Cow::Owned(k.to_vec()), Cow::Owned(v.to_vec()))
                    }
                };
            if is_reserved_key(&key) {
                continue;
            }
            return Ok(Some(Entry {
                key,
                value,
                timestamp: ts,
                offset: pos,
            }));
        }
    }
}

fn ts_of(t: &[u8]) -> Option<u64> {
    if t.is_empty() {
        return None;
    }
    let mut b = [0u8; 8];
    b[..t.len().min(8)].copy_from_slice(&t[..t.len().min(8)]);
    Some(u64::from_le_bytes(b))
}

impl Iter<'_> {
    /// After a full iteration, give the pages of the data regions back to the OS (seed 003:
    /// `MADV_DONTNEED` after iteration), unless the handle was opened with
    /// `release_pages(false)`. The read-ahead chunk of a buffered scan is freed too.
    fn release_pages(&mut self) {
        self.chunk = Vec::new();
        if self.bk.opts.release_pages {
            for &(start, end) in &self.regions {
                self.bk.st.release(start, end.saturating_sub(start));
            }
        }
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = Result<Entry<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some(e) = self.pending_err.take() {
            self.done = true;
            return Some(Err(e));
        }
        match self.step() {
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => {
                self.done = true;
                self.release_pages();
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
