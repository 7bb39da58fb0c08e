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
//! * Memory: one `(u64, u64)` entry per live key in a `HashMap`, about 20-40 bytes per key.
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

/// Fast key hash → offset of the live block.
#[derive(Debug, Default)]
pub(crate) struct KeyTable {
    map: HashKeyed<u64>,
}

impl KeyTable {
    pub(crate) fn with_capacity(n: usize) -> Self {
        KeyTable {
            map: HashKeyed::with_capacity_and_hasher(n, BuildHasherDefault::default()),
        }
    }

    #[inline]
    pub(crate) fn get(&self, fast: u64) -> Option<u64> {
        self.map.get(&fast).copied()
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// A key that was not in the file now lives at `pos`.
    #[inline]
    pub(crate) fn insert_new(&mut self, fast: u64, pos: u64) -> Coherence {
        match self.map.insert(fast, pos) {
            None => Coherence::Ok,
            Some(_) => Coherence::Lost,
        }
    }

    /// The key whose block was at `old` now lives at `new`.
    #[inline]
    pub(crate) fn moved(&mut self, fast: u64, old: u64, new: u64) -> Coherence {
        match self.map.get_mut(&fast) {
            Some(p) if *p == old => {
                *p = new;
                Coherence::Ok
            }
            _ => Coherence::Lost,
        }
    }

    /// The key whose block was at `pos` was deleted.
    #[inline]
    pub(crate) fn removed(&mut self, fast: u64, pos: u64) -> Coherence {
        match self.map.get(&fast) {
            Some(&p) if p == pos => {
                self.map.remove(&fast);
                Coherence::Ok
            }
            _ => Coherence::Lost,
        }
    }

    /// Insert during a build: `Ok(true)` if added, `Ok(false)` if the same key is already there
    /// (a later block of the same hash in a chain, which the hash walk never reaches).
    pub(crate) fn insert_built(
        &mut self,
        fast: u64,
        pos: u64,
        same_key: impl FnOnce(u64) -> bool,
    ) -> Coherence {
        match self.map.get(&fast) {
            None => {
                self.map.insert(fast, pos);
                Coherence::Ok
            }
            Some(&old) if same_key(old) => Coherence::Ok,
            Some(_) => Coherence::Lost,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_report_incoherence() {
        let mut t = KeyTable::with_capacity(4);
        assert_eq!(t.insert_new(7, 100), Coherence::Ok);
        assert_eq!(t.insert_new(7, 200), Coherence::Lost);
        let mut t = KeyTable::with_capacity(4);
        assert_eq!(t.insert_new(7, 100), Coherence::Ok);
        assert_eq!(t.moved(7, 100, 300), Coherence::Ok);
        assert_eq!(t.get(7), Some(300));
        assert_eq!(t.moved(7, 100, 400), Coherence::Lost);
        assert_eq!(t.removed(7, 999), Coherence::Lost);
        assert_eq!(t.removed(7, 300), Coherence::Ok);
        assert_eq!(t.get(7), None);
        assert_eq!(t.len(), 0);
        assert_eq!(t.insert_built(9, 10, |_| true), Coherence::Ok);
        assert_eq!(t.insert_built(9, 20, |old| old == 10), Coherence::Ok);
        assert_eq!(t.get(9), Some(10));
        assert_eq!(t.insert_built(9, 30, |_| false), Coherence::Lost);
    }

    #[test]
    fn fast_hash_is_per_handle_and_stable() {
        let a = FastHasher::new();
        assert_eq!(a.hash(b"key"), a.hash(b"key"));
        assert_ne!(a.hash(b"key"), a.hash(b"kez"));
    }
}
