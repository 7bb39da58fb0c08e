//! Index and file maintenance: reindex to more buckets (with skip blocks over a relocated old
//! index), delete, clear, and prune (compaction and relinking into a fresh index).

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use super::{Booklet, empty_index, u48};
use crate::error::{Error, Result};
use crate::format::{
    KEY_HASH_LEN, KeyHash, Kind, N_BYTES_FILE, POS_FIRST_DATA, POS_INDEX_OFFSET, POS_N_BUCKETS,
    POS_N_KEYS, SUB_INDEX_INIT_POS, bucket_of, hash_key, is_reserved_key,
};
use crate::keytable::{Coherence, MAX_TAIL_BUCKETS, empty_tails};

impl Booklet {
    /// Move to a bigger bucket index (as Python's auto-reindex does; normally automatic).
    pub fn reindex(&mut self, new_n: u64) -> Result<()> {
        let r = self.reindex_inner(new_n);
        if r.is_err() {
            self.reset_table(false);
        }
        r
    }

    fn reindex_inner(&mut self, new_n: u64) -> Result<()> {
        self.check_writable()?;
        if new_n == 0 || new_n > u64::from(u32::MAX) {
            return Err(Error::InvalidOption(format!(
                "bucket count {new_n} out of range"
            )));
        }
        let old_n = self.header.n_buckets;
        let old_index = self.header.index_offset;
        let new_index = self.st.len();
        // The new index is built in memory up to 64 MiB (every step but the last of the
        // chain) and written once; beyond that, in place in the file.
        let new_len = new_n * N_BYTES_FILE;
        let mut mem_index = (new_len <= 64 << 20).then(|| empty_index(new_n));
        if mem_index.is_none() {
            self.st.write_at(new_index, &empty_index(new_n))?;
        }
        let max_hops = self.max_hops();
        // Chain tails of the new index, when the key table keeps tails.
        let mut tails = match self.table.get() {
            Some(Some(t)) if t.has_tails() && new_n <= MAX_TAIL_BUCKETS => empty_tails(new_n),
            _ => None,
        };
        // Old buckets are taken GROUP at a time: their chains are walked side by side (one
        // step of each per round, so the block reads of different chains overlap in memory),
        // then their blocks are relinked in the original order (bucket by bucket, chain order),
        // which is what fixes the bytes.
        const GROUP: usize = 32;
        let mut slots = vec![0u8; GROUP * N_BYTES_FILE as usize];
        let mut chains: Vec<Vec<(u64, KeyHash)>> = vec![Vec::new(); GROUP];
        let mut b0 = 0u64;
        while b0 < old_n {
            let g = (GROUP as u64).min(old_n - b0) as usize;
            let sl = &mut slots[..g * N_BYTES_FILE as usize];
            self.st.read_into(old_index + b0 * N_BYTES_FILE, sl)?;
            let mut cur = [0u64; GROUP];
            for (c, s) in cur.iter_mut().zip(sl.chunks_exact(N_BYTES_FILE as usize)) {
                *c = u48(s);
            }
            for c in &mut chains {
                c.clear();
            }
            let mut hops = 0u64;
            loop {
                let mut live = false;
                for (c, chain) in cur.iter_mut().zip(chains.iter_mut()).take(g) {
                    if *c <= 1 {
                        continue;
                    }
                    let (h, next) = self.read_hash_next(*c)?;
                    if next == 0 {
                        *c = 0;
                        continue;
                    }
                    chain.push((*c, h));
                    *c = next;
                    live = true;
                }
                if !live {
                    break;
                }
                hops += 1;
                if hops > max_hops {
                    return Err(Error::corrupt(
                        old_index + b0 * N_BYTES_FILE,
                        "bucket chain does not end (cycle)",
                    ));
                }
            }
            for chain in chains.iter().take(g) {
                for &(pos, h) in chain {
                    let new_bucket = bucket_of(&h, new_n);
                    let head = match mem_index.as_mut() {
                        Some(m) => {
                            let at = (new_bucket * N_BYTES_FILE) as usize;
                            let slot = m
                                .get_mut(at..at + N_BYTES_FILE as usize)
                                .ok_or_else(|| Error::corrupt(new_index, "bucket out of range"))?;
                            let head = u48(slot);
                            slot.copy_from_slice(&pos.to_le_bytes()[..N_BYTES_FILE as usize]);
                            head
                        }
                        None => {
                            let slot = new_index + new_bucket * N_BYTES_FILE;
                            let head = self.st.read_u48(slot)?;
                            self.st.write_u48(slot, pos)?;
                            head
                        }
                    };
                    if head <= 1
                        && let Some(t) = tails.as_mut().and_then(|t| t.get_mut(new_bucket as usize))
                    {
                        *t = pos;
                    }
                    self.st
                        .write_u48(pos + 13, if head <= 1 { 1 } else { head })?;
                }
            }
            b0 += g as u64;
        }
        if let Some(m) = mem_index {
            self.st.write_at(new_index, &m)?;
        }
        if old_index != SUB_INDEX_INIT_POS {
            self.write_skip_blocks(old_index, old_n * N_BYTES_FILE)?;
        }
        self.st
            .write_at(POS_N_BUCKETS, &(new_n as u32).to_le_bytes())?;
        self.st
            .write_at(POS_INDEX_OFFSET, &new_index.to_le_bytes()[..6])?;
        let first = self.header.first_data_block_pos;
        self.st
            .write_at(POS_FIRST_DATA, &first.to_le_bytes()[..6])?;
        self.header.n_buckets = new_n;
        self.header.index_offset = new_index;
        self.table_apply(|t| {
            t.set_tails(tails);
            Coherence::Ok
        });
        self.st.advise(true, new_index, new_n * N_BYTES_FILE);
        Ok(())
    }

