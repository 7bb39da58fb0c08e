//! `booklet_ops`: seed 003's operation table on this crate, at 1K, 10K and 50K keys.
//!
//! Same workload as Python booklet's `benchmarks/bench.py` and `tools/booklet_python_bench.py`:
//! keys are 12 random lowercase letters, values 200 random `[A-Za-z0-9]` characters, key and
//! value serializers `str`, no item timestamps, 12007 initial buckets, 4 MiB buffer, files in
//! the system temp directory. Each benchmark's timed region is the one of the seed table, and
//! throughput is in elements (operations), so criterion reports ops/s:
//!
//! | op | timed |
//! |---|---|
//! | seq_write | open `n` + N sets + sync + close |
//! | bulk_update | open `n` + update(all) + sync + close |
//! | random_read | N gets of shuffled present keys on a read-only handle (`get_str`: the value borrowed from the map and checked as UTF-8, as Python's `str` serializer decodes it) |
//! | random_read_owned | the same with `get` (an owned `Vec` per value, turned into a `String`) |
//! | random_read_cold | the random_read pass once on a freshly opened handle (opening untimed): includes building the key table |
//! | random_read_miss | N `get_ref` of absent keys (`'!' + key`) |
//! | contains | N present + N absent keys, shuffled (2N elements) |
//! | iter_keys / iter_values / iter_items | one full iteration, UTF-8 checked like Python's str decode |
//! | overwrite | N sets of new values + sync on an open writer |
//! | delete | N deletes (each writes through) |
//! | mixed_rw_80r | N ops: 80 % gets (owned, `get`) of pre-filled keys, 20 % sets of new keys, then sync |
//! | prune | prune() after N writes, N/2 overwrites and N/4 deletes (includes its fsyncs) |
//!
//! Read benchmarks time passes over a handle that has already run them (criterion's warm-up;
//! the anchor times its second pass too), so the handle's key table is built;
//! `random_read_cold` shows the first pass. Read benchmarks run on the mmap path; `*_buffered`
//! variants run the same reads with
//! positioned reads (`ReadMode::Buffered`) for the mmap-vs-buffered comparison.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks fail loudly"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use booklet::{Booklet, Flag, OpenOptions, ReadMode, Serializer};
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const SIZES: [usize; 3] = [1_000, 10_000, 50_000];

struct Data {
    keys: Vec<Vec<u8>>,
    values: Vec<Vec<u8>>,
    new_values: Vec<Vec<u8>>,
    shuffled: Vec<usize>,
    misses: Vec<Vec<u8>>,
    contains: Vec<Vec<u8>>,
}

