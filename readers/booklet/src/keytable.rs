//! The in-memory key table: a lookup accelerator from a fast hash of the key bytes to the
//! offset of the key's live block.
//!
//! # Why
//!
//! The file format finds a key through `BLAKE2s(key, 13)` → bucket slot → chain of blocks.
//! The cryptographic hash costs more than the two memory reads that follow it, and the bucket
//! slot and the block are two dependent cache misses. The key table answers the same question
//! with a cheap keyed hash (`foldhash`, seeded per handle) and one probe of a compact table:
//!
//! ```text
//! lookup(key):  h = foldhash(key)  →  table[h] = block offset  →  compare the stored key bytes
//!               absent in table    →  the key is not in the file (no file access at all)
//! ```
//!
//! # Faithfulness
//!
//! The table holds exactly the blocks a hash walk reaches: it is built by walking every bucket
//! chain as `locate` does (stopping at a tombstone, keeping the first block of a hash), and a
//! block is only entered when its stored hash is `BLAKE2s` of its key and belongs to that
//! bucket (so a hand-made file whose stored hash disagrees with its key answers as the hash walk
//! would). Every write that changes which block is live for a key (flush, delete, clear) updates
//! the table; prune moves every block and drops it (it is rebuilt lazily). Two distinct keys
//! whose 64-bit hashes collide make the handle give the table up and use the hash walk.
//!
//! # Cost and bounds
//!
//! * Memory: a flat array of 16-byte slots at most 5/8 full, 26-52 bytes per key.
//!   Tables are only built for at most [`crate::OpenOptions::key_table_limit`] keys (default
//!   [`DEFAULT_KEY_TABLE_LIMIT`]); a writer that grows past the limit drops its table.
//! * Building walks the bucket index once (one read of each live block header and key, and a
//!   batched 8-lane `BLAKE2s` check of the keys). It is done lazily, once a handle has answered
//!   about `n_keys / 2` lookups through the hash walk (a ski-rental rule: the build costs about
//!   as much as that many hash walks), so a handle that looks up a few keys never pays for it.
//!   A file created by the handle starts with an empty, built table.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

/// Default [`crate::OpenOptions::key_table_limit`]: tables for files of up to 2^21 keys
/// (about 40-80 MiB of memory at most).
pub const DEFAULT_KEY_TABLE_LIMIT: u64 = 1 << 21;

/// A hasher for keys that are already uniformly distributed 64-bit hashes.
#[derive(Default, Clone, Copy)]
pub(crate) struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// A map keyed by an already well-mixed 64-bit hash.
pub(crate) type HashKeyed<V> = HashMap<u64, V, BuildHasherDefault<IdentityHasher>>;

/// The per-handle keyed hash of key bytes.
#[derive(Clone)]
pub(crate) struct FastHasher(foldhash::fast::RandomState);

impl FastHasher {
    pub(crate) fn new() -> Self {
        FastHasher(foldhash::fast::RandomState::default())
    }

    #[inline]
    pub(crate) fn hash(&self, key: &[u8]) -> u64 {
        self.0.hash_one(key)
    }
}

/// What a table update found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coherence {
    /// The table agrees with the change.
    Ok,
    /// The table cannot follow the change (a 64-bit collision of two keys, or a table that
    /// disagrees with the file): drop it.
    Lost,
}

/// Fast key hash → offset of the live block, in one flat open-addressing array.
///
/// Each slot is `[fast hash, packed]` with `packed = offset | min(value_len, 0xFFFF) << 48`,
/// so a lookup touches one cache line of the table and then the block, whose value address is
/// already known (the block's header and value lines load in parallel). Linear probing,
/// power-of-two capacity, load at most 5/8, backward-shift deletion; hash 0 marks an empty
/// slot (a key hashing to 0 is stored as 1: only the slot choice, never the key check, depends
/// on the stored hash).
#[derive(Debug, Default)]
pub(crate) struct KeyTable {
    slots: Vec<[u64; 2]>,
    len: usize,
    /// Per bucket, the offset of the last block of its chain (0: empty chain), for bucket
    /// counts up to [`MAX_TAIL_BUCKETS`]: new keys are then linked without walking the chain.
    tails: Option<Vec<u64>>,
}

/// Largest bucket count for which chain tails are kept (16 MiB).
pub(crate) const MAX_TAIL_BUCKETS: u64 = 1 << 21;

/// Offset bits of a packed slot value.
const POS_MASK: u64 = (1 << 48) - 1;
/// Packed value length meaning "at least 0xFFFF: read it from the block".
pub(crate) const VLEN_UNKNOWN: u64 = 0xFFFF;

