//! `gate --confirm N` as a use case: re-run only the benchmarks the gate flagged, N times,
//! compare each re-run with the base on the flagged verdict's noise floor, and keep the
//! regressions that hold (the rule is [`crate::confirm`]).

use crate::confirm::{self, Confirmed};
use crate::record::{self, Progress, RecordError, SuiteRequest};
use bench_analysis::compare::{self, CompareConfig, Comparison, Mismatch};
use bench_model::{GitInfo, RunId, RunSource, StoredRun};
use bench_runner::suite::BuildOptions;
use bench_store::{Ledger, LedgerError};
use std::path::Path;

/// What the gate asks the confirmation to do.
#[derive(Debug)]
pub struct ConfirmRequest<'a> {
    /// The gate's base run.
    pub base: &'a StoredRun,
    /// The gate's head run: its suite, build and settings are re-run ([`rerun_request`]).
    pub head: &'a StoredRun,
    /// The gate's comparison of head against base, with the regressions to confirm.
    pub flagged: &'a Comparison,
    /// The verdict settings.
    pub config: &'a CompareConfig,
    /// How many re-runs.
    pub runs: u32,
    /// Whether a re-run measured unlike the head (another build, machine, toolchain) is used
    /// anyway, with a warning.
    pub allow_mismatch: bool,
    /// Where the workspace is looked for, and the working directory the re-runs record.
    pub cwd: &'a Path,
    /// The command line the re-runs record.
    pub command: &'a [String],
}

/// What the confirmation found.
#[derive(Debug)]
pub enum Confirmation {
    /// Every re-run was usable: per flagged regression, whether it held.
    Decided {
        /// The re-runs, in order.
        runs: Vec<RunId>,
        /// Per flagged regression, its votes and whether it held.
        confirmed: Vec<Confirmed>,
    },
    /// A re-run was not measured like the head, and mismatches were not allowed.
    Refused {
        /// The re-run.
        run: RunId,
        /// How it differs.
        mismatches: Vec<Mismatch>,
    },
}

/// Why the confirmation stopped; the re-runs recorded before it stay recorded.
#[derive(Debug, thiserror::Error)]
pub enum ConfirmError {
    /// The head run was not recorded by `bench-run --suite`: there is no suite to re-run.
    #[error(
        "gate --confirm: head run #{head} was recorded by `{source_name}`, not by `bench-run \
         --suite`: there is no suite to re-run (record the head with `bench-run --suite {suite}`, \
         or drop --confirm)"
    )]
    NotASuiteRun {
        /// The head run.
        head: RunId,
        /// What recorded it.
        source_name: &'static str,
        /// Its suite.
        suite: String,
    },
    /// The workspace is at another commit than the head run measured.
    #[error(
        "gate --confirm: the workspace is at commit {} but head run #{head} measured commit {}: \
         the re-runs would measure other code (check out {} first, or gate a run of this commit)",
        short(.now), short(.then), short(.then)
    )]
    OtherCommit {
        /// The workspace's commit.
        now: String,
        /// The head run.
        head: RunId,
        /// The commit it measured.
        then: String,
    },
    /// A re-run failed.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The ledger failed.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

/// Re-runs the flagged benchmarks `request.runs` times (building once) and decides which of the
/// flagged regressions hold.
///
/// # Errors
/// See [`ConfirmError`].
pub async fn confirm_regressions(
    ledger: &Ledger,
    request: &ConfirmRequest<'_>,
    progress: &mut dyn Progress,
) -> Result<Confirmation, ConfirmError> {
    let head = request.head;
    // The same noise floor as the flagged verdict: the history before the head run, untouched
    // by the re-runs.
    let history = ledger
        .history(
            &head.provenance.suite,
            head.machine_id,
            head.id,
            request.config.max_history + 1,
        )
        .await?;
    let base_results = ledger.measurements(request.base.id).await?;
    if workspace_git(request.cwd).is_some_and(|g| g.dirty) || head.provenance.git.dirty {
        progress.warning(&format!(
            "uncommitted changes: the confirmation runs measure the working tree as it is now, \
             which may differ from what head run #{} measured",
            head.id
        ));
    }
    let flagged = flagged_benchmarks(request.flagged);
    if flagged.is_empty() {
        // Nothing to confirm: no re-run (an empty filter would select no benchmark).
        return Ok(Confirmation::Decided {
            runs: Vec::new(),
            confirmed: Vec::new(),
        });
    }
    let rerun = rerun_request(head, &flagged, request.cwd, request.command);
    let located = record::locate(&rerun)?;
    let mut prebuilt = None;
    let mut confirmations: Vec<(RunId, Comparison)> = Vec::new();
    for i in 1..=request.runs {
        progress.note(&format!("confirmation run {i} of {}", request.runs));
        let recorded =
            record::record_located(ledger, &rerun, &located, prebuilt.as_deref(), progress).await?;
        prebuilt = Some(recorded.executable.clone());
        let id = recorded.id;
        let rerun = ledger.require_run(id).await?;
        let mismatches = compare::check_comparable(&head.provenance, &rerun.provenance);
        if !mismatches.is_empty() {
            if !request.allow_mismatch {
                return Ok(Confirmation::Refused {
                    run: id,
                    mismatches,
                });
            }
            let listed: Vec<String> = mismatches.iter().map(|m| format!("  - {m}")).collect();
            progress.warning(&format!(
                "confirmation run #{id} was not measured like head run #{}:\n{}",
                head.id,
                listed.join("\n")
            ));
        }
        let results = ledger.measurements(id).await?;
        confirmations.push((
            id,
            compare::compare(&base_results, &results, &history, request.config),
        ));
    }
    Ok(Confirmation::Decided {
        runs: confirmations.iter().map(|(id, _)| *id).collect(),
        confirmed: confirm::tally(request.flagged, &confirmations),
    })
}

