//! Copying a whole ledger into another, on any engines (`bench-run ledger copy`): how a team
//! moves a machine's local history to its server.
//!
//! Every run is copied as it was stored (creation time, source, provenance, results with
//! statistics and raw samples, conditions, annotations, artifacts) under a new id, and the copy records
//! where it came from (the source ledger's identity and the run's id there). That is what makes
//! a second copy add only what is new: runs recorded since, annotations written since, artifacts
//! recorded since (an artifact's base run is mapped like the run itself), pairings whose runs
//! are now both there, tags. Nothing in the destination is changed or removed:
//!
//! - a tag name the destination does not use yet is given to the copied run it names; a name
//!   that already names a run copied from the same source follows the source; a name the
//!   destination uses for a run of its own is left alone and reported as a conflict;
//! - the destination's own runs, tags and annotations stay as they are.

use crate::{LedgerError, LedgerStore, RunCopy, RunFilter};
use bench_model::{Annotation, NewArtifact, RunId};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What a copy did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CopyReport {
    /// Runs copied now.
    pub runs_copied: usize,
    /// Runs a previous copy had already brought.
    pub runs_already_there: usize,
    /// Annotations added to runs copied before (written in the source since).
    pub annotations_added: usize,
    /// Artifacts (profiles) copied, to new runs and to runs copied before.
    pub artifacts_copied: usize,
    /// Pairings of `bench-run ab` sides copied.
    pub pairings_copied: usize,
    /// Tag names given or moved.
    pub tags_set: usize,
    /// Tag names the destination uses for runs of its own, left alone.
    pub tag_conflicts: Vec<String>,
    /// Source run id -> destination run id, for every run of the source.
    pub run_ids: BTreeMap<RunId, RunId>,
}

/// Progress of a copy: `done` of `total` runs handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyProgress {
    /// Runs handled so far.
    pub done: usize,
    /// Runs in the source.
    pub total: usize,
}

/// Copies everything of `from` that `to` does not hold yet, every project into the project of
/// the same name.
///
/// # Errors
/// When `from` and `to` are the same ledger, or a read or write fails. Runs copied before the
/// failure stay copied (each is whole); running the copy again resumes.
pub async fn copy_ledger(
    from: &dyn LedgerStore,
    to: &dyn LedgerStore,
    mut progress: impl FnMut(CopyProgress),
) -> Result<CopyReport, LedgerError> {
    check_distinct(from, to).await?;
    let mut report = CopyReport::default();
    for project in from.projects().await? {
        let project = bench_model::Project::new(&project.name)
            .map_err(|e| LedgerError::Corrupt(format!("a run's project: {e}")))?;
        let part = copy_project(
            &*from.in_project(&project),
            &*to.in_project(&project),
            &mut progress,
        )
        .await?;
        report.runs_copied += part.runs_copied;
        report.runs_already_there += part.runs_already_there;
        report.annotations_added += part.annotations_added;
        report.artifacts_copied += part.artifacts_copied;
        report.pairings_copied += part.pairings_copied;
        report.tags_set += part.tags_set;
        report.tag_conflicts.extend(part.tag_conflicts);
        report.run_ids.extend(part.run_ids);
    }
    Ok(report)
}

/// The source's identity, unless `to` is the same ledger.
async fn check_distinct(
    from: &dyn LedgerStore,
    to: &dyn LedgerStore,
) -> Result<String, LedgerError> {
    let origin = from.ledger_id().await?;
    if origin == to.ledger_id().await? {
        return Err(LedgerError::Invalid(format!(
            "{} and {} are the same ledger; nothing to copy",
            from.location(),
            to.location()
        )));
    }
    Ok(origin)
}