#[inline]
fn stored(fast: u64) -> u64 {
    fast.max(1)
}

#[inline]
fn pack(pos: u64, vlen: u64) -> u64 {
    (pos & POS_MASK) | (vlen.min(VLEN_UNKNOWN) << 48)
}

impl KeyTable {
    pub(crate) fn with_capacity(n: usize) -> Self {
        let mut t = KeyTable::default();
        t.resize(Self::capacity_for(n));
        t
    }

    /// A table for a file without keys, with `n_buckets` empty chains.
    pub(crate) fn empty(n_buckets: u64) -> Self {
        let mut t = Self::with_capacity(0);
        t.tails = empty_tails(n_buckets);
        t
    }

    /// Tail block of `bucket` (0: empty chain), if tails are kept.
    #[inline]
    pub(crate) fn tail(&self, bucket: u64) -> Option<u64> {
        let b = usize::try_from(bucket).ok()?;
        self.tails.as_ref()?.get(b).copied()
    }

    /// Record that `pos` is now the last block of `bucket`'s chain.
    #[inline]
    pub(crate) fn set_tail(&mut self, bucket: u64, pos: u64) {
        if let Some(t) = self
            .tails
            .as_mut()
            .and_then(|t| t.get_mut(usize::try_from(bucket).ok()?))
        {
            *t = pos;
        }
    }

    /// Replace the tails (after a build or a reindex).
    pub(crate) fn set_tails(&mut self, tails: Option<Vec<u64>>) {
        self.tails = tails;
    }

    /// Whether tails are kept.
    pub(crate) fn has_tails(&self) -> bool {
        self.tails.is_some()
    }

    fn capacity_for(n: usize) -> usize {
        (n.saturating_mul(8) / 5 + 1).next_power_of_two().max(16)
    }

    fn resize(&mut self, cap: usize) {
        let old = std::mem::replace(&mut self.slots, vec![[0, 0]; cap]);
        let mask = cap - 1;
        for [h, v] in old {
            if h != 0 {
                let mut i = (h as usize) & mask;
                while self.slots.get(i).is_some_and(|s| s[0] != 0) {
                    i = (i + 1) & mask;
                }
                if let Some(s) = self.slots.get_mut(i) {
                    *s = [h, v];
                }
            }
        }
    }

