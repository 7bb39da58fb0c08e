//! `head_to_head`: seed 004's 12 cells (6 configurations x small 100 B / large 10 KiB records, 10,000
//! records each), this crate against C++ riegeli. Criterion measures ours; ids read
//! `<config>_<size>/ours_<op>` and throughput is the record bytes. After them the bench prints the
//! seed's summary table (`summary.rs`): write and read MB/s of ours and of C++ riegeli (the
//! `array-record` wheel, through `tools/riegeli_cpp_bench.py`), and each side's compression ratio.
//!
//! `ours_write_parallel` adds `parallelism:2` (chunks encoded on two background threads, same bytes) and
//! `ours_read_parallel` decodes chunks ahead on two background threads. `ours_write_reuse` writes into
//! one output buffer, cleared and reused between iterations, so that the kernel's page faults on a fresh
//! buffer (most of an uncompressed large-record write) do not hide the writer's own cost.
//! `ours_write_file` and `ours_read_file` write and read a file in `/dev/shm`, the sink of C++'s
//! anchor: compare those with `cpp_write` and `cpp_read` (`bench-run import bmf` of the anchor, or
//! `bench-run interleave` with `examples/h2h_worker`). The crates.io `riegeli` crate is compared in
//! crates-io-compare/ (`head_to_head_crate`), a workspace of its own.
//!
//! Records: a JSON-like text prefix and low-entropy binary padding (compressible, neither zeros nor random).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benches fail loudly"
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput};

mod common;
#[path = "head_to_head/summary.rs"]
mod summary;
use common::{
    HEAD_TO_HEAD_CONFIGS, HEAD_TO_HEAD_SIZES, NUM_RECORDS, configure, json_record, options,
    read_ours, read_ours_file, read_ours_with, scratch_dir, write_ours, write_ours_file,
    write_ours_into,
};

fn bench(c: &mut Criterion) {
    let scratch = scratch_dir().unwrap();
    for (size_name, size) in HEAD_TO_HEAD_SIZES {
        let records: Vec<Vec<u8>> = (0..NUM_RECORDS).map(|i| json_record(i, size)).collect();
        let bytes: usize = records.iter().map(Vec::len).sum();
        for (name, cpp) in HEAD_TO_HEAD_CONFIGS {
            let opts = options(cpp);
            let ours = write_ours(&opts, &records);
            assert_eq!(read_ours(&ours), bytes);
            let mut group = c.benchmark_group(format!("{name}_{size_name}"));
            configure(&mut group);
            group.throughput(Throughput::Bytes(bytes as u64));
            group.bench_function("ours_write", |b| {
                b.iter(|| black_box(write_ours(&opts, &records).len()));
            });
            let mut parallel = opts.clone();
            parallel.parallelism = 2;
            group.bench_function("ours_write_parallel", |b| {
                b.iter(|| black_box(write_ours(&parallel, &records).len()));
            });
            // The same write into one sink, reused between iterations: the fresh 16 MiB `Vec`
            // above takes a page fault per 4 KiB written (most of the time of an uncompressed
            // 100 MB write), and a reused sink leaves only the writer's own work.
            let mut sink = Vec::with_capacity(16 << 20);
            group.bench_function("ours_write_reuse", |b| {
                b.iter(|| black_box(write_ours_into(&opts, &records, &mut sink)));
            });
            // Written once here too, so that the read has its file when only it is selected.
            let path = scratch.path().join(format!("{name}_{size_name}.riegeli"));
            write_ours_file(&opts, &records, &path);
            assert_eq!(
                std::fs::read(&path).unwrap(),
                ours,
                "file and buffer differ"
            );
            group.bench_function("ours_write_file", |b| {
                b.iter(|| black_box(write_ours_file(&opts, &records, &path)));
            });
            group.bench_function("ours_read_file", |b| {
                b.iter(|| black_box(read_ours_file(&path)));
            });
            group.bench_function("ours_read", |b| b.iter(|| black_box(read_ours(&ours))));
            group.bench_function("ours_read_parallel", |b| {
                b.iter(|| black_box(read_ours_with(&ours, 2)));
            });
            group.finish();
        }
    }
}

/// criterion_main's body, then the summary table for the cells the command line selects.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    Criterion::default().configure_from_args().final_summary();
    if let Some(plan) = summary::Plan::from_args(&args) {
        summary::print(&plan);
    }
}
