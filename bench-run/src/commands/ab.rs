//! `bench-run ab`: paired A/B runs of two revisions, one process per side per round.

use super::support::{compare_config, git_info, invocation, open_ledger, print_comparison};
use crate::cli::AbArgs;
use crate::outcome::Outcome;
use anyhow::{Context, Result, bail};
use bench_analysis::compare::{self, Comparison, GateOutcome};
use bench_analysis::contention;
use bench_analysis::paired;
use bench_model::{NewRun, RunConditions, RunSource};
use bench_report::OutputFormat;
use bench_runner::ab::{self, BuiltSide, SideBuild, SideRounds};
use bench_runner::ab::{SideRecord, side_provenance};
use bench_runner::criterion_cli::{self, AddedArg, CriterionVersion};
use bench_runner::locate::locate;
use bench_runner::sides::AbError;

use bench_runner::suite::{self, SuiteError};
use bench_store::PairingPlan;
use bench_store::StoredRun;
use std::path::Path;
use std::time::Instant;

/// The two sides as the user named them.
struct Revisions {
    base_rev: String,
    base_commit: String,
    /// `None`: the working tree.
    head_rev: Option<String>,
}

pub(crate) async fn ab(args: &AbArgs, db: Option<&str>, cwd: &Path) -> Result<Outcome> {
    if args.rounds == Some(0) {
        bail!("--rounds must be at least 1");
    }
    let start_dir = args.build.start_dir(cwd);
    // Find the suite (also in a separate workspace below the root), then open the ledger
    // before building: a misspelt suite leaves no ledger file, and a result that cannot be
    // recorded is not measured.
    let workspace = locate(&start_dir, &args.suite, args.build.package.as_deref())?.workspace;
    let ledger = open_ledger(db, &start_dir).await?;
    let config = compare_config(&args.verdict, &start_dir)?;
    let (repo, within_repo) = ab::repo_and_path(&workspace.root)?;
    let revisions = Revisions {
        base_commit: ab::resolve_commit(&repo, &args.base)?,
        base_rev: args.base.clone(),
        head_rev: args.head.clone(),
    };
    let head_commit = match &args.head {
        Some(head) => ab::resolve_commit(&repo, head)?,
        None => ab::resolve_commit(&repo, "HEAD")?,
    };
    if args.head.is_some() && head_commit == revisions.base_commit {
        eprintln!(
            "bench-run ab: base `{}` and head `{}` are the same commit ({}); nothing to compare",
            args.base,
            args.head.as_deref().unwrap_or_default(),
            short(&head_commit)
        );
        return Ok(Outcome::Incomparable);
    }
    if args.layouts == Some(0) {
        bail!("--layouts must be at least 1");
    }
    let build = args.build.options();
    let seed = args.seed.unwrap_or_else(clock_seed);
    let home = super::support::open_build_home(&repo, args.build_home.as_deref(), "ab")?;
    let scratch = home.scratch()?;
    // Gungraun suites count instructions, which do not depend on the order of functions.
    let wanted_layouts = args
        .layouts
        .unwrap_or(bench_runner::relink::DEFAULT_LAYOUTS);
    let seeds = bench_runner::relink::layout_seeds(wanted_layouts, seed);

    // One checkout at one path, switched from base to head: identical source gives identical
    // executables (bench_runner::build_home).
    let started = Instant::now();
    eprintln!(
        "bench-run ab: building {} at base `{}` ({}) in {}",
        args.suite,
        revisions.base_rev,
        short(&revisions.base_commit),
        home.dir().display()
    );
    home.switch_to(&revisions.base_commit)?;
    let (base_dir, head_dir) = (scratch.path().join("base"), scratch.path().join("head"));
    let me =
        bench_runner::relink::own_executable().context("cannot find bench-run's own executable")?;
    let side_build = |exe_dir, force_link| SideBuild {
        bench_run: &me,
        suite: &args.suite,
        package: args.build.package.as_deref(),
        options: &build,
        layout_seeds: &seeds,
        exe_dir,
        force_link,
    };
    ab::share_lock_file(&workspace.root, &home.src().join(&within_repo))?;
    let base = ab::build_side(&home, &within_repo, &side_build(&base_dir, true))
        .with_context(|| format!("cannot build suite {} at base `{}`", args.suite, args.base))?;
    let base_git = git_info(&home.src());
    // A workspace without a committed Cargo.lock: the head resolves as the base did, not
    // against whatever crates.io holds by then.
    let base_lock = scratch.path().join("Cargo.lock");
    let _ = std::fs::copy(home.src().join(&within_repo).join("Cargo.lock"), &base_lock);
    let head_name = args
        .head
        .clone()
        .unwrap_or_else(|| "the working tree".to_owned());
    eprintln!(
        "bench-run ab: building {} at head ({head_name})",
        args.suite
    );
    match &args.head {
        Some(_) => home.switch_to(&head_commit)?,
        None => home.switch_to_working_tree(&head_commit)?,
    }
    ab::share_lock_file(&workspace.root, &home.src().join(&within_repo))?;
    ab::share_lock_file(scratch.path(), &home.src().join(&within_repo))?;
    // Not linked again when fresh: identical executables end the run without relinking.
    let mut head = ab::build_side(&home, &within_repo, &side_build(&head_dir, false))
        .with_context(|| format!("cannot build suite {} at head ({head_name})", args.suite))?;
    let head_git = git_info(&home.src());
    eprintln!(
        "bench-run ab: built both sides in {:.0} s (base exe sha256 {}, head {})",
        started.elapsed().as_secs_f64(),
        short(&base.sha256),
        short(&head.sha256)
    );
    if base.sha256 == head.sha256 {
        eprintln!(
            "bench-run ab: identical executables: base and head built the same bench executable \
             (sha256 {}), so the change cannot affect this suite's code and there is nothing to \
             measure (any difference would be the machine's, not the code's). Nothing recorded.",
            base.sha256
        );
        return Ok(Outcome::Ok);
    }
    if head.fresh && !seeds.is_empty() {
        head = ab::build_side(&home, &within_repo, &side_build(&head_dir, true))
            .with_context(|| format!("cannot relink suite {} at head ({head_name})", args.suite))?;
    }
    let layouts = usable_layouts(&base, &head, wanted_layouts);

    let (criterion, added) = if head.gungraun {
        // gungraun rejects criterion's settings; its counts need no budget.
        (None, Vec::new())
    } else {
        let criterion = criterion_cli::detect(
            &head.workspace_root,
            &head.target.package,
            &head.target.package_version,
        );
        if let Some(version) = criterion.filter(|v| !v.reads_criterion_home()) {
            return Err(bench_usecases::record::RecordError::CriterionTooOld {
                suite: args.suite.clone(),
                version,
            }
            .into());
        }
        (criterion, process_args(&args.criterion_args, criterion))
    };
    let criterion_args = criterion_cli::command_line(&added, &args.criterion_args);
    let explain = |e: AbError| match e {
        AbError::Suite(e) => AbError::Suite(criterion_cli::explain_failure(
            e,
            &added,
            &args.criterion_args,
            criterion,
        )),
        other => other,
    };
    let benchmarks =
        common_benchmarks(&base, &head, &criterion_args, scratch.path()).map_err(|e| {
            match e.downcast::<SuiteError>() {
                Ok(e) => anyhow::Error::new(explain(AbError::Suite(e))),
                Err(e) => e,
            }
        })?;
    let layouts = if head.gungraun { Vec::new() } else { layouts };
    let rounds = args.rounds.unwrap_or_else(|| {
        if head.gungraun {
            // Instruction counts repeat exactly for one executable: one round says it all
            // (`--rounds 2` checks that they do).
            1
        } else {
            // Every layout gets as many rounds as the others.
            paired::rounds_needed(benchmarks.len(), config.alpha)
                .next_multiple_of(layouts.len().max(1))
        }
    });
    let plan = PairingPlan {
        seed,
        base_first: paired::side_order(rounds, seed),
        base_rev: revisions.base_rev.clone(),
        head_rev: revisions.head_rev.clone(),
        round_layouts: if layouts.len() > 1 {
            (0..rounds).map(|r| layouts[r % layouts.len()]).collect()
        } else {
            Vec::new()
        },
    };
    eprintln!(
        "bench-run ab: {} benchmark(s) x {rounds} rounds, one base and one head process per round, \
         {} (seed {seed})",
        benchmarks.len(),
        if plan.round_layouts.is_empty() {
            "one layout".to_owned()
        } else {
            format!("{} layouts in turn", layouts.len())
        }
    );
    let measuring = Instant::now();
    let (base_rounds, head_rounds) = run_rounds(
        &base,
        &head,
        &plan,
        &criterion_args,
        &benchmarks,
        scratch.path(),
        explain,
    )?;
    let measured_ms = i64::try_from(measuring.elapsed().as_millis()).ok();
    let base_conditions = base_rounds.conditions();
    let head_conditions = head_rounds.conditions();
    let (base_results, base_dropped) = base_rounds.into_measurements(config.confidence);
    let (head_results, head_dropped) = head_rounds.into_measurements(config.confidence);
    for dropped in base_dropped.iter().chain(&head_dropped) {
        eprintln!("warning: {dropped} was not measured in every round; left out");
    }
    if base_results.is_empty() || head_results.is_empty() {
        bail!("no benchmark was measured in every round; nothing recorded");
    }

    let mut command = invocation();
    if args.seed.is_none() {
        command.extend(["--seed".to_owned(), seed.to_string()]);
    }
    let provenance_of = |side: &BuiltSide, git: &bench_model::GitInfo, conditions| {
        side_provenance(&SideRecord {
            side,
            git,
            conditions,
            command: &command,
            cwd,
            build: &build,
            criterion_args: &criterion_args,
            record_env: &args.build.record_env,
            duration_ms: measured_ms,
        })
    };
    let base_run = NewRun {
        source: RunSource::AbBase,
        provenance: provenance_of(&base, &base_git, base_conditions.clone()),
        measurements: base_results,
    };
    let head_run = NewRun {
        source: RunSource::AbHead,
        provenance: provenance_of(&head, &head_git, head_conditions.clone()),
        measurements: head_results,
    };
    let (base_id, head_id) = ledger
        .record_pair(&base_run, &head_run, &plan)
        .await
        .with_context(|| format!("cannot record the runs in {}", ledger.location()))?;
    eprintln!(
        "bench-run: recorded base run #{base_id} and head run #{head_id} (paired, {rounds} rounds) in {}",
        ledger.location()
    );
    report_contention(base_conditions.as_ref(), head_conditions.as_ref());

    let base_stored = ledger.require_run(base_id).await?;
    let head_stored = ledger.require_run(head_id).await?;
    let comparison = compare::compare_paired_layouts(
        &ledger.measurements(base_id).await?,
        &ledger.measurements(head_id).await?,
        &plan.round_layouts,
        &config,
    );
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

/// What bench-run adds to the criterion arguments of every process: ab's budget as the
/// suite's criterion takes it, unless the user gave their own, and no plots.
pub(crate) fn process_args(user: &[String], criterion: Option<CriterionVersion>) -> Vec<AddedArg> {
    let mut added = criterion_cli::budget_args(&criterion_cli::AB, criterion, user);
    added.extend(criterion_cli::noplot_arg(user));
    added
}

/// The benchmarks both sides select, in the head's order; the others are named.
pub(crate) fn common_benchmarks(
    base: &BuiltSide,
    head: &BuiltSide,
    criterion_args: &[String],
    scratch: &Path,
) -> Result<Vec<String>> {
    let list = |side: &BuiltSide| -> Result<Vec<String>> {
        let home = tempfile::tempdir_in(scratch).context("cannot create a scratch directory")?;
        Ok(suite::run::list_benchmarks(
            &side.exe,
            &side.target,
            criterion_args,
            home.path(),
        )?)
    };
    let in_base = list(base)?;
    let in_head = list(head)?;
    for name in in_head.iter().filter(|n| !in_base.contains(n)) {
        eprintln!("note: {name} is new in head; it is not compared");
    }
    for name in in_base.iter().filter(|n| !in_head.contains(n)) {
        eprintln!("note: {name} is missing from head; it is not compared");
    }
    let common: Vec<String> = in_head
        .into_iter()
        .filter(|n| in_base.contains(n))
        .collect();
    if common.is_empty() {
        bail!("base and head have no benchmark in common (with these filter arguments)");
    }
    Ok(common)
}

/// Runs every round; returns each side's per-round results.
fn run_rounds(
    base: &BuiltSide,
    head: &BuiltSide,
    plan: &PairingPlan,
    criterion_args: &[String],
    benchmarks: &[String],
    scratch: &Path,
    explain: impl Fn(AbError) -> AbError,
) -> Result<(SideRounds, SideRounds)> {
    let mut sides = (SideRounds::default(), SideRounds::default());
    let rounds = Rounds {
        plan,
        criterion_args,
        benchmarks,
        scratch,
        label: "bench-run ab",
    };
    rounds.run(base, head, 0, &mut sides, explain)?;
    Ok(sides)
}

/// Paired rounds of two built sides, as a plan lays them out.
pub(crate) struct Rounds<'a> {
    pub plan: &'a PairingPlan,
    pub criterion_args: &'a [String],
    pub benchmarks: &'a [String],
    pub scratch: &'a Path,
    /// The progress lines' prefix.
    pub label: &'a str,
}

