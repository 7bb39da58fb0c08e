//! `bench-run ab` as a use case: build two revisions the same way (one checkout at one path),
//! run them in paired rounds, one process per side per round and in several link layouts,
//! record both runs with their pairing, and compare them on the rounds' ratios.
//!
//! The caller profiles, prints and pushes. Its pieces (the arguments of a process, the
//! benchmarks both sides have, the rounds) serve `bisect` too.

use crate::record::RecordError;
use bench_analysis::compare::{self, CompareConfig, Comparison};
use bench_analysis::{contention, paired};
use bench_model::{GitInfo, Measurement, NewRun, RunConditions, RunSource, StoredRun};
use bench_runner::ab::{self, BuiltSide, SideBuild, SideRecord, SideRounds, side_provenance};
use bench_runner::build_home::BuildHome;
use bench_runner::criterion_cli::{self, AddedArg};
use bench_runner::sides::AbError;
use bench_runner::suite::{BuildOptions, run::list_benchmarks};
use bench_runner::tool::BenchTool;
use bench_store::{Ledger, LedgerError, PairingPlan};
use std::path::Path;
use std::time::Instant;

/// What a caller hears while an A/B run goes on.
pub trait AbProgress {
    /// A step: building a side, the plan, a round done, what was recorded.
    fn step(&mut self, text: &str);
    /// Something worth knowing that changes nothing (a benchmark only one side has).
    fn note(&mut self, text: &str);
    /// Something that weakens the result (a layout missing, settings the suite overrides).
    fn warning(&mut self, text: &str);
}

/// What to compare, and how.
#[derive(Debug)]
pub struct AbRequest<'a> {
    /// The root of the workspace holding the suite.
    pub workspace_root: &'a Path,
    /// The suite (a bench target).
    pub suite: &'a str,
    /// Its package, when the name is ambiguous.
    pub package: Option<&'a str>,
    /// The base revision (a git revision, or `merge-base:REV`).
    pub base: &'a str,
    /// The head revision; `None`: the working tree.
    pub head: Option<&'a str>,
    /// How both sides are built.
    pub build: &'a BuildOptions,
    /// Environment variables recorded with the runs.
    pub record_env: &'a [String],
    /// The user's criterion arguments (a filter, settings).
    pub criterion_args: &'a [String],
    /// Link layouts wanted (default [`bench_runner::relink::DEFAULT_LAYOUTS`]); at least 1.
    pub layouts: Option<usize>,
    /// Rounds wanted (default: enough for the sign test, a multiple of the layouts); at least 1.
    pub rounds: Option<usize>,
    /// Seed of the side order and the layouts.
    pub seed: u64,
    /// The verdict settings.
    pub config: &'a CompareConfig,
    /// The command line recorded with the runs.
    pub command: &'a [String],
    /// Where it ran.
    pub cwd: &'a Path,
    /// Where build homes live (default [`bench_runner::build_home::default_root`]).
    pub build_home: Option<&'a Path>,
    /// The `bench-run` executable, which cargo runs as the linker to relink each layout
    /// ([`bench_runner::relink`]); the binary passes itself.
    pub relinker: &'a Path,
}

/// The two sides as the user named them.
#[derive(Debug, Clone)]
pub struct Revisions {
    /// The base as given.
    pub base_rev: String,
    /// The commit it names.
    pub base_commit: String,
    /// The head as given; `None`: the working tree.
    pub head_rev: Option<String>,
}

/// What an A/B run found.
#[derive(Debug)]
pub enum AbOutcome {
    /// Base and head name one commit: nothing to compare.
    SameCommit {
        /// The commit.
        commit: String,
    },
    /// Both sides built the same bench executable: the change cannot affect the suite.
    IdenticalExecutables {
        /// Its SHA-256.
        sha256: String,
    },
    /// Both sides ran, were recorded and compared.
    Measured(Box<AbMeasured>),
}

/// Two recorded, compared sides.
#[derive(Debug)]
pub struct AbMeasured {
    /// What was compared.
    pub revisions: Revisions,
    /// The base side as built.
    pub base: BuiltSide,
    /// The head side as built.
    pub head: BuiltSide,
    /// The base run as recorded.
    pub base_run: StoredRun,
    /// The head run as recorded.
    pub head_run: StoredRun,
    /// The verdict on the rounds' ratios.
    pub comparison: Comparison,
    /// The benchmarks both sides ran.
    pub benchmarks: Vec<String>,
    /// How many paired rounds.
    pub rounds: usize,
    /// When the run started (building included).
    pub started: Instant,
    /// Holds the sides' executables, for whatever runs them next (profiles).
    pub scratch: tempfile::TempDir,
}

