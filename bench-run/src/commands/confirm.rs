//! `gate --confirm N`: re-run only the benchmarks the gate flagged, N times, and fail only on
//! the regressions that hold (the rule is `bench_usecases::confirm`).

use super::run::{TerminalProgress, locate, suite_request};
use crate::cli::BuildArgs;
use crate::cli::RunArgs;
use crate::outcome::Outcome;
use anyhow::{Result, bail};
use bench_analysis::compare::{CompareConfig, Comparison};
use bench_model::RunSource;
use bench_report::OutputFormat;
use bench_runner::provenance;
use bench_store::{Ledger, StoredRun};
use bench_usecases::confirm as rule;
use bench_usecases::confirm_runs::{ConfirmRequest, Confirmation, confirm_regressions};
use bench_verdicts::location::workspace_root;
use std::path::Path;

/// What the gate asks the confirmation to do.
pub(crate) struct Request<'a> {
    pub base: &'a StoredRun,
    pub head: &'a StoredRun,
    /// The gate's comparison of head against base, with the regressions to confirm.
    pub flagged: &'a Comparison,
    pub config: &'a CompareConfig,
    /// Number of confirmation runs.
    pub runs: u32,
    pub allow_mismatch: bool,
    pub format: OutputFormat,
}

/// The gate's final word after the confirmation runs.
pub(crate) struct Verdict {
    pub outcome: Outcome,
    /// `FAIL` or `pass`.
    pub word: &'static str,
    pub summary: String,
}

/// Refuses, before anything is compared, a confirmation that cannot work: a head run that
/// `bench-run --suite` did not record (no suite to re-run), or a workspace at another commit
/// than the head run measured.
pub(crate) fn check_head(head: &StoredRun, cwd: &Path) -> Result<()> {
    check_suite_run(head)?;
    check_workspace(head, cwd)
}

fn check_suite_run(head: &StoredRun) -> Result<()> {
    let suite_run = matches!(
        head.source,
        RunSource::BenchRun | RunSource::Calibration | RunSource::Confirmation
    );
    if !suite_run || head.provenance.cargo_command.is_none() {
        bail!(
            "gate --confirm: head run #{} was recorded by `{}`, not by `bench-run --suite`: there is \
             no suite to re-run (record the head with `bench-run --suite {}`, or drop --confirm)",
            head.id,
            head.source.name(),
            head.provenance.suite
        );
    }
    Ok(())
}

/// The arguments of a confirmation run: the head run's suite, build and measurement settings,
/// with a filter selecting exactly `ids`.
fn rerun_args(head: &StoredRun, ids: &[String]) -> RunArgs {
    let p = &head.provenance;
    let recorded = p
        .cargo_command
        .as_deref()
        .map(rule::recorded_criterion_args)
        .unwrap_or_default();
    RunArgs {
        suite: Some(p.suite.clone()),
        quick: p.quick,
        build: BuildArgs {
            package: p.package.clone(),
            features: p.build.features.clone(),
            all_features: p.build.feature_flags.iter().any(|f| f == "--all-features"),
            no_default_features: p
                .build
                .feature_flags
                .iter()
                .any(|f| f == "--no-default-features"),
            profile: (p.build.profile != "bench").then(|| p.build.profile.clone()),
            record_env: p.env.keys().cloned().collect(),
            workspace: None,
        },
        criterion_args: rule::confirmation_args(&recorded, ids),
        ..RunArgs::default()
    }
}

/// Refuses to re-run when the workspace holds other code than the head run measured.
fn check_workspace(head: &StoredRun, cwd: &Path) -> Result<()> {
    let Ok(now) = provenance::git(&workspace_root(cwd)) else {
        return Ok(());
    };
    let then = &head.provenance.git;
    if let (Some(now_commit), Some(then_commit)) = (&now.commit, &then.commit)
        && now_commit != then_commit
    {
        bail!(
            "gate --confirm: the workspace is at commit {} but head run #{} measured commit {}: the \
             re-runs would measure other code (check out {} first, or gate a run of this commit)",
            short(now_commit),
            head.id,
            short(then_commit),
            short(then_commit)
        );
    }
    Ok(())
}

