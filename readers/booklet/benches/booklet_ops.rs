//! `booklet_ops`: seed 003's operation table on this crate, at 1K, 10K and 50K keys.
//!
//! The workload (in `common`, shared with the `ops_worker` example) is that of Python booklet's
//! `benchmarks/bench.py` and `tools/booklet_python_bench.py`: keys are 12 random lowercase
//! letters, values 200 random `[A-Za-z0-9]` characters, key and value serializers `str`, no
//! item timestamps, 12007 initial buckets, 4 MiB buffer, files in the system temp directory.
//! Each benchmark's timed region is the one of the seed table, and throughput is in elements
//! (operations), so criterion reports ops/s:
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
use std::time::Duration;

mod common;

use booklet::{Flag, ReadMode};
use common::{SIZES, dataset, half_filled, options, reader, run_mixed, tmp, to_prune, write_all};
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("booklet_ops");
    for n in SIZES {
        let d = dataset(n);
        let shuffled = d.shuffled_keys();
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

        let ops = d.mixed_ops();
        g.bench_function(BenchmarkId::new("mixed_rw_80r", n), |b| {
            b.iter_batched_ref(
                || half_filled(&d),
                |(_t, db)| run_mixed(db, &ops),
                BatchSize::PerIteration,
            );
        });

        g.bench_function(BenchmarkId::new("prune", n), |b| {
            b.iter_batched_ref(
                || to_prune(&d),
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
