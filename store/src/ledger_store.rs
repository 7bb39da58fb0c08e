//! The ledger's operations as one trait, [`LedgerStore`]: what every engine implements and
//! every caller uses, whatever the engine.

use crate::error::LedgerError;
use crate::location::Location;
use crate::types::{
    ArtifactIngested, DatedRun, IngestKey, Ingested, MachineSummary, PairIngested, Pairing,
    PairingPlan, ProjectSummary, RunAnnotation, RunCopy, RunFilter, SuiteSummary, TrendData,
    TrendRuns,
};
use async_trait::async_trait;
use bench_model::{
    Annotation, ArtifactId, ArtifactSummary, History, Measurement, NewArtifact, NewRun, Project,
    RunId, RunSummary, StoredArtifact, StoredRun,
};
use std::collections::BTreeMap;

/// The ledger's operations. Every engine implements all of them with the same meaning; the
/// store tests (`store/tests/`) hold each engine to it.
///
/// A handle is scoped to one project ([`LedgerStore::project`]): it records into it, and every
/// read (runs, suites, baselines, tags, testbeds, trends, a run by its id) sees only its runs.
/// Only [`LedgerStore::projects`] and the ledger's identity look across projects.
#[async_trait]
pub trait LedgerStore: Send + Sync + std::fmt::Debug {
    /// Where the ledger lives.
    fn location(&self) -> &Location;

    /// The project this handle reads and records in.
    fn project(&self) -> &Project;

    /// A handle on the same ledger (the same connections) scoped to `project`.
    fn in_project(&self, project: &Project) -> std::sync::Arc<dyn LedgerStore>;

    /// A stamp of the whole ledger (every project) that changes whenever anything may have
    /// been recorded since it was taken: a stamp taken before a read and equal to one taken
    /// before a later read means both reads saw the same ledger, so what the first computed
    /// still holds. Compare stamps for equality only. Cheap (no table is scanned).
    ///
    /// # Errors
    /// When the query fails.
    async fn stamp(&self) -> Result<String, LedgerError>;

    /// Every project holding a run, by name.
    ///
    /// # Errors
    /// When the query fails.
    async fn projects(&self) -> Result<Vec<ProjectSummary>, LedgerError>;

    /// Records a run, its results, statistics, raw samples and conditions in one transaction.
    ///
    /// # Errors
    /// When the run is invalid (no results, duplicate benchmark/metric pairs, bad conditions)
    /// or the database refuses the write. Nothing is stored on error.
    async fn record_run(&self, run: &NewRun) -> Result<RunId, LedgerError>;

    /// Records a pushed run once per idempotency key, in one transaction: the first push with
    /// `key` records the run; a retry with the same key and content answers the run it
    /// recorded, stores nothing, and says so ([`Ingested::created`] is `false`). Concurrent
    /// pushes with one key record one run.
    ///
    /// # Errors
    /// [`LedgerError::KeyReused`] when the key recorded other content; otherwise as
    /// [`LedgerStore::record_run`]. Nothing is stored on error.
    async fn record_run_once(&self, run: &NewRun, key: &IngestKey)
    -> Result<Ingested, LedgerError>;

    /// Records a run measured before it is recorded (an entry of a hand-kept log) with
    /// [`DatedRun::recorded_at`] as its recording time and its notes as annotations of that
    /// time, once per idempotency key, in one transaction, as [`LedgerStore::record_run_once`]
    /// records a pushed run.
    ///
    /// # Errors
    /// [`LedgerError::Invalid`] when `recorded_at` is not a time in the ledger's form or a note
    /// is empty; otherwise as [`LedgerStore::record_run_once`]. Nothing is stored on error.
    async fn record_dated_run_once(
        &self,
        run: &DatedRun,
        key: &IngestKey,
    ) -> Result<Ingested, LedgerError>;

    /// Records the pushed sides of a paired A/B run and their pairing once per idempotency key,
    /// in one transaction, as [`LedgerStore::record_run_once`] records one run (the key is kept
    /// with the head run).
    ///
    /// # Errors
    /// [`LedgerError::KeyReused`] when the key recorded other content; otherwise as
    /// [`LedgerStore::record_pair`]. Nothing is stored on error.
    async fn record_pair_once(
        &self,
        base: &NewRun,
        head: &NewRun,
        plan: &PairingPlan,
        key: &IngestKey,
    ) -> Result<PairIngested, LedgerError>;

