//! What the store's operations take and return: plain data, no database types.

use bench_model::{Annotation, Direction, Measurement, NewRun, RunId, RunProvenance, RunSource};
use serde::Serialize;

/// Which runs to list.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    /// Only this suite.
    pub suite: Option<String>,
    /// Only this machine fingerprint (or prefix).
    pub machine: Option<String>,
    /// Only this branch.
    pub branch: Option<String>,
    /// Only commits starting with this prefix.
    pub commit: Option<String>,
    /// At most this many (newest first); `None` for all.
    pub limit: Option<i64>,
    /// Skip this many of the newest.
    pub offset: i64,
}

/// A suite seen in the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SuiteSummary {
    /// Suite name.
    pub suite: String,
    /// Number of runs.
    pub runs: i64,
    /// Id of the newest run.
    pub latest_run: RunId,
}

/// A machine seen in the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MachineSummary {
    /// Machine row id.
    pub id: i64,
    /// Fingerprint (see `bench_runner::provenance`).
    pub fingerprint: String,
    /// CPU model.
    pub cpu_model: String,
    /// Operating system.
    pub os: String,
    /// The testbed name, when the machine is one (`BENCH_MACHINE`).
    pub testbed: Option<String>,
    /// Number of runs (of the suite asked about, if any).
    pub runs: i64,
    /// How many of them are points of their suite's line (not `--quick` runs, confirmations
    /// or `ab` sides): the runs a trend of the line draws.
    pub line_runs: i64,
    /// Newest of those runs.
    pub latest_run: RunId,
}

/// A run of a trend, in commit order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TrendRun {
    /// Run id.
    pub id: RunId,
    /// Git commit.
    pub git_commit: Option<String>,
    /// Commit time, seconds since the epoch.
    pub git_commit_time: Option<i64>,
    /// When the run was recorded (RFC 3339, UTC).
    pub created_at: String,
}

/// One headline estimate of a trend series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrendValue {
    /// Index of the run in [`TrendData::runs`].
    #[serde(skip)]
    pub run: usize,
    /// Run id.
    pub run_id: RunId,
    /// Headline estimate.
    pub estimate: f64,
    /// Lower confidence bound.
    pub lower: Option<f64>,
    /// Upper confidence bound.
    pub upper: Option<f64>,
}

/// The headline estimates of one benchmark and metric, in commit order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrendSeries {
    /// Benchmark full id.
    pub benchmark: String,
    /// Metric.
    pub metric: String,
    /// Unit (of the first run that has the series).
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// The values, in commit order.
    pub values: Vec<TrendValue>,
}

/// A project of the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProjectSummary {
    /// Its name.
    pub name: String,
    /// Its runs.
    pub runs: i64,
    /// Its suites.
    pub suites: i64,
    /// Its newest run.
    pub latest_run: RunId,
}

/// Which runs a trend draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TrendRuns {
    /// The suite's line: its ordinary, full runs
    /// ([`bench_model::RunSource::is_on_the_line`], not quick). Change points and noise floors
    /// are read from these.
    #[default]
    Line,
    /// Every run, `ab` and bisect sides, profiles, confirmations and quick runs included.
    #[serde(rename = "all")]
    Everything,
}

/// What [`crate::LedgerStore::trend`] returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrendData {
    /// The runs, in commit order.
    pub runs: Vec<TrendRun>,
    /// One series per benchmark and metric, by benchmark then metric.
    pub series: Vec<TrendSeries>,
}

/// An annotation together with the run it is attached to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunAnnotation {
    /// The annotated run.
    pub run_id: RunId,
    /// When it was written.
    pub created_at: String,
    /// What it says.
    pub text: String,
}

/// How the rounds of a paired A/B run (`bench-run ab`) were laid out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct PairingPlan {
    /// Seed of the side order.
    pub seed: u64,
    /// Per round, whether the base ran first.
    pub base_first: Vec<bool>,
    /// The base revision as given (`main`, a hash, a tag).
    pub base_rev: String,
    /// The head revision as given; `None` for the working tree.
    pub head_rev: Option<String>,
    /// The layout seed of each round (`bench-run ab --layouts K`); empty when every round ran
    /// the one default link.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_layouts: Vec<u64>,
}

