//! `--quick` runs: did the quick settings take effect, and what to say when a quick run meets a
//! full one.
//!
//! `bench-run --suite S --quick` asks criterion for a short measurement
//! (`bench_runner::criterion_cli::QUICK`: `--warm-up-time 0.3 --measurement-time 1 --sample-size 20`,
//! the warm-up rounded up to 1 s for criterion 0.3, which takes whole seconds).
//! A suite may ignore the command line: a benchmark group with its own `sample_size(1000)` or
//! `measurement_time(..)`, or a `Criterion` configured after `configure_from_args`. A run is
//! therefore labelled quick only when criterion measured with the quick settings, judged from
//! what it wrote ([`check`]):
//!
//! | per benchmark (raw samples of criterion's linear or flat sampling) | class |
//! |---|---|
//! | sample count differs from the requested `--sample-size` | kept its own settings |
//! | total measured time `> MEASUREMENT_TIME_FACTOR x --measurement-time`, and the smallest iteration count is above 1 | kept its own settings |
//! | otherwise | followed the quick settings |
//! | no raw samples, or single-iteration sampling | cannot tell |
//!
//! Why the time rule: criterion chooses iteration counts `d, 2d, ..., nd` (linear) or `d` each
//! (flat) so that the expected total is the measurement time `M`; with `d >= 2` that total is
//! below `2 M`, so a factor 3 leaves room for a warm-up estimate that was off by half. With
//! `d = 1` criterion could not fit the samples into `M` at all, and the excess time is the
//! benchmark's own cost, not a longer setting.
//!
//! The run is quick when **at least one** benchmark followed the quick settings (a partly
//! affected suite holds short measurements, which must not become anyone's baseline), or when
//! no benchmark could be checked (nothing proves the flag had no effect). When none followed
//! them, `--quick` had no effect: the run is recorded as a full run, with a warning.

use bench_model::{Measurement, SamplingMode, StoredRun};
use std::collections::BTreeSet;

/// A benchmark measured more than this many times the requested measurement time (while
/// criterion was free to use fewer iterations) kept its own measurement time.
pub const MEASUREMENT_TIME_FACTOR: f64 = 3.0;

/// At most this many benchmark names are listed in a message.
const NAMES_SHOWN: usize = 5;

/// The sample size and measurement time a run asked criterion for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestedSettings {
    /// `--sample-size`.
    pub sample_size: usize,
    /// `--measurement-time`, in seconds.
    pub measurement_time_s: f64,
}

impl RequestedSettings {
    /// Reads `--sample-size` and `--measurement-time` (as `--flag value` or `--flag=value`)
    /// from the criterion arguments of a run; `None` when either is absent or malformed.
    #[must_use]
    pub fn from_criterion_args(args: &[String]) -> Option<Self> {
        let sample_size = flag_value(args, "--sample-size")?.parse().ok()?;
        let measurement_time_s: f64 = flag_value(args, "--measurement-time")?.parse().ok()?;
        (measurement_time_s.is_finite() && measurement_time_s > 0.0).then_some(Self {
            sample_size,
            measurement_time_s,
        })
    }
}

fn flag_value<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    let mut found = None;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == flag {
            found = iter.next().map(String::as_str);
        } else if let Some(value) = arg.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
            found = Some(value);
        }
    }
    found
}

/// How one benchmark was measured, against the requested settings.
#[derive(Debug, Clone, PartialEq)]
pub enum BenchmarkSettings {
    /// Criterion used the requested sample size and measurement time.
    Followed,
    /// The benchmark kept its own sample size.
    OwnSampleSize {
        /// Samples criterion took.
        samples: usize,
    },
    /// The benchmark kept its own (longer) measurement time.
    OwnMeasurementTime {
        /// Total measured time, in seconds.
        measured_s: f64,
    },
}