    /// Overwrite a dead region (an old relocated index) with tombstoned blocks so scans step
    /// over it. Variable files: one block, as Python writes it. Fixed files: blocks whose key
    /// lengths fit the 2-byte field (Python overflows there; its scanner reads both layouts).
    fn write_skip_blocks(&mut self, offset: u64, dead: u64) -> Result<()> {
        match self.header.kind {
            Kind::Variable => {
                let overhead = 25 + self.ts_len;
                if dead < overhead + 1 {
                    return Ok(());
                }
                let vlen = dead - overhead - 1;
                let mut b = vec![0u8; dead as usize];
                b[19..21].copy_from_slice(&1u16.to_le_bytes());
                b[21..25].copy_from_slice(&(vlen as u32).to_le_bytes());
                self.st.write_at(offset, &b)
            }
            Kind::Fixed { value_len } => {
                let vl = u64::from(value_len);
                let overhead = 21u64;
                let min_block = overhead + 1 + vl;
                let end = offset + dead;
                let mut pos = offset;
                while pos < end {
                    let remaining = end - pos;
                    if remaining < min_block {
                        break;
                    }
                    let mut klen = remaining - overhead - vl;
                    if klen > u64::from(u16::MAX) {
                        klen = (remaining - overhead - vl)
                            .saturating_sub(min_block)
                            .clamp(1, u64::from(u16::MAX));
                    }
                    let size = overhead + klen + vl;
                    let mut b = vec![0u8; size as usize];
                    b[19..21].copy_from_slice(&(klen as u16).to_le_bytes());
                    self.st.write_at(pos, &b)?;
                    pos += size;
                }
                Ok(())
            }
        }
    }

    /// Delete `key` ([`Error::KeyNotFound`] if absent). Writes through at once, with `n_keys`.
    pub fn delete(&mut self, key: &[u8]) -> Result<()> {
        let r = self.delete_inner(key);
        if matches!(r, Err(ref e) if !matches!(e, Error::KeyNotFound | Error::ReadOnly)) {
            self.reset_table(false);
        }
        r
    }

