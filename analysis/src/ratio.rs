//! Speed ratios against an anchor: how many times faster our benchmarks are than another
//! implementation's, computed from stored runs.
//!
//! A comparison with an anchor (C++, Python, another crate) is only as good as the host's quiet:
//! on a shared machine one recording can move by a third. So a ratio here is never one number
//! from one pair of runs. Given several runs on each side, every pairing of one of our runs with
//! one anchor run gives a ratio, and the report shows their median and their range; a bar
//! (`--at-least`) is judged on the median, and the range says whether it held in every pairing.
//!
//! Speeds are per second, so that a time per pass, a throughput and an imported rate meet on
//! one scale:
//!
//! ```text
//! criterion time t per iteration, throughput n bytes  →  n / t bytes/s   (also 1 / t iterations/s)
//! imported `throughput` 131000 ops/s                  →  131000 ops/s
//! imported `latency` 7.6 µs                           →  1 / 7.6 µs iterations/s
//! ```
//!
//! A pair is compared in the first unit both sides have, in the order bytes/s, bits/s, ops/s
//! (`elements/s` and `ops/s` both count operations), other rates, then iterations/s.

use crate::compare::pattern_matches;
use crate::model::{Direction, Measurement, ThroughputKind};
use serde::Serialize;
use std::collections::BTreeMap;

/// Errors in the pairing rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RatioError {
    /// A `--pair` rule is not `OURS=ANCHOR` with at most one `*` on each side.
    #[error(
        "pair rule {0:?}: expected OURS=ANCHOR with the same number of `*` (0 or 1) on each side, e.g. `*/ours_read=*/cpp_read`"
    )]
    BadRule(String),
}

/// How one of our benchmark names maps to an anchor benchmark name: `*/ours_write=*/cpp_write`.
/// The part the `*` matches on our side replaces the `*` on the anchor side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairRule {
    ours: String,
    anchor: String,
}

impl PairRule {
    /// Parses `OURS=ANCHOR`.
    ///
    /// # Errors
    ///
    /// [`RatioError::BadRule`] without `=`, with an empty side, or with more than one `*` (or
    /// different counts) on the two sides.
    pub fn parse(text: &str) -> Result<Self, RatioError> {
        let bad = || RatioError::BadRule(text.to_owned());
        let (ours, anchor) = text.split_once('=').ok_or_else(bad)?;
        let stars = |s: &str| s.matches('*').count();
        if ours.is_empty() || anchor.is_empty() || stars(ours) > 1 || stars(ours) != stars(anchor) {
            return Err(bad());
        }
        Ok(Self {
            ours: ours.to_owned(),
            anchor: anchor.to_owned(),
        })
    }

    /// The anchor name for `benchmark`, when the rule's left side matches it.
    #[must_use]
    pub fn anchor_for(&self, benchmark: &str) -> Option<String> {
        match self.ours.split_once('*') {
            None => (self.ours == benchmark).then(|| self.anchor.clone()),
            Some((prefix, suffix)) => {
                let middle = benchmark
                    .strip_prefix(prefix)?
                    .strip_suffix(suffix)
                    .filter(|_| benchmark.len() >= prefix.len() + suffix.len())?;
                Some(self.anchor.replacen('*', middle, 1))
            }
        }
    }
}

/// One speed of one benchmark in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Speed {
    /// Canonical unit: `bytes/s`, `bits/s`, `ops/s`, another `X/s`, or `iterations/s`.
    pub unit: String,
    /// How many units per second.
    pub per_second: f64,
}

const ITERATIONS: &str = "iterations/s";