/// What [`check`] found, benchmark by benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct QuickCheck {
    /// The settings that were requested.
    pub requested: RequestedSettings,
    /// Benchmarks that followed them, by full id.
    pub followed: Vec<String>,
    /// Benchmarks that kept their own settings, with what they did instead.
    pub own: Vec<(String, BenchmarkSettings)>,
    /// Benchmarks without raw samples of criterion's sampling (nothing to judge).
    pub unknown: Vec<String>,
}

/// Whether the quick settings took effect for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuickEffect {
    /// Every checked benchmark followed them.
    Full,
    /// Some benchmarks followed them, others kept their own settings.
    Partial,
    /// No benchmark followed them: `--quick` had no effect.
    None,
    /// No benchmark could be checked.
    Unchecked,
}

impl QuickEffect {
    /// Whether the run is labelled quick (see the module docs).
    #[must_use]
    pub const fn is_quick(self) -> bool {
        !matches!(self, Self::None)
    }
}

/// Classifies one measurement's raw samples; `None` when it has none to judge.
#[must_use]
pub fn classify(
    measurement: &Measurement,
    requested: RequestedSettings,
) -> Option<BenchmarkSettings> {
    let samples = measurement.samples.as_ref()?;
    if samples.mode() == SamplingMode::Single {
        return None;
    }
    if samples.len() != requested.sample_size {
        return Some(BenchmarkSettings::OwnSampleSize {
            samples: samples.len(),
        });
    }
    let measured_s = samples.times_ns().iter().sum::<f64>() / 1e9;
    let smallest_iters = samples
        .iters()
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    if smallest_iters > 1.0 && measured_s > MEASUREMENT_TIME_FACTOR * requested.measurement_time_s {
        return Some(BenchmarkSettings::OwnMeasurementTime { measured_s });
    }
    Some(BenchmarkSettings::Followed)
}

/// Checks every benchmark of a run against the settings it requested. A benchmark with several
/// measurements is judged on the first one with samples.
#[must_use]
pub fn check(measurements: &[Measurement], requested: RequestedSettings) -> QuickCheck {
    let mut result = QuickCheck {
        requested,
        followed: Vec::new(),
        own: Vec::new(),
        unknown: Vec::new(),
    };
    let mut seen = BTreeSet::new();
    let mut unjudged = BTreeSet::new();
    for m in measurements {
        let id = &m.benchmark.full;
        if seen.contains(id) {
            continue;
        }
        match classify(m, requested) {
            Some(BenchmarkSettings::Followed) => result.followed.push(id.clone()),
            Some(own) => result.own.push((id.clone(), own)),
            None => {
                unjudged.insert(id.clone());
                continue;
            }
        }
        seen.insert(id.clone());
    }
    result.unknown = unjudged.difference(&seen).cloned().collect();
    result
}

impl QuickCheck {
    /// The verdict over the whole run.
    #[must_use]
    pub fn effect(&self) -> QuickEffect {
        match (self.followed.is_empty(), self.own.is_empty()) {
            (false, true) => QuickEffect::Full,
            (false, false) => QuickEffect::Partial,
            (true, false) => QuickEffect::None,
            (true, true) => QuickEffect::Unchecked,
        }
    }

    /// What to tell the user: a warning when `--quick` had no effect, a note when it took
    /// effect for only part of the suite ([`Self::effect`] tells which), nothing otherwise.
    #[must_use]
    pub fn message(&self) -> Option<String> {
        let r = self.requested;
        let settings = format!(
            "--sample-size {} --measurement-time {}",
            r.sample_size, r.measurement_time_s
        );
        let own = describe(&self.own);
        match self.effect() {
            QuickEffect::Full | QuickEffect::Unchecked => None,
            QuickEffect::None => Some(format!(
                "--quick had no effect: the suite sets its own sample size or measurement \
                 time ({settings} were ignored: {own}); the run is recorded as a full run (quick = false)"
            )),
            QuickEffect::Partial => Some(format!(
                "--quick took effect for {} of {} benchmark(s); {} kept their own settings \
                 ({own}); the run is recorded as quick",
                self.followed.len(),
                self.followed.len() + self.own.len(),
                self.own.len()
            )),
        }
    }
}

