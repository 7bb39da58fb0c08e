#!/usr/bin/env bash
# Regenerates the criterion fixtures in this directory from REAL criterion runs.
#
#   adapters/testdata/criterion/make.sh [VERSION...]      (default: 0.5 0.6 0.7 0.8)
#
# For each criterion version it builds a throw-away cargo project in a temporary directory, runs
# its bench with CRITERION_HOME pointing at a scratch directory and copies a few benchmarks'
# `new/` directories (benchmark.json, estimates.json, sample.json) here, keeping criterion's
# directory layout so `adapter::criterion::read_dir` can be tested on `<version>/` directly.
#
# The temporary projects are never committed. Measured numbers change on every run: the tests
# cross-check parsed values against the JSON files themselves, and a few spot checks in
# `adapters/src/criterion.rs` pin the committed capture (update them after regenerating).
#
# Set CARGO_TARGET_DIR to share build artifacts between runs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
versions=("$@")
[ ${#versions[@]} -eq 0 ] && versions=(0.5 0.6 0.7 0.8)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for v in "${versions[@]}"; do
  proj="$work/crit-$v"
  mkdir -p "$proj/benches" "$proj/src"
  : > "$proj/src/lib.rs"
  cat > "$proj/Cargo.toml" <<EOF
[package]
name = "crit-capture-${v/./-}"
version = "0.1.0"
edition = "2021"
publish = false

[dev-dependencies]
criterion = { version = "=$v", default-features = false, features = ["cargo_bench_support"] }

[[bench]]
name = "capture"
harness = false

[workspace]
EOF
  # Extra throughput kinds exist only in newer versions: Bits since 0.7, ElementsAndBytes in 0.8.
  extra=""
  case "$v" in
    0.7|0.8) extra+='
    let mut bits = c.benchmark_group("bits");
    bits.throughput(Throughput::Bits(512));
    bits.bench_function("xor", |b| b.iter(|| black_box(0xdead_beef_u64) ^ black_box(7u64)));
    bits.finish();' ;;
  esac
  case "$v" in
    0.8) extra+='
    let mut rows = c.benchmark_group("rows");
    rows.throughput(Throughput::ElementsAndBytes { elements: 10, bytes: 80 });
    rows.bench_function("scan", |b| b.iter(|| (0..black_box(10u64)).map(|x| x * 8).sum::<u64>()));
    rows.finish();' ;;
  esac
  cat > "$proj/benches/capture.rs" <<EOF
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput};
use std::hint::black_box;

fn checksum(data: &[u8]) -> u64 {
    data.iter().fold(0u64, |acc, &b| acc.wrapping_mul(31).wrapping_add(u64::from(b)))
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("checksum");
    for size in [64usize, 1024] {
        let data = vec![7u8; size];
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(BenchmarkId::new("fold", size), &data, |b, d| {
            b.iter(|| checksum(black_box(d)))
        });
    }
    group.finish();
    let mut elems = c.benchmark_group("elements");
    elems.throughput(Throughput::Elements(100));
    elems.sampling_mode(SamplingMode::Flat);
    elems.bench_function("sum", |b| b.iter(|| (0..black_box(100u64)).sum::<u64>()));
    elems.finish();
    c.bench_function("plain add", |b| b.iter(|| black_box(2u64) + black_box(3u64)));
    $extra
}

criterion_group!(benches, bench);
criterion_main!(benches);
EOF
  home="$work/home-$v"
  (cd "$proj" && CRITERION_HOME="$home" cargo bench --bench capture -- \
      --warm-up-time 0.2 --measurement-time 0.5 --sample-size 10 --noplot)
  out="$here/$v"
  rm -rf "$out"
  for bench in "checksum/fold/64" "elements/sum" "plain add" "bits/xor" "rows/scan"; do
    [ -d "$home/$bench/new" ] || continue
    mkdir -p "$out/$bench/new"
    cp "$home/$bench/new/benchmark.json" "$home/$bench/new/estimates.json" \
       "$home/$bench/new/sample.json" "$out/$bench/new/"
  done
done
