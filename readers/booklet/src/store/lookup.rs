//! Lookups of one key: the key table's short path over the memory map, the `BLAKE2s` hash walk
//! of the key's bucket chain, keys still in the write buffer, and the methods built on them
//! (`get*` for values, item timestamps, metadata and reserved slots; `contains`).

use std::borrow::Cow;

use super::write::reserved_slot_key;
use super::{Booklet, u48};
use crate::error::{Error, Result};
use crate::format::{KEY_HASH_LEN, KeyHash, Kind, N_BYTES_FILE, bucket_of, hash_key};
use crate::keytable::{KeyTable, VLEN_UNKNOWN};
use crate::serial::{Serializer, decode_str};

impl Booklet {
    /// Find the live block of `hash`: (block offset, key_len, value_len).
    fn locate(&self, hash: &KeyHash) -> Result<Option<(u64, u64, u64)>> {
        let n = self.header.n_buckets;
        let slot = self.header.index_offset + bucket_of(hash, n) * N_BYTES_FILE;
        let mut pos = self.st.read_u48(slot)?;
        if pos <= 1 {
            return Ok(None);
        }
        let mut hops = 0u64;
        let mut buf = [0u8; 25];
        loop {
            let head = self.block_head(pos, &mut buf)?;
            let next = u48(&head[13..19]);
            if next == 0 {
                return Ok(None);
            }
            if head[..KEY_HASH_LEN] == hash[..] {
                let klen = u64::from(u16::from_le_bytes([head[19], head[20]]));
                return Ok(Some((pos, klen, self.vlen_of(head))));
            }
            if next == 1 {
                return Ok(None);
            }
            hops += 1;
            if hops > self.max_hops() {
                return Err(Error::corrupt(pos, "bucket chain does not end (cycle)"));
            }
            pos = next;
        }
    }