/// The speeds a measurement can be read as (none when it is not a time or a rate).
#[must_use]
pub fn speeds(m: &Measurement) -> Vec<Speed> {
    let value = m.estimate.point;
    if !value.is_finite() || value <= 0.0 {
        return Vec::new();
    }
    if let Some(ns) = time_in_ns(&m.unit).filter(|_| m.direction == Direction::LowerIsBetter) {
        let seconds = value * ns * 1e-9;
        let mut out = Vec::new();
        if let Some(t) = m.throughput.filter(|t| t.per_iteration > 0) {
            #[expect(clippy::cast_precision_loss, reason = "counts far below 2^52")]
            let per_iteration = t.per_iteration as f64;
            let unit = match t.kind {
                ThroughputKind::Bytes | ThroughputKind::BytesDecimal => "bytes/s",
                ThroughputKind::Elements => "ops/s",
                ThroughputKind::Bits => "bits/s",
            };
            out.push(Speed {
                unit: unit.to_owned(),
                per_second: per_iteration / seconds,
            });
        }
        out.push(Speed {
            unit: ITERATIONS.to_owned(),
            per_second: 1.0 / seconds,
        });
        return out;
    }
    if m.direction == Direction::HigherIsBetter && m.unit.ends_with("/s") {
        return vec![Speed {
            unit: canonical_rate(&m.unit),
            per_second: value,
        }];
    }
    Vec::new()
}

/// Nanoseconds per unit of a time unit.
fn time_in_ns(unit: &str) -> Option<f64> {
    match unit {
        "ns" => Some(1.0),
        "us" | "µs" => Some(1e3),
        "ms" => Some(1e6),
        "s" => Some(1e9),
        _ => None,
    }
}

fn canonical_rate(unit: &str) -> String {
    match unit {
        "B/s" | "bytes/s" => "bytes/s".to_owned(),
        "b/s" | "bits/s" => "bits/s".to_owned(),
        "ops/s" | "op/s" | "elements/s" | "elem/s" | "operations/s" => "ops/s".to_owned(),
        other => other.to_owned(),
    }
}

/// Preference among units both sides have: the declared work first, bare iterations last.
fn unit_rank(unit: &str) -> u8 {
    match unit {
        "bytes/s" => 0,
        "bits/s" => 1,
        "ops/s" => 2,
        ITERATIONS => 4,
        _ => 3,
    }
}

/// Every speed of every benchmark of one run, by benchmark name and unit.
pub type RunSpeeds = BTreeMap<String, BTreeMap<String, f64>>;

/// The speeds of one run's measurements (a benchmark's several measures each add their units).
#[must_use]
pub fn run_speeds(results: &[Measurement]) -> RunSpeeds {
    let mut out = RunSpeeds::new();
    for m in results {
        for s in speeds(m) {
            out.entry(m.benchmark.full.clone())
                .or_default()
                .entry(s.unit)
                .or_insert(s.per_second);
        }
    }
    out
}

/// Which runs hold the anchor benchmarks.
#[derive(Debug, Clone, Copy)]
pub enum Anchors<'a> {
    /// Each of our runs holds its own anchors (another implementation in the same process):
    /// ratios pair benchmarks within a run.
    SameRuns,
    /// Separate anchor runs: every pairing of one of our runs with one anchor run counts.
    Runs(&'a [RunSpeeds]),
}

/// What to compare.
#[derive(Debug, Clone, Default)]
pub struct RatioConfig {
    /// Name rules; empty: each benchmark pairs with the anchor benchmark of the same name.
    pub rules: Vec<PairRule>,
    /// Only our benchmarks matching one of these (`*` wildcards); empty: all.
    pub only: Vec<String>,
}

/// One of our benchmarks against one anchor benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioRow {
    /// Our benchmark.
    pub benchmark: String,
    /// The anchor benchmark.
    pub anchor: String,
    /// The unit both speeds are in.
    pub unit: String,
    /// Median of our speeds across our runs.
    pub ours: f64,
    /// Median of the anchor's speeds across the anchor runs.
    pub theirs: f64,
    /// Our speed over the anchor's, for every pairing of runs, ascending.
    pub ratios: Vec<f64>,
}

impl RatioRow {
    /// Median ratio over the pairings.
    #[must_use]
    pub fn median(&self) -> f64 {
        median(&self.ratios)
    }

    /// Lowest ratio of any pairing.
    #[must_use]
    pub fn lowest(&self) -> f64 {
        self.ratios.first().copied().unwrap_or(f64::NAN)
    }