impl Rounds<'_> {
    /// Runs the plan's rounds from index `from` on, adding each side's results to `sides`.
    pub(crate) fn run(
        &self,
        base: &BuiltSide,
        head: &BuiltSide,
        from: usize,
        sides: &mut (SideRounds, SideRounds),
        explain: impl Fn(AbError) -> AbError,
    ) -> Result<()> {
        let rounds = self.plan.base_first.len();
        let started = Instant::now();
        for (index, base_first) in self.plan.base_first.iter().enumerate().skip(from) {
            let round = index + 1;
            let layout = self.plan.round_layouts.get(index).copied().unwrap_or(0);
            let order: [(&BuiltSide, &'static str); 2] = if *base_first {
                [(base, "base"), (head, "head")]
            } else {
                [(head, "head"), (base, "base")]
            };
            for (side, label) in order {
                let output = ab::run_process(
                    side,
                    label,
                    round,
                    layout,
                    self.criterion_args,
                    self.benchmarks.to_vec(),
                    self.scratch,
                    |_, _, _| {},
                )
                .map_err(&explain)
                .with_context(|| format!("the {label} process of round {round} failed"))?;
                if round == 1 && label == "base" {
                    warn_about_own_settings(&output.results, self.criterion_args);
                }
                if label == "base" {
                    sides.0.push_process(&output);
                } else {
                    sides.1.push_process(&output);
                }
            }
            let elapsed = started.elapsed().as_secs_f64();
            #[expect(clippy::cast_precision_loss, reason = "round counts are small")]
            let left = elapsed / (round - from) as f64 * (rounds - round) as f64;
            eprintln!(
                "{}: round {round}/{rounds} done ({} first; {elapsed:.0} s, about {left:.0} s left)",
                self.label,
                if *base_first { "base" } else { "head" }
            );
        }
        Ok(())
    }
}

