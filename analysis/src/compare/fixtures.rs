//! Test fixtures shared by the comparison tests: deterministic samples, measurements of each
//! kind of evidence, histories and run provenance. They import nothing of `compare` itself, so
//! the tests of the files below it can use them; `run` and `row`, which call [`compare`], are in
//! the tests of `mod.rs`.

#![allow(clippy::unwrap_used)]

use crate::model::{
    BenchmarkId, BuildConfig, Direction, Estimate, HistoryPoint, Machine, Measurement,
    RunProvenance, Samples, SamplingMode, Toolchain, metric,
};
use crate::stats;
use std::collections::BTreeMap;

/// Deterministic uniform numbers in [0, 1) (64-bit LCG, high bits).
pub(crate) struct Lcg(pub(crate) u64);

impl Lcg {
    pub(crate) fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1_u64 << 53) as f64
    }
}

/// `n` per-iteration times around `center` with +-`jitter_pct` uniform jitter.
pub(crate) fn jittered(seed: u64, n: usize, center: f64, jitter_pct: f64) -> Vec<f64> {
    let mut rng = Lcg(seed);
    (0..n)
        .map(|_| center * (1.0 + jitter_pct / 100.0 * (2.0 * rng.next() - 1.0)))
        .collect()
}

/// A time measurement with raw samples (10 iterations each); the headline is the median.
pub(crate) fn timed(id: &str, per_iter: &[f64]) -> Measurement {
    let iters = vec![10.0; per_iter.len()];
    let times = per_iter.iter().map(|t| t * 10.0).collect();
    Measurement {
        benchmark: BenchmarkId::named(id),
        metric: metric::TIME.to_owned(),
        unit: "ns".to_owned(),
        direction: Direction::LowerIsBetter,
        estimate: Estimate::point(stats::median(per_iter).unwrap()),
        statistics: BTreeMap::new(),
        throughput: None,
        samples: Some(Samples::new(SamplingMode::Flat, iters, times).unwrap()),
    }
}

/// A measurement with only a point estimate (BMF-style).
pub(crate) fn exact(
    id: &str,
    metric: &str,
    unit: &str,
    direction: Direction,
    value: f64,
) -> Measurement {
    Measurement {
        benchmark: BenchmarkId::named(id),
        metric: metric.to_owned(),
        unit: unit.to_owned(),
        direction,
        estimate: Estimate::point(value),
        statistics: BTreeMap::new(),
        throughput: None,
        samples: None,
    }
}

pub(crate) fn bounded(id: &str, point: f64, lower: f64, upper: f64) -> Measurement {
    let mut m = exact(id, metric::TIME, "ns", Direction::LowerIsBetter, point);
    m.estimate.lower = Some(lower);
    m.estimate.upper = Some(upper);
    m.estimate.confidence_level = Some(0.95);
    m
}

/// History points with run ids 1, 2, ...
pub(crate) fn points(values: &[f64]) -> Vec<HistoryPoint> {
    values
        .iter()
        .zip(1..)
        .map(|(&v, run)| HistoryPoint::new(run, v))
        .collect()
}

pub(crate) fn provenance() -> RunProvenance {
    RunProvenance {
        machine: Machine {
            fingerprint: "m1".to_owned(),
            hostname: "ci-1".to_owned(),
            cpu_model: "EPYC".to_owned(),
            ..Machine::default()
        },
        toolchain: Some(Toolchain {
            rustc_version: "1.95.0".to_owned(),
            rustc_commit: Some("59807616e".to_owned()),
            ..Toolchain::default()
        }),
        build: BuildConfig {
            profile: "bench".to_owned(),
            features: vec!["zstd".to_owned(), "lz4".to_owned()],
            feature_flags: Vec::new(),
            rustflags: Some("-C target-cpu=native".to_owned()),
        },
        ..RunProvenance::default()
    }
}
