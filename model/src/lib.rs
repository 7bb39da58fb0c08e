//! The result model: what one benchmark run produced, independent of the tool that produced it.
//!
//! Adapters turn tool output (criterion, cargo-criterion, BMF, hyperfine, gungraun, libtest, a
//! hand-kept markdown log) into [`Measurement`]s; the ledger stores them with a
//! [`RunProvenance`]; comparisons read them back.
//!
//! Every enum that is persisted carries an explicit, permanent integer code (`code()` /
//! `from_code()`); the codes are pinned by a test so a refactor cannot silently change what is
//! already stored.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub mod artifact;
pub mod format;
mod project;
mod run;
mod stored;
pub use artifact::{
    ArtifactError, ArtifactId, ArtifactKind, ArtifactSummary, CountUnit, FunctionCountRow,
    FunctionCounts, MAX_ARTIFACT_BYTES, NewArtifact, StoredArtifact,
};
pub use project::{Project, ProjectNameError};
pub use run::{
    BenchExe, BenchmarkConditions, BuildConfig, GitInfo, LoadAverage, Machine, RunConditions,
    RunId, RunProvenance, RunSource, Toolchain,
};
pub use stored::{Annotation, RunSummary, StoredRun};

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Smaller values are better (time, bytes, latency).
    LowerIsBetter,
    /// Larger values are better (throughput, ops/s).
    HigherIsBetter,
}

impl Direction {
    /// Permanent storage code.
    #[must_use]
    pub const fn code(self) -> i64 {
        match self {
            Self::LowerIsBetter => 1,
            Self::HigherIsBetter => 2,
        }
    }

    /// Inverse of [`Direction::code`].
    #[must_use]
    pub const fn from_code(code: i64) -> Option<Self> {
        match code {
            1 => Some(Self::LowerIsBetter),
            2 => Some(Self::HigherIsBetter),
            _ => None,
        }
    }
}

/// A summary statistic of a benchmark's measured times, as criterion (or libtest, or a log) reports
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    /// Arithmetic mean of per-iteration times.
    Mean,
    /// Median of per-iteration times.
    Median,
    /// Slope of the linear regression of total time on iteration count (linear sampling only).
    Slope,
    /// Standard deviation of per-iteration times.
    StdDev,
    /// Median absolute deviation of per-iteration times.
    MedianAbsDev,
    /// Range of per-iteration times: the largest sample minus the smallest (libtest's `+/-`,
    /// taken after it winsorizes its samples at the 5th and 95th percentiles). A spread of the
    /// samples, not an interval around an estimate: its [`Estimate`] is a point.
    Range,
    /// A median known only approximately: a hand-kept log wrote it with `~` (`~14.99 µs`).
    /// The value as written (converted to the result's unit); how far off it may be is not
    /// known, so its [`Estimate`] is a point.
    ApproximateMedian,
}

impl Statistic {
    /// All statistics, in display order.
    pub const ALL: [Self; 7] = [
        Self::Mean,
        Self::Median,
        Self::Slope,
        Self::StdDev,
        Self::MedianAbsDev,
        Self::Range,
        Self::ApproximateMedian,
    ];

    /// Permanent storage code.
    #[must_use]
    pub const fn code(self) -> i64 {
        match self {
            Self::Mean => 1,
            Self::Median => 2,
            Self::Slope => 3,
            Self::StdDev => 4,
            Self::MedianAbsDev => 5,
            Self::Range => 6,
            Self::ApproximateMedian => 7,
        }
    }

    /// Inverse of [`Statistic::code`].
    #[must_use]
    pub const fn from_code(code: i64) -> Option<Self> {
        match code {
            1 => Some(Self::Mean),
            2 => Some(Self::Median),
            3 => Some(Self::Slope),
            4 => Some(Self::StdDev),
            5 => Some(Self::MedianAbsDev),
            6 => Some(Self::Range),
            7 => Some(Self::ApproximateMedian),
            _ => None,
        }
    }

