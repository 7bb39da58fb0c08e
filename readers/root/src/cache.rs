//! The basket cache: decompressed baskets shared by every reader of a file.
//!
//! An LRU keyed by the basket's file offset (unique within a file), holding `Arc` payloads so a
//! hit costs one atomic increment and no copy. It is bounded by the total decompressed bytes it
//! holds (default 256 MiB); inserting past the bound evicts the least recently used baskets.
//! A basket larger than the whole bound is returned to the caller but not kept. Readers call
//! [`BasketCache::make_room`] before reading a basket, so the basket in flight counts against
//! the bound too, and evicted memory is handed back to the system every sixteenth of the bound
//! (see `memory`): the resident memory of a scan follows the bound, not the file.
//!
//! Implementation: a `HashMap` from key to (payload, stamp) plus a `BTreeMap` from stamp to key
//! gives O(log n) touch and eviction; one `Mutex` guards both (the critical section is tiny
//! next to a decompression). Counters are atomics readable without the lock.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::basket::BasketData;

/// Counters of a [`BasketCache`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that had to read and decompress.
    pub misses: u64,
    /// Baskets dropped to stay within the bound.
    pub evicted: u64,
    /// Baskets currently held.
    pub entries: u64,
    /// Decompressed bytes currently held.
    pub bytes: u64,
    /// The bound in bytes.
    pub capacity: u64,
}

/// A basket's identity in a cache that several files may share: the file's id and the
/// basket's offset in it.
pub type BasketKey = (u32, u64);

#[derive(Default)]
struct Lru {
    map: HashMap<BasketKey, (Arc<BasketData>, u64)>,
    order: BTreeMap<u64, BasketKey>,
    bytes: usize,
    clock: u64,
    /// Bytes evicted since the allocator was last asked to return free memory.
    freed_since_trim: usize,
}

/// A thread-safe LRU cache of decompressed baskets, bounded by bytes.
pub struct BasketCache {
    lru: Mutex<Lru>,
    capacity: usize,
    hits: AtomicU64,
    misses: AtomicU64,
    evicted: AtomicU64,
}

impl std::fmt::Debug for BasketCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BasketCache")
            .field("stats", &self.stats())
            .finish()
    }
}

impl Default for BasketCache {
    fn default() -> Self {
        Self::new(Self::DEFAULT_CAPACITY)
    }
}

impl BasketCache {
    /// Default bound: 256 MiB of decompressed baskets.
    pub const DEFAULT_CAPACITY: usize = 256 << 20;