    /// Highest ratio of any pairing.
    #[must_use]
    pub fn highest(&self) -> f64 {
        self.ratios.last().copied().unwrap_or(f64::NAN)
    }
}

/// How a row stands against the bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarVerdict {
    /// Every pairing is at or above the bar.
    Always,
    /// The median is at or above the bar, some pairing is below.
    Median,
    /// The median is below the bar.
    Below,
}

impl BarVerdict {
    /// Name used in reports.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Always => "meets",
            Self::Median => "meets (median)",
            Self::Below => "below",
        }
    }

    /// Judges `row` against `bar`.
    #[must_use]
    pub fn of(row: &RatioRow, bar: f64) -> Self {
        if row.lowest() >= bar {
            Self::Always
        } else if row.median() >= bar {
            Self::Median
        } else {
            Self::Below
        }
    }
}

/// The ratios of a set of runs, and what could not be paired.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RatioTable {
    /// Paired benchmarks, in our benchmark order.
    pub rows: Vec<RatioRow>,
    /// Our benchmarks that matched a rule but found no anchor to compare with, and why.
    pub unpaired: Vec<(String, String)>,
}

/// Pairs our runs' benchmarks with their anchors and computes the ratios.
#[must_use]
pub fn ratios(ours: &[RunSpeeds], anchors: Anchors<'_>, config: &RatioConfig) -> RatioTable {
    let mut table = RatioTable::default();
    let names: std::collections::BTreeSet<&String> = ours.iter().flat_map(|r| r.keys()).collect();
    for name in names {
        if !config.only.is_empty() && !config.only.iter().any(|p| pattern_matches(p, name)) {
            continue;
        }
        let targets: Vec<String> = if config.rules.is_empty() {
            vec![name.clone()]
        } else {
            config
                .rules
                .iter()
                .filter_map(|r| r.anchor_for(name))
                .collect()
        };
        for anchor in targets {
            match pair(name, &anchor, ours, anchors) {
                Ok(row) => table.rows.push(row),
                Err(why) => table.unpaired.push((name.clone(), why)),
            }
        }
    }
    table
}

/// The row for `name` against `anchor`, or why there is none.
fn pair(
    name: &str,
    anchor: &str,
    ours: &[RunSpeeds],
    anchors: Anchors<'_>,
) -> Result<RatioRow, String> {
    let anchor_runs: &[RunSpeeds] = match anchors {
        Anchors::SameRuns => ours,
        Anchors::Runs(runs) => runs,
    };
    let ours_units = common_units(ours, name);
    let anchor_units = common_units(anchor_runs, anchor);
    if anchor_units.is_empty() {
        return Err(format!("the anchor runs have no speed for `{anchor}`"));
    }
    let unit = ours_units
        .iter()
        .filter(|u| anchor_units.contains(u))
        .min_by_key(|u| unit_rank(u))
        .ok_or_else(|| {
            format!(
                "no common unit with `{anchor}` (ours: {}; anchor: {})",
                ours_units.join(", "),
                anchor_units.join(", ")
            )
        })?
        .clone();
    let speed = |run: &RunSpeeds, bench: &str| run.get(bench).and_then(|u| u.get(&unit)).copied();
    let ours_speeds: Vec<f64> = ours.iter().filter_map(|r| speed(r, name)).collect();
    let anchor_speeds: Vec<f64> = anchor_runs
        .iter()
        .filter_map(|r| speed(r, anchor))
        .collect();
    let mut ratios: Vec<f64> = match anchors {
        Anchors::SameRuns => ours
            .iter()
            .filter_map(|r| Some(speed(r, name)? / speed(r, anchor)?))
            .collect(),
        Anchors::Runs(_) => ours_speeds
            .iter()
            .flat_map(|o| anchor_speeds.iter().map(move |a| o / a))
            .collect(),
    };
    ratios.sort_by(f64::total_cmp);
    Ok(RatioRow {
        benchmark: name.to_owned(),
        anchor: anchor.to_owned(),
        unit,
        ours: median(&ours_speeds),
        theirs: median(&anchor_speeds),
        ratios,
    })
}