    /// Stable name used in JSON output.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Mean => "mean",
            Self::Median => "median",
            Self::Slope => "slope",
            Self::StdDev => "std_dev",
            Self::MedianAbsDev => "median_abs_dev",
            Self::Range => "range",
            Self::ApproximateMedian => "approximate_median",
        }
    }
}

/// What one iteration of a benchmark processes, as declared by the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThroughputKind {
    /// Bytes, reported in binary multiples (KiB/s).
    Bytes,
    /// Bytes, reported in decimal multiples (KB/s).
    BytesDecimal,
    /// Abstract elements (items, rows, operations).
    Elements,
    /// Bits.
    Bits,
}

impl ThroughputKind {
    /// Permanent storage code.
    #[must_use]
    pub const fn code(self) -> i64 {
        match self {
            Self::Bytes => 1,
            Self::BytesDecimal => 2,
            Self::Elements => 3,
            Self::Bits => 4,
        }
    }

    /// Inverse of [`ThroughputKind::code`].
    #[must_use]
    pub const fn from_code(code: i64) -> Option<Self> {
        match code {
            1 => Some(Self::Bytes),
            2 => Some(Self::BytesDecimal),
            3 => Some(Self::Elements),
            4 => Some(Self::Bits),
            _ => None,
        }
    }

    /// Unit of the per-second rate derived from this kind.
    #[must_use]
    pub const fn rate_unit(self) -> &'static str {
        match self {
            Self::Bytes | Self::BytesDecimal => "bytes/s",
            Self::Elements => "elements/s",
            Self::Bits => "bits/s",
        }
    }
}

/// Throughput declared per iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Throughput {
    /// What is counted.
    pub kind: ThroughputKind,
    /// How many of them one iteration processes.
    pub per_iteration: u64,
}

/// How criterion chose iteration counts for its samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SamplingMode {
    /// Iteration counts grow linearly (d, 2d, 3d, ...); a slope can be fitted.
    Linear,
    /// Every sample runs the same number of iterations.
    Flat,
    /// One iteration per sample (hyperfine runs, cargo-criterion without a mode).
    Single,
    /// One value per process, in round order (`bench-run ab`): each is the median of one bench
    /// process's own samples, so the process is the unit of replication. Sample `r` of a paired
    /// base run and sample `r` of its head run were measured in the same round.
    PerProcess,
}

impl SamplingMode {
    /// Permanent storage code.
    #[must_use]
    pub const fn code(self) -> i64 {
        match self {
            Self::Linear => 1,
            Self::Flat => 2,
            Self::Single => 3,
            Self::PerProcess => 4,
        }
    }

    /// Inverse of [`SamplingMode::code`].
    #[must_use]
    pub const fn from_code(code: i64) -> Option<Self> {
        match code {
            1 => Some(Self::Linear),
            2 => Some(Self::Flat),
            3 => Some(Self::Single),
            4 => Some(Self::PerProcess),
            _ => None,
        }
    }
}

/// A point estimate with optional confidence bounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The point estimate.
    pub point: f64,
    /// Lower confidence bound.
    pub lower: Option<f64>,
    /// Upper confidence bound.
    pub upper: Option<f64>,
    /// Confidence level of the bounds, e.g. 0.95.
    pub confidence_level: Option<f64>,
    /// Standard error of the estimate, when the tool reports it.
    pub standard_error: Option<f64>,
}

impl Estimate {
    /// An estimate with no bounds.
    #[must_use]
    pub const fn point(point: f64) -> Self {
        Self {
            point,
            lower: None,
            upper: None,
            confidence_level: None,
            standard_error: None,
        }
    }
}

