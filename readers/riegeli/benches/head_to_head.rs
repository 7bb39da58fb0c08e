//! `head_to_head`: seed 004's 12 cells (6 configurations x small 100 B / large 10 KiB records, 10,000
//! records each): this crate against the `riegeli` crate 0.2.1, in the same process, interleaved per cell.
//! Ids read `<config>_<size>/<impl>_<op>` with impl `ours` or `riegeli_crate` and op `write` or `read`;
//! throughput is the record bytes. Both write 1 MiB chunks with the same codec and level.
//! `ours_write_parallel` adds `parallelism:2` (chunks encoded on two background threads, same bytes) and
//! `ours_read_parallel` decodes chunks ahead on two background threads; the `riegeli` crate has neither.
//! `ours_write_reuse` and `riegeli_crate_write_reuse` write into one output buffer per implementation,
//! cleared and reused between iterations, so that the kernel's page faults on a fresh buffer (the
//! same for both, and most of an uncompressed large-record write) do not hide the writers' own cost.
//! `ours_write_file` and `ours_read_file` write and read a file in `/dev/shm`, the sink of C++'s
//! anchor (`tools/riegeli_cpp_bench.py`): compare those with `cpp_write` and `cpp_read`.
//!
//! Records: a JSON-like text prefix and low-entropy binary padding (compressible, neither zeros nor random).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benches fail loudly"
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

mod common;
use common::{
    HEAD_TO_HEAD_CONFIGS, HEAD_TO_HEAD_SIZES, NUM_RECORDS, configure, json_record, options,
    read_crate, read_ours, read_ours_file, read_ours_with, scratch_dir, write_crate,
    write_crate_into, write_ours, write_ours_file, write_ours_into,
};

fn bench(c: &mut Criterion) {
    let scratch = scratch_dir().unwrap();
    for (size_name, size) in HEAD_TO_HEAD_SIZES {
        let records: Vec<Vec<u8>> = (0..NUM_RECORDS).map(|i| json_record(i, size)).collect();
        let bytes: usize = records.iter().map(Vec::len).sum();
        for (name, cpp) in HEAD_TO_HEAD_CONFIGS {
            let opts = options(cpp);
            let ours = write_ours(&opts, &records);
            let theirs = write_crate(name, &records);
            // Each reads the other's file too: the comparison is between compatible implementations.
            assert_eq!(read_ours(&theirs), bytes);
            assert_eq!(read_crate(&ours), bytes);
            let mut group = c.benchmark_group(format!("{name}_{size_name}"));
            configure(&mut group);
            group.throughput(Throughput::Bytes(bytes as u64));
            group.bench_function("ours_write", |b| {
                b.iter(|| black_box(write_ours(&opts, &records).len()))
            });
            let mut parallel = opts.clone();
            parallel.parallelism = 2;
            group.bench_function("ours_write_parallel", |b| {
                b.iter(|| black_box(write_ours(&parallel, &records).len()));
            });
            group.bench_function("riegeli_crate_write", |b| {
                b.iter(|| black_box(write_crate(name, &records).len()))
            });
            // The same writes into one sink per implementation, reused between iterations: the
            // fresh 16 MiB `Vec` above takes a page fault per 4 KiB written (most of the time of
            // an uncompressed 100 MB write, for both), and a reused sink leaves only the writers'
            // own work, including the allocations each makes internally.
            let mut sink = Vec::with_capacity(16 << 20);
            group.bench_function("ours_write_reuse", |b| {
                b.iter(|| black_box(write_ours_into(&opts, &records, &mut sink)))
            });
            let mut sink = Vec::with_capacity(16 << 20);
            group.bench_function("riegeli_crate_write_reuse", |b| {
                b.iter(|| black_box(write_crate_into(name, &records, &mut sink)))
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
                b.iter(|| black_box(write_ours_file(&opts, &records, &path)))
            });
            group.bench_function("ours_read_file", |b| {
                b.iter(|| black_box(read_ours_file(&path)))
            });
            group.bench_function("ours_read", |b| b.iter(|| black_box(read_ours(&ours))));
            group.bench_function("ours_read_parallel", |b| {
                b.iter(|| black_box(read_ours_with(&ours, 2)))
            });
            group.bench_function("riegeli_crate_read", |b| {
                b.iter(|| black_box(read_crate(&theirs)))
            });
            group.finish();
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