    /// Records the two sides of a paired A/B run and their pairing in one transaction.
    ///
    /// # Errors
    /// When a side is invalid, a result does not hold one value per round, or the write fails.
    async fn record_pair(
        &self,
        base: &NewRun,
        head: &NewRun,
        plan: &PairingPlan,
    ) -> Result<(RunId, RunId), LedgerError>;

    /// A run with its provenance, tags and annotations.
    ///
    /// # Errors
    /// When the query fails or the row is corrupt.
    async fn run(&self, id: RunId) -> Result<Option<StoredRun>, LedgerError>;

    /// Runs matching `filter`, newest first.
    ///
    /// # Errors
    /// When the query fails.
    async fn runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, LedgerError>;

    /// Suites in the ledger with their run counts, by name.
    ///
    /// # Errors
    /// When the query fails.
    async fn suites(&self) -> Result<Vec<SuiteSummary>, LedgerError>;

    /// The newest run, optionally of one suite.
    ///
    /// # Errors
    /// When the query fails.
    async fn latest_run(&self, suite: Option<&str>) -> Result<Option<RunId>, LedgerError>;

    /// The default baseline of `run`: the newest earlier run of the same suite on the same
    /// machine that is a full measurement, i.e. neither a `--quick` run nor a `gate --confirm`
    /// re-run of a few benchmarks, nor a side of a `bench-run ab` (its values are per-process
    /// quantiles over rounds, a different estimate).
    ///
    /// # Errors
    /// When the query fails.
    async fn previous_run(&self, run: RunId) -> Result<Option<RunId>, LedgerError>;

    /// The newest run at a commit (full hash or prefix), optionally of one suite. The sides of
    /// a `bench-run ab` are not found this way (name them by id or tag).
    ///
    /// # Errors
    /// When the query fails.
    async fn run_at_commit(
        &self,
        commit: &str,
        suite: Option<&str>,
    ) -> Result<Option<RunId>, LedgerError>;

    /// The run a tag names (the newest tag row of that name wins).
    ///
    /// # Errors
    /// When the query fails.
    async fn run_by_tag(&self, name: &str) -> Result<Option<RunId>, LedgerError>;

    /// Gives `run` the tag `name` (moving the name if another run had it).
    ///
    /// # Errors
    /// When the run does not exist, the name is empty or all digits, or the write fails.
    async fn tag(&self, run: RunId, name: &str) -> Result<(), LedgerError>;

    /// Adds a note to `run`.
    ///
    /// # Errors
    /// When the run does not exist, the text is empty, or the write fails.
    async fn annotate(&self, run: RunId, text: &str) -> Result<(), LedgerError>;

    /// All results of `run`, with statistics and raw samples, sorted by benchmark and metric.
    ///
    /// # Errors
    /// When the query fails or a row is corrupt.
    async fn measurements(&self, run: RunId) -> Result<Vec<Measurement>, LedgerError>;

    /// Headline estimates of up to `runs` earlier runs of `suite` on `machine_id`, before run
    /// `before`, oldest first, each with its run: the input of the noise model. `--quick`
    /// runs and the sides of a `bench-run ab` are never history.
    ///
    /// # Errors
    /// When the query fails.
    async fn history(
        &self,
        suite: &str,
        machine_id: i64,
        before: RunId,
        runs: usize,
    ) -> Result<History, LedgerError>;

    /// The pairing `run` is a side of, if any.
    ///
    /// # Errors
    /// When the query fails or the row is corrupt.
    async fn pairing_of(&self, run: RunId) -> Result<Option<Pairing>, LedgerError>;

    /// Machines with runs (of `suite`, if given), by row id.
    ///
    /// # Errors
    /// When the query fails.
    async fn machines(&self, suite: Option<&str>) -> Result<Vec<MachineSummary>, LedgerError>;