/// Units `bench` has a speed in in every run that has it at all (empty when no run has it).
fn common_units(runs: &[RunSpeeds], bench: &str) -> Vec<String> {
    let mut present = runs.iter().filter_map(|r| r.get(bench));
    let Some(first) = present.next() else {
        return Vec::new();
    };
    let rest: Vec<_> = present.collect();
    first
        .keys()
        .filter(|u| rest.iter().all(|r| r.contains_key(*u)))
        .cloned()
        .collect()
}

/// The median, NaN for no values (a row always has at least one).
fn median(values: &[f64]) -> f64 {
    crate::stats::median(values).unwrap_or(f64::NAN)
}

/// The paired ratios of one of our benchmarks against its anchor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairedRatio {
    /// Our benchmark.
    pub benchmark: String,
    /// The anchor's.
    pub anchor: String,
    /// Per round in which both ran: how many times faster ours was (the anchor's time for its
    /// work over ours, per unit of declared throughput when both declare the same kind).
    pub ratios: Vec<f64>,
    /// Median of `ratios`, with its interval.
    pub median: f64,
    /// Lower bound of the median's interval.
    pub lower: f64,
    /// Upper bound of the median's interval.
    pub upper: f64,
}

impl PairedRatio {
    /// How the ratio stands against `bar`: [`BarVerdict::Always`] when the interval's lower bound
    /// is at or above it, [`BarVerdict::Median`] when only the median is.
    #[must_use]
    pub fn verdict(&self, bar: f64) -> BarVerdict {
        if self.lower >= bar {
            BarVerdict::Always
        } else if self.median >= bar {
            BarVerdict::Median
        } else {
            BarVerdict::Below
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::model::{BenchmarkId, Estimate, Throughput};

    fn measurement(name: &str, metric: &str, unit: &str, value: f64) -> Measurement {
        Measurement {
            benchmark: BenchmarkId::named(name),
            metric: metric.to_owned(),
            unit: unit.to_owned(),
            direction: if unit.ends_with("/s") {
                Direction::HigherIsBetter
            } else {
                Direction::LowerIsBetter
            },
            estimate: Estimate::point(value),
            statistics: BTreeMap::new(),
            throughput: None,
            samples: None,
        }
    }

    fn timed(name: &str, ns: f64, kind: ThroughputKind, per_iteration: u64) -> Measurement {
        Measurement {
            throughput: Some(Throughput {
                kind,
                per_iteration,
            }),
            ..measurement(name, "time", "ns", ns)
        }
    }

    #[test]
    fn rules_substitute_what_the_star_matched() {
        let r = PairRule::parse("*/ours_write=*/cpp_write").unwrap();
        assert_eq!(
            r.anchor_for("zstd_3_large/ours_write").as_deref(),
            Some("zstd_3_large/cpp_write")
        );
        assert_eq!(r.anchor_for("zstd_3_large/ours_write_reuse"), None);
        assert_eq!(r.anchor_for("ours_write"), None);
        let exact = PairRule::parse("a/b=c/d").unwrap();
        assert_eq!(exact.anchor_for("a/b").as_deref(), Some("c/d"));
        assert_eq!(exact.anchor_for("a/bb"), None);
        // Prefix and suffix may not overlap: `ab*ba` does not match `aba`.
        let tight = PairRule::parse("ab*ba=x*").unwrap();
        assert_eq!(tight.anchor_for("aba"), None);
        assert_eq!(tight.anchor_for("abba").as_deref(), Some("x"));
        for bad in ["no-equals", "=x", "x=", "a*b*=c*d*", "a*=b", "a=b*"] {
            assert!(PairRule::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn times_and_rates_meet_in_one_unit() {
        // 50,000 operations in 20 ms: 2.5M ops/s, the Python anchor's throughput in ops/s.
        let ours = timed("get/50000", 20e6, ThroughputKind::Elements, 50_000);
        let s = speeds(&ours);
        assert_eq!(s[0].unit, "ops/s");
        assert!((s[0].per_second - 2.5e6).abs() < 1e-3);
        assert_eq!(s[1].unit, "iterations/s");
        assert!((s[1].per_second - 50.0).abs() < 1e-9);
        let anchor = measurement("get/50000", "throughput", "elements/s", 125_000.0);
        assert_eq!(speeds(&anchor)[0].unit, "ops/s");
        // A latency in ms is a time; a size is not a speed.
        let latency = measurement("x", "latency", "ms", 4.0);
        assert!((speeds(&latency)[0].per_second - 250.0).abs() < 1e-9);
        assert!(speeds(&measurement("x", "file-size", "bytes", 4096.0)).is_empty());
        assert!(speeds(&measurement("x", "latency", "ns", 0.0)).is_empty());
    }

    #[test]
    fn every_pairing_of_runs_counts_and_the_bar_is_judged_on_the_median() {
        let ours: Vec<RunSpeeds> = [20e6, 25e6]
            .iter()
            .map(|&ns| run_speeds(&[timed("get", ns, ThroughputKind::Elements, 50_000)]))
            .collect();
        let anchors: Vec<RunSpeeds> = [100_000.0, 125_000.0]
            .iter()
            .map(|&ops| {
                run_speeds(&[
                    measurement("get", "throughput", "ops/s", ops),
                    measurement("get", "latency", "ns", 1e9 / ops),
                ])
            })
            .collect();
        let table = ratios(&ours, Anchors::Runs(&anchors), &RatioConfig::default());
        assert!(table.unpaired.is_empty());
        let row = &table.rows[0];
        // Ops/s is preferred to iterations/s (a pass of 50,000 against one operation).
        assert_eq!(row.unit, "ops/s");
        // Ours 2.5M and 2.0M ops/s against 100K and 125K: 16, 20, 20, 25.
        let want = [16.0, 20.0, 20.0, 25.0];
        for (got, want) in row.ratios.iter().zip(want) {
            assert!((got - want).abs() < 1e-9, "{:?}", row.ratios);
        }
        assert!((row.median() - 20.0).abs() < 1e-9);
        assert_eq!(BarVerdict::of(row, 20.0), BarVerdict::Median);
        assert_eq!(BarVerdict::of(row, 16.0), BarVerdict::Always);
        assert_eq!(BarVerdict::of(row, 21.0), BarVerdict::Below);
    }

    #[test]
    fn anchors_in_the_same_run_pair_within_each_run() {
        let run = |ours_ns: f64, crate_ns: f64| {
            run_speeds(&[
                timed("zstd/ours_read", ours_ns, ThroughputKind::Bytes, 1 << 20),
                timed("zstd/crate_read", crate_ns, ThroughputKind::Bytes, 1 << 20),
            ])
        };
        let ours = [run(1e6, 2e6), run(2e6, 3e6)];
        let config = RatioConfig {
            rules: vec![PairRule::parse("*/ours_read=*/crate_read").unwrap()],
            ..RatioConfig::default()
        };
        let table = ratios(&ours, Anchors::SameRuns, &config);
        assert_eq!(table.rows.len(), 1, "{table:?}");
        assert_eq!(table.rows[0].ratios, vec![1.5, 2.0]);
        assert_eq!(table.rows[0].unit, "bytes/s");
    }

    #[test]
    fn unpaired_benchmarks_say_why() {
        let ours = [run_speeds(&[timed("a", 1e6, ThroughputKind::Bytes, 10)])];
        let bytes_anchor = [run_speeds(&[measurement("b", "throughput", "ops/s", 5.0)])];
        let config = RatioConfig {
            rules: vec![
                PairRule::parse("a=b").unwrap(),
                PairRule::parse("a=c").unwrap(),
            ],
            ..RatioConfig::default()
        };
        let table = ratios(&ours, Anchors::Runs(&bytes_anchor), &config);
        assert!(table.rows.is_empty());
        assert_eq!(table.unpaired.len(), 2);
        assert!(table.unpaired[0].1.contains("no common unit"), "{table:?}");
        assert!(table.unpaired[1].1.contains("no speed for `c`"));
    }
}