/// A stored pairing: which two runs are the sides of one paired A/B run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pairing {
    /// Row id.
    pub id: i64,
    /// When it was recorded (RFC 3339, UTC).
    pub created_at: String,
    /// The base side's run.
    pub base_run: RunId,
    /// The head side's run.
    pub head_run: RunId,
    /// The layout of the rounds.
    pub plan: PairingPlan,
}

impl Pairing {
    /// Number of rounds.
    #[must_use]
    pub fn rounds(&self) -> usize {
        self.plan.base_first.len()
    }
}

/// A run of another ledger, as stored there, to be recorded here as a copy.
#[derive(Debug, Clone, PartialEq)]
pub struct RunCopy {
    /// The identity of the ledger it comes from.
    pub origin_ledger: String,
    /// Its id there.
    pub origin_run: RunId,
    /// When it was recorded there.
    pub created_at: String,
    /// Where its results came from.
    pub source: RunSource,
    /// Its provenance.
    pub provenance: RunProvenance,
    /// Its results.
    pub measurements: Vec<Measurement>,
    /// Its annotations, oldest first.
    pub annotations: Vec<Annotation>,
}

/// What makes a pushed run's recording idempotent: the key its client sent (the same on every
/// retry of one push) and a digest of what was pushed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestKey {
    /// The client's idempotency key: 1 to [`IngestKey::MAX_LEN`] printable ASCII characters.
    pub key: String,
    /// SHA-256 of the pushed content, 64 lowercase hex digits.
    pub content_sha256: String,
}

impl IngestKey {
    /// Longest accepted key, in bytes.
    pub const MAX_LEN: usize = 200;

    /// Checks the shape of a key alone (a server refuses a bad one before reading the body).
    ///
    /// # Errors
    /// [`crate::LedgerError::Invalid`] for an empty, overlong or non-printable key.
    pub fn check_key(key: &str) -> Result<(), crate::LedgerError> {
        let printable = key.bytes().all(|b| (0x21..0x7f).contains(&b));
        if key.is_empty() || key.len() > Self::MAX_LEN || !printable {
            return Err(crate::LedgerError::Invalid(format!(
                "an idempotency key is 1 to {} printable ASCII characters without spaces",
                Self::MAX_LEN
            )));
        }
        Ok(())
    }

    /// Checks the key's shape.
    ///
    /// # Errors
    /// [`crate::LedgerError::Invalid`] for an empty, overlong or non-printable key, or a digest
    /// that is not 64 lowercase hex digits.
    pub fn check(&self) -> Result<(), crate::LedgerError> {
        Self::check_key(&self.key)?;
        let hex = self
            .content_sha256
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if self.content_sha256.len() != 64 || !hex {
            return Err(crate::LedgerError::Invalid(
                "a content digest is 64 lowercase hex digits".to_owned(),
            ));
        }
        Ok(())
    }
}

/// The outcome of recording the pushed sides of a paired A/B run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairIngested {
    /// The base side's run.
    pub base: RunId,
    /// The head side's run.
    pub head: RunId,
    /// Whether they were recorded now (`false`: an earlier push with the same key had).
    pub created: bool,
}

/// The outcome of recording a pushed run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ingested {
    /// The run's id.
    pub id: RunId,
    /// Whether it was recorded now (`false`: an earlier push with the same key recorded it).
    pub created: bool,
}

/// A run measured before it is recorded, such as an entry of a hand-kept log: recorded with the
/// time it was measured instead of the time of recording, and with its notes.
#[derive(Debug, Clone, PartialEq)]
pub struct DatedRun {
    /// The run.
    pub run: NewRun,
    /// When it was measured, in the form the ledger writes times (RFC 3339, UTC, milliseconds:
    /// `2026-02-14T17:26:18.000Z`); stored as the run's `created_at`.
    pub recorded_at: String,
    /// Notes kept with the run as annotations written at `recorded_at`, in this order.
    pub notes: Vec<String>,
}

/// The outcome of recording an artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ArtifactIngested {
    /// The artifact's id.
    pub id: bench_model::ArtifactId,
    /// Whether it was recorded now (`false`: the same content of the same run, benchmark,
    /// kind, profiler and base was there already).
    pub created: bool,
}