    /// The value of `key` straight from the memory map through the key table: a short path
    /// with one table probe and one block, for the common case (mapped file, table built,
    /// value length known). [`Probe::Slow`] sends everything else to [`Booklet::find`].
    #[inline]
    fn probe_mapped(&self, table: &KeyTable, key: &[u8], fast: u64) -> Probe<'_> {
        let Some(bytes) = self.st.mapped() else {
            return Probe::Slow;
        };
        let Some((pos, vlen)) = table.get(fast) else {
            return Probe::Absent;
        };
        if vlen == VLEN_UNKNOWN {
            return Probe::Slow;
        }
        let (Ok(pos), Ok(vlen)) = (usize::try_from(pos), usize::try_from(vlen)) else {
            return Probe::Slow;
        };
        let kstart = self.hdr_len as usize + self.ts_len as usize;
        let vstart = kstart + key.len();
        let Some(block) = pos
            .checked_add(vstart + vlen)
            .and_then(|end| bytes.get(pos..end))
        else {
            return Probe::Slow;
        };
        let (head, body) = block.split_at(kstart);
        let next = u48(&head[13..19]);
        let klen = usize::from(u16::from_le_bytes([head[19], head[20]]));
        let (k, v) = body.split_at(key.len());
        if next == 0
            || klen != key.len()
            || self.vlen_of(head) != vlen as u64
            || !same_bytes(k, key)
        {
            return Probe::Slow;
        }
        Probe::Found(v)
    }

    /// The live block of `key` as (offset, key_len, value_len): through the key table when it
    /// is built, else by a hash walk.
    pub(super) fn find(&self, key: &[u8], fast: u64) -> Result<Option<(u64, u64, u64)>> {
        if let Some(t) = self.key_table() {
            let Some((pos, vlen)) = t.get(fast) else {
                return Ok(None);
            };
            let vlen = (vlen != VLEN_UNKNOWN).then_some(vlen);
            if let Some(found) = self.block_if_key(pos, key, vlen)? {
                return Ok(Some(found));
            }
            // Another key with the same 64-bit hash holds the entry (the table cannot hold
            // both, so `key` is absent): let the hash walk answer.
        }
        self.locate(&hash_key(key))
    }

    /// The header of the block at `pos`: borrowed from the map, or read into `buf`.
    #[inline]
    fn block_head<'a>(&'a self, pos: u64, buf: &'a mut [u8; 25]) -> Result<&'a [u8]> {
        let hl = self.hdr_len as usize;
        Ok(match self.st.slice(pos, hl)? {
            Some(s) => s,
            None => {
                self.st.read_into(pos, &mut buf[..hl])?;
                &buf[..hl]
            }
        })
    }

    /// The block at `pos` as (offset, key_len, value_len) if it is live and holds `key` (and,
    /// when given, has value length `vlen`: the returned length is then the given one, so the
    /// value's address does not wait for the header's load).
    pub(super) fn block_if_key(
        &self,
        pos: u64,
        key: &[u8],
        vlen: Option<u64>,
    ) -> Result<Option<(u64, u64, u64)>> {
        let mut buf = [0u8; 25];
        let head = self.block_head(pos, &mut buf)?;
        let next = u48(&head[13..19]);
        let klen = u64::from(u16::from_le_bytes([head[19], head[20]]));
        let stored_vlen = self.vlen_of(head);
        if next == 0 || klen != key.len() as u64 || vlen.is_some_and(|v| v != stored_vlen) {
            return Ok(None);
        }
        let vlen = vlen.unwrap_or(stored_vlen);
        let kpos = pos + self.hdr_len + self.ts_len;
        let same = match self.st.slice(kpos, key.len())? {
            Some(s) => same_bytes(s, key),
            None => {
                let mut small = [0u8; 64];
                if key.len() <= small.len() {
                    let b = &mut small[..key.len()];
                    self.st.read_into(kpos, b)?;
                    b == key
                } else {
                    self.st.read_vec(kpos, key.len())? == key
                }
            }
        };
        Ok(same.then_some((pos, klen, vlen)))
    }

    fn value_range(&self, pos: u64, klen: u64, vlen: u64) -> Result<(u64, usize)> {
        let start = pos + self.hdr_len + self.ts_len + klen;
        let n = usize::try_from(vlen)
            .map_err(|_| Error::corrupt(pos, "value length overflows usize"))?;
        Ok((start, n))
    }

    /// Key bytes of the buffered block at `off` in `buf_data`.
    pub(super) fn buf_key_at(&self, off: u64) -> Option<&[u8]> {
        let off = usize::try_from(off).ok()?;
        let hl = self.hdr_len as usize;
        let klen = usize::from(u16::from_le_bytes([
            *self.buf_data.get(off + 19)?,
            *self.buf_data.get(off + 20)?,
        ]));
        let k = off + hl + self.ts_len as usize;
        self.buf_data.get(k..k + klen)
    }

    /// Offset in `buf_data` of the latest buffered block of `key`.
    pub(super) fn buffered(&self, key: &[u8], fast: u64) -> Option<u64> {
        if self.buf_keys.is_empty() {
            return None;
        }
        let off = *self.buf_keys.get(&fast)?;
        if self.buf_key_at(off) == Some(key) {
            return Some(off);
        }
        // Two buffered keys with the same 64-bit hash: search the buffer.
        self.buf_index
            .iter()
            .rev()
            .map(|&(o, _)| o)
            .find(|&o| self.buf_key_at(o) == Some(key))
    }

    /// Value bytes of the buffered block at `off`.
    pub(super) fn buf_value_at(&self, off: u64) -> Option<&[u8]> {
        let o = usize::try_from(off).ok()?;
        let key = self.buf_key_at(off)?;
        let head = self.buf_data.get(o..o + self.hdr_len as usize)?;
        let vlen = usize::try_from(self.vlen_of(head)).ok()?;
        let start = o + self.hdr_len as usize + self.ts_len as usize + key.len();
        self.buf_data.get(start..start + vlen)
    }

    /// The stored value bytes of `key`, or None.
    ///
    /// Syncs first if the key is still in the write buffer (as Python does). [`Booklet::get_ref`]
    /// borrows instead of copying and never syncs.
    pub fn get(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let fast = self.fast.hash(key);
        if self.buffered(key, fast).is_some() {
            self.sync()?;
        }
        if let Some(t) = self.table.get().and_then(Option::as_ref) {
            match self.probe_mapped(t, key, fast) {
                Probe::Found(v) => return Ok(Some(v.to_vec())),
                Probe::Absent => return Ok(None),
                Probe::Slow => {}
            }
        }
        match self.find(key, fast)? {
            None => Ok(None),
            Some((pos, klen, vlen)) => {
                let (start, n) = self.value_range(pos, klen, vlen)?;
                match self.st.slice(start, n)? {
                    Some(s) => Ok(Some(s.to_vec())),
                    None => self.st.read_vec(start, n).map(Some),
                }
            }
        }
    }

    /// The stored value bytes of `key`, borrowed from the memory map (or from the write buffer
    /// for a key not yet synced), or an owned copy in buffered mode. Unlike [`Booklet::get`]
    /// this takes `&self` and does not sync a buffered key first: the value is the same, only
    /// the moment the buffer reaches the file differs from Python's.
    #[inline]
    pub fn get_ref(&self, key: &[u8]) -> Result<Option<Cow<'_, [u8]>>> {
        let fast = self.fast.hash(key);
        if !self.buf_keys.is_empty()
            && let Some(v) = self.buffered_value(key, fast)?
        {
            return Ok(Some(Cow::Borrowed(v)));
        }
        // The common case runs without calls: the key table answers, probed inline. A random
        // lookup waits on its cache misses, and the fewer calls and instructions queued behind
        // them, the more of the next lookup the CPU starts meanwhile.
        if let Some(t) = self.table.get().and_then(Option::as_ref) {
            match self.probe_mapped(t, key, fast) {
                Probe::Found(v) => return Ok(Some(Cow::Borrowed(v))),
                Probe::Absent => return Ok(None),
                Probe::Slow => {}
            }
        }
        self.get_ref_by_walk(key, fast)
    }

    /// The value of a key still in the write buffer, or None.
    #[inline(never)]
    fn buffered_value(&self, key: &[u8], fast: u64) -> Result<Option<&[u8]>> {
        self.buffered(key, fast)
            .map(|off| {
                self.buf_value_at(off)
                    .ok_or_else(|| Error::corrupt(off, "write buffer block out of range"))
            })
            .transpose()
    }

    /// [`Booklet::get_ref`] through the file's hash walk: a handle without a key table, or a
    /// block the table's short path does not take.
    #[inline(never)]
    fn get_ref_by_walk(&self, key: &[u8], fast: u64) -> Result<Option<Cow<'_, [u8]>>> {
        match self.find(key, fast)? {
            None => Ok(None),
            Some((pos, klen, vlen)) => {
                let (start, n) = self.value_range(pos, klen, vlen)?;
                match self.st.slice(start, n)? {
                    Some(s) => Ok(Some(Cow::Borrowed(s))),
                    None => self.st.read_vec(start, n).map(|v| Some(Cow::Owned(v))),
                }
            }
        }
    }

    /// The stored value of `key` as text (the `str` serializer's decode), borrowed like
    /// [`Booklet::get_ref`]; a value that is not UTF-8 is [`Error::Decode`].
    #[inline]
    pub fn get_str(&self, key: &[u8]) -> Result<Option<Cow<'_, str>>> {
        Ok(match self.get_ref(key)? {
            None => None,
            Some(Cow::Borrowed(b)) => Some(Cow::Borrowed(decode_str(b)?)),
            Some(Cow::Owned(v)) => Some(Cow::Owned(String::from_utf8(v).map_err(|e| {
                Error::Decode {
                    serializer: Serializer::Str.name(),
                    reason: e.to_string(),
                }
            })?)),
        })
    }

    /// Call `f` with the stored value of `key` without copying it when the file is mapped
    /// (syncs a buffered key first, as [`Booklet::get`]).
    pub fn get_with<R>(&mut self, key: &[u8], f: impl FnOnce(&[u8]) -> R) -> Result<Option<R>> {
        let fast = self.fast.hash(key);
        if self.buffered(key, fast).is_some() {
            self.sync()?;
        }
        Ok(self.get_ref(key)?.map(|v| f(&v)))
    }

    /// Whether `key` is present (keys in the write buffer count as present).
    pub fn contains(&self, key: &[u8]) -> Result<bool> {
        let fast = self.fast.hash(key);
        if self.buffered(key, fast).is_some() {
            return Ok(true);
        }
        if let Some(t) = self.table.get().and_then(Option::as_ref) {
            match self.probe_mapped(t, key, fast) {
                Probe::Found(_) => return Ok(true),
                Probe::Absent => return Ok(false),
                Probe::Slow => {}
            }
        }
        Ok(self.find(key, fast)?.is_some())
    }

    /// The item timestamp of `key` (µs since the epoch), or None if the key is missing.
    pub fn get_timestamp(&mut self, key: &[u8]) -> Result<Option<u64>> {
        if self.ts_len == 0 {
            return Err(Error::Unsupported("this file has no item timestamps"));
        }
        let fast = self.fast.hash(key);
        if self.buffered(key, fast).is_some() {
            self.sync()?;
        }
        match self.find(key, fast)? {
            None => Ok(None),
            Some((pos, _, _)) => {
                let mut b = [0u8; 8];
                self.st.read_into(pos + self.hdr_len, &mut b[..7])?;
                Ok(Some(u64::from_le_bytes(b)))
            }
        }
    }

    /// The raw metadata value (orjson bytes written by Python's `set_metadata`), if any.
    pub fn get_metadata(&mut self) -> Result<Option<Vec<u8>>> {
        if matches!(self.header.kind, Kind::Fixed { .. }) {
            return Ok(None);
        }
        self.get(crate::format::METADATA_KEY)
    }

    /// The raw bytes of reserved slot `slot` (1 or 2, Python's `get_reserved`), if written.
    pub fn get_reserved(&mut self, slot: u8) -> Result<Option<Vec<u8>>> {
        let key = reserved_slot_key(slot)?;
        if matches!(self.header.kind, Kind::Fixed { .. }) {
            return Ok(None);
        }
        self.get(key)
    }
}

/// What [`Booklet::probe_mapped`] found.
enum Probe<'a> {
    /// The key's value, borrowed from the map.
    Found(&'a [u8]),
    /// The key is not in the file.
    Absent,
    /// Take the general path.
    Slow,
}

/// Byte equality with two overlapping 8-byte loads for keys of 8 to 16 bytes.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if (8..=16).contains(&n) {
        let word = |s: &[u8], i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&s[i..i + 8]);
            u64::from_le_bytes(w)
        };
        return word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8);
    }
    a == b
}
