//! A `bench-run interleave` worker for seed 003's booklet operations on this crate, one timed
//! trial per request (`tools/booklet_python_worker.py` serves Python booklet on the same
//! workload), so ours and Python's trials alternate and share the host's state.
//!
//! ```text
//! cargo build --release -p booklet --example ops_worker
//! bench-run interleave --suite booklet_ops_interleaved \
//!     --worker 'target/release/examples/ops_worker 10000 50000' \
//!     --worker 'tools/.venv/bin/python tools/booklet_python_worker.py 10000 50000' \
//!     --pair '*/ours=*/python' --at-least 20
//! ```
//!
//! Ids are `booklet_ops/<op>/<n>/ours`. Arguments: key counts (default 10000 and 50000), and
//! `--trial-ms MS` for the length of a trial (default [`TRIAL`]).
//! Each op's timed region is the criterion suite's (see `benches/booklet_ops.rs`): setup, such
//! as writing the file an overwrite starts from, runs before the clock starts. Read ops time a
//! pass over a read-only mmap handle opened and warmed (key table built) at start-up. A trial
//! runs as many iterations as fill the trial length. Trials much longer than one pass keep a
//! trial's first pass, whose caches the other worker's trial has just evicted, from dominating
//! it: `--trial-ms 300` measures the steady state that the criterion suite measures.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark worker fails loudly"
)]

#[path = "../benches/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use bench_worker::TrialLength;
use bench_worker::{DeclaredThroughput, WorkerBenchmark};
use booklet::{Booklet, Flag, ReadMode};
use common::{
    Data, OPS, Tmp, dataset, half_filled, options, reader, run_mixed, tmp, to_prune, write_all,
};

/// Shortest time one trial aims at: long enough for the timer, short enough to interleave.
const TRIAL: Duration = Duration::from_millis(50);

/// The files one key count's read ops use.
struct Files {
    /// A read-only mmap handle, warmed.
    read: (Tmp, Booklet),
    /// A written, closed file for `random_read_cold`.
    cold: Tmp,
}

impl Files {
    fn new(d: &Data, shuffled: &[&[u8]]) -> Self {
        let read = reader(d, ReadMode::Mmap);
        for k in shuffled {
            black_box(read.1.get_str(k).unwrap().unwrap().len());
        }
        let cold = tmp();
        write_all(&cold.path, d).close().unwrap();
        Files { read, cold }
    }

