//! Trends: a suite's history on one machine, one series per benchmark and metric, with change
//! points and annotations. Shared by the trend page and `/api/suites/{suite}/trend`.

use crate::changepoint::{self, ChangePoint};
use crate::error::AppError;
use harness::compare::{CompareConfig, NoiseFloor, noise_floor};
use harness::ledger::{Ledger, RunId, SeriesPoint};
use harness::ledger_web::{MachineSummary, RunAnnotation};
use harness::model::Direction;
use serde::Serialize;

/// Which machine's history a trend shows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum MachineChoice {
    /// The machine of the suite's newest run (the default).
    #[default]
    Latest,
    /// Every machine at once (mixes hardware; for a quick look only).
    All,
    /// The machine whose fingerprint starts with this prefix.
    Fingerprint(String),
}

impl MachineChoice {
    /// Parses the `machine` query parameter: absent or empty = latest, `all`, or a fingerprint
    /// (prefix).
    #[must_use]
    pub fn parse(text: Option<&str>) -> Self {
        match text.map(str::trim) {
            None | Some("") => Self::Latest,
            Some("all") => Self::All,
            Some(f) => Self::Fingerprint(f.to_owned()),
        }
    }
}

/// One point of a series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// The run.
    pub run_id: RunId,
    /// Its commit.
    pub git_commit: Option<String>,
    /// Its commit time (seconds since the epoch).
    pub git_commit_time: Option<i64>,
    /// When it was recorded.
    pub created_at: String,
    /// Headline estimate (the median for criterion times).
    pub estimate: f64,
    /// Lower confidence bound.
    pub lower: Option<f64>,
    /// Upper confidence bound.
    pub upper: Option<f64>,
}

/// The history of one benchmark and metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    /// Benchmark full id.
    pub benchmark: String,
    /// Metric.
    pub metric: String,
    /// Unit of the values.
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// Points in commit order.
    pub points: Vec<Point>,
    /// Detected changes of level.
    pub change_points: Vec<ChangePoint>,
    /// Run-to-run noise of the series, as `bench-run gate` computes it.
    pub noise_floor: NoiseFloor,
}

/// A suite's trend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trend {
    /// Suite name.
    pub suite: String,
    /// Machines that ran the suite.
    pub machines: Vec<MachineSummary>,
    /// The machine shown; `None` for all machines.
    pub machine: Option<MachineSummary>,
    /// One series per benchmark and metric, by benchmark then metric.
    pub series: Vec<Series>,
    /// Annotations of the runs shown.
    pub annotations: Vec<RunAnnotation>,
}

/// Loads the trend of `suite` on the chosen machine.
///
/// # Errors
/// [`AppError::NotFound`] for an unknown suite or machine; ledger errors otherwise.
pub async fn load(ledger: &Ledger, suite: &str, choice: &MachineChoice) -> Result<Trend, AppError> {
    let machines = ledger.machines(Some(suite)).await?;
    if machines.is_empty() {
        return Err(AppError::NotFound(format!("no suite named {suite:?}")));
    }
    let machine = match choice {
        MachineChoice::All => None,
        MachineChoice::Latest => machines.iter().max_by_key(|m| m.latest_run).cloned(),
        MachineChoice::Fingerprint(prefix) => Some(
            machines
                .iter()
                .find(|m| m.fingerprint.starts_with(prefix.as_str()))
                .cloned()
                .ok_or_else(|| {
                    AppError::NotFound(format!(
                        "suite {suite:?} has no run on a machine {prefix:?}"
                    ))
                })?,
        ),
    };
    let machine_id = machine.as_ref().map(|m| m.id);
    let points = ledger.trend_points(suite, machine_id).await?;
    let annotations = ledger.suite_annotations(suite, machine_id).await?;
    Ok(Trend {
        suite: suite.to_owned(),
        machines,
        machine,
        series: group(points),
        annotations,
    })
}

/// Groups points (sorted by benchmark, metric, commit order) into series and runs the
/// change-point detector on each.
#[must_use]
pub fn group(points: Vec<SeriesPoint>) -> Vec<Series> {
    let config = CompareConfig::default();
    let mut out: Vec<Series> = Vec::new();
    for p in points {
        let point = Point {
            run_id: p.run_id,
            git_commit: p.git_commit,
            git_commit_time: p.git_commit_time,
            created_at: p.created_at,
            estimate: p.estimate,
            lower: p.lower,
            upper: p.upper,
        };
        match out.last_mut() {
            Some(s) if s.benchmark == p.benchmark && s.metric == p.metric => s.points.push(point),
            _ => out.push(Series {
                benchmark: p.benchmark,
                metric: p.metric,
                unit: p.unit,
                direction: p.direction,
                points: vec![point],
                change_points: Vec::new(),
                noise_floor: noise_floor(&[], &config),
            }),
        }
    }
    for s in &mut out {
        let values: Vec<f64> = s.points.iter().map(|p| p.estimate).collect();
        s.noise_floor = noise_floor(&values, &config);
        s.change_points = changepoint::detect(&values, s.noise_floor.pct);
    }
    out
}