impl QuickCheck {
    /// The warning of `bench-run ab` when some benchmarks kept their own settings over ab's
    /// budget: its rounds then take as long as the suite's own settings make them.
    #[must_use]
    pub fn budget_warning(&self, purpose: &str) -> Option<String> {
        if self.own.is_empty() {
            return None;
        }
        let r = self.requested;
        Some(format!(
            "{} of {} benchmark(s) kept their own settings over {purpose}'s budget \
             (--sample-size {} --measurement-time {}): {}; every process of every round takes \
             as long as the suite's own settings make it",
            self.own.len(),
            self.followed.len() + self.own.len(),
            r.sample_size,
            r.measurement_time_s,
            describe(&self.own)
        ))
    }
}

fn describe(own: &[(String, BenchmarkSettings)]) -> String {
    let mut parts: Vec<String> = own
        .iter()
        .take(NAMES_SHOWN)
        .map(|(id, how)| match how {
            BenchmarkSettings::OwnSampleSize { samples } => {
                format!("`{id}` took {samples} samples")
            }
            BenchmarkSettings::OwnMeasurementTime { measured_s } => {
                format!("`{id}` measured for {measured_s:.1} s")
            }
            BenchmarkSettings::Followed => format!("`{id}`"),
        })
        .collect();
    if own.len() > NAMES_SHOWN {
        parts.push(format!("{} more", own.len() - NAMES_SHOWN));
    }
    parts.join(", ")
}