/// Why an A/B run stopped. Nothing is recorded unless both sides were measured.
#[derive(Debug, thiserror::Error)]
pub enum AbFailure {
    /// `--rounds 0`.
    #[error("--rounds must be at least 1")]
    NoRounds,
    /// `--layouts 0`.
    #[error("--layouts must be at least 1")]
    NoLayouts,
    /// Git, the checkout, a build or a process failed.
    #[error(transparent)]
    Ab(#[from] AbError),
    /// A side does not build.
    #[error("cannot build suite {suite} at {side}")]
    Build {
        /// The suite.
        suite: String,
        /// Which side, as named.
        side: String,
        /// Why.
        #[source]
        source: Box<AbError>,
    },
    /// The suite's criterion cannot be read by bench-run.
    #[error(transparent)]
    Suite(#[from] RecordError),
    /// The sides share no benchmark.
    #[error("base and head have no benchmark in common (with these filter arguments)")]
    NoCommonBenchmark,
    /// A scratch directory cannot be made.
    #[error("cannot create a scratch directory: {0}")]
    Scratch(#[source] std::io::Error),
    /// A process of a round failed.
    #[error("the {side} process of round {round} failed")]
    Round {
        /// `base` or `head`.
        side: &'static str,
        /// Which round (1-based).
        round: usize,
        /// Why.
        #[source]
        source: Box<AbError>,
    },
    /// Every benchmark missed a round.
    #[error("no benchmark was measured in every round; nothing recorded")]
    NothingMeasured,
    /// The ledger refused the runs.
    #[error("cannot record the runs in {location}")]
    Record {
        /// The ledger.
        location: String,
        /// Why.
        #[source]
        source: LedgerError,
    },
    /// Reading the runs back failed.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

/// Builds, runs, records and compares both sides of `request`.
///
/// # Errors
/// See [`AbFailure`].
#[expect(
    clippy::too_many_lines,
    reason = "one pass down: resolve, build, plan, run, record, compare"
)]
pub async fn ab(
    ledger: &Ledger,
    request: &AbRequest<'_>,
    progress: &mut dyn AbProgress,
) -> Result<AbOutcome, AbFailure> {
    if request.rounds == Some(0) {
        return Err(AbFailure::NoRounds);
    }
    if request.layouts == Some(0) {
        return Err(AbFailure::NoLayouts);
    }
    let (repo, within_repo) = ab::repo_and_path(request.workspace_root)?;
    let revisions = Revisions {
        base_commit: ab::resolve_commit(&repo, request.base)?,
        base_rev: request.base.to_owned(),
        head_rev: request.head.map(str::to_owned),
    };
    let head_commit = ab::resolve_commit(&repo, request.head.unwrap_or("HEAD"))?;
    if request.head.is_some() && head_commit == revisions.base_commit {
        return Ok(AbOutcome::SameCommit {
            commit: head_commit,
        });
    }
    let root = request
        .build_home
        .map_or_else(bench_runner::build_home::default_root, Path::to_owned);
    let home = BuildHome::open(&repo, &root, |dir| {
        progress.step(&format!(
            "waiting for another bench-run of this repository ({} is in use)",
            dir.display()
        ));
    })?;
    let scratch = home.scratch()?;
    let wanted_layouts = request
        .layouts
        .unwrap_or(bench_runner::relink::DEFAULT_LAYOUTS);
    let seeds = bench_runner::relink::layout_seeds(wanted_layouts, request.seed);

    // One checkout at one path, switched from base to head: identical source gives identical
    // executables (bench_runner::build_home).
    let started = Instant::now();
    progress.step(&format!(
        "building {} at base `{}` ({}) in {}",
        request.suite,
        revisions.base_rev,
        short(&revisions.base_commit),
        home.dir().display()
    ));
    home.switch_to(&revisions.base_commit)?;
    let (base_dir, head_dir) = (scratch.path().join("base"), scratch.path().join("head"));
    let side_build = |exe_dir, force_link| SideBuild {
        bench_run: request.relinker,
        suite: request.suite,
        package: request.package,
        options: request.build,
        layout_seeds: &seeds,
        exe_dir,
        force_link,
    };
    let build_failed = |side: String| {
        let suite = request.suite.to_owned();
        move |source| AbFailure::Build {
            suite,
            side,
            source: Box::new(source),
        }
    };
    ab::share_lock_file(request.workspace_root, &home.src().join(&within_repo))?;
    let base = ab::build_side(&home, &within_repo, &side_build(&base_dir, true))
        .map_err(build_failed(format!("base `{}`", request.base)))?;
    let base_git = git_state(&home.src(), progress);
    // A workspace without a committed Cargo.lock: the head resolves as the base did, not
    // against whatever crates.io holds by then.
    let base_lock = scratch.path().join("Cargo.lock");
    let _ = std::fs::copy(home.src().join(&within_repo).join("Cargo.lock"), &base_lock);
    let head_name = request
        .head
        .map_or_else(|| "the working tree".to_owned(), str::to_owned);
    progress.step(&format!("building {} at head ({head_name})", request.suite));
    match request.head {
        Some(_) => home.switch_to(&head_commit)?,
        None => home.switch_to_working_tree(&head_commit)?,
    }
    ab::share_lock_file(request.workspace_root, &home.src().join(&within_repo))?;
    ab::share_lock_file(scratch.path(), &home.src().join(&within_repo))?;
    // Not linked again when fresh: identical executables end the run without relinking.
    let mut head = ab::build_side(&home, &within_repo, &side_build(&head_dir, false))
        .map_err(build_failed(format!("head ({head_name})")))?;
    let head_git = git_state(&home.src(), progress);
    progress.step(&format!(
        "built both sides in {:.0} s (base exe sha256 {}, head {})",
        started.elapsed().as_secs_f64(),
        short(&base.sha256),
        short(&head.sha256)
    ));
    if base.sha256 == head.sha256 {
        return Ok(AbOutcome::IdenticalExecutables {
            sha256: base.sha256,
        });
    }
    if head.fresh && !seeds.is_empty() {
        head = ab::build_side(&home, &within_repo, &side_build(&head_dir, true))
            .map_err(build_failed(format!("head ({head_name}), relinking")))?;
    }
    let layouts = usable_layouts(&base, &head, wanted_layouts, progress);

    let tool = head.tool();
    let added = process_args(tool.as_ref(), request.suite, request.criterion_args)?;
    let criterion_args = criterion_cli::command_line(&added, request.criterion_args);
    let explain = |e: AbError| match e {
        AbError::Suite(e) => AbError::Suite(tool.explain(e, &added, request.criterion_args)),
        other => other,
    };
    let benchmarks = common_benchmarks(&base, &head, &criterion_args, scratch.path(), progress)
        .map_err(|e| match e {
            AbFailure::Ab(e) => AbFailure::Ab(explain(e)),
            other => other,
        })?;
    let rounds = request.rounds.unwrap_or_else(|| {
        if tool.repeats_exactly() {
            // Instruction counts repeat exactly for one executable: one round says it all
            // (`--rounds 2` checks that they do).
            1
        } else {
            // Every layout gets as many rounds as the others.
            paired::rounds_needed(benchmarks.len(), request.config.alpha)
                .next_multiple_of(layouts.len().max(1))
        }
    });
    let plan = PairingPlan {
        seed: request.seed,
        base_first: paired::side_order(rounds, request.seed),
        base_rev: revisions.base_rev.clone(),
        head_rev: revisions.head_rev.clone(),
        round_layouts: if layouts.len() > 1 {
            (0..rounds).map(|r| layouts[r % layouts.len()]).collect()
        } else {
            Vec::new()
        },
    };
    progress.step(&format!(
        "{} benchmark(s) x {rounds} rounds, one base and one head process per round, {} (seed {})",
        benchmarks.len(),
        if plan.round_layouts.is_empty() {
            "one layout".to_owned()
        } else {
            format!("{} layouts in turn", layouts.len())
        },
        request.seed
    ));
    let measuring = Instant::now();
    let mut sides = (SideRounds::default(), SideRounds::default());
    Rounds {
        plan: &plan,
        criterion_args: &criterion_args,
        benchmarks: &benchmarks,
        scratch: scratch.path(),
    }
    .run(&base, &head, 0, &mut sides, explain, progress)?;
    let (base_rounds, head_rounds) = sides;
    let measured_ms = i64::try_from(measuring.elapsed().as_millis()).ok();
    let base_conditions = base_rounds.conditions();
    let head_conditions = head_rounds.conditions();
    let (base_results, base_dropped) = base_rounds.into_measurements(request.config.confidence);
    let (head_results, head_dropped) = head_rounds.into_measurements(request.config.confidence);
    for dropped in base_dropped.iter().chain(&head_dropped) {
        progress.warning(&format!(
            "{dropped} was not measured in every round; left out"
        ));
    }
    if base_results.is_empty() || head_results.is_empty() {
        return Err(AbFailure::NothingMeasured);
    }

    let provenance_of = |side: &BuiltSide, git: &GitInfo, conditions| {
        side_provenance(&SideRecord {
            side,
            git,
            conditions,
            command: request.command,
            cwd: request.cwd,
            build: request.build,
            criterion_args: &criterion_args,
            record_env: request.record_env,
            duration_ms: measured_ms,
        })
    };
    let base_new = NewRun {
        source: RunSource::AbBase,
        provenance: provenance_of(&base, &base_git, base_conditions.clone()),
        measurements: base_results,
    };
    let head_new = NewRun {
        source: RunSource::AbHead,
        provenance: provenance_of(&head, &head_git, head_conditions.clone()),
        measurements: head_results,
    };
    let (base_id, head_id) = ledger
        .record_pair(&base_new, &head_new, &plan)
        .await
        .map_err(|source| AbFailure::Record {
            location: ledger.location().to_string(),
            source,
        })?;
    progress.step(&format!(
        "recorded base run #{base_id} and head run #{head_id} (paired, {rounds} rounds) in {}",
        ledger.location()
    ));
    report_contention(base_conditions.as_ref(), head_conditions.as_ref(), progress);

    let comparison = compare::compare_paired_layouts(
        &ledger.measurements(base_id).await?,
        &ledger.measurements(head_id).await?,
        &plan.round_layouts,
        request.config,
    );
    Ok(AbOutcome::Measured(Box::new(AbMeasured {
        revisions,
        base,
        head,
        base_run: ledger.require_run(base_id).await?,
        head_run: ledger.require_run(head_id).await?,
        comparison,
        benchmarks,
        rounds,
        started,
        scratch,
    })))
}

/// The git state of a side's checkout; a warning, and nothing, when it cannot be read.
pub(crate) fn git_state(dir: &Path, progress: &mut dyn AbProgress) -> GitInfo {
    bench_runner::provenance::git(dir).unwrap_or_else(|e| {
        progress.warning(&format!("git state not recorded: {e}"));
        GitInfo::default()
    })
}

/// What bench-run adds to the user's arguments of every process of paired rounds: ab's
/// budget as the suite's tool takes it, unless the user gave their own, and no plots.
///
/// # Errors
/// When the suite links a criterion too old to write its output elsewhere.
pub fn process_args(
    tool: &dyn BenchTool,
    suite: &str,
    user: &[String],
) -> Result<Vec<AddedArg>, AbFailure> {
    if let Some(version) = tool
        .criterion_version()
        .filter(|v| !v.reads_criterion_home())
    {
        return Err(RecordError::CriterionTooOld {
            suite: suite.to_owned(),
            version,
        }
        .into());
    }
    Ok(tool.added_args(Some(&criterion_cli::AB), user))
}

/// The benchmarks both sides select, in the head's order; the others are named.
///
/// # Errors
/// When a side cannot list its benchmarks, or they share none.
pub fn common_benchmarks(
    base: &BuiltSide,
    head: &BuiltSide,
    criterion_args: &[String],
    scratch: &Path,
    progress: &mut dyn AbProgress,
) -> Result<Vec<String>, AbFailure> {
    let list = |side: &BuiltSide| -> Result<Vec<String>, AbFailure> {
        let home = tempfile::tempdir_in(scratch).map_err(AbFailure::Scratch)?;
        list_benchmarks(&side.exe, &side.target, criterion_args, home.path())
            .map_err(|e| AbFailure::Ab(AbError::Suite(e)))
    };
    let in_base = list(base)?;
    let in_head = list(head)?;
    for name in in_head.iter().filter(|n| !in_base.contains(n)) {
        progress.note(&format!("{name} is new in head; it is not compared"));
    }
    for name in in_base.iter().filter(|n| !in_head.contains(n)) {
        progress.note(&format!("{name} is missing from head; it is not compared"));
    }
    let common: Vec<String> = in_head
        .into_iter()
        .filter(|n| in_base.contains(n))
        .collect();
    if common.is_empty() {
        return Err(AbFailure::NoCommonBenchmark);
    }
    Ok(common)
}

/// Paired rounds of two built sides, as a plan lays them out.
#[derive(Debug, Clone, Copy)]
pub struct Rounds<'a> {
    /// The side order and layout of every round.
    pub plan: &'a PairingPlan,
    /// Every process's arguments.
    pub criterion_args: &'a [String],
    /// The benchmarks every process runs.
    pub benchmarks: &'a [String],
    /// Where the processes write their output.
    pub scratch: &'a Path,
}

impl Rounds<'_> {
    /// Runs the plan's rounds from index `from` on, adding each side's results to `sides`.
    ///
    /// # Errors
    /// [`AbFailure::Round`] when a process fails (`explain` says why in the suite's terms).
    pub fn run(
        &self,
        base: &BuiltSide,
        head: &BuiltSide,
        from: usize,
        sides: &mut (SideRounds, SideRounds),
        explain: impl Fn(AbError) -> AbError,
        progress: &mut dyn AbProgress,
    ) -> Result<(), AbFailure> {
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
                .map_err(|e| AbFailure::Round {
                    side: label,
                    round,
                    source: Box::new(explain(e)),
                })?;
                if round == 1 && label == "base" {
                    warn_about_own_settings(&output.results, self.criterion_args, progress);
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
            progress.step(&format!(
                "round {round}/{rounds} done ({} first; {elapsed:.0} s, about {left:.0} s left)",
                if *base_first { "base" } else { "head" }
            ));
        }
        Ok(())
    }
}

