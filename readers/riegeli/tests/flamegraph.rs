//! Seed 004's flamegraphs: a benchmark run through the `throughput` bench's own criterion config
//! in `--profile-time` mode leaves `<criterion dir>/<group>/<bench>/profile/flamegraph.svg`,
//! sampled from the benchmark's code. Fails if the bench's profiler hook goes.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::Duration;

#[allow(dead_code, reason = "only the bench's config and data are used here")]
#[path = "../benches/throughput.rs"]
mod throughput;

use throughput::common::{options, proto_record, write_ours};

#[test]
fn profile_time_writes_the_benchmarks_flamegraph() {
    let out = tempfile::tempdir().unwrap();
    // Criterion's minimum profile time; its 1 s warm-up is profiled too.
    let mut c = throughput::config()
        .output_directory(out.path())
        .profile_time(Some(Duration::from_secs(1)));
    // Few records: a debug build still writes many files in the second, so the samples land in
    // the writer and in C brotli.
    let records: Vec<Vec<u8>> = (0..200).map(|i| proto_record(i, 1024)).collect();
    let opts = options("brotli:6");
    let mut group = c.benchmark_group("simple_brotli_6");
    group.bench_function("write", |b| {
        b.iter(|| black_box(write_ours(&opts, &records).len()))
    });
    group.finish();

    let path = out
        .path()
        .join("simple_brotli_6/write/profile/flamegraph.svg");
    let svg = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (no flamegraph written)", path.display()));
    assert!(svg.contains("<svg"), "{} is not an SVG", path.display());
    for frame in ["riegeli_records::", "Brotli"] {
        assert!(
            svg.contains(frame),
            "{} has no {frame} frame",
            path.display()
        );
    }
}