    /// A cache holding at most `capacity` decompressed bytes (0 disables caching).
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            lru: Mutex::new(Lru::default()),
            capacity,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Lru> {
        // A panic while holding the lock cannot leave the maps inconsistent in a way that
        // matters for a cache (worst case: a stale size count), so poisoning is ignored.
        self.lru
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The bound in bytes.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Looks up a basket by its file and offset, counting a hit or a miss.
    pub fn get(&self, seek: BasketKey) -> Option<Arc<BasketData>> {
        let mut lru = self.lock();
        lru.clock += 1;
        let now = lru.clock;
        let found = lru.map.get_mut(&seek).map(|(data, stamp)| {
            let old = std::mem::replace(stamp, now);
            (Arc::clone(data), old)
        });
        match found {
            Some((data, old)) => {
                lru.order.remove(&old);
                lru.order.insert(now, seek);
                drop(lru);
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(data)
            }
            None => {
                drop(lru);
                self.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Inserts a basket, evicting least recently used ones to stay within the bound.
    pub fn insert(&self, seek: BasketKey, data: Arc<BasketData>) {
        let size = data.heap_bytes();
        if size > self.capacity {
            return;
        }
        let mut lru = self.lock();
        lru.clock += 1;
        let now = lru.clock;
        if let Some((old, stamp)) = lru.map.insert(seek, (data, now)) {
            lru.order.remove(&stamp);
            lru.bytes -= old.heap_bytes();
        }
        lru.order.insert(now, seek);
        lru.bytes += size;
        self.evict_until(lru, self.capacity);
    }

    /// Evicts least recently used baskets until `bytes` more would fit within the bound (all
    /// of them if `bytes` alone exceeds it).
    ///
    /// A reader calls it before reading and decompressing a basket, so that the compressed
    /// record and the basket being built count against the bound too: the memory of a scan
    /// stays within the bound, not the bound plus the basket in flight.
    pub fn make_room(&self, bytes: usize) {
        if self.capacity == 0 {
            return;
        }
        let lru = self.lock();
        self.evict_until(lru, self.capacity.saturating_sub(bytes));
    }

    fn evict_until(&self, mut lru: MutexGuard<'_, Lru>, limit: usize) {
        let mut evicted = 0;
        let mut victims = Vec::new();
        while lru.bytes > limit {
            let Some((_, victim)) = lru.order.pop_first() else {
                break;
            };
            if let Some((old, _)) = lru.map.remove(&victim) {
                lru.bytes -= old.heap_bytes();
                lru.freed_since_trim += old.heap_bytes();
                evicted += 1;
                victims.push(old);
            }
        }
        // Every sixteenth of the bound evicted, hand the freed pages back (see `memory`).
        let trim = lru.freed_since_trim >= self.capacity / 16;
        if trim {
            lru.freed_since_trim = 0;
        }
        drop(lru);
        // Freed outside the lock (the last reference usually goes here).
        drop(victims);
        if evicted > 0 {
            self.evicted.fetch_add(evicted, Ordering::Relaxed);
        }
        if trim {
            crate::memory::release_free_memory();
        }
    }

    /// Drops every basket (counters are kept).
    pub fn clear(&self) {
        let mut lru = self.lock();
        lru.map.clear();
        lru.order.clear();
        lru.bytes = 0;
    }

    /// Current counters.
    #[must_use]
    pub fn stats(&self) -> CacheStats {
        let lru = self.lock();
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            evicted: self.evicted.load(Ordering::Relaxed),
            entries: lru.map.len() as u64,
            bytes: lru.bytes as u64,
            capacity: self.capacity as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn basket(n: usize) -> Arc<BasketData> {
        Arc::new(BasketData::for_test(vec![0u8; n]))
    }

    #[test]
    fn evicts_least_recently_used_within_the_byte_bound() {
        let cache = BasketCache::new(3000);
        cache.insert((0, 1), basket(1000));
        cache.insert((0, 2), basket(1000));
        cache.insert((0, 3), basket(1000));
        assert!(cache.get((0, 1)).is_some()); // 1 is now the most recent
        cache.insert((0, 4), basket(1000)); // evicts 2
        assert!(cache.get((0, 2)).is_none());
        assert!(cache.get((0, 1)).is_some());
        assert!(cache.get((0, 3)).is_some());
        assert!(cache.get((0, 4)).is_some());
        let s = cache.stats();
        assert_eq!((s.hits, s.misses, s.evicted, s.entries), (4, 1, 1, 3));
        assert!(s.bytes <= 3000);
    }

    #[test]
    fn make_room_evicts_for_a_basket_in_flight() {
        let cache = BasketCache::new(3000);
        for k in 1..=3 {
            cache.insert((0, k), basket(1000));
        }
        cache.make_room(1500); // two baskets must go, oldest first
        assert!(cache.get((0, 1)).is_none() && cache.get((0, 2)).is_none());
        assert!(cache.get((0, 3)).is_some());
        assert_eq!(cache.stats().evicted, 2);
        cache.make_room(10_000); // more than the bound: everything goes
        assert_eq!(cache.stats().entries, 0);
    }

    #[test]
    fn oversized_basket_is_not_kept_and_clear_empties() {
        let cache = BasketCache::new(500);
        cache.insert((0, 9), basket(1000));
        assert!(cache.get((0, 9)).is_none());
        cache.insert((0, 8), basket(100));
        cache.clear();
        assert_eq!(cache.stats().entries, 0);
        assert_eq!(cache.stats().bytes, 0);
    }

    #[test]
    fn is_shared_between_threads() {
        let cache = Arc::new(BasketCache::new(1 << 20));
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let cache = Arc::clone(&cache);
                s.spawn(move || {
                    for i in 0..100 {
                        cache.insert((0, t * 1000 + i), basket(100));
                        assert!(cache.get((0, t * 1000 + i)).is_some());
                    }
                });
            }
        });
        assert_eq!(cache.stats().entries, 400);
    }

    #[test]
    fn two_files_baskets_at_one_offset_are_two_baskets() {
        let cache = BasketCache::new(10_000);
        cache.insert((7, 1), basket(10));
        assert!(cache.get((8, 1)).is_none());
        assert!(cache.get((7, 1)).is_some());
    }
}