    fn delete_inner(&mut self, key: &[u8]) -> Result<()> {
        self.check_writable()?;
        if !self.buf_index.is_empty() {
            self.sync()?;
        }
        let fast = self.fast.hash(key);
        // With the key table, the key's live block comes from the table (key bytes checked)
        // and its stored hash stands in for hashing the key: the table only holds blocks whose
        // stored hash is `BLAKE2s` of their key. That saves the hash's compute, which costs
        // as much as the table probe's cache miss and keeps the next delete's misses from
        // overlapping this one's.
        let (hash, hint) = match self.table.get() {
            Some(Some(t)) => {
                let Some((pos, _)) = t.get(fast) else {
                    return Err(Error::KeyNotFound);
                };
                match self.block_if_key(pos, key, None)? {
                    Some(_) => {
                        let (h, next) = self.read_hash_next(pos)?;
                        (h, Some((pos, h, next)))
                    }
                    // Another key with the same 64-bit hash holds the entry: walk by hash.
                    None => (hash_key(key), None),
                }
            }
            _ => (hash_key(key), None),
        };
        let bucket = bucket_of(&hash, self.header.n_buckets);
        let slot = self.header.index_offset + bucket * N_BYTES_FILE;
        let first = self.st.read_u48(slot)?;
        if first <= 1 {
            return Err(Error::KeyNotFound);
        }
        let mut prev_ptr = slot;
        let mut pos = first;
        let mut hops = 0u64;
        let max_hops = self.max_hops();
        loop {
            let (h, next) = match hint {
                Some((p, h, next)) if p == pos => (h, next),
                _ => self.read_hash_next(pos)?,
            };
            if next == 0 {
                return Err(Error::KeyNotFound);
            }
            if h == hash {
                self.st.write_u48(pos + 13, 0)?;
                self.st.write_u48(prev_ptr, next)?;
                self.table_apply(|t| {
                    if next == 1 {
                        t.set_tail(bucket, if prev_ptr == slot { 0 } else { prev_ptr - 13 });
                    }
                    t.removed(fast, pos)
                });
                if !is_reserved_key(key) {
                    self.n_keys = self.n_keys.saturating_sub(1);
                    self.write_n_keys()?;
                }
                return Ok(());
            }
            if next == 1 {
                return Err(Error::KeyNotFound);
            }
            prev_ptr = pos + 13;
            pos = next;
            hops += 1;
            if hops > max_hops {
                return Err(Error::corrupt(pos, "bucket chain does not end (cycle)"));
            }
        }
    }

    /// Remove every item (and the metadata), keeping the bucket count.
    pub fn clear(&mut self) -> Result<()> {
        self.check_writable()?;
        self.buf_data.clear();
        self.buf_index.clear();
        self.buf_keys.clear();
        self.reset_table(true);
        let n = self.header.n_buckets;
        self.st.set_len(SUB_INDEX_INIT_POS)?;
        self.st.sync_all()?;
        self.st.write_at(POS_N_KEYS, &0u32.to_le_bytes())?;
        self.st.write_at(POS_INDEX_OFFSET, &[0u8; 12])?;
        self.st.write_at(SUB_INDEX_INIT_POS, &empty_index(n))?;
        self.n_keys = 0;
        self.header.index_offset = SUB_INDEX_INIT_POS;
        self.header.first_data_block_pos = SUB_INDEX_INIT_POS + n * N_BYTES_FILE;
        Ok(())
    }