fn dataset(n: usize) -> Data {
    let mut rng = fastrand::Rng::with_seed(42);
    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut seen = std::collections::HashSet::new();
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

fn options() -> OpenOptions {
    OpenOptions::new()
        .key_serializer(Serializer::Str)
        .value_serializer(Serializer::Str)
        .timestamps(false)
}

struct Tmp {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn tmp() -> Tmp {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.blt");
    Tmp { _dir: dir, path }
}

fn write_all(path: &Path, d: &Data) -> Booklet {
    let mut db = options().open(path, Flag::New).unwrap();
    for (k, v) in d.keys.iter().zip(&d.values) {
        db.set(k, v).unwrap();
    }
    db.sync().unwrap();
    db
}

/// A written, closed file reopened read-only.
fn reader(d: &Data, mode: ReadMode) -> (Tmp, Booklet) {
    let t = tmp();
    write_all(&t.path, d).close().unwrap();
    let db = options().read_mode(mode).open(&t.path, Flag::Read).unwrap();
    (t, db)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("booklet_ops");
    for n in SIZES {
        let d = dataset(n);
        // The keys in shuffled order as a list of references, as the Python anchor's
        // `shuffled = list(keys); rng.shuffle(shuffled)`: one pointer array read in order, one
        // random access per key object.
        let shuffled: Vec<&[u8]> = d.shuffled.iter().map(|&i| d.keys[i].as_slice()).collect();
        let elems = Throughput::Elements(n as u64);
        g.throughput(elems.clone());

        g.bench_function(BenchmarkId::new("seq_write", n), |b| {
            b.iter_batched_ref(
                tmp,
                |t| {
                    let mut db = options().open(&t.path, Flag::New).unwrap();
                    for (k, v) in d.keys.iter().zip(&d.values) {
                        db.set(k, v).unwrap();
                    }
                    db.sync().unwrap();
                    db.close().unwrap();
                },
                BatchSize::PerIteration,
            );
        });

        g.bench_function(BenchmarkId::new("bulk_update", n), |b| {
            b.iter_batched_ref(
                tmp,
                |t| {
                    let mut db = options().open(&t.path, Flag::New).unwrap();
                    db.update(d.keys.iter().zip(&d.values)).unwrap();
                    db.sync().unwrap();
                    db.close().unwrap();
                },
                BatchSize::PerIteration,
            );
        });

        // One pass of gets on a freshly opened read handle (opening untimed, as in the anchor):
        // includes the lazy build of the handle's key table after n / 2 hash walks.
        {
            let t = tmp();
            write_all(&t.path, &d).close().unwrap();
            g.bench_function(BenchmarkId::new("random_read_cold", n), |b| {
                b.iter_batched_ref(
                    || options().open(&t.path, Flag::Read).unwrap(),
                    |db| {
                        for k in &shuffled {
                            black_box(db.get_str(k).unwrap().unwrap().len());
                        }
                    },
                    BatchSize::PerIteration,
                );
            });
        }

        for (suffix, mode) in [("", ReadMode::Mmap), ("_buffered", ReadMode::Buffered)] {
            let (_t, mut db) = reader(&d, mode);
            g.bench_function(BenchmarkId::new(format!("random_read{suffix}"), n), |b| {
                b.iter(|| {
                    for k in &shuffled {
                        black_box(db.get_str(k).unwrap().unwrap().len());
                    }
                });
            });
            g.bench_function(
                BenchmarkId::new(format!("random_read_owned{suffix}"), n),
                |b| {
                    b.iter(|| {
                        for k in &shuffled {
                            let v = db.get(k).unwrap().unwrap();
                            black_box(String::from_utf8(v).unwrap().len());
                        }
                    });
                },
            );
            g.bench_function(
                BenchmarkId::new(format!("random_read_miss{suffix}"), n),
                |b| {
                    b.iter(|| {
                        for k in &d.misses {
                            black_box(db.get_ref(k).unwrap());
                        }
                    });
                },
            );
            g.throughput(Throughput::Elements(2 * n as u64));
            g.bench_function(BenchmarkId::new(format!("contains{suffix}"), n), |b| {
                b.iter(|| {
                    for k in &d.contains {
                        black_box(db.contains(k).unwrap());
                    }
                });
            });
            g.throughput(elems.clone());
            g.bench_function(BenchmarkId::new(format!("iter_keys{suffix}"), n), |b| {
                b.iter(|| {
                    let mut count = 0usize;
                    for e in db.iter().unwrap() {
                        count += booklet::serial::decode_str(&e.unwrap().key).unwrap().len();
                    }
                    black_box(count)
                });
            });
            g.bench_function(BenchmarkId::new(format!("iter_values{suffix}"), n), |b| {
                b.iter(|| {
                    let mut count = 0usize;
                    for e in db.iter().unwrap() {
                        count += booklet::serial::decode_str(&e.unwrap().value)
                            .unwrap()
                            .len();
                    }
                    black_box(count)
                });
            });
            g.bench_function(BenchmarkId::new(format!("iter_items{suffix}"), n), |b| {
                b.iter(|| {
                    let mut count = 0usize;
                    for e in db.iter().unwrap() {
                        let e = e.unwrap();
                        count += booklet::serial::decode_str(&e.key).unwrap().len();
                        count += booklet::serial::decode_str(&e.value).unwrap().len();
                    }
                    black_box(count)
                });
            });
        }

        g.bench_function(BenchmarkId::new("overwrite", n), |b| {
            b.iter_batched_ref(
                || {
                    let t = tmp();
                    let db = write_all(&t.path, &d);
                    (t, db)
                },
                |(_t, db)| {
                    for (k, v) in d.keys.iter().zip(&d.new_values) {
                        db.set(k, v).unwrap();
                    }
                    db.sync().unwrap();
                },
                BatchSize::PerIteration,
            );
        });

        g.bench_function(BenchmarkId::new("delete", n), |b| {
            b.iter_batched_ref(
                || {
                    let t = tmp();
                    let db = write_all(&t.path, &d);
                    (t, db)
                },
                |(_t, db)| {
                    for k in &shuffled {
                        db.delete(k).unwrap();
                    }
                },
                BatchSize::PerIteration,
            );
        });

        // 80 % reads of pre-filled keys, 20 % writes of new keys (seeded like the dataset).
        let half = n / 2;
        let mut rng = fastrand::Rng::with_seed(7);
        let mut next_new = half;
        // (write?, key, value) per op, as the anchor's list of tuples.
        let ops: Vec<(bool, &[u8], &[u8])> = (0..n)
            .map(|_| {
                let (write, i) = if rng.f64() < 0.8 || next_new >= n {
                    (false, rng.usize(0..half))
                } else {
                    next_new += 1;
                    (true, next_new - 1)
                };
                (write, d.keys[i].as_slice(), d.values[i].as_slice())
            })
            .collect();
        g.bench_function(BenchmarkId::new("mixed_rw_80r", n), |b| {
            b.iter_batched_ref(
                || {
                    let t = tmp();
                    let mut db = options().open(&t.path, Flag::New).unwrap();
                    for i in 0..half {
                        db.set(&d.keys[i], &d.values[i]).unwrap();
                    }
                    db.sync().unwrap();
                    (t, db)
                },
                |(_t, db)| {
                    for &(write, k, v) in &ops {
                        if write {
                            db.set(k, v).unwrap();
                        } else {
                            black_box(db.get(k).unwrap());
                        }
                    }
                    db.sync().unwrap();
                },
                BatchSize::PerIteration,
            );
        });

        g.bench_function(BenchmarkId::new("prune", n), |b| {
            b.iter_batched_ref(
                || {
                    let t = tmp();
                    let mut db = write_all(&t.path, &d);
                    for i in 0..n / 2 {
                        db.set(&d.keys[i], &d.new_values[i]).unwrap();
                    }
                    db.sync().unwrap();
                    for i in 0..n / 4 {
                        db.delete(&d.keys[i]).unwrap();
                    }
                    (t, db)
                },
                |(_t, db)| {
                    let removed = db.prune(None, &[]).unwrap();
                    assert_eq!(removed as usize, n / 2 + n / 4);
                },
                BatchSize::PerIteration,
            );
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
