//! Answers kept between requests because they can never change. The ledger is append-only and
//! a run's history is the runs recorded before it (smaller ids), so what two stored runs say
//! against each other (their evidence, their comparison under given settings) is fixed once
//! both exist: computed once, it serves every later view. A `bench-run ab` pair is stored with
//! its pairing in one transaction, so a pair is never seen unpaired.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

/// At most `capacity` answers, the least recently used dropped first.
#[derive(Debug)]
pub struct Kept<K, V> {
    capacity: usize,
    entries: Mutex<Entries<K, V>>,
}

/// A clock of uses, and each answer with its last use.
#[derive(Debug)]
struct Entries<K, V> {
    clock: u64,
    map: HashMap<K, (u64, Arc<V>)>,
}

impl<K: Eq + Hash + Clone, V> Kept<K, V> {
    /// A cache of at most `capacity` answers (0: none kept).
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            entries: Mutex::new(Entries {
                clock: 0,
                map: HashMap::new(),
            }),
        }
    }

    /// The answer kept for `key`.
    #[must_use]
    pub fn get(&self, key: &K) -> Option<Arc<V>> {
        let mut entries = self.entries.lock().ok()?;
        entries.clock += 1;
        let clock = entries.clock;
        let entry = entries.map.get_mut(key)?;
        entry.0 = clock;
        Some(Arc::clone(&entry.1))
    }

    /// Keeps `value` as the answer for `key`.
    pub fn put(&self, key: K, value: Arc<V>) {
        if self.capacity == 0 {
            return;
        }
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        entries.clock += 1;
        let clock = entries.clock;
        if !entries.map.contains_key(&key) && entries.map.len() >= self.capacity {
            let oldest = entries
                .map
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                entries.map.remove(&oldest);
            }
        }
        entries.map.insert(key, (clock, value));
    }

    /// The answer kept for `key`, or the one `compute` gives, kept. Two requests that miss at
    /// once both compute (the answer is the same; the second insert replaces the first).
    ///
    /// # Errors
    /// Whatever `compute` returns; nothing is kept then.
    pub async fn get_or_compute<E, F>(&self, key: K, compute: F) -> Result<Arc<V>, E>
    where
        F: Future<Output = Result<V, E>>,
    {
        if let Some(kept) = self.get(&key) {
            return Ok(kept);
        }
        let fresh = Arc::new(compute.await?);
        self.put(key, Arc::clone(&fresh));
        Ok(fresh)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn answers_are_kept_by_key_and_the_least_recent_goes_first() {
        let cache: Kept<(&str, i64, i64), u32> = Kept::new(2);
        cache.put(("a", 1, 2), Arc::new(12));
        assert_eq!(cache.get(&("a", 1, 2)).as_deref(), Some(&12));
        assert!(
            cache.get(&("b", 1, 2)).is_none(),
            "another project's runs 1 and 2"
        );
        cache.put(("a", 2, 3), Arc::new(23));
        assert!(cache.get(&("a", 1, 2)).is_some());
        cache.put(("a", 3, 4), Arc::new(34));
        assert!(
            cache.get(&("a", 2, 3)).is_none(),
            "the least recently used went"
        );
        assert!(cache.get(&("a", 1, 2)).is_some() && cache.get(&("a", 3, 4)).is_some());
        let none: Kept<u8, u8> = Kept::new(0);
        none.put(1, Arc::new(1));
        assert!(none.get(&1).is_none());
    }

    #[tokio::test]
    async fn a_failed_computation_is_not_kept() {
        let cache: Kept<u8, u8> = Kept::new(4);
        let failed: Result<Arc<u8>, &str> = cache.get_or_compute(1, async { Err("down") }).await;
        assert!(failed.is_err());
        let fresh = cache.get_or_compute(1, async { Ok::<_, &str>(7) }).await;
        assert_eq!(fresh.as_deref(), Ok(&7));
        let kept = cache.get_or_compute(1, async { Ok::<_, &str>(8) }).await;
        assert_eq!(kept.as_deref(), Ok(&7), "computed once, kept after");
    }
}