/// Warns when the workspace or the head run had uncommitted changes: commits cannot tell
/// whether the re-runs measure the same code.
fn warn_if_dirty(head: &StoredRun, cwd: &Path) {
    let now_dirty = provenance::git(&workspace_root(cwd)).is_ok_and(|g| g.dirty);
    if now_dirty || head.provenance.git.dirty {
        eprintln!(
            "warning: uncommitted changes: the confirmation runs measure the working tree as it is \
             now, which may differ from what head run #{} measured",
            head.id
        );
    }
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// Runs the confirmation and returns the gate's verdict.
pub(crate) async fn confirm(ledger: &Ledger, cwd: &Path, request: &Request<'_>) -> Result<Verdict> {
    let head = request.head;
    let mut ids: Vec<String> = request
        .flagged
        .regressions()
        .map(|r| r.benchmark.clone())
        .collect();
    ids.sort();
    ids.dedup();
    warn_if_dirty(head, cwd);
    eprintln!(
        "gate: {} regression(s) flagged ({}); confirming with {} re-run(s) of only those \
         benchmarks (suite {})",
        ids.len(),
        ids.join(", "),
        request.runs,
        head.provenance.suite
    );
    let args = rerun_args(head, &ids);
    let located = locate(&args, cwd)?;
    let rerun = suite_request(&args, cwd, RunSource::Confirmation)?;
    let confirmation = confirm_regressions(
        ledger,
        &ConfirmRequest {
            rerun: &rerun,
            located: &located,
            base: request.base,
            head,
            flagged: request.flagged,
            config: request.config,
            runs: request.runs,
            allow_mismatch: request.allow_mismatch,
        },
        &mut TerminalProgress::default(),
    )
    .await?;
    let confirmed = match confirmation {
        Confirmation::Decided { confirmed, .. } => confirmed,
        Confirmation::Refused { run, mismatches } => {
            eprintln!(
                "gate: refusing to confirm: confirmation run #{run} was not measured like head run #{}:",
                head.id
            );
            for m in &mismatches {
                eprintln!("  - {m}");
            }
            eprintln!("(pass --allow-mismatch to confirm anyway)");
            return Ok(Verdict {
                outcome: Outcome::Incomparable,
                word: "unusable",
                summary: format!("confirmation run #{run} is not comparable"),
            });
        }
    };
    let report = rule::render(&confirmed);
    if request.format == OutputFormat::Json {
        eprint!("{report}");
    } else {
        print!("\n{report}");
    }
    let held: Vec<String> = confirmed
        .iter()
        .filter(|c| c.holds())
        .map(|c| c.key.benchmark.clone())
        .collect();
    let cleared: Vec<String> = confirmed
        .iter()
        .filter(|c| !c.holds())
        .map(|c| c.key.benchmark.clone())
        .collect();
    let runs = request.runs;
    Ok(if held.is_empty() {
        Verdict {
            outcome: Outcome::Ok,
            word: "pass",
            summary: format!(
                "{} flagged regression(s) did not hold in {runs} re-run(s): {}",
                cleared.len(),
                cleared.join(", ")
            ),
        }
    } else {
        Verdict {
            outcome: Outcome::Regression,
            word: "FAIL",
            summary: format!(
                "{} regression(s) held in {runs} re-run(s): {}{}",
                held.len(),
                held.join(", "),
                if cleared.is_empty() {
                    String::new()
                } else {
                    format!(" (not confirmed: {})", cleared.join(", "))
                }
            ),
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bench_model::{BuildConfig, RunProvenance};

    #[test]
    fn reruns_repeat_the_head_runs_build_and_settings() {
        let head = StoredRun {
            id: 4,
            created_at: String::new(),
            source: RunSource::BenchRun,
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
                    .chain([
                        "--warm-up-time",
                        "0.3",
                        "--sample-size",
                        "20",
                        "--noplot",
                        "sum",
                    ])
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
        };
        let args = rerun_args(&head, &["sum/4000".to_owned()]);
        assert_eq!(args.suite.as_deref(), Some("tiny_suite"));
        assert_eq!(args.build.package.as_deref(), Some("tiny"));
        assert!(args.quick && args.build.no_default_features && !args.build.all_features);
        assert_eq!(args.build.features, ["extra"]);
        assert_eq!(args.build.profile.as_deref(), Some("release"));
        assert_eq!(
            args.criterion_args,
            [
                "--warm-up-time",
                "0.3",
                "--sample-size",
                "20",
                "--noplot",
                "^(?:sum/4000)$"
            ]
        );
        check_suite_run(&head).unwrap();
        let mut imported = head;
        imported.source = RunSource::ImportBmf;
        let refusal = check_suite_run(&imported).unwrap_err().to_string();
        assert!(
            refusal.contains("import-bmf") && refusal.contains("not by `bench-run --suite`"),
            "{refusal}"
        );
    }
}
