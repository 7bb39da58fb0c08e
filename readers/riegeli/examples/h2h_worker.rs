//! A `bench-run interleave` worker for seed 004's head_to_head cells: this crate's writer and
//! reader, one timed trial per request, on the records of the `head_to_head` suite
//! (`tools/riegeli_cpp_worker.py` serves C++ on the same records, and crates-io-compare's
//! `crate_worker` the crates.io `riegeli` crate, which cannot live in this package's graph).
//!
//! ```text
//! cargo build --release -p riegeli --example h2h_worker
//! cargo build --release --manifest-path readers/riegeli/crates-io-compare/Cargo.toml --target-dir target \
//!     --example crate_worker
//! bench-run interleave --suite head_to_head_interleaved \
//!     --worker target/release/examples/h2h_worker \
//!     --worker 'tools/.venv/bin/python tools/riegeli_cpp_worker.py' \
//!     --worker target/release/examples/crate_worker \
//!     --pair '*/ours_write_file=*/cpp_write' --pair '*/ours_read_file=*/cpp_read' \
//!     --pair '*/ours_write=*/riegeli_crate_write' --pair '*/ours_read=*/riegeli_crate_read'
//! ```
//!
//! Ids are `<config>_<size>/<impl>_<op>` as in the criterion suite. A write is one complete
//! file into a fresh buffer; a read is every record of a file written at setup. A trial runs as
//! many iterations as fill [`TRIAL`] (counted on the benchmark's first trial, then fixed).
//!
//! `ours_write_file` and `ours_read_file` use the sink C++'s worker uses, a file in `/dev/shm`
//! (see `write_ours_file` and `read_ours_file`): pair them with `cpp_write` and `cpp_read`, and
//! `ours_write` / `ours_read` (a fresh `Vec`, a slice in memory) with the `riegeli` crate's, which
//! use the same. On large uncompressed records the sink is a large part of a write, so only
//! like-for-like sinks compare the writers.
//!
//! `simple_zstd_3_*/zstd_only_write` and `zstd_only_read` do only libzstd's part of the cell
//! (see `ZstdOnly`): paired with the crate's write and read
//! (`--pair '*/zstd_only_write=*/riegeli_crate_write' --pair '*/zstd_only_read=*/riegeli_crate_read'`)
//! they give the largest speedup over the crate that any writer or reader on libzstd can reach.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark worker fails loudly"
)]

#[path = "../benches/common/mod.rs"]
mod common;

use std::cell::RefCell;
use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use bench_worker::TrialLength;
use bench_worker::{DeclaredThroughput, WorkerBenchmark};
use common::{
    HEAD_TO_HEAD_CONFIGS, HEAD_TO_HEAD_SIZES, NUM_RECORDS, ZstdOnly, json_record, options,
    read_ours, read_ours_file, scratch_dir, simple_chunk_shapes, write_ours, write_ours_file,
};

/// Shortest time one trial aims at: long enough for the timer, short enough to interleave.
const TRIAL: Duration = Duration::from_millis(50);

type Op = Box<dyn Fn() -> usize>;

fn main() -> std::io::Result<()> {
    let scratch = scratch_dir()?;
    let mut ops: Vec<(WorkerBenchmark, Op)> = Vec::new();
    for (size_name, size) in HEAD_TO_HEAD_SIZES {
        let records: std::rc::Rc<Vec<Vec<u8>>> =
            std::rc::Rc::new((0..NUM_RECORDS).map(|i| json_record(i, size)).collect());
        let bytes = records.iter().map(Vec::len).sum::<usize>() as u64;
        for (name, cpp) in HEAD_TO_HEAD_CONFIGS {
            let opts = options(cpp);
            let ours_file = write_ours(&opts, &records);
            assert_eq!(read_ours(&ours_file) as u64, bytes);
            let zstd_only = (name == "simple_zstd_3").then(|| {
                let zstd_only = ZstdOnly::new(&records);
                assert_eq!(
                    zstd_only.shapes(),
                    simple_chunk_shapes(&ours_file),
                    "{name}"
                );
                RefCell::new(zstd_only)
            });
            let cell = format!("{name}_{size_name}");
            let bench = |op: &str| WorkerBenchmark {
                id: format!("{cell}/{op}"),
                throughput: Some(DeclaredThroughput::Bytes(bytes)),
            };
            let (r1, r3) = (records.clone(), records.clone());
            let path = scratch.path().join(format!("{cell}.riegeli"));
            // The read reads the file the write leaves (the same bytes every time, checked here).
            let read_path = path.clone();
            let file_opts = opts.clone();
            write_ours_file(&file_opts, &records, &path);
            assert_eq!(
                std::fs::read(&path)?,
                ours_file,
                "{cell}: file and buffer differ"
            );
            ops.push((
                bench("ours_write"),
                Box::new(move || write_ours(&opts, &r1).len()),
            ));
            ops.push((
                bench("ours_write_file"),
                Box::new(move || write_ours_file(&file_opts, &r3, &path) as usize),
            ));
            ops.push((
                bench("ours_read_file"),
                Box::new(move || read_ours_file(&read_path)),
            ));
            ops.push((bench("ours_read"), Box::new(move || read_ours(&ours_file))));
            if let Some(floor) = zstd_only {
                // libzstd's share alone, for the ceiling of any libzstd-based speedup.
                let floor = std::rc::Rc::new(floor);
                let f2 = floor.clone();
                ops.push((
                    bench("zstd_only_write"),
                    Box::new(move || floor.borrow_mut().write()),
                ));
                ops.push((
                    bench("zstd_only_read"),
                    Box::new(move || f2.borrow_mut().read()),
                ));
            }
        }
    }
    let benchmarks: Vec<WorkerBenchmark> = ops.iter().map(|(b, _)| b.clone()).collect();
    let by_id: HashMap<String, Op> = ops.into_iter().map(|(b, op)| (b.id, op)).collect();
    let mut lengths = TrialLength::new(TRIAL);
    bench_worker::serve(&benchmarks, |id| {
        let op = by_id.get(id).ok_or("unknown benchmark")?;
        Ok(lengths.run(id, || {
            let start = Instant::now();
            black_box(op());
            start.elapsed()
        }))
    })
}
