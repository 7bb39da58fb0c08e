//! Writes: the write buffer (`set`, `update`), its flush and the linking of new blocks into the
//! bucket index (`update_index`), `sync`, and the writes of item timestamps (in place), the
//! metadata value and the reserved slots.

use super::{Booklet, now_micros};
use crate::error::{Error, Result};
use crate::format::{
    KEY_HASH_LEN, KeyHash, Kind, N_BYTES_FILE, POS_N_KEYS, bucket_of, hash_keys, next_n_buckets,
};
use crate::keytable::{Coherence, VLEN_UNKNOWN};

impl Booklet {
    /// Set `key` to `value` (stored bytes). The item timestamp is "now" on files with timestamps.
    pub fn set(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.write_block(key, value, None)
    }

    /// Set `key` to `value` with an explicit item timestamp (µs since the Unix epoch).
    pub fn set_with_timestamp(&mut self, key: &[u8], value: &[u8], timestamp: u64) -> Result<()> {
        if matches!(self.header.kind, Kind::Fixed { .. }) {
            return Err(Error::Unsupported(
                "fixed-length booklets have no item timestamps",
            ));
        }
        self.write_block(key, value, Some(timestamp))
    }

    /// Set many items (Python's `update`).
    pub fn update<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &mut self,
        items: impl IntoIterator<Item = (K, V)>,
    ) -> Result<()> {
        for (k, v) in items {
            self.write_block(k.as_ref(), v.as_ref(), None)?;
        }
        Ok(())
    }

    fn write_block(&mut self, key: &[u8], value: &[u8], ts: Option<u64>) -> Result<()> {
        self.check_writable()?;
        if key.len() > usize::from(u16::MAX) {
            return Err(Error::TooLarge {
                what: "key",
                len: key.len(),
                max: u64::from(u16::MAX),
            });
        }
        let vlen = u32::try_from(value.len()).map_err(|_| Error::TooLarge {
            what: "value",
            len: value.len(),
            max: u64::from(u32::MAX),
        })?;
        if let Kind::Fixed { value_len } = self.header.kind
            && value.len() != value_len as usize
        {
            return Err(Error::WrongValueLength {
                expected: value_len,
                got: value.len(),
            });
        }
        let fast = self.fast.hash(key);
        let block_len = self.hdr_len as usize + self.ts_len as usize + key.len() + value.len();
        if block_len > self.buf_cap.saturating_sub(self.buf_data.len()) {
            self.flush_buffer()?;
        }
        let off = self.buf_data.len() as u64;
        let d = &mut self.buf_data;
        d.reserve(block_len);
        // The key hash is filled in when the buffer is flushed (hashed in SIMD batches).
        d.extend_from_slice(&[0u8; KEY_HASH_LEN]);
        d.extend_from_slice(&[1, 0, 0, 0, 0, 0]);
        d.extend_from_slice(&(key.len() as u16).to_le_bytes());
        if matches!(self.header.kind, Kind::Variable) {
            d.extend_from_slice(&vlen.to_le_bytes());
        }
        if self.ts_len > 0 {
            let t = ts.unwrap_or_else(now_micros);
            d.extend_from_slice(&t.to_le_bytes()[..7]);
        }
        d.extend_from_slice(key);
        d.extend_from_slice(value);
        self.buf_index.push((off, fast));
        if self.buf_keys.capacity() == 0 {
            self.buf_keys.reserve(1024);
        }
        self.buf_keys.insert(fast, off);
        Ok(())
    }

    /// Append the data buffer at EOF and index the buffered blocks. On an error the key table
    /// is dropped (it is rebuilt from the file lazily).
    fn flush_buffer(&mut self) -> Result<()> {
        let r = self.flush_buffer_inner();
        if r.is_err() {
            self.reset_table(false);
        }
        r
    }

    fn flush_buffer_inner(&mut self) -> Result<()> {
        let base = self.st.len();
        let hashes = self.hash_buffer()?;
        let mut entries = Vec::with_capacity(self.buf_index.len());
        let mut fasts = Vec::with_capacity(self.buf_index.len());
        for (&(off, fast), h) in self.buf_index.iter().zip(hashes) {
            entries.push((h, base + off));
            let vlen = self
                .buf_value_at(off)
                .map_or(VLEN_UNKNOWN, |v| v.len() as u64);
            fasts.push((fast, vlen));
        }
        self.buf_index.clear();
        self.buf_keys.clear();
        let index_offset = self.header.index_offset;
        let n_buckets = self.header.n_buckets;
        let (linked, deferred) =
            self.link_in_memory(&entries, &fasts, base, index_offset, n_buckets);
        if !self.buf_data.is_empty() {
            let data = std::mem::take(&mut self.buf_data);
            let r = self.st.write_at(base, &data);
            self.buf_data = data;
            self.buf_data.clear();
            r?;
        }
        for (at, v) in deferred {
            self.st.write_u48(at, v)?;
        }
        self.n_keys += linked as u64;
        let rest = entries.get(linked..).unwrap_or_default();
        let rest_fasts = fasts.get(linked..).unwrap_or_default();
        self.n_keys += self.update_index(rest, Some(rest_fasts), index_offset, n_buckets)?;
        self.table_apply(|_| Coherence::Ok);
        Ok(())
    }

    /// Link the leading run of new keys of a flush without reading the file, as
    /// [`Booklet::update_index`] would (a new key goes at the tail of its chain, which the key
    /// table knows). Links into blocks still in the write buffer are patched there; links into
    /// the file (bucket slots, old tails) are returned in order, to be written after the data
    /// as Python does. Returns how many entries were linked; the rest (from the first key
    /// already in the file, or all without a table) go through `update_index`.
    fn link_in_memory(
        &mut self,
        entries: &[(KeyHash, u64)],
        fasts: &[(u64, u64)],
        base: u64,
        index_offset: u64,
        n_buckets: u64,
    ) -> (usize, Vec<(u64, u64)>) {
        let mut deferred = Vec::new();
        let Some(Some(table)) = self.table.get_mut() else {
            return (0, deferred);
        };
        let buf = &mut self.buf_data;
        for (i, (&(hash, pos), &(fast, vlen))) in entries.iter().zip(fasts).enumerate() {
            let bucket = bucket_of(&hash, n_buckets);
            let Some(tail) = table.tail(bucket) else {
                return (i, deferred);
            };
            // Enter the key first: a key already in the file (or a collision) stops here.
            if table.insert_new(fast, pos, vlen) == Coherence::Lost {
                return (i, deferred);
            }
            let at = if tail <= 1 {
                index_offset + bucket * N_BYTES_FILE
            } else {
                tail + 13
            };
            if at >= base {
                let Some(dst) = usize::try_from(at - base)
                    .ok()
                    .and_then(|o| buf.get_mut(o..o + N_BYTES_FILE as usize))
                else {
                    let _undone = table.removed(fast, pos);
                    return (i, deferred);
                };
                dst.copy_from_slice(&pos.to_le_bytes()[..N_BYTES_FILE as usize]);
            } else {
                deferred.push((at, pos));
            }
            table.set_tail(bucket, pos);
        }
        (entries.len(), deferred)
    }

    /// Compute the key hashes of the buffered blocks (in SIMD batches) and write them into
    /// their placeholders; returns them in write order.
    fn hash_buffer(&mut self) -> Result<Vec<KeyHash>> {
        let mut hashes = vec![[0u8; KEY_HASH_LEN]; self.buf_index.len()];
        {
            let mut keys = Vec::with_capacity(self.buf_index.len());
            for &(off, _) in &self.buf_index {
                keys.push(
                    self.buf_key_at(off)
                        .ok_or_else(|| Error::corrupt(off, "write buffer block out of range"))?,
                );
            }
            hash_keys(&keys, &mut hashes);
        }
        for (&(off, _), h) in self.buf_index.iter().zip(&hashes) {
            let o = usize::try_from(off).map_err(|_| Error::corrupt(off, "buffer offset"))?;
            if let Some(dst) = self.buf_data.get_mut(o..o + KEY_HASH_LEN) {
                dst.copy_from_slice(h);
            }
        }
        Ok(hashes)
    }

    /// Link blocks into the index at `index_offset`; returns the number of new keys.
    /// `fasts` (the keys' fast hashes, for flushes) keeps the key table coherent.
    pub(super) fn update_index(
        &mut self,
        entries: &[(KeyHash, u64)],
        fasts: Option<&[(u64, u64)]>,
        index_offset: u64,
        n_buckets: u64,
    ) -> Result<u64> {
        let mut added = 0u64;
        let max_hops = self.max_hops();
        for (i, (hash, new_pos)) in entries.iter().enumerate() {
            let fv = fasts.and_then(|f| f.get(i).copied());
            let hint = fv.and_then(|(fast, _)| self.table_hint(fast));
            let bucket = bucket_of(hash, n_buckets);
            let slot = index_offset + bucket * N_BYTES_FILE;
            let first = self.st.read_u48(slot)?;
            if first <= 1 {
                self.st.write_u48(slot, *new_pos)?;
                added += 1;
                if let Some((fast, vlen)) = fv {
                    self.table_apply(|t| {
                        t.set_tail(bucket, *new_pos);
                        t.insert_new(fast, *new_pos, vlen)
                    });
                }
                continue;
            }
            let mut prev_ptr = slot;
            let mut pos = first;
            let mut hops = 0u64;
            loop {
                let (h, next) = match hint {
                    Some((p, h, next)) if p == pos => (h, next),
                    _ => self.read_hash_next(pos)?,
                };
                if next != 0 {
                    if h == *hash {
                        self.st.write_u48(pos + 13, 0)?;
                        self.st.write_u48(prev_ptr, *new_pos)?;
                        if next > 1 {
                            self.st.write_u48(*new_pos + 13, next)?;
                        }
                        if let Some((fast, vlen)) = fv {
                            self.table_apply(|t| {
                                if next == 1 {
                                    t.set_tail(bucket, *new_pos);
                                }
                                t.moved(fast, pos, *new_pos, vlen)
                            });
                        }
                        break;
                    } else if next == 1 {
                        self.st.write_u48(pos + 13, *new_pos)?;
                        added += 1;
                        if let Some((fast, vlen)) = fv {
                            self.table_apply(|t| {
                                t.set_tail(bucket, *new_pos);
                                t.insert_new(fast, *new_pos, vlen)
                            });
                        }
                        break;
                    }
                } else {
                    self.st.write_u48(prev_ptr, *new_pos)?;
                    added += 1;
                    if let Some((fast, vlen)) = fv {
                        self.table_apply(|t| {
                            t.set_tail(bucket, *new_pos);
                            t.insert_new(fast, *new_pos, vlen)
                        });
                    }
                    break;
                }
                prev_ptr = pos + 13;
                pos = next;
                hops += 1;
                if hops > max_hops {
                    return Err(Error::corrupt(pos, "bucket chain does not end (cycle)"));
                }
            }
        }
        Ok(added)
    }

    /// (offset, hash, next pointer) of the block the key table holds for `fast`, read before a
    /// chain walk: the table probe and this read do not depend on the walk's bucket slot read,
    /// so their cache misses overlap it, and the walk then finds the block already read. Only
    /// a hint: the walk still compares hashes (another key may share the fast hash).
    #[inline]
    fn table_hint(&self, fast: u64) -> Option<(u64, KeyHash, u64)> {
        let (pos, _) = self.table.get()?.as_ref()?.get(fast)?;
        let (h, next) = self.read_hash_next(pos).ok()?;
        Some((pos, h, next))
    }

    pub(super) fn write_n_keys(&mut self) -> Result<()> {
        let n = u32::try_from(self.n_keys).unwrap_or(u32::MAX - 1);
        self.st.write_small(POS_N_KEYS, n.to_le_bytes())
    }

    /// Write buffered items to the file and index them (no fsync, as in Python).
    pub fn sync(&mut self) -> Result<()> {
        if !self.writable || self.closed {
            return Ok(());
        }
        if !self.buf_index.is_empty() {
            self.flush_buffer()?;
            self.check_auto_reindex()?;
            self.write_n_keys()?;
        }
        self.check_auto_reindex()
    }

    fn check_auto_reindex(&mut self) -> Result<()> {
        if self.n_keys > self.header.n_buckets
            && let Some(new_n) = next_n_buckets(self.header.n_buckets)
        {
            self.reindex(new_n)?;
        }
        Ok(())
    }

    /// Rewrite the timestamp of `key` in place.
    pub fn set_timestamp(&mut self, key: &[u8], timestamp: u64) -> Result<()> {
        self.check_writable()?;
        if self.ts_len == 0 {
            return Err(Error::Unsupported("this file has no item timestamps"));
        }
        let fast = self.fast.hash(key);
        if self.buffered(key, fast).is_some() {
            self.sync()?;
        }
        let (pos, _, _) = self.find(key, fast)?.ok_or(Error::KeyNotFound)?;
        let b = timestamp.to_le_bytes();
        self.st.write_at(pos + self.hdr_len, &b[..7])
    }

    /// Write the metadata value: the stored bytes, which Python booklet reads with
    /// `orjson.loads` (so write compact JSON, e.g. `{"a":1}`, as `orjson.dumps` produces).
    /// `timestamp` (µs) defaults to now on files with item timestamps. Like Python: syncs first,
    /// writes the block through at once, and does not count it in `len()`; hidden from iteration.
    pub fn set_metadata(&mut self, value: &[u8], timestamp: Option<u64>) -> Result<()> {
        self.write_reserved(crate::format::METADATA_KEY, value, timestamp)
    }

    /// Write reserved slot `slot` (1 or 2; Python's `set_reserved`): raw bytes for libraries
    /// built on booklet, hidden from iteration and `len()`, kept by prune, removed by clear.
    pub fn set_reserved(&mut self, slot: u8, value: &[u8], timestamp: Option<u64>) -> Result<()> {
        let key = reserved_slot_key(slot)?;
        self.write_reserved(key, value, timestamp)
    }

    fn write_reserved(&mut self, key: &[u8], value: &[u8], ts: Option<u64>) -> Result<()> {
        self.check_writable()?;
        if matches!(self.header.kind, Kind::Fixed { .. }) {
            return Err(Error::Unsupported(
                "fixed-length booklets have no metadata or reserved slots (as in Python)",
            ));
        }
        // As Python: sync, buffer the one block, append it and index it without counting it.
        self.sync()?;
        self.write_block(key, value, ts)?;
        let n_keys = self.n_keys;
        let r = self.flush_buffer();
        self.n_keys = n_keys;
        r
    }
}

/// The stored key of reserved slot 1 or 2.
pub(super) fn reserved_slot_key(slot: u8) -> Result<&'static [u8]> {
    match slot {
        1 | 2 => Ok(crate::format::RESERVED_SLOT_KEYS[usize::from(slot - 1)]),
        _ => Err(Error::InvalidOption(format!(
            "reserved slot must be 1 or 2, not {slot}"
        ))),
    }
}