/// Refuses, before anything is compared, a confirmation that cannot work: a head run that
/// `bench-run --suite` did not record (no suite to re-run), or a workspace at another commit
/// than the head run measured (found from `cwd`).
///
/// # Errors
/// [`ConfirmError::NotASuiteRun`], [`ConfirmError::OtherCommit`].
pub fn check_head(head: &StoredRun, cwd: &Path) -> Result<(), ConfirmError> {
    check_suite_run(head)?;
    let then = &head.provenance.git;
    if let (Some(now), Some(then)) = (workspace_git(cwd).and_then(|g| g.commit), &then.commit)
        && now != *then
    {
        return Err(ConfirmError::OtherCommit {
            now,
            head: head.id,
            then: then.clone(),
        });
    }
    Ok(())
}

fn check_suite_run(head: &StoredRun) -> Result<(), ConfirmError> {
    let suite_run = matches!(
        head.source,
        RunSource::BenchRun | RunSource::Calibration | RunSource::Confirmation
    );
    if !suite_run || head.provenance.cargo_command.is_none() {
        return Err(ConfirmError::NotASuiteRun {
            head: head.id,
            source_name: head.source.name(),
            suite: head.provenance.suite.clone(),
        });
    }
    Ok(())
}

/// The git state of the workspace holding `cwd`, when it can be read.
fn workspace_git(cwd: &Path) -> Option<GitInfo> {
    bench_runner::provenance::git(&bench_verdicts::location::workspace_root(cwd)).ok()
}

/// The benchmarks of the flagged regressions, sorted, each once.
#[must_use]
pub fn flagged_benchmarks(flagged: &Comparison) -> Vec<String> {
    let mut ids: Vec<String> = flagged.regressions().map(|r| r.benchmark.clone()).collect();
    ids.sort();
    ids.dedup();
    ids
}

/// A confirmation run: the head run's suite, build and measurement settings, with a filter
/// selecting exactly `ids`.
#[must_use]
pub fn rerun_request(
    head: &StoredRun,
    ids: &[String],
    cwd: &Path,
    command: &[String],
) -> SuiteRequest {
    let p = &head.provenance;
    let recorded = p
        .cargo_command
        .as_deref()
        .map(confirm::recorded_criterion_args)
        .unwrap_or_default();
    let flag = |name: &str| p.build.feature_flags.iter().any(|f| f == name);
    SuiteRequest {
        suite: p.suite.clone(),
        package: p.package.clone(),
        start_dir: cwd.to_owned(),
        cwd: cwd.to_owned(),
        build: BuildOptions {
            features: p.build.features.clone(),
            all_features: flag("--all-features"),
            no_default_features: flag("--no-default-features"),
            profile: (p.build.profile != "bench").then(|| p.build.profile.clone()),
        },
        target_dir: None,
        quick: p.quick,
        criterion_args: confirm::confirmation_args(&recorded, ids),
        record_env: p.env.keys().cloned().collect(),
        command: command.to_vec(),
        source: RunSource::Confirmation,
    }
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bench_model::{BuildConfig, RunProvenance};

    fn head(source: RunSource) -> StoredRun {
        StoredRun {
            id: 4,
            created_at: String::new(),
            source,
            machine_id: 1,
            provenance: RunProvenance {
                suite: "tiny_suite".to_owned(),
                package: Some("tiny".to_owned()),
                cargo_command: Some(
                    [
                        "cargo",
                        "bench",
                        "-p",
                        "tiny",
                        "--bench",
                        "tiny_suite",
                        "--",
                    ]
                    .into_iter()
                    .chain(["--warm-up-time", "0.3", "--sample-size", "20"])
                    .chain(["--noplot", "sum"])
                    .map(str::to_owned)
                    .collect(),
                ),
                build: BuildConfig {
                    profile: "release".to_owned(),
                    features: vec!["extra".to_owned()],
                    feature_flags: vec!["--no-default-features".to_owned()],
                    rustflags: None,
                },
                quick: true,
                ..RunProvenance::default()
            },
            tags: Vec::new(),
            annotations: Vec::new(),
        }
    }

    #[test]
    fn reruns_repeat_the_head_runs_build_and_settings() {
        let cwd = Path::new("/work/space");
        let rerun = rerun_request(
            &head(RunSource::BenchRun),
            &["sum/4000".to_owned()],
            cwd,
            &["bench-run".to_owned()],
        );
        assert_eq!(rerun.suite, "tiny_suite");
        assert_eq!(rerun.package.as_deref(), Some("tiny"));
        assert_eq!((rerun.start_dir.as_path(), rerun.cwd.as_path()), (cwd, cwd));
        assert!(rerun.quick && rerun.build.no_default_features && !rerun.build.all_features);
        assert_eq!(rerun.build.features, ["extra"]);
        assert_eq!(rerun.build.profile.as_deref(), Some("release"));
        assert_eq!(rerun.source, RunSource::Confirmation);
        assert_eq!(
            rerun.criterion_args,
            [
                "--warm-up-time",
                "0.3",
                "--sample-size",
                "20",
                "--noplot",
                "^(?:sum/4000)$"
            ]
        );
    }

    #[test]
    fn only_a_suite_run_can_be_confirmed() {
        check_suite_run(&head(RunSource::BenchRun)).unwrap();
        let refusal = check_suite_run(&head(RunSource::ImportBmf))
            .unwrap_err()
            .to_string();
        assert!(
            refusal.contains("import-bmf") && refusal.contains("not by `bench-run --suite`"),
            "{refusal}"
        );
    }
}
