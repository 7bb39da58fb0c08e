//! The handle's key table (the structure is in `keytable`): when it is built (lazily, after
//! enough lookups by hash walk), how (by walking every bucket chain), and how writes keep it
//! coherent or reset it.

use std::sync::OnceLock;
use std::sync::atomic::Ordering;

use super::{Booklet, u48};
use crate::format::{KEY_HASH_LEN, KeyHash, N_BYTES_FILE, bucket_of, hash_keys};
use crate::keytable::{Coherence, KeyTable, empty_tails};

impl Booklet {
    /// Reset the key table: built and empty for a file without blocks (`empty_file`), else
    /// not built (it is built again lazily).
    pub(super) fn reset_table(&mut self, empty_file: bool) {
        self.table = OnceLock::new();
        *self.walks.get_mut() = 0;
        if empty_file && self.table_limit > 0 {
            let _ignored = self.table.set(Some(KeyTable::empty(self.header.n_buckets)));
        }
    }

    /// Apply a change of the file to the key table; drop the table when it cannot follow.
    pub(super) fn table_apply(&mut self, f: impl FnOnce(&mut KeyTable) -> Coherence) {
        let limit = self.table_limit;
        if let Some(slot) = self.table.get_mut()
            && let Some(t) = slot
            && (f(t) == Coherence::Lost || t.len() as u64 > limit)
        {
            *slot = None;
        }
    }

    /// Whether the key table is built and in use (see
    /// [`OpenOptions::key_table_limit`](crate::OpenOptions::key_table_limit)).
    #[must_use]
    pub fn has_key_table(&self) -> bool {
        matches!(self.table.get(), Some(Some(_)))
    }

    /// The key table, built once this handle has answered about `n_keys / 2` lookups by hash
    /// walks (see `keytable`).
    pub(super) fn key_table(&self) -> Option<&KeyTable> {
        if let Some(t) = self.table.get() {
            return t.as_ref();
        }
        if self.table_limit == 0 || self.n_keys > self.table_limit {
            return None;
        }
        let walks = self.walks.fetch_add(1, Ordering::Relaxed);
        if walks < self.n_keys / 2 + 16 {
            return None;
        }
        self.table.get_or_init(|| self.build_table()).as_ref()
    }

    /// Build the key table by walking every bucket chain as [`Booklet::locate`] does, with
    /// the chain tails. None (no table on this handle; lookups walk and report errors
    /// themselves) when the file has more keys than the limit, two keys collide on the 64-bit
    /// hash, or the index is not what a clean writer leaves: a stored hash that is not
    /// `BLAKE2s` of its key or not of its bucket, a tombstone or a repeated hash inside a chain,
    /// a corrupt chain.
    fn build_table(&self) -> Option<KeyTable> {
        let n = self.header.n_buckets;
        let index = self.header.index_offset;
        let hl = self.hdr_len as usize;
        let kstart = self.hdr_len + self.ts_len;
        let limit = usize::try_from(self.table_limit).ok()?;
        let mut table = KeyTable::with_capacity(usize::try_from(self.n_keys).ok()?.min(limit));
        let mut tails = empty_tails(n);
        let max_hops = self.max_hops();
        // One batch of blocks to check: (pos, bucket, stored hash, key range in `keys`, value
        // length).
        let mut batch: Vec<(u64, u64, KeyHash, std::ops::Range<usize>, u64)> = Vec::new();
        let mut keys: Vec<u8> = Vec::new();
        let mut hashes: Vec<KeyHash> = Vec::new();
        let mut slots = Vec::new();
        let mut head = [0u8; 25];
        const SLOTS_PER_READ: u64 = 8192;
        let mut b0 = 0u64;
        while b0 < n {
            let nb = SLOTS_PER_READ.min(n - b0);
            slots.resize((nb * N_BYTES_FILE) as usize, 0);
            self.st
                .read_into(index + b0 * N_BYTES_FILE, &mut slots)
                .ok()?;
            for (i, slot) in slots.chunks_exact(N_BYTES_FILE as usize).enumerate() {
                let bucket = b0 + i as u64;
                let mut pos = u48(slot);
                let mut hops = 0u64;
                while pos > 1 {
                    self.st.read_into(pos, &mut head[..hl]).ok()?;
                    let next = u48(&head[13..19]);
                    if next == 0 {
                        return None;
                    }
                    let klen = usize::from(u16::from_le_bytes([head[19], head[20]]));
                    let vlen = self.vlen_of(&head);
                    let at = keys.len();
                    keys.resize(at + klen, 0);
                    self.st.read_into(pos + kstart, &mut keys[at..]).ok()?;
                    let mut stored = [0u8; KEY_HASH_LEN];
                    stored.copy_from_slice(&head[..KEY_HASH_LEN]);
                    batch.push((pos, bucket, stored, at..at + klen, vlen));
                    if table.len() + batch.len() > limit {
                        return None;
                    }
                    if let Some(t) = tails.as_mut().and_then(|t| t.get_mut(bucket as usize)) {
                        *t = pos;
                    }
                    pos = next;
                    hops += 1;
                    if hops > max_hops {
                        return None;
                    }
                }
            }
            b0 += nb;
            if batch.len() >= 4096 || b0 >= n {
                let refs: Vec<&[u8]> = batch
                    .iter()
                    .map(|(_, _, _, r, _)| keys.get(r.clone()).unwrap_or_default())
                    .collect();
                hashes.resize(refs.len(), [0u8; KEY_HASH_LEN]);
                hash_keys(&refs, &mut hashes);
                for ((pos, bucket, stored, _, vlen), (key, h)) in
                    batch.iter().zip(refs.iter().zip(&hashes))
                {
                    if h != stored || bucket_of(stored, n) != *bucket {
                        return None;
                    }
                    // A repeated key (or a 64-bit collision) loses the table.
                    if table.insert_new(self.fast.hash(key), *pos, *vlen) == Coherence::Lost {
                        return None;
                    }
                }
                batch.clear();
                keys.clear();
            }
        }
        table.set_tails(tails);
        Some(table)
    }
}