/// Warns when benchmarks of the suite set their own sample size or measurement time, so ab's
/// short budget does not hold (rand's `sample_size(1000)`: rounds of about 24 s).
fn warn_about_own_settings(
    results: &[Measurement],
    criterion_args: &[String],
    progress: &mut dyn AbProgress,
) {
    let Some(requested) =
        bench_verdicts::quick::RequestedSettings::from_criterion_args(criterion_args)
    else {
        return;
    };
    if let Some(warning) =
        bench_verdicts::quick::check(results, requested).budget_warning("bench-run ab")
    {
        progress.warning(&warning);
    }
}

/// Says how busy the machine was. ab never refuses a busy machine: both sides of every round
/// met the same neighbours, which is what the pairing is for.
fn report_contention(
    base: Option<&RunConditions>,
    head: Option<&RunConditions>,
    progress: &mut dyn AbProgress,
) {
    let busy = contention::is_busy(base) == Some(true) || contention::is_busy(head) == Some(true);
    for (side, c) in [("base", base), ("head", head)] {
        if let Some(c) = c {
            progress.step(&format!(
                "{side} processes: {}",
                contention::summary_line(c)
            ));
        }
    }
    if busy {
        progress.step(&format!(
            "the machine was busy (other processes above {} CPUs); the verdict stands, because \
             each round ran both sides under the same load",
            contention::BUSY_OTHERS_CPUS
        ));
    }
}