/// The warning when one run of a comparison is a `--quick` run and the other is not; `None`
/// when both were measured alike (both quick or both full).
#[must_use]
pub fn mixing_warning(base: &StoredRun, head: &StoredRun) -> Option<String> {
    let (quick, full, quick_role, full_role) = match (base.provenance.quick, head.provenance.quick)
    {
        (true, false) => (base, head, "base", "head"),
        (false, true) => (head, base, "head", "base"),
        _ => return None,
    };
    // A side of `bench-run ab` is no more a full run than a quick one: it has its own budget.
    let full_kind = if full.source.is_paired_side() {
        "a side of paired rounds (`bench-run ab` or `bisect`: per-process values over rounds)"
    } else {
        "a full run"
    };
    Some(format!(
        "the {quick_role} run #{} is a --quick run and the {full_role} run #{} is {full_kind}: \
         their measurement settings differ, so part of any change may be the settings', not the \
         code's; compare runs measured alike",
        quick.id, full.id
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bench_model::{BenchmarkId, Direction, Estimate, RunProvenance, RunSource, Samples};

    const QUICK: RequestedSettings = RequestedSettings {
        sample_size: 20,
        measurement_time_s: 1.0,
    };

    /// A criterion-like linear measurement: `n` samples of `d, 2d, ..., nd` iterations at
    /// `ns_per_iter`.
    fn linear(id: &str, n: usize, d: f64, ns_per_iter: f64) -> Measurement {
        let iters: Vec<f64> = (1..=n).map(|i| i as f64 * d).collect();
        let times = iters.iter().map(|k| k * ns_per_iter).collect();
        measurement(
            id,
            Samples::new(SamplingMode::Linear, iters, times).unwrap(),
        )
    }

    fn measurement(id: &str, samples: Samples) -> Measurement {
        Measurement {
            benchmark: BenchmarkId::named(id),
            metric: "time".to_owned(),
            unit: "ns".to_owned(),
            direction: Direction::LowerIsBetter,
            estimate: Estimate::point(1.0),
            statistics: std::collections::BTreeMap::new(),
            throughput: None,
            samples: Some(samples),
        }
    }

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn ab_warns_when_a_benchmark_keeps_its_own_sample_size() {
        let ab = RequestedSettings {
            sample_size: 100,
            measurement_time_s: 0.5,
        };
        let followed = [linear("a", 100, 1.0, 10.0)];
        assert_eq!(check(&followed, ab).budget_warning("bench-run ab"), None);
        let own = [linear("a", 100, 1.0, 10.0), linear("gen", 1000, 1.0, 10.0)];
        let warning = check(&own, ab).budget_warning("bench-run ab").unwrap();
        assert!(
            warning.starts_with("1 of 2 benchmark(s) kept their own settings over bench-run ab's")
                && warning.contains("`gen` took 1000 samples"),
            "{warning}"
        );
    }

    #[test]
    fn requested_settings_come_from_the_criterion_arguments() {
        // What `--quick` adds (`bench_runner::criterion_cli::QUICK`; the two are checked
        // against each other beside `record`, which uses both).
        let quick = args("--warm-up-time 0.3 --measurement-time 1 --sample-size 20");
        assert_eq!(RequestedSettings::from_criterion_args(&quick), Some(QUICK));
        assert_eq!(
            RequestedSettings::from_criterion_args(&args(
                "--sample-size=50 --measurement-time 2.5 --noplot filter"
            )),
            Some(RequestedSettings {
                sample_size: 50,
                measurement_time_s: 2.5
            })
        );
        for bad in [
            "--sample-size 20",
            "--measurement-time 1",
            "--sample-size x --measurement-time 1",
            "--sample-size 20 --measurement-time 0",
            "--sample-size 20 --measurement-time",
        ] {
            assert_eq!(
                RequestedSettings::from_criterion_args(&args(bad)),
                None,
                "{bad}"
            );
        }
    }

    #[test]
    fn each_benchmark_is_judged_on_its_samples() {
        // 20 samples of 5, 10, ..., 100 iterations at 1 ms: 1.05 s in all, as requested.
        let followed = linear("a", 20, 5.0, 1e6);
        assert_eq!(
            classify(&followed, QUICK),
            Some(BenchmarkSettings::Followed)
        );
        // The suite's own sample size (rand's 1000, a group's 10).
        for n in [1000, 10, 100] {
            assert_eq!(
                classify(&linear("b", n, 1.0, 10.0), QUICK),
                Some(BenchmarkSettings::OwnSampleSize { samples: n }),
                "{n} samples"
            );
        }
        // 20 samples but 5 s of measurement with d = 24: the suite's own measurement time.
        let long = linear("c", 20, 24.0, 1e6);
        assert!(matches!(
            classify(&long, QUICK),
            Some(BenchmarkSettings::OwnMeasurementTime { measured_s }) if (measured_s - 5.04).abs() < 1e-9
        ));
        // A slow benchmark that could not fit 20 samples in 1 s (d = 1): its own cost, not a
        // setting.
        let slow = linear("d", 20, 1.0, 50e6);
        assert_eq!(classify(&slow, QUICK), Some(BenchmarkSettings::Followed));
        // Twice the requested time (a warm-up estimate off by half) still follows.
        let off = linear("e", 20, 10.0, 1e6);
        assert_eq!(classify(&off, QUICK), Some(BenchmarkSettings::Followed));
        // Flat sampling, 20 samples of 50 000 iterations at 1 µs: 1 s.
        let flat = measurement(
            "f",
            Samples::new(SamplingMode::Flat, vec![50_000.0; 20], vec![5e7; 20]).unwrap(),
        );
        assert_eq!(classify(&flat, QUICK), Some(BenchmarkSettings::Followed));
        // Nothing to judge: single-iteration samples (hyperfine) or none at all.
        let single = measurement(
            "g",
            Samples::new(SamplingMode::Single, vec![1.0; 20], vec![5.0; 20]).unwrap(),
        );
        assert_eq!(classify(&single, QUICK), None);
        let mut bare = linear("h", 20, 5.0, 1e6);
        bare.samples = None;
        assert_eq!(classify(&bare, QUICK), None);
    }

    #[test]
    fn the_run_is_quick_when_any_benchmark_followed_the_settings() {
        let followed = linear("plain", 20, 5.0, 1e6);
        let own = linear("own/x", 1000, 1.0, 10.0);
        let mut bare = linear("bare", 20, 5.0, 1e6);
        bare.samples = None;
        let cases: [(&[Measurement], QuickEffect, bool); 5] = [
            (&[followed.clone(), bare.clone()], QuickEffect::Full, true),
            (&[followed.clone(), own.clone()], QuickEffect::Partial, true),
            (&[own.clone(), bare.clone()], QuickEffect::None, false),
            (&[bare.clone()], QuickEffect::Unchecked, true),
            (&[], QuickEffect::Unchecked, true),
        ];
        for (index, (measurements, effect, quick)) in cases.iter().enumerate() {
            let result = check(measurements, QUICK);
            assert_eq!(result.effect(), *effect, "case {index}");
            assert_eq!(result.effect().is_quick(), *quick, "case {index}");
        }
        let partial = check(&[own.clone(), followed.clone()], QUICK);
        assert_eq!(partial.followed, ["plain"]);
        assert_eq!(partial.unknown, Vec::<String>::new());
        let message = partial.message().unwrap();
        assert!(
            message.starts_with("--quick took effect for 1 of 2"),
            "{message}"
        );
        assert!(message.contains("`own/x` took 1000 samples"), "{message}");
        let none = check(&[own, bare], QUICK);
        assert_eq!(none.unknown, ["bare"]);
        let message = none.message().unwrap();
        assert!(message.starts_with("--quick had no effect"), "{message}");
        assert!(message.contains("quick = false"), "{message}");
        assert_eq!(check(&[followed], QUICK).message(), None);
    }

    #[test]
    fn a_benchmark_is_judged_once_and_long_lists_are_cut() {
        // A second measurement of the same benchmark (another metric) does not count twice.
        let mut rate = linear("plain", 20, 5.0, 1e6);
        rate.metric = "bytes/s".to_owned();
        let result = check(&[linear("plain", 20, 5.0, 1e6), rate], QUICK);
        assert_eq!(result.followed, ["plain"]);
        let many: Vec<Measurement> = (0..8)
            .map(|i| linear(&format!("own/{i}"), 100, 1.0, 10.0))
            .collect();
        let message = check(&many, QUICK).message().unwrap();
        assert!(
            message.contains("`own/4`") && !message.contains("`own/5`"),
            "{message}"
        );
        assert!(message.contains("3 more"), "{message}");
    }

    fn stored(id: i64, quick: bool) -> StoredRun {
        StoredRun {
            id,
            created_at: String::new(),
            source: RunSource::BenchRun,
            machine_id: 1,
            provenance: RunProvenance {
                quick,
                ..RunProvenance::default()
            },
            tags: Vec::new(),
            annotations: Vec::new(),
        }
    }

    #[test]
    fn mixing_a_quick_and_a_full_run_warns() {
        let warning = mixing_warning(&stored(1, false), &stored(2, true)).unwrap();
        assert!(
            warning
                .starts_with("the head run #2 is a --quick run and the base run #1 is a full run"),
            "{warning}"
        );
        let warning = mixing_warning(&stored(1, true), &stored(2, false)).unwrap();
        assert!(
            warning.starts_with("the base run #1 is a --quick run"),
            "{warning}"
        );
        assert_eq!(mixing_warning(&stored(1, true), &stored(2, true)), None);
        assert_eq!(mixing_warning(&stored(1, false), &stored(2, false)), None);
        // An ab side is not called a full run.
        let ab_head = StoredRun {
            source: RunSource::AbHead,
            ..stored(11, false)
        };
        let warning = mixing_warning(&ab_head, &stored(12, true)).unwrap();
        assert!(
            warning.contains("the base run #11 is a side of paired rounds (`bench-run ab`")
                && !warning.contains("full run"),
            "{warning}"
        );
    }
}