/// Errors raised when raw samples break their invariants.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SamplesError {
    /// `iters` and `times` differ in length.
    #[error("sample arrays differ in length: {iters} iteration counts, {times} times")]
    LengthMismatch {
        /// Number of iteration counts.
        iters: usize,
        /// Number of times.
        times: usize,
    },
    /// No samples at all.
    #[error("no samples")]
    Empty,
    /// A value is NaN, infinite, negative, or an iteration count is zero.
    #[error("sample {index} is invalid: iters={iters}, time={time}")]
    InvalidValue {
        /// Index of the offending sample.
        index: usize,
        /// Its iteration count.
        iters: f64,
        /// Its measured time.
        time: f64,
    },
}

/// Raw samples: for each sample, how many iterations ran and how long they took in total.
///
/// Invariants (checked by [`Samples::new`]): equal lengths, at least one sample, every iteration
/// count finite and positive, every time finite and non-negative.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SamplesParts")]
pub struct Samples {
    mode: SamplingMode,
    iters: Vec<f64>,
    times_ns: Vec<f64>,
}

/// What deserialisation reads before [`Samples::new`] checks it: pushed runs and stored JSON
/// are input like any other.
#[derive(Deserialize)]
struct SamplesParts {
    mode: SamplingMode,
    iters: Vec<f64>,
    times_ns: Vec<f64>,
}

impl TryFrom<SamplesParts> for Samples {
    type Error = SamplesError;

    fn try_from(parts: SamplesParts) -> Result<Self, SamplesError> {
        Self::new(parts.mode, parts.iters, parts.times_ns)
    }
}

impl Samples {
    /// Validates and wraps raw samples (times in nanoseconds).
    ///
    /// # Errors
    /// See [`SamplesError`].
    pub fn new(
        mode: SamplingMode,
        iters: Vec<f64>,
        times_ns: Vec<f64>,
    ) -> Result<Self, SamplesError> {
        if iters.len() != times_ns.len() {
            return Err(SamplesError::LengthMismatch {
                iters: iters.len(),
                times: times_ns.len(),
            });
        }
        if iters.is_empty() {
            return Err(SamplesError::Empty);
        }
        for (index, (&n, &t)) in iters.iter().zip(&times_ns).enumerate() {
            if !(n.is_finite() && n > 0.0 && t.is_finite() && t >= 0.0) {
                return Err(SamplesError::InvalidValue {
                    index,
                    iters: n,
                    time: t,
                });
            }
        }
        Ok(Self {
            mode,
            iters,
            times_ns,
        })
    }

    /// How iteration counts were chosen.
    #[must_use]
    pub const fn mode(&self) -> SamplingMode {
        self.mode
    }

    /// Iteration count of each sample.
    #[must_use]
    pub fn iters(&self) -> &[f64] {
        &self.iters
    }

    /// Total measured time of each sample, in nanoseconds.
    #[must_use]
    pub fn times_ns(&self) -> &[f64] {
        &self.times_ns
    }

    /// Number of samples.
    #[must_use]
    pub fn len(&self) -> usize {
        self.iters.len()
    }

    /// Always false: a `Samples` holds at least one sample.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.iters.is_empty()
    }

    /// Time per iteration of each sample, in nanoseconds.
    #[must_use]
    pub fn per_iteration_ns(&self) -> Vec<f64> {
        self.iters
            .iter()
            .zip(&self.times_ns)
            .map(|(n, t)| t / n)
            .collect()
    }
}

/// The identity of a benchmark: criterion's `group/function/value`, or a free-form name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BenchmarkId {
    /// Full id as the tool prints it, e.g. `rows=2000/encode_plain_ws` or `decode/100000`.
    pub full: String,
    /// Group part, when the tool reports one.
    pub group: Option<String>,
    /// Function part, when the tool reports one.
    pub function: Option<String>,
    /// Parameter part, when the tool reports one.
    pub value: Option<String>,
}