/// Warns when benchmarks of the suite set their own sample size or measurement time, so ab's
/// short budget does not hold (rand's `sample_size(1000)`: rounds of about 24 s).
fn warn_about_own_settings(results: &[bench_model::Measurement], criterion_args: &[String]) {
    let Some(requested) =
        bench_verdicts::quick::RequestedSettings::from_criterion_args(criterion_args)
    else {
        return;
    };
    if let Some(warning) =
        bench_verdicts::quick::check(results, requested).budget_warning("bench-run ab")
    {
        eprintln!("warning: {warning}");
    }
}

/// Says how busy the machine was. ab never refuses a busy machine: both sides of every round
/// met the same neighbours, which is what the pairing is for.
fn report_contention(base: Option<&RunConditions>, head: Option<&RunConditions>) {
    let busy = contention::is_busy(base) == Some(true) || contention::is_busy(head) == Some(true);
    for (side, c) in [("base", base), ("head", head)] {
        if let Some(c) = c {
            eprintln!(
                "bench-run ab: {side} processes: {}",
                contention::summary_line(c)
            );
        }
    }
    if busy {
        eprintln!(
            "bench-run ab: the machine was busy (other processes above {} CPUs); the verdict \
             stands, because each round ran both sides under the same load",
            contention::BUSY_OTHERS_CPUS
        );
    }
}