    /// The newest run of the line of every (suite, machine) pair ([`TrendRuns::Line`]; its
    /// newest run of any kind when it has none), ordered by suite, then newest first.
    ///
    /// # Errors
    /// When the query fails.
    async fn latest_runs_per_machine(&self) -> Result<Vec<RunId>, LedgerError>;

    /// Every headline estimate of `suite` (on machine `machine_id`, if given) of the `runs`
    /// chosen: the runs in commit order (git commit time, falling back to the recording time
    /// for runs outside git, then run id) and one series per benchmark and metric (sorted by
    /// both) whose values follow that order. The input of the trend charts.
    ///
    /// # Errors
    /// When the query fails or a row is corrupt.
    async fn trend(
        &self,
        suite: &str,
        machine_id: Option<i64>,
        runs: TrendRuns,
    ) -> Result<TrendData, LedgerError>;

    /// [`LedgerStore::trend`] of the runs recorded after run `after` only (larger ids): what
    /// a trend read before gains since. The ledger is append-only, so those runs add points and
    /// change none.
    ///
    /// # Errors
    /// When the query fails or a row is corrupt.
    async fn trend_since(
        &self,
        suite: &str,
        machine_id: Option<i64>,
        runs: TrendRuns,
        after: RunId,
    ) -> Result<TrendData, LedgerError>;

    /// Annotations on runs of `suite` (on machine `machine_id`, if given), oldest first.
    ///
    /// # Errors
    /// When the query fails.
    async fn suite_annotations(
        &self,
        suite: &str,
        machine_id: Option<i64>,
    ) -> Result<Vec<RunAnnotation>, LedgerError>;

    /// Annotations on the runs of `suite` on machine `machine_id` from run `from` to run `to`
    /// in commit order (the order of [`LedgerStore::trend`]), both ends included, whichever of
    /// the two comes first: what was noted about the history a comparison spans. Ordered by
    /// run in commit order, then oldest note first. A missing end counts as the other end;
    /// none when both are missing.
    ///
    /// # Errors
    /// When the query fails.
    async fn annotations_between(
        &self,
        suite: &str,
        machine_id: i64,
        from: RunId,
        to: RunId,
    ) -> Result<Vec<RunAnnotation>, LedgerError>;

    /// Every tag row of the ledger, oldest first, with the run it named: what a copy of the
    /// ledger must replay in order so that the same names end on the same runs.
    ///
    /// # Errors
    /// When the query fails.
    async fn tag_history(&self) -> Result<Vec<(RunId, String)>, LedgerError>;

    /// This ledger's identity: random, given when it was created, the same by any path or URL.
    ///
    /// # Errors
    /// When the query fails.
    async fn ledger_id(&self) -> Result<String, LedgerError>;

    /// The runs copied here from the ledger `origin_ledger`: its run ids, each with the id of
    /// the copy here.
    ///
    /// # Errors
    /// When the query fails.
    async fn copied_runs(&self, origin_ledger: &str)
    -> Result<BTreeMap<RunId, RunId>, LedgerError>;

    /// The runs here that are copies of run `origin_run` of a ledger whose identity starts with
    /// `origin_prefix` (a citation `LEDGER#RUN` names a run by where it was first recorded).
    /// More than one when the prefix is shared by two ledgers copied here.
    ///
    /// # Errors
    /// When the query fails.
    async fn copies_of(
        &self,
        origin_prefix: &str,
        origin_run: RunId,
    ) -> Result<Vec<RunId>, LedgerError>;

    /// Records a copy of a run of another ledger as it was stored there (its creation time,
    /// source, provenance, results and annotations), with where it came from, in one
    /// transaction.
    ///
    /// # Errors
    /// When the run was copied here before, or the write fails. Nothing is stored on error.
    async fn record_copy(&self, copy: &RunCopy) -> Result<RunId, LedgerError>;

    /// Adds an annotation as it was written elsewhere (its own creation time) to `run`.
    ///
    /// # Errors
    /// When the run does not exist or the write fails.
    async fn copy_annotation(&self, run: RunId, annotation: &Annotation)
    -> Result<(), LedgerError>;