impl BenchmarkId {
    /// A benchmark known only by its full name.
    #[must_use]
    pub fn named(full: impl Into<String>) -> Self {
        Self {
            full: full.into(),
            group: None,
            function: None,
            value: None,
        }
    }
}

/// Well-known metric names.
pub mod metric {
    /// Wall-clock time per iteration, in nanoseconds (criterion's measurement).
    pub const TIME: &str = "time";
    /// How many times faster one benchmark ran than its anchor (unit `x`, higher is better):
    /// the median over the rounds of an interleaved run, recorded as benchmark
    /// `<ours> vs <anchor>`.
    pub const SPEEDUP: &str = "speedup";
}

/// One measured quantity of one benchmark in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Which benchmark.
    pub benchmark: BenchmarkId,
    /// What was measured: [`metric::TIME`] for criterion times, or a BMF measure name.
    pub metric: String,
    /// Unit of `estimate`: `ns` for times, otherwise as imported (`bytes`, `ops/s`, ...).
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// The headline estimate (the median for criterion times).
    pub estimate: Estimate,
    /// Further statistics, when the tool reports them (criterion: mean, median, slope, ...).
    pub statistics: BTreeMap<Statistic, Estimate>,
    /// Declared throughput per iteration, when set.
    pub throughput: Option<Throughput>,
    /// Raw samples, when the tool keeps them.
    pub samples: Option<Samples>,
}

/// A run about to be recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRun {
    /// Where the results came from.
    pub source: RunSource,
    /// Provenance.
    pub provenance: RunProvenance,
    /// The results.
    pub measurements: Vec<Measurement>,
}

impl Measurement {
    /// A time per iteration of `benchmark` in nanoseconds, a headline estimate with no bounds,
    /// statistics or samples (a single imported number; tests).
    #[must_use]
    pub fn time_ns(benchmark: &str, value: f64) -> Self {
        Self {
            benchmark: BenchmarkId::named(benchmark),
            metric: "time".to_owned(),
            unit: "ns".to_owned(),
            direction: Direction::LowerIsBetter,
            estimate: Estimate::point(value),
            statistics: BTreeMap::new(),
            throughput: None,
            samples: None,
        }
    }
}

/// A benchmark and metric: the key results are paired and sorted by.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct MetricKey {
    /// The benchmark's full id.
    pub benchmark: String,
    /// The metric name.
    pub metric: String,
}

impl MetricKey {
    /// A key from its parts.
    #[must_use]
    pub fn new(benchmark: impl Into<String>, metric: impl Into<String>) -> Self {
        Self {
            benchmark: benchmark.into(),
            metric: metric.into(),
        }
    }

    /// The key of a measurement.
    #[must_use]
    pub fn of(measurement: &Measurement) -> Self {
        Self::new(
            measurement.benchmark.full.clone(),
            measurement.metric.clone(),
        )
    }
}

/// One point of a key's history: a run and its headline estimate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HistoryPoint {
    /// The run.
    pub run: RunId,
    /// Its headline estimate.
    pub value: f64,
}

impl HistoryPoint {
    /// A point from its parts.
    #[must_use]
    pub const fn new(run: RunId, value: f64) -> Self {
        Self { run, value }
    }
}

/// Headline estimates of earlier runs of the same suite on the same machine, per key, oldest
/// first, each with its run, not including the head run.
pub type History = BTreeMap<MetricKey, Vec<HistoryPoint>>;

#[cfg(test)]
mod tests {
    use super::*;

