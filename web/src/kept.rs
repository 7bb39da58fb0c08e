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
    /// Keys being computed, each with the lock its computation holds: a request that misses
    /// while another computes the same answer waits for it instead of computing it again.
    computing: Mutex<HashMap<K, Arc<tokio::sync::Mutex<()>>>>,
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
            computing: Mutex::new(HashMap::new()),
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

    /// The answer kept for `key`, or the one `compute` gives, kept. Requests that miss at once
    /// compute it once: the others wait for the first and take its answer.
    ///
    /// # Errors
    /// Whatever `compute` returns; nothing is kept then (a waiting request computes again).
    pub async fn get_or_compute<E, F>(&self, key: K, compute: F) -> Result<Arc<V>, E>
    where
        F: Future<Output = Result<V, E>>,
    {
        if let Some(kept) = self.get(&key) {
            return Ok(kept);
        }
        let Some(turn) = self
            .computing
            .lock()
            .ok()
            .map(|mut computing| Arc::clone(computing.entry(key.clone()).or_default()))
        else {
            return compute.await.map(Arc::new);
        };
        let answer = {
            let _turn = turn.lock().await;
            match self.get(&key) {
                Some(kept) => Ok(kept),
                None => compute.await.map(|fresh| {
                    let fresh = Arc::new(fresh);
                    self.put(key.clone(), Arc::clone(&fresh));
                    fresh
                }),
            }
        };
        if let Ok(mut computing) = self.computing.lock()
            && computing.get(&key).is_some_and(|t| Arc::ptr_eq(t, &turn))
        {
            computing.remove(&key);
        }
        answer
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn requests_that_miss_at_once_compute_once() {
        let cache: Arc<Kept<u8, u8>> = Arc::new(Kept::new(4));
        let computed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let (cache, computed) = (Arc::clone(&cache), Arc::clone(&computed));
                tokio::spawn(async move {
                    cache
                        .get_or_compute(1, async {
                            computed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                            Ok::<_, ()>(9)
                        })
                        .await
                })
            })
            .collect();
        for task in tasks {
            assert_eq!(task.await.unwrap().as_deref(), Ok(&9));
        }
        assert_eq!(computed.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(
            cache.computing.lock().unwrap().is_empty(),
            "no lock left behind"
        );
    }
}