    /// Every pairing, oldest first.
    ///
    /// # Errors
    /// When the query fails or a row is corrupt.
    async fn pairings(&self) -> Result<Vec<Pairing>, LedgerError>;

    /// Records a pairing of two runs as it was stored elsewhere (its creation time).
    ///
    /// # Errors
    /// When either run is already paired, or the write fails.
    async fn copy_pairing(
        &self,
        base: RunId,
        head: RunId,
        pairing: &Pairing,
    ) -> Result<(), LedgerError>;

    /// Records an artifact of a run and one of its benchmarks, such as a profile, once: the
    /// same content for the same run, benchmark, kind, profiler and base run is the artifact
    /// already recorded ([`ArtifactIngested::created`] is `false`), so a retried push or a
    /// second copy adds nothing.
    ///
    /// # Errors
    /// [`LedgerError::Artifact`] for one the model refuses (over
    /// [`bench_model::MAX_ARTIFACT_BYTES`], a media type not its kind's, malformed content);
    /// [`LedgerError::NoSuchRun`] when its run or base run does not exist; or when the write
    /// fails. Nothing is stored on error.
    async fn record_artifact_once(
        &self,
        artifact: &NewArtifact,
    ) -> Result<ArtifactIngested, LedgerError>;

    /// Records an artifact as it was stored elsewhere (its own creation time), once, as
    /// [`LedgerStore::record_artifact_once`] does.
    ///
    /// # Errors
    /// As [`LedgerStore::record_artifact_once`].
    async fn copy_artifact(
        &self,
        artifact: &NewArtifact,
        created_at: &str,
    ) -> Result<ArtifactIngested, LedgerError>;

    /// The artifacts of `run`, without their bytes, by benchmark, then kind, then id.
    ///
    /// # Errors
    /// When the query fails or a row is corrupt.
    async fn artifacts(&self, run: RunId) -> Result<Vec<ArtifactSummary>, LedgerError>;

    /// One artifact with its bytes (checked against its SHA-256).
    ///
    /// # Errors
    /// When the query fails, or the row is corrupt or no longer matches its digest.
    async fn artifact(&self, id: ArtifactId) -> Result<Option<StoredArtifact>, LedgerError>;

    /// Closes the connections (waits for them to finish).
    async fn close(&self);

    /// Records an artifact (see [`LedgerStore::record_artifact_once`]) and returns its id.
    ///
    /// # Errors
    /// As [`LedgerStore::record_artifact_once`].
    async fn record_artifact(&self, artifact: &NewArtifact) -> Result<ArtifactId, LedgerError> {
        Ok(self.record_artifact_once(artifact).await?.id)
    }

    /// The artifacts of run `head` that compare it against run `base` (a differential
    /// flamegraph, a diff of function counts), as [`LedgerStore::artifacts`] orders them.
    ///
    /// # Errors
    /// When the query fails or a row is corrupt.
    async fn artifacts_against(
        &self,
        base: RunId,
        head: RunId,
    ) -> Result<Vec<ArtifactSummary>, LedgerError> {
        let mut found = self.artifacts(head).await?;
        found.retain(|a| a.against == Some(base));
        Ok(found)
    }

    /// Like [`LedgerStore::run`], but a missing run is an error.
    ///
    /// # Errors
    /// [`LedgerError::NoSuchRun`] when there is no such run.
    async fn require_run(&self, id: RunId) -> Result<StoredRun, LedgerError> {
        self.run(id).await?.ok_or(LedgerError::NoSuchRun(id))
    }

    /// The pairing whose base is `base` and head is `head`, if they are the two sides of one.
    ///
    /// # Errors
    /// When the query fails.
    async fn pairing_between(
        &self,
        base: RunId,
        head: RunId,
    ) -> Result<Option<Pairing>, LedgerError> {
        Ok(self
            .pairing_of(base)
            .await?
            .filter(|p| p.base_run == base && p.head_run == head))
    }

    /// Whether the ledger holds any run of `suite`.
    ///
    /// # Errors
    /// When the query fails.
    async fn has_suite(&self, suite: &str) -> Result<bool, LedgerError> {
        Ok(self.latest_run(Some(suite)).await?.is_some())
    }
}