    // These codes are stored in ledgers: changing one corrupts history. Add, never renumber.
    #[test]
    fn persisted_codes_are_permanent() {
        let direction = [
            (Direction::LowerIsBetter, 1),
            (Direction::HigherIsBetter, 2),
        ];
        for (value, code) in direction {
            assert_eq!(value.code(), code);
            assert_eq!(Direction::from_code(code), Some(value));
        }
        let stats = [
            (Statistic::Mean, 1),
            (Statistic::Median, 2),
            (Statistic::Slope, 3),
            (Statistic::StdDev, 4),
            (Statistic::MedianAbsDev, 5),
            (Statistic::Range, 6),
            (Statistic::ApproximateMedian, 7),
        ];
        for (value, code) in stats {
            assert_eq!(value.code(), code);
            assert_eq!(Statistic::from_code(code), Some(value));
        }
        let kinds = [
            (ThroughputKind::Bytes, 1),
            (ThroughputKind::BytesDecimal, 2),
            (ThroughputKind::Elements, 3),
            (ThroughputKind::Bits, 4),
        ];
        for (value, code) in kinds {
            assert_eq!(value.code(), code);
            assert_eq!(ThroughputKind::from_code(code), Some(value));
        }
        let modes = [
            (SamplingMode::Linear, 1),
            (SamplingMode::Flat, 2),
            (SamplingMode::Single, 3),
            (SamplingMode::PerProcess, 4),
        ];
        for (value, code) in modes {
            assert_eq!(value.code(), code);
            assert_eq!(SamplingMode::from_code(code), Some(value));
        }
        let sources = [
            (RunSource::BenchRun, 1),
            (RunSource::Calibration, 2),
            (RunSource::ImportCriterion, 3),
            (RunSource::ImportBmf, 4),
            (RunSource::ImportHyperfine, 5),
            (RunSource::ImportCargoCriterion, 6),
            (RunSource::Interleaved, 7),
            (RunSource::Confirmation, 8),
            (RunSource::AbBase, 9),
            (RunSource::AbHead, 10),
            (RunSource::ImportLibtest, 11),
            (RunSource::ImportMarkdownLog, 12),
            (RunSource::BisectBase, 13),
            (RunSource::BisectHead, 14),
            (RunSource::Profile, 15),
        ];
        for (value, code) in sources {
            assert_eq!(value.code(), code);
            assert_eq!(RunSource::from_code(code), Some(value));
        }
        assert_eq!(Direction::from_code(0), None);
        assert_eq!(Statistic::from_code(8), None);
        assert_eq!(RunSource::from_code(16), None);
    }

    #[test]
    fn samples_reject_broken_invariants() {
        assert_eq!(
            Samples::new(SamplingMode::Flat, vec![1.0], vec![]),
            Err(SamplesError::LengthMismatch { iters: 1, times: 0 })
        );
        assert_eq!(
            Samples::new(SamplingMode::Flat, vec![], vec![]),
            Err(SamplesError::Empty)
        );
        assert!(Samples::new(SamplingMode::Flat, vec![0.0], vec![1.0]).is_err());
        assert!(Samples::new(SamplingMode::Flat, vec![1.0], vec![f64::NAN]).is_err());
        assert!(Samples::new(SamplingMode::Flat, vec![1.0], vec![-1.0]).is_err());
        let ok = Samples::new(SamplingMode::Linear, vec![1.0, 2.0], vec![10.0, 30.0]);
        assert_eq!(ok.map(|s| s.per_iteration_ns()), Ok(vec![10.0, 15.0]));
    }

    #[test]
    fn deserialised_samples_are_checked() {
        let good = r#"{"mode":"linear","iters":[1.0,2.0],"times_ns":[10.0,30.0]}"#;
        assert!(serde_json::from_str::<Samples>(good).is_ok());
        for (i, bad) in [
            r#"{"mode":"linear","iters":[1.0],"times_ns":[]}"#,
            r#"{"mode":"linear","iters":[],"times_ns":[]}"#,
            r#"{"mode":"flat","iters":[0.0],"times_ns":[1.0]}"#,
            r#"{"mode":"flat","iters":[1.0],"times_ns":[-1.0]}"#,
        ]
        .iter()
        .enumerate()
        {
            let err = serde_json::from_str::<Samples>(bad).err();
            assert!(err.is_some(), "case {i}: {bad} was accepted");
        }
    }
}