    /// One iteration of `op` on `d` (whose keys in shuffled order are `shuffled`), returning
    /// the time of its timed region.
    fn iteration(&mut self, op: &str, d: &Data, shuffled: &[&[u8]]) -> Result<Duration, String> {
        let db = &mut self.read.1;
        // Each arm's value is its timed region, read before the arm's files and handles drop
        // (closing them is not timed).
        let elapsed = match op {
            "seq_write" => {
                let t = tmp();
                let start = Instant::now();
                let mut db = options().open(&t.path, Flag::New).unwrap();
                for (k, v) in d.keys.iter().zip(&d.values) {
                    db.set(k, v).unwrap();
                }
                db.sync().unwrap();
                db.close().unwrap();
                start.elapsed()
            }
            "bulk_update" => {
                let t = tmp();
                let start = Instant::now();
                let mut db = options().open(&t.path, Flag::New).unwrap();
                db.update(d.keys.iter().zip(&d.values)).unwrap();
                db.sync().unwrap();
                db.close().unwrap();
                start.elapsed()
            }
            "random_read" => {
                let start = Instant::now();
                for k in shuffled {
                    black_box(db.get_str(k).unwrap().unwrap().len());
                }
                start.elapsed()
            }
            "random_read_cold" => {
                let db = options().open(&self.cold.path, Flag::Read).unwrap();
                let start = Instant::now();
                for k in shuffled {
                    black_box(db.get_str(k).unwrap().unwrap().len());
                }
                start.elapsed()
            }
            "random_read_miss" => {
                let start = Instant::now();
                for k in &d.misses {
                    black_box(db.get_ref(k).unwrap());
                }
                start.elapsed()
            }
            "contains" => {
                let start = Instant::now();
                for k in &d.contains {
                    black_box(db.contains(k).unwrap());
                }
                start.elapsed()
            }
            "iter_keys" | "iter_values" | "iter_items" => {
                let start = Instant::now();
                let mut count = 0usize;
                for e in db.iter().unwrap() {
                    let e = e.unwrap();
                    if op != "iter_values" {
                        count += booklet::serial::decode_str(&e.key).unwrap().len();
                    }
                    if op != "iter_keys" {
                        count += booklet::serial::decode_str(&e.value).unwrap().len();
                    }
                }
                black_box(count);
                start.elapsed()
            }
            "overwrite" => {
                let t = tmp();
                let mut db = write_all(&t.path, d);
                let start = Instant::now();
                for (k, v) in d.keys.iter().zip(&d.new_values) {
                    db.set(k, v).unwrap();
                }
                db.sync().unwrap();
                start.elapsed()
            }
            "delete" => {
                let t = tmp();
                let mut db = write_all(&t.path, d);
                let start = Instant::now();
                for k in shuffled {
                    db.delete(k).unwrap();
                }
                start.elapsed()
            }
            "mixed_rw_80r" => {
                let ops = d.mixed_ops();
                let (_t, mut db) = half_filled(d);
                let start = Instant::now();
                run_mixed(&mut db, &ops);
                start.elapsed()
            }
            "prune" => {
                let (_t, mut db) = to_prune(d);
                let n = d.keys.len();
                let start = Instant::now();
                let removed = db.prune(None, &[]).unwrap();
                if removed as usize != n / 2 + n / 4 {
                    return Err(format!("prune removed {removed} blocks"));
                }
                start.elapsed()
            }
            other => return Err(format!("no op {other}")),
        };
        Ok(elapsed)
    }
}

fn main() -> std::io::Result<()> {
    let mut counts = Vec::new();
    let mut trial = TRIAL;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--trial-ms" {
            let ms = args.next().and_then(|v| v.parse().ok());
            trial = Duration::from_millis(ms.expect("--trial-ms takes milliseconds"));
        } else {
            counts.push(arg.parse::<usize>().expect("arguments are key counts"));
        }
    }
    if counts.is_empty() {
        counts = vec![10_000, 50_000];
    }
    // Per key count: the data, its keys in shuffled order (built once, as in the criterion
    // suite, not before every pass), and the files.
    let datas: Vec<Data> = counts.iter().map(|&n| dataset(n)).collect();
    let shuffled: Vec<Vec<&[u8]>> = datas.iter().map(Data::shuffled_keys).collect();
    let mut files: Vec<Files> = datas
        .iter()
        .zip(&shuffled)
        .map(|(d, s)| Files::new(d, s))
        .collect();
    let benchmarks: Vec<WorkerBenchmark> = counts
        .iter()
        .flat_map(|&n| {
            OPS.iter().map(move |op| WorkerBenchmark {
                id: format!("booklet_ops/{op}/{n}/ours"),
                throughput: Some(DeclaredThroughput::Elements(if *op == "contains" {
                    2 * n
                } else {
                    n
                } as u64)),
            })
        })
        .collect();
    let mut lengths = TrialLength::new(trial);
    bench_worker::serve(&benchmarks, |id| {
        let mut parts = id.split('/').skip(1);
        let (Some(op), Some(n)) = (parts.next(), parts.next()) else {
            return Err(format!("not a booklet_ops id: {id}"));
        };
        let n: usize = n.parse().map_err(|_| format!("not a key count in {id}"))?;
        let at = counts.iter().position(|&m| m == n).ok_or("no such size")?;
        let (d, keys, files) = (&datas[at], &shuffled[at], &mut files[at]);
        let mut failure = None;
        let timed = lengths.run(id, || {
            files.iteration(op, d, keys).unwrap_or_else(|e| {
                failure.get_or_insert(e);
                Duration::ZERO
            })
        });
        failure.map_or(Ok(timed), Err)
    })
}