/// Copies everything of `from`'s project that `to`'s project does not hold yet.
///
/// # Errors
/// As [`copy_ledger`].
pub async fn copy_project(
    from: &dyn LedgerStore,
    to: &dyn LedgerStore,
    mut progress: impl FnMut(CopyProgress),
) -> Result<CopyReport, LedgerError> {
    let origin = check_distinct(from, to).await?;
    let mut report = CopyReport {
        run_ids: to.copied_runs(&origin).await?,
        ..CopyReport::default()
    };
    let mut runs = from.runs(&RunFilter::default()).await?;
    runs.reverse(); // oldest first, so that copies keep the source's order of ids
    let total = runs.len();
    for (done, summary) in runs.iter().enumerate() {
        let run = from.require_run(summary.id).await?;
        if let Some(&copy) = report.run_ids.get(&run.id) {
            report.runs_already_there += 1;
            report.annotations_added += add_missing_annotations(to, copy, &run.annotations).await?;
        } else {
            let copy = to
                .record_copy(&RunCopy {
                    origin_ledger: origin.clone(),
                    origin_run: run.id,
                    created_at: run.created_at,
                    source: run.source,
                    measurements: from.measurements(run.id).await?,
                    provenance: run.provenance,
                    annotations: run.annotations,
                })
                .await?;
            report.run_ids.insert(run.id, copy);
            report.runs_copied += 1;
        }
        progress(CopyProgress {
            done: done + 1,
            total,
        });
    }
    // After every run: an artifact's base may be any run of the source.
    for summary in &runs {
        report.artifacts_copied += copy_artifacts(from, to, summary.id, &report.run_ids).await?;
    }
    for pairing in from.pairings().await? {
        let (Some(&base), Some(&head)) = (
            report.run_ids.get(&pairing.base_run),
            report.run_ids.get(&pairing.head_run),
        ) else {
            continue;
        };
        if to.pairing_of(base).await?.is_none() && to.pairing_of(head).await?.is_none() {
            to.copy_pairing(base, head, &pairing).await?;
            report.pairings_copied += 1;
        }
    }
    copy_tags(from, to, &mut report).await?;
    Ok(report)
}

/// Adds the annotations of `source` that run `copy` lacks (same time and text); returns how
/// many.
async fn add_missing_annotations(
    to: &dyn LedgerStore,
    copy: RunId,
    source: &[Annotation],
) -> Result<usize, LedgerError> {
    let present: BTreeSet<(String, String)> = to
        .require_run(copy)
        .await?
        .annotations
        .into_iter()
        .map(|a| (a.created_at, a.text))
        .collect();
    let mut added = 0;
    for note in source {
        if !present.contains(&(note.created_at.clone(), note.text.clone())) {
            to.copy_annotation(copy, note).await?;
            added += 1;
        }
    }
    Ok(added)
}

/// Copies the artifacts of source run `run` that its copy lacks; returns how many. What is there
/// is told apart by its summary, so a second copy reads no artifact's bytes again.
async fn copy_artifacts(
    from: &dyn LedgerStore,
    to: &dyn LedgerStore,
    run: RunId,
    run_ids: &BTreeMap<RunId, RunId>,
) -> Result<usize, LedgerError> {
    let source = from.artifacts(run).await?;
    let Some(&copy) = run_ids.get(&run) else {
        return Ok(0);
    };
    if source.is_empty() {
        return Ok(0);
    }
    let present: BTreeSet<_> = to
        .artifacts(copy)
        .await?
        .into_iter()
        .map(|a| (a.benchmark, a.kind, a.profiler, a.against, a.sha256))
        .collect();
    let mut copied = 0;
    for summary in source {
        let against = match summary.against {
            Some(base) => Some(*run_ids.get(&base).ok_or_else(|| {
                LedgerError::Corrupt(format!(
                    "artifact {} compares against run {base}, which the source does not list",
                    summary.id
                ))
            })?),
            None => None,
        };
        let key = (
            summary.benchmark.clone(),
            summary.kind,
            summary.profiler.clone(),
            against,
            summary.sha256.clone(),
        );
        if present.contains(&key) {
            continue;
        }
        let stored = from.artifact(summary.id).await?.ok_or_else(|| {
            LedgerError::Corrupt(format!("artifact {} vanished during the copy", summary.id))
        })?;
        let artifact = NewArtifact {
            run: copy,
            benchmark: summary.benchmark,
            kind: summary.kind,
            profiler: summary.profiler,
            against,
            media_type: summary.media_type,
            bytes: stored.bytes,
        };
        if to
            .copy_artifact(&artifact, &summary.created_at)
            .await?
            .created
        {
            copied += 1;
        }
    }
    Ok(copied)
}

/// Makes each tag name of the source name the copy of its run, where the destination allows.
async fn copy_tags(
    from: &dyn LedgerStore,
    to: &dyn LedgerStore,
    report: &mut CopyReport,
) -> Result<(), LedgerError> {
    // The run each name ends on in the source: the newest row of a name wins.
    let mut names: BTreeMap<String, RunId> = BTreeMap::new();
    for (run, name) in from.tag_history().await? {
        names.insert(name, run);
    }
    let copies: BTreeSet<RunId> = report.run_ids.values().copied().collect();
    for (name, run) in names {
        let Some(&copy) = report.run_ids.get(&run) else {
            continue;
        };
        match to.run_by_tag(&name).await? {
            Some(current) if current == copy => {}
            Some(current) if !copies.contains(&current) => report.tag_conflicts.push(name),
            _ => {
                to.tag(copy, &name).await?;
                report.tags_set += 1;
            }
        }
    }
    Ok(())
}