    /// Remove overwritten and deleted blocks, and with `older_than` (µs) also live items whose
    /// timestamp is older, except `keep_keys`. Returns the number of removed blocks.
    pub fn prune(&mut self, older_than: Option<u64>, keep_keys: &[&[u8]]) -> Result<u64> {
        self.sync()?;
        self.check_writable()?;
        self.reset_table(false);
        let keep: HashSetFast = keep_keys.iter().map(|k| hash_key(k)).collect();
        let reserved: Vec<KeyHash> = std::iter::once(crate::format::METADATA_KEY)
            .chain(crate::format::RESERVED_SLOT_KEYS)
            .map(hash_key)
            .collect();
        let fixed_vlen = match self.header.kind {
            Kind::Fixed { value_len } => Some(u64::from(value_len)),
            Kind::Variable => None,
        };
        let hl = self.hdr_len;
        let mut buf = std::mem::take(&mut self.buf_data);
        buf.clear();
        let mut write_pos = SUB_INDEX_INIT_POS;
        let mut removed = 0u64;
        let mut reserved_kept = 0u64;
        for (start, end) in self.regions()? {
            let mut pos = start;
            while pos < end {
                let mut head = [0u8; 25];
                self.st.read_into(pos, &mut head[..hl as usize])?;
                let next = u48(&head[13..19]);
                let klen = u64::from(u16::from_le_bytes([head[19], head[20]]));
                let vlen = fixed_vlen.unwrap_or_else(|| {
                    u64::from(u32::from_le_bytes([head[21], head[22], head[23], head[24]]))
                });
                let body_len = self.ts_len + klen + vlen;
                let total = hl + body_len;
                if pos + total > end {
                    return Err(Error::corrupt(
                        pos,
                        format!("data block of {total} bytes runs past its region end {end}"),
                    ));
                }
                if next != 0 {
                    let hash: KeyHash = head[..13]
                        .try_into()
                        .map_err(|_| Error::corrupt(pos, "hash"))?;
                    let mut keep_it = true;
                    if reserved.contains(&hash) {
                        reserved_kept += 1;
                    } else if let Some(t) = older_than
                        && t != 0
                        && self.ts_len > 0
                        && fixed_vlen.is_none()
                        && !keep.contains(&hash)
                    {
                        let mut tb = [0u8; 8];
                        self.st.read_into(pos + hl, &mut tb[..7])?;
                        if u64::from_le_bytes(tb) < t {
                            keep_it = false;
                        }
                    }
                    if keep_it {
                        if total as usize > self.buf_cap.saturating_sub(buf.len())
                            && !buf.is_empty()
                        {
                            self.st.write_at(write_pos, &buf)?;
                            write_pos += buf.len() as u64;
                            buf.clear();
                        }
                        buf.extend_from_slice(&head[..13]);
                        buf.extend_from_slice(&[1, 0, 0, 0, 0, 0]);
                        buf.extend_from_slice(&head[19..hl as usize]);
                        let blen = usize::try_from(body_len)
                            .map_err(|_| Error::corrupt(pos, "block too large"))?;
                        let at = buf.len();
                        buf.resize(at + blen, 0);
                        self.st.read_into(pos + hl, &mut buf[at..])?;
                    } else {
                        removed += 1;
                    }
                } else {
                    removed += 1;
                }
                pos += total;
            }
        }
        if !buf.is_empty() {
            self.st.write_at(write_pos, &buf)?;
            write_pos += buf.len() as u64;
            buf.clear();
        }
        self.buf_data = buf;
        let live_end = write_pos;
        let n = self.header.n_buckets;
        let mut n_keys;
        if live_end > SUB_INDEX_INIT_POS {
            let new_index = live_end;
            self.st.write_at(new_index, &empty_index(n))?;
            let mut entries = Vec::new();
            let mut pos = SUB_INDEX_INIT_POS;
            while pos < live_end {
                let mut head = [0u8; 25];
                self.st.read_into(pos, &mut head[..hl as usize])?;
                let klen = u64::from(u16::from_le_bytes([head[19], head[20]]));
                let vlen = fixed_vlen.unwrap_or_else(|| {
                    u64::from(u32::from_le_bytes([head[21], head[22], head[23], head[24]]))
                });
                let mut h = [0u8; KEY_HASH_LEN];
                h.copy_from_slice(&head[..13]);
                entries.push((h, pos));
                pos += hl + self.ts_len + klen + vlen;
            }
            n_keys = self.relink_fresh(&entries, new_index, n)?;
            self.st.set_len(new_index + n * N_BYTES_FILE)?;
            self.st.sync_all()?;
            self.st
                .write_at(POS_INDEX_OFFSET, &new_index.to_le_bytes()[..6])?;
            self.st
                .write_at(POS_FIRST_DATA, &SUB_INDEX_INIT_POS.to_le_bytes()[..6])?;
            self.header.index_offset = new_index;
            self.header.first_data_block_pos = SUB_INDEX_INIT_POS;
        } else {
            self.st.write_at(SUB_INDEX_INIT_POS, &empty_index(n))?;
            self.st.set_len(SUB_INDEX_INIT_POS + n * N_BYTES_FILE)?;
            self.st.sync_all()?;
            self.st.write_at(POS_INDEX_OFFSET, &[0u8; 12])?;
            self.header.index_offset = SUB_INDEX_INIT_POS;
            self.header.first_data_block_pos = SUB_INDEX_INIT_POS + n * N_BYTES_FILE;
            n_keys = 0;
        }
        self.st.sync_all()?;
        // Every block moved: the key table is rebuilt lazily (or starts empty and built).
        self.reset_table(live_end <= SUB_INDEX_INIT_POS);
        n_keys = n_keys.saturating_sub(reserved_kept);
        self.n_keys = n_keys;
        self.write_n_keys()?;
        // Prune has read and rewritten the whole file: give its pages back (seed 003).
        if self.opts.release_pages {
            self.st.release(0, self.st.len());
        }
        Ok(removed)
    }

