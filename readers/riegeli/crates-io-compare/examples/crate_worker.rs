//! A `bench-run interleave` worker serving the crates.io `riegeli` crate's writer and reader on
//! seed 004's head_to_head cells: `<config>_<size>/riegeli_crate_write` and
//! `riegeli_crate_read`, on the records of the main crate's `examples/h2h_worker` (which serves
//! ours; see its docs for the `bench-run interleave` command pairing the two).
//!
//! A write is one complete file into a fresh buffer; a read is every record of a file written
//! at setup. A trial runs as many iterations as fill [`TRIAL`].

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark worker fails loudly"
)]

use std::collections::HashMap;
use std::hint::black_box;
use std::rc::Rc;
use std::time::{Duration, Instant};

use bench_worker::{DeclaredThroughput, TrialLength, WorkerBenchmark};
use riegeli_crates_io_compare::common::{
    HEAD_TO_HEAD_CONFIGS, HEAD_TO_HEAD_SIZES, NUM_RECORDS, json_record, read_ours,
};
use riegeli_crates_io_compare::{read_crate, write_crate};

/// Shortest time one trial aims at, as in `h2h_worker`.
const TRIAL: Duration = Duration::from_millis(50);

type Op = Box<dyn Fn() -> usize>;

fn main() -> std::io::Result<()> {
    let mut ops: Vec<(WorkerBenchmark, Op)> = Vec::new();
    for (size_name, size) in HEAD_TO_HEAD_SIZES {
        let records: Rc<Vec<Vec<u8>>> =
            Rc::new((0..NUM_RECORDS).map(|i| json_record(i, size)).collect());
        let bytes = records.iter().map(Vec::len).sum::<usize>() as u64;
        for (name, _) in HEAD_TO_HEAD_CONFIGS {
            let file = write_crate(name, &records);
            // The crate's file is one we read too: the two are compatible implementations.
            assert_eq!(read_ours(&file) as u64, bytes, "{name}_{size_name}");
            let bench = |op: &str| WorkerBenchmark {
                id: format!("{name}_{size_name}/{op}"),
                throughput: Some(DeclaredThroughput::Bytes(bytes)),
            };
            let r = records.clone();
            ops.push((
                bench("riegeli_crate_write"),
                Box::new(move || write_crate(name, &r).len()),
            ));
            ops.push((
                bench("riegeli_crate_read"),
                Box::new(move || read_crate(&file)),
            ));
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
