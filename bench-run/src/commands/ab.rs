//! `bench-run ab`: paired A/B runs of two revisions, one process per side per round.

use super::support::{compare_config, invocation, open_ledger, print_comparison};
use crate::cli::AbArgs;
use crate::outcome::Outcome;
use anyhow::{Context, Result};
use bench_analysis::compare::{self, Comparison, GateOutcome};
use bench_model::StoredRun;
use bench_report::OutputFormat;
use bench_runner::ab::BuiltSide;
use bench_runner::locate::locate;
use bench_usecases::ab::{
    AbMeasured, AbOutcome, AbProgress, AbRequest, Revisions, ab as run_ab, clock_seed, short,
};
use std::path::Path;
use std::time::Instant;

/// A/B progress on stderr: steps under the command's name, notes and warnings as such.
pub(crate) struct TerminalAb(pub &'static str);

impl AbProgress for TerminalAb {
    fn step(&mut self, text: &str) {
        eprintln!("{}: {text}", self.0);
    }

    fn note(&mut self, text: &str) {
        eprintln!("note: {text}");
    }

    fn warning(&mut self, text: &str) {
        eprintln!("warning: {text}");
    }
}

pub(crate) async fn ab(args: &AbArgs, db: Option<&str>, cwd: &Path) -> Result<Outcome> {
    let start_dir = args.build.start_dir(cwd);
    // Find the suite (also in a separate workspace below the root), then open the ledger
    // before building: a misspelt suite leaves no ledger file, and a result that cannot be
    // recorded is not measured.
    let workspace = locate(&start_dir, &args.suite, args.build.package.as_deref())?.workspace;
    let ledger = open_ledger(db, &start_dir).await?;
    let config = compare_config(&args.verdict, &start_dir)?;
    let build = args.build.options();
    let seed = args.seed.unwrap_or_else(clock_seed);
    let me =
        bench_runner::relink::own_executable().context("cannot find bench-run's own executable")?;
    let mut command = invocation();
    if args.seed.is_none() {
        command.extend(["--seed".to_owned(), seed.to_string()]);
    }
    let outcome = run_ab(
        &ledger,
        &AbRequest {
            workspace_root: &workspace.root,
            suite: &args.suite,
            package: args.build.package.as_deref(),
            base: &args.base,
            head: args.head.as_deref(),
            build: &build,
            record_env: &args.build.record_env,
            criterion_args: &args.criterion_args,
            layouts: args.layouts,
            rounds: args.rounds,
            seed,
            config: &config,
            command: &command,
            cwd,
            build_home: args.build_home.as_deref(),
            relinker: &me,
        },
        &mut TerminalAb("bench-run ab"),
    )
    .await?;
    let measured = match outcome {
        AbOutcome::SameCommit { commit } => {
            eprintln!(
                "bench-run ab: base `{}` and head `{}` are the same commit ({}); nothing to compare",
                args.base,
                args.head.as_deref().unwrap_or_default(),
                short(&commit)
            );
            return Ok(Outcome::Incomparable);
        }
        AbOutcome::IdenticalExecutables { sha256 } => {
            eprintln!(
                "bench-run ab: identical executables: base and head built the same bench \
                 executable (sha256 {sha256}), so the change cannot affect this suite's code and \
                 there is nothing to measure (any difference would be the machine's, not the \
                 code's). Nothing recorded."
            );
            return Ok(Outcome::Ok);
        }
        AbOutcome::Measured(measured) => *measured,
    };
    let AbMeasured {
        revisions,
        base,
        head,
        base_run: base_stored,
        head_run: head_stored,
        comparison,
        benchmarks,
        rounds,
        started,
        scratch,
    } = measured;
    let (base_id, head_id) = (base_stored.id, head_stored.id);
    let profiling = profile_targets(args, &comparison, &benchmarks);
    // JSON waits for the profiles, so that stdout stays one document.
    let json_with_profiles = args.format == OutputFormat::Json && !profiling.is_empty();
    if !json_with_profiles {
        print_comparison(
            &comparison,
            &base_stored,
            &head_stored,
            args.format,
            args.verdict.explain,
        );
    }
    let profiles = if profiling.is_empty() {
        Vec::new()
    } else {
        // Each benchmark's measured head/base time turns sample shares into time.
        let time_ratios = comparison
            .rows
            .iter()
            .filter(|r| r.metric == bench_model::metric::TIME)
            .filter_map(|r| Some((r.benchmark.clone(), r.after? / r.before?)))
            .collect();
        profile_sides(
            &ledger,
            (&base, base_id),
            (&head, head_id),
            &profiling,
            args.profile_time,
            scratch.path(),
            &time_ratios,
        )
        .await?
    };
    if json_with_profiles {
        let mut doc: serde_json::Value = serde_json::from_str(&bench_report::comparison_json(
            &comparison,
            &base_stored,
            &head_stored,
        ))
        .context("cannot read the comparison's JSON")?;
        doc["profiles"] = serde_json::to_value(&profiles).unwrap_or_default();
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else if !profiles.is_empty() {
        super::profile::print_profiles(&profiles, args.format, true);
    }
    let server_link = match &args.push {
        Some(url) => super::push::push_pair(&ledger, base_id, head_id, url).await,
        None => None,
    };
    if let Some(path) = &args.summary {
        let mut text =
            summary_markdown(&comparison, &base_stored, &head_stored, &revisions, rounds);
        if !profiles.is_empty() {
            text.push('\n');
            text.push_str(&super::profile::profiles_markdown(&profiles, true));
        }
        if let Some(link) = &server_link {
            text.push_str(&format!("\nOn the team's server: [compare]({link})\n"));
        }
        std::fs::write(path, text)
            .with_context(|| format!("cannot write the summary to {}", path.display()))?;
        eprintln!(
            "bench-run ab: wrote the markdown summary to {}",
            path.display()
        );
    }
    Ok(verdict(&comparison, base_id, head_id, started))
}

/// The benchmarks to profile after the verdict: the regressions with
/// `--profile-regressions`, and every `--profile-benchmark` that both sides measured.
fn profile_targets(args: &AbArgs, comparison: &Comparison, benchmarks: &[String]) -> Vec<String> {
    let mut wanted: Vec<String> = Vec::new();
    if args.profile_regressions {
        wanted.extend(comparison.regressions().map(|r| r.benchmark.clone()));
    }
    for id in &args.profile_benchmark {
        if benchmarks.contains(id) {
            wanted.push(id.clone());
        } else {
            eprintln!("warning: --profile-benchmark {id}: both sides measured no such benchmark");
        }
    }
    wanted.sort();
    wanted.dedup();
    wanted
}

/// Profiles `benchmarks` on both sides and stores them: the base's as artifacts of its run,
/// the head's with their diff against the base's as artifacts of the head's run.
async fn profile_sides(
    ledger: &bench_store::Ledger,
    (base, base_id): (&BuiltSide, i64),
    (head, head_id): (&BuiltSide, i64),
    benchmarks: &[String],
    seconds: u32,
    scratch: &Path,
    time_ratios: &std::collections::BTreeMap<String, f64>,
) -> Result<Vec<super::profile::ProfileShown>> {
    let base_profiles = super::profile::capture(base, benchmarks, seconds, scratch, "base ");
    let head_profiles = super::profile::capture(head, benchmarks, seconds, scratch, "head ");
    super::profile::store(
        ledger,
        base_id,
        None,
        &base_profiles,
        &Default::default(),
        &Default::default(),
    )
    .await?;
    let by_benchmark = base_profiles
        .into_iter()
        .filter_map(|p| p.profile.ok().map(|profile| (p.benchmark, profile)))
        .collect();
    super::profile::store(
        ledger,
        head_id,
        Some(base_id),
        &head_profiles,
        &by_benchmark,
        time_ratios,
    )
    .await
}

/// Prints the gate's line and maps it to the exit code.
fn verdict(comparison: &Comparison, base: i64, head: i64, started: Instant) -> Outcome {
    let line = format!(
        "head run #{head} vs base run #{base}, {:.0} s in all",
        started.elapsed().as_secs_f64()
    );
    match compare::gate_outcome(comparison, &[], false) {
        GateOutcome::Pass => {
            eprintln!("ab: pass ({line}): no regression");
            Outcome::Ok
        }
        GateOutcome::Regression => {
            let names: Vec<String> = comparison.regressions().map(compare::Row::name).collect();
            eprintln!(
                "ab: FAIL ({line}): {} regression(s): {}",
                names.len(),
                names.join(", ")
            );
            Outcome::Regression
        }
        GateOutcome::Unusable => {
            eprintln!("ab: unusable input ({line})");
            Outcome::Incomparable
        }
    }
}

/// The verdict as markdown, fit for a pull-request comment.
fn summary_markdown(
    comparison: &Comparison,
    base: &StoredRun,
    head: &StoredRun,
    revisions: &Revisions,
    rounds: usize,
) -> String {
    let head_name = revisions
        .head_rev
        .as_deref()
        .map_or_else(|| "the working tree".to_owned(), |h| format!("`{h}`"));
    let regressions: Vec<String> = comparison
        .regressions()
        .map(|r| format!("`{}`", r.name()))
        .collect();
    let headline = if regressions.is_empty() {
        "**No regression.**".to_owned()
    } else {
        format!(
            "**{} regression(s):** {}",
            regressions.len(),
            regressions.join(", ")
        )
    };
    format!(
        "### bench-run ab: {head_name} against `{}` ({})\n\n{headline}\n\n{} paired rounds, one \
         process per side per round; verdicts from the rounds' head/base ratios (sign test, Holm \
         across {} benchmark(s)). Runs #{} (base) and #{} (head).\n\n{}",
        revisions.base_rev,
        short(&revisions.base_commit),
        rounds,
        comparison.family_size,
        base.id,
        head.id,
        bench_report::comparison_markdown(comparison, base, head)
    )
}