    /// `update_index` into a fresh, empty index at `index_offset` (prune), for blocks whose next
    /// pointers are all 1: while the hashes are distinct, every block goes at the tail of its
    /// chain, so the index is built in memory from chain tails, with no reads of the file,
    /// and written once. From the first repeated hash on (only in a file with two live blocks
    /// of one key), the rest goes through `update_index`, which splices as Python does.
    fn relink_fresh(
        &mut self,
        entries: &[(KeyHash, u64)],
        index_offset: u64,
        n_buckets: u64,
    ) -> Result<u64> {
        let index_len = n_buckets * N_BYTES_FILE;
        if n_buckets > MAX_TAIL_BUCKETS || index_len > 64 << 20 {
            return self.update_index(entries, None, index_offset, n_buckets);
        }
        let mut index = empty_index(n_buckets);
        let mut tails = vec![0u64; n_buckets as usize];
        let mut seen = HashSetFast::default();
        seen.reserve(entries.len());
        let mut done = entries.len();
        for (i, (hash, pos)) in entries.iter().enumerate() {
            if !seen.insert(*hash) {
                done = i;
                break;
            }
            let bucket = bucket_of(hash, n_buckets);
            let tail = tails
                .get_mut(bucket as usize)
                .ok_or_else(|| Error::corrupt(*pos, "bucket out of range"))?;
            if *tail == 0 {
                let at = (bucket * N_BYTES_FILE) as usize;
                if let Some(slot) = index.get_mut(at..at + N_BYTES_FILE as usize) {
                    slot.copy_from_slice(&pos.to_le_bytes()[..N_BYTES_FILE as usize]);
                }
            } else {
                self.st.write_u48(*tail + 13, *pos)?;
            }
            *tail = *pos;
        }
        self.st.write_at(index_offset, &index)?;
        let rest = entries.get(done..).unwrap_or_default();
        Ok(done as u64 + self.update_index(rest, None, index_offset, n_buckets)?)
    }
}

/// Hashes are already uniformly random: hash a key hash by its first 8 bytes.
#[derive(Default)]
struct PrefixHasher(u64);

impl Hasher for PrefixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut b = [0u8; 8];
        let n = bytes.len().min(8);
        b[..n].copy_from_slice(&bytes[..n]);
        self.0 ^= u64::from_le_bytes(b);
    }
    fn write_usize(&mut self, _len: usize) {}
}

type HashSetFast = HashSet<KeyHash, BuildHasherDefault<PrefixHasher>>;
