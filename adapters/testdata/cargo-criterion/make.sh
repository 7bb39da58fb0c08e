#!/usr/bin/env bash
# Regenerates the cargo-criterion fixtures in this directory from REAL runs of
# `cargo criterion --message-format=json` (captured with cargo-criterion 1.1.0:
# `cargo install cargo-criterion`).
#
#   criterion-0.5.jsonl        first run of a criterion 0.5 bench: every `change` is null
#   criterion-0.8-rerun.jsonl  second run of a criterion 0.8 bench: `change` compares to the first
#
# cargo-criterion 1.1.0 only understands Bytes and Elements throughputs, so the bench declares no
# other kind (criterion's BytesDecimal/Bits/ElementsAndBytes break its protocol).
#
# The temporary projects are never committed. Measured numbers change on every run: the tests in
# adapters/src/cargo_criterion.rs cross-check parsed values against the captured lines.
# Set CARGO_TARGET_DIR to share build artifacts between runs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cargo criterion --version

capture() { # VERSION RUNS OUTPUT
  local v="$1" runs="$2" out="$3" proj="$work/crit-$1"
  mkdir -p "$proj/benches" "$proj/src"
  : > "$proj/src/lib.rs"
  cat > "$proj/Cargo.toml" <<TOML
[package]
name = "cc-capture-${v/./-}"
version = "0.1.0"
edition = "2021"
publish = false

[dev-dependencies]
criterion = { version = "=$v", default-features = false, features = ["cargo_bench_support"] }

[[bench]]
name = "capture"
harness = false

[workspace]
TOML
  cat > "$proj/benches/capture.rs" <<'RS'
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
}

criterion_group!(benches, bench);
criterion_main!(benches);
RS
  for _ in $(seq "$runs"); do
    (cd "$proj" && CRITERION_HOME="$work/home-$v" cargo criterion --message-format=json \
        --plotting-backend disabled --bench capture -- \
        --warm-up-time 0.2 --measurement-time 0.5 --sample-size 10 > "$here/$out")
  done
}

capture 0.5 1 criterion-0.5.jsonl
capture 0.8 2 criterion-0.8-rerun.jsonl