/// Prints the gate's line and maps it to the exit code.
fn verdict(comparison: &Comparison, base: i64, head: i64, started: Instant) -> Outcome {
    let line = format!(
        "head run #{head} vs base run #{base}, {:.0} s in all",
        started.elapsed().as_secs_f64()
    );
    match compare::gate(comparison, &[], false) {
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

/// The layout seeds both sides were relinked under, warning about the others; one layout (the
/// default link) when fewer than two are usable.
pub(crate) fn usable_layouts(base: &BuiltSide, head: &BuiltSide, wanted: usize) -> Vec<u64> {
    if wanted <= 1 || base.gungraun {
        return Vec::new();
    }
    for (label, side) in [("base", base), ("head", head)] {
        for failure in &side.layout_failures {
            eprintln!("warning: {label}: {failure}");
        }
    }
    let seeds: Vec<u64> = base
        .layouts
        .iter()
        .map(|l| l.seed)
        .filter(|s| head.layouts.iter().any(|h| h.seed == *s))
        .collect();
    if seeds.len() < 2 {
        eprintln!(
            "warning: bench-run ab: fewer than two relinked layouts on both sides; measuring the \
             default link only (one layout: a change may then be the layout's, not the code's)"
        );
        return Vec::new();
    }
    if seeds.len() < wanted {
        eprintln!(
            "warning: bench-run ab: {} of {wanted} layouts relinked on both sides; measuring those",
            seeds.len()
        );
    }
    seeds
}

pub(crate) fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

pub(crate) fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| {
            u64::try_from(d.as_nanos() & u128::from(u64::MAX)).unwrap_or(0)
        })
}
