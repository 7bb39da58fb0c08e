//! The `booklet_ops` workload, shared by the criterion suite and the `ops_worker` example
//! (`bench-run interleave`): the same keys, values and setups on both.
//!
//! Keys are 12 random lowercase letters, values 200 random `[A-Za-z0-9]` characters, key and
//! value serializers `str`, no item timestamps, 12007 initial buckets, 4 MiB buffer, files in
//! the system temp directory, as Python booklet's `benchmarks/bench.py` and
//! `tools/booklet_python_bench.py`.

#![allow(dead_code, reason = "each user takes what it needs")]

use std::path::{Path, PathBuf};

use booklet::{Booklet, Flag, OpenOptions, ReadMode, Serializer};

/// Key counts of the suite.
pub const SIZES: [usize; 3] = [1_000, 10_000, 50_000];

/// Seed 003's operations plus `random_read_cold`, in the order the interleave workers (ours
/// and `tools/booklet_python_worker.py`) announce them.
pub const OPS: [&str; 13] = [
    "seq_write",
    "bulk_update",
    "random_read",
    "random_read_cold",
    "random_read_miss",
    "contains",
    "iter_keys",
    "iter_values",
    "iter_items",
    "overwrite",
    "delete",
    "mixed_rw_80r",
    "prune",
];

/// One size's keys and values, and the orders the operations visit them in.
pub struct Data {
    pub keys: Vec<Vec<u8>>,
    pub values: Vec<Vec<u8>>,
    pub new_values: Vec<Vec<u8>>,
    pub shuffled: Vec<usize>,
    pub misses: Vec<Vec<u8>>,
    pub contains: Vec<Vec<u8>>,
}

impl Data {
    /// The keys in shuffled order as a list of references, as the Python anchor's
    /// `shuffled = list(keys); rng.shuffle(shuffled)`: one pointer array read in order, one
    /// random access per key object.
    pub fn shuffled_keys(&self) -> Vec<&[u8]> {
        self.shuffled
            .iter()
            .map(|&i| self.keys[i].as_slice())
            .collect()
    }

    /// mixed_rw_80r's operations, `(write?, key, value)`: 80 % reads of the first half of the
    /// keys (which the setup writes), 20 % writes of new keys, seeded like the dataset.
    pub fn mixed_ops(&self) -> Vec<(bool, &[u8], &[u8])> {
        let n = self.keys.len();
        let half = n / 2;
        let mut rng = fastrand::Rng::with_seed(7);
        let mut next_new = half;
        (0..n)
            .map(|_| {
                let (write, i) = if rng.f64() < 0.8 || next_new >= n {
                    (false, rng.usize(0..half))
                } else {
                    next_new += 1;
                    (true, next_new - 1)
                };
                (write, self.keys[i].as_slice(), self.values[i].as_slice())
            })
            .collect()
    }
}

/// mixed_rw_80r's timed part: `ops` on a handle from [`half_filled`] (reads with `get`, which
/// syncs a key still in the write buffer first, as Python does), then sync.
pub fn run_mixed(db: &mut Booklet, ops: &[(bool, &[u8], &[u8])]) {
    for &(write, k, v) in ops {
        if write {
            db.set(k, v).unwrap();
        } else {
            std::hint::black_box(db.get(k).unwrap());
        }
    }
    db.sync().unwrap();
}

/// The dataset of `n` keys (seeded: every run and every user sees the same one).
pub fn dataset(n: usize) -> Data {
    let mut rng = fastrand::Rng::with_seed(42);
    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    // A BTreeSet, not a HashSet: no random hash seed, so the heap looks the same on every run
    // (instruction-count suites simulate the cache, which sees addresses).
    let mut seen = std::collections::BTreeSet::new();
    let mut keys = Vec::with_capacity(n);
    while keys.len() < n {
        let k: Vec<u8> = (0..12).map(|_| rng.u8(b'a'..=b'z')).collect();
        if seen.insert(k.clone()) {
            keys.push(k);
        }
    }
    let mut value = || {
        (0..200)
            .map(|_| ALNUM[rng.usize(0..ALNUM.len())])
            .collect::<Vec<u8>>()
    };
    let values: Vec<Vec<u8>> = (0..n).map(|_| value()).collect();
    let new_values: Vec<Vec<u8>> = (0..n).map(|_| value()).collect();
    let mut shuffled: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut shuffled);
    let mut misses: Vec<Vec<u8>> = keys.iter().map(|k| [b"!".as_slice(), k].concat()).collect();
    rng.shuffle(&mut misses);
    let mut contains: Vec<Vec<u8>> = keys.iter().cloned().chain(misses.iter().cloned()).collect();
    rng.shuffle(&mut contains);
    Data {
        keys,
        values,
        new_values,
        shuffled,
        misses,
        contains,
    }
}

/// The suite's open options (str serializers, no timestamps, defaults otherwise).
pub fn options() -> OpenOptions {
    OpenOptions::new()
        .key_serializer(Serializer::Str)
        .value_serializer(Serializer::Str)
        .timestamps(false)
}

/// A file path in its own temporary directory, removed on drop.
pub struct Tmp {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

pub fn tmp() -> Tmp {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.blt");
    Tmp { _dir: dir, path }
}

/// A new file at `path` with every key written and synced, still open.
pub fn write_all(path: &Path, d: &Data) -> Booklet {
    let mut db = options().open(path, Flag::New).unwrap();
    for (k, v) in d.keys.iter().zip(&d.values) {
        db.set(k, v).unwrap();
    }
    db.sync().unwrap();
    db
}

/// A written, closed file reopened read-only.
pub fn reader(d: &Data, mode: ReadMode) -> (Tmp, Booklet) {
    let t = tmp();
    write_all(&t.path, d).close().unwrap();
    let db = options().read_mode(mode).open(&t.path, Flag::Read).unwrap();
    (t, db)
}

/// mixed_rw_80r's starting point: the first half of the keys written and synced.
pub fn half_filled(d: &Data) -> (Tmp, Booklet) {
    let t = tmp();
    let mut db = options().open(&t.path, Flag::New).unwrap();
    for i in 0..d.keys.len() / 2 {
        db.set(&d.keys[i], &d.values[i]).unwrap();
    }
    db.sync().unwrap();
    (t, db)
}

/// prune's starting point: every key written, half overwritten, a quarter deleted
/// (`n / 2 + n / 4` dead blocks).
pub fn to_prune(d: &Data) -> (Tmp, Booklet) {
    let n = d.keys.len();
    let t = tmp();
    let mut db = write_all(&t.path, d);
    for i in 0..n / 2 {
        db.set(&d.keys[i], &d.new_values[i]).unwrap();
    }
    db.sync().unwrap();
    for i in 0..n / 4 {
        db.delete(&d.keys[i]).unwrap();
    }
    (t, db)
}
