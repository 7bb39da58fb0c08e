//! `throughput`: seed 004's matrix. 10,000 proto-like records of 1 KiB (a varint index and a padding field
//! with a repeating pattern), written and read in memory, for simple and transposed chunks with none,
//! brotli:6, zstd:3 and snappy. Ids read `<config>/write` and `<config>/read`; throughput is the record
//! bytes (10,240,000). `<config>/write_parallel` adds `parallelism:2` (chunks encoded on two background
//! threads; the same bytes) and `<config>/read_parallel` decodes chunks ahead on two background threads.
//! `transpose_*/read_projected` reads the same file with a field projection of the small field 1 (the
//! index; `FieldProjection`, as C++ `set_field_projection`): the decoder skips the 1 KiB padding
//! column, so `read_projected` against `read` is the speedup from skipping columns (seed 004's
//! "projection benefit"). Its throughput is counted in the same record bytes as `read`, so the two
//! compare directly.
//!
//! `projection_buckets/transpose_zstd_3_bucket_fraction_0.1/{read,read_projected}` do the same on a
//! file written with `transpose,zstd:3,bucket_fraction:0.1`: the index and the padding fields lie in
//! buckets of their own, so the projected read also skips decompressing the padding (with the default
//! one bucket per chunk it decompresses everything and skips only the copies).
//!
//! The C++ anchor for the same matrix is `tools/riegeli_cpp_bench.py` (C++ riegeli through the
//! `array-record` wheel), imported with `bench-run import bmf`.
//!
//! `cargo bench --bench throughput -- --profile-time 5` runs each benchmark for 5 s under pprof
//! (100 Hz) instead of measuring it, and writes its CPU flamegraph to
//! `target/criterion/<config>/<bench>/profile/flamegraph.svg` (Linux; `common/flamegraph.rs`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benches fail loudly"
)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use riegeli_records::FieldProjection;

// Visible to tests/flamegraph.rs, which includes this file.
pub(crate) mod common;
use common::{
    NUM_RECORDS, THROUGHPUT_CONFIGS, configure, options, proto_record, read_ours,
    read_ours_projected, read_ours_with, write_ours,
};

fn bench(c: &mut Criterion) {
    let records: Vec<Vec<u8>> = (0..NUM_RECORDS).map(|i| proto_record(i, 1024)).collect();
    let bytes: usize = records.iter().map(Vec::len).sum();
    let small_field = FieldProjection::parse("1").unwrap();
    for (name, cpp) in THROUGHPUT_CONFIGS {
        let opts = options(cpp);
        let file = write_ours(&opts, &records);
        assert_eq!(read_ours(&file), bytes);
        let mut group = c.benchmark_group(name);
        configure(&mut group);
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_function("write", |b| {
            b.iter(|| black_box(write_ours(&opts, &records).len()))
        });
        let mut parallel = opts.clone();
        parallel.parallelism = 2;
        group.bench_function("write_parallel", |b| {
            b.iter(|| black_box(write_ours(&parallel, &records).len()))
        });
        group.bench_function("read", |b| b.iter(|| black_box(read_ours(&file))));
        group.bench_function("read_parallel", |b| {
            b.iter(|| black_box(read_ours_with(&file, 2)))
        });
        if name.starts_with("transpose") {
            // Field 1 of each record: its tag and varint index, all that is left.
            let projected: usize = records.iter().map(|r| 1 + varint_len(&r[1..])).sum();
            assert_eq!(
                read_ours_projected(&file, &small_field),
                projected,
                "{name}"
            );
            group.bench_function("read_projected", |b| {
                b.iter(|| black_box(read_ours_projected(&file, &small_field)));
            });
        }
        group.finish();
    }
    bench_projection_buckets(c, &records, &small_field);
}

/// Full and projected reads of a file whose chunks have several buckets.
fn bench_projection_buckets(c: &mut Criterion, records: &[Vec<u8>], small_field: &FieldProjection) {
    const NAME: &str = "transpose_zstd_3_bucket_fraction_0.1";
    let file = write_ours(&options("transpose,zstd:3,bucket_fraction:0.1"), records);
    let bytes: usize = records.iter().map(Vec::len).sum();
    assert_eq!(read_ours(&file), bytes);
    let mut group = c.benchmark_group("projection_buckets");
    configure(&mut group);
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function(BenchmarkId::new(NAME, "read"), |b| {
        b.iter(|| black_box(read_ours(&file)));
    });
    group.bench_function(BenchmarkId::new(NAME, "read_projected"), |b| {
        b.iter(|| black_box(read_ours_projected(&file, small_field)));
    });
    group.finish();
}

/// Length of the varint at the start of `bytes`.
fn varint_len(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .position(|&b| b < 0x80)
        .map_or(bytes.len(), |p| p + 1)
}

/// Criterion with seed 004's profiler hook. Criterion calls it only under `--profile-time`, so
/// measuring runs are as they were. `tests/flamegraph.rs` runs a benchmark through this config.
#[cfg(target_os = "linux")]
pub fn config() -> Criterion {
    use common::flamegraph::{FREQUENCY_HZ, Flamegraph};
    Criterion::default().with_profiler(Flamegraph::new(FREQUENCY_HZ))
}

/// pprof's sampler is unix-only and checked on Linux alone: elsewhere, plain criterion.
#[cfg(not(target_os = "linux"))]
pub fn config() -> Criterion {
    Criterion::default()
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench
}
criterion_main!(benches);