/// The layout seeds both sides were relinked under, warning about the others; one layout (the
/// default link) when fewer than two are usable.
pub fn usable_layouts(
    base: &BuiltSide,
    head: &BuiltSide,
    wanted: usize,
    progress: &mut dyn AbProgress,
) -> Vec<u64> {
    // Instruction counts do not move with the order of functions.
    if wanted <= 1 || base.tool().repeats_exactly() {
        return Vec::new();
    }
    for (label, side) in [("base", base), ("head", head)] {
        for failure in &side.layout_failures {
            progress.warning(&format!("{label}: {failure}"));
        }
    }
    let seeds: Vec<u64> = base
        .layouts
        .iter()
        .map(|l| l.seed)
        .filter(|s| head.layouts.iter().any(|h| h.seed == *s))
        .collect();
    if seeds.len() < 2 {
        progress.warning(
            "bench-run ab: fewer than two relinked layouts on both sides; measuring the default \
             link only (one layout: a change may then be the layout's, not the code's)",
        );
        return Vec::new();
    }
    if seeds.len() < wanted {
        progress.warning(&format!(
            "bench-run ab: {} of {wanted} layouts relinked on both sides; measuring those",
            seeds.len()
        ));
    }
    seeds
}

/// The first 12 digits of a commit or hash.
#[must_use]
pub fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// A seed from the clock, for runs that were not given one (the run records it).
#[must_use]
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| {
            u64::try_from(d.as_nanos() & u128::from(u64::MAX)).unwrap_or(0)
        })
}
