//! Runs as the ledger returns them: a recorded run with its id, time and annotations, and the
//! summary a listing shows. Plain data, shared by the store, the reports and the web app.

use crate::run::{RunConditions, RunId, RunProvenance, RunSource};
use serde::{Deserialize, Serialize};

/// A run as listed: identity and the provenance fields scripts filter on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// Run id.
    pub id: RunId,
    /// Suite name.
    pub suite: String,
    /// When the run was recorded (RFC 3339, UTC).
    pub created_at: String,
    /// Where its results came from.
    pub source: RunSource,
    /// Git commit, empty outside a repository.
    pub git_commit: Option<String>,
    /// Git branch.
    pub git_branch: Option<String>,
    /// Whether the work tree had uncommitted changes.
    pub git_dirty: bool,
    /// First line of the commit message.
    pub git_summary: Option<String>,
    /// Machine row id.
    pub machine_id: i64,
    /// Machine fingerprint.
    pub machine: String,
    /// CPU model of the machine.
    pub cpu_model: String,
    /// Number of results.
    pub results: i64,
    /// Tags given to this run.
    pub tags: Vec<String>,
    /// Whether it is a `--quick` run (never a default baseline, never history).
    pub quick: bool,
    /// How busy the machine was while it ran, when recorded (judged by
    /// `bench_analysis::contention`, not here).
    #[serde(skip)]
    pub conditions: Option<RunConditions>,
}

/// An annotation on a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Annotation {
    /// When it was written.
    pub created_at: String,
    /// What it says.
    pub text: String,
}

/// A stored run with its full provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    /// Run id.
    pub id: RunId,
    /// When the run was recorded (RFC 3339, UTC).
    pub created_at: String,
    /// Where its results came from.
    pub source: RunSource,
    /// Machine row id.
    pub machine_id: i64,
    /// Everything recorded about the run.
    pub provenance: RunProvenance,
    /// Tags given to this run.
    pub tags: Vec<String>,
    /// Annotations, oldest first.
    pub annotations: Vec<Annotation>,
}
