//! The dashboard's verdicts, kept: the comparison of a newest run with its baseline under the
//! default settings. It never changes once both runs exist (the ledger is append-only, and a
//! run's history is the runs recorded before it, with smaller ids), so a verdict computed once
//! serves every later view; the dashboard re-compares only runs recorded since.

use bench_analysis::compare::Comparison;
use bench_model::RunId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Project, base run, head run.
type Key = (String, RunId, RunId);

/// A clock of uses, and each verdict with its last use.
type Entries = (u64, HashMap<Key, (u64, Arc<Comparison>)>);

/// At most `capacity` verdicts, the least recently used dropped first.
#[derive(Debug)]
pub struct VerdictCache {
    capacity: usize,
    entries: Mutex<Entries>,
}

impl VerdictCache {
    /// A cache of at most `capacity` verdicts (0: none kept).
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            entries: Mutex::new((0, HashMap::new())),
        }
    }

    /// The verdict on `base` against `head` in `project`, when kept.
    #[must_use]
    pub fn get(&self, project: &str, base: RunId, head: RunId) -> Option<Arc<Comparison>> {
        let mut entries = self.entries.lock().ok()?;
        entries.0 += 1;
        let clock = entries.0;
        let entry = entries.1.get_mut(&(project.to_owned(), base, head))?;
        entry.0 = clock;
        Some(Arc::clone(&entry.1))
    }

    /// Keeps `comparison`.
    pub fn put(&self, project: &str, base: RunId, head: RunId, comparison: Arc<Comparison>) {
        if self.capacity == 0 {
            return;
        }
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        entries.0 += 1;
        let clock = entries.0;
        let key = (project.to_owned(), base, head);
        if !entries.1.contains_key(&key) && entries.1.len() >= self.capacity {
            let oldest = entries
                .1
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                entries.1.remove(&oldest);
            }
        }
        entries.1.insert(key, (clock, comparison));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    fn comparison() -> Arc<Comparison> {
        Arc::new(bench_analysis::compare::compare(
            &[],
            &[],
            &bench_model::History::default(),
            &bench_analysis::compare::CompareConfig::default(),
        ))
    }

    #[test]
    fn verdicts_are_kept_per_project_and_the_least_recent_goes_first() {
        let cache = VerdictCache::new(2);
        cache.put("a", 1, 2, comparison());
        assert!(cache.get("a", 1, 2).is_some());
        assert!(
            cache.get("b", 1, 2).is_none(),
            "another project's runs 1 and 2"
        );
        cache.put("a", 2, 3, comparison());
        assert!(cache.get("a", 1, 2).is_some());
        cache.put("a", 3, 4, comparison());
        assert!(
            cache.get("a", 2, 3).is_none(),
            "the least recently used went"
        );
        assert!(cache.get("a", 1, 2).is_some() && cache.get("a", 3, 4).is_some());
        let none = VerdictCache::new(0);
        none.put("a", 1, 2, comparison());
        assert!(none.get("a", 1, 2).is_none());
    }
}