    /// Slot index of `fast`, or None.
    #[inline]
    fn slot_of(&self, fast: u64) -> Option<usize> {
        let h = stored(fast);
        let mask = self.slots.len().checked_sub(1)?;
        let mut i = (h as usize) & mask;
        loop {
            let s = self.slots.get(i)?;
            if s[0] == h {
                return Some(i);
            }
            if s[0] == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// (block offset, value length or [`VLEN_UNKNOWN`]) of the key with this fast hash.
    #[inline]
    pub(crate) fn get(&self, fast: u64) -> Option<(u64, u64)> {
        let v = self.slots.get(self.slot_of(fast)?)?[1];
        Some((v & POS_MASK, v >> 48))
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// A key that was not in the file now lives at `pos` (one probe: the run is searched for
    /// the hash and the new entry goes in the empty slot that ends it).
    #[inline]
    pub(crate) fn insert_new(&mut self, fast: u64, pos: u64, vlen: u64) -> Coherence {
        if (self.len + 1) * 8 > self.slots.len() * 5 {
            // Grow 4x while small (less rehashing while a new file fills), then 2x.
            let factor = if self.slots.len() < 1 << 20 { 4 } else { 2 };
            self.resize(Self::capacity_for(self.len + 1).max(self.slots.len() * factor));
        }
        let h = stored(fast);
        let mask = self.slots.len() - 1;
        let mut i = (h as usize) & mask;
        loop {
            match self.slots.get_mut(i) {
                Some(s) if s[0] == h => return Coherence::Lost,
                Some(s) if s[0] == 0 => {
                    *s = [h, pack(pos, vlen)];
                    self.len += 1;
                    return Coherence::Ok;
                }
                Some(_) => i = (i + 1) & mask,
                None => return Coherence::Lost,
            }
        }
    }

    /// The key whose block was at `old` now lives at `new`.
    #[inline]
    pub(crate) fn moved(&mut self, fast: u64, old: u64, new: u64, vlen: u64) -> Coherence {
        match self.slot_of(fast).and_then(|i| self.slots.get_mut(i)) {
            Some(s) if s[1] & POS_MASK == old => {
                s[1] = pack(new, vlen);
                Coherence::Ok
            }
            _ => Coherence::Lost,
        }
    }

    /// The key whose block was at `pos` was deleted.
    pub(crate) fn removed(&mut self, fast: u64, pos: u64) -> Coherence {
        let Some(mut hole) = self.slot_of(fast) else {
            return Coherence::Lost;
        };
        if self.slots.get(hole).is_none_or(|s| s[1] & POS_MASK != pos) {
            return Coherence::Lost;
        }
        // Backward-shift deletion: pull later entries of the probe run into the hole when
        // their home slot is not after it (cyclically).
        let mask = self.slots.len() - 1;
        let mut i = hole;
        loop {
            i = (i + 1) & mask;
            let Some(&s) = self.slots.get(i) else { break };
            if s[0] == 0 {
                break;
            }
            let home = (s[0] as usize) & mask;
            let dist_here = i.wrapping_sub(home) & mask;
            let dist_hole = i.wrapping_sub(hole) & mask;
            if dist_here >= dist_hole {
                if let Some(h) = self.slots.get_mut(hole) {
                    *h = s;
                }
                hole = i;
            }
        }
        if let Some(h) = self.slots.get_mut(hole) {
            *h = [0, 0];
        }
        self.len -= 1;
        Coherence::Ok
    }
}

/// Tails of `n_buckets` empty chains (None above [`MAX_TAIL_BUCKETS`]).
pub(crate) fn empty_tails(n_buckets: u64) -> Option<Vec<u64>> {
    if n_buckets > MAX_TAIL_BUCKETS {
        return None;
    }
    Some(vec![0; usize::try_from(n_buckets).ok()?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_report_incoherence() {
        let mut t = KeyTable::with_capacity(4);
        assert_eq!(t.insert_new(7, 100, 5), Coherence::Ok);
        assert_eq!(t.insert_new(7, 200, 5), Coherence::Lost);
        let mut t = KeyTable::with_capacity(4);
        assert_eq!(t.insert_new(7, 100, 5), Coherence::Ok);
        assert_eq!(t.moved(7, 100, 300, 1 << 20), Coherence::Ok);
        assert_eq!(t.get(7), Some((300, VLEN_UNKNOWN)));
        assert_eq!(t.moved(7, 100, 400, 1), Coherence::Lost);
        assert_eq!(t.removed(7, 999), Coherence::Lost);
        assert_eq!(t.removed(7, 300), Coherence::Ok);
        assert_eq!(t.get(7), None);
        assert_eq!(t.len(), 0);
        assert_eq!(t.removed(7, 300), Coherence::Lost);
        // Hash 0 is a valid key hash.
        assert_eq!(t.insert_new(0, 44, 0), Coherence::Ok);
        assert_eq!(t.get(0), Some((44, 0)));
    }

    #[test]
    fn matches_a_model_under_clustered_inserts_and_deletes() {
        // Hashes that share their low bits build long probe runs that wrap around the end.
        let mut t = KeyTable::with_capacity(0);
        let mut model = std::collections::HashMap::new();
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        for step in 0..20_000u64 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let fast = (rng % 300) << 40 | (rng % 7) | 0xF0;
            let pos = step + 1000;
            if rng.is_multiple_of(3) {
                if let Some(&p) = model.get(&fast) {
                    assert_eq!(t.removed(fast, p), Coherence::Ok);
                    model.remove(&fast);
                } else {
                    assert_eq!(t.removed(fast, pos), Coherence::Lost);
                }
            } else if let Some(&p) = model.get(&fast) {
                assert_eq!(t.moved(fast, p, pos, 9), Coherence::Ok);
                model.insert(fast, pos);
            } else {
                assert_eq!(t.insert_new(fast, pos, 9), Coherence::Ok);
                model.insert(fast, pos);
            }
            assert_eq!(t.len(), model.len());
        }
        for (&f, &p) in &model {
            assert_eq!(t.get(f), Some((p, 9)));
        }
        for f in 0..400u64 {
            let f = f << 40 | 0xF3;
            assert_eq!(t.get(f).map(|x| x.0), model.get(&f).copied());
        }
    }

    #[test]
    fn tails() {
        let mut t = KeyTable::empty(3);
        assert!(t.has_tails());
        assert_eq!(t.tail(2), Some(0));
        t.set_tail(2, 500);
        assert_eq!(t.tail(2), Some(500));
        assert_eq!(t.tail(3), None);
        assert!(!KeyTable::empty(MAX_TAIL_BUCKETS + 1).has_tails());
        t.set_tails(None);
        assert_eq!(t.tail(2), None);
    }

    #[test]
    fn fast_hash_is_per_handle_and_stable() {
        let a = FastHasher::new();
        assert_eq!(a.hash(b"key"), a.hash(b"key"));
        assert_ne!(a.hash(b"key"), a.hash(b"kez"));
    }
}
