//! `bench-run bisect` as a use case: the commit that made a suite slower, found by building
//! first-parent commits in the build home and measuring each probe against the good end in
//! paired rounds. [`search`] decides which commit to test and what a probe is like;
//! [`report`] says what was found. This module builds, measures and records.
//!
//! The caller prints, pushes the recorded pairs and writes the summary.

pub mod report;
pub mod search;

use crate::ab::{self as ab_use_case, AbFailure, AbProgress, Rounds, short};
use bench_analysis::compare::{self, CompareConfig, Comparison};
use bench_analysis::paired::{self, PairedChange};
use bench_model::{Direction, GitInfo, NewRun, RunId, RunSource, StoredRun};
use bench_runner::ab::{self, BuiltSide, ChainCommit, SideBuild, SideRecord, SideRounds};
use bench_runner::build_home::BuildHome;
use bench_runner::criterion_cli;
use bench_runner::relink;
use bench_runner::sides::AbError;
use bench_runner::suite::BuildOptions;
use bench_store::{Ledger, LedgerError, PairingPlan};
use report::{CulpritEffect, Report, Step};
use search::{Decision, Found, Search, Status, Verdict};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Confidence of a step's interval. With 8 rounds the interval is their whole range at 0.95
/// as at 0.99 (all rounds must lie on one side of the threshold); later batches narrow it.
const STEP_CONFIDENCE: f64 = 0.95;
/// Rounds of a step at first, unless the request says otherwise.
const STEP_ROUNDS: usize = 8;
/// A step that is not yet clear runs again up to this many times its first rounds.
const ROUND_CAP_FACTOR: usize = 4;

/// What to bisect, and how.
#[derive(Debug)]
pub struct BisectRequest<'a> {
    /// The root of the workspace holding the suite.
    pub workspace_root: &'a Path,
    /// The suite (a bench target).
    pub suite: &'a str,
    /// Its package, when the name is ambiguous.
    pub package: Option<&'a str>,
    /// A revision where the suite was fast (an ancestor of `bad` on its first-parent line).
    pub good: &'a str,
    /// A revision where it is slow.
    pub bad: &'a str,
    /// Only benchmarks matching this criterion filter; `None`: every one the ends confirm
    /// slower.
    pub benchmark: Option<&'a str>,
    /// A commit is bad above this slowdown (percent); `None`: half the range's.
    pub threshold_pct: Option<f64>,
    /// Rounds per step at first; `None`: [`STEP_ROUNDS`], the ends as many as `ab` would run.
    pub rounds: Option<usize>,
    /// Link layouts wanted (default [`relink::DEFAULT_LAYOUTS`]).
    pub layouts: Option<usize>,
    /// Seed of the side orders and the layouts.
    pub seed: u64,
    /// How every commit is built.
    pub build: &'a BuildOptions,
    /// Environment variables recorded with the runs.
    pub record_env: &'a [String],
    /// The user's criterion arguments.
    pub criterion_args: &'a [String],
    /// The verdict settings of the ends' comparison.
    pub config: &'a CompareConfig,
    /// The command line recorded with the runs.
    pub command: &'a [String],
    /// Where it ran.
    pub cwd: &'a Path,
    /// Where build homes live (default [`bench_runner::build_home::default_root`]).
    pub build_home: Option<&'a Path>,
    /// The `bench-run` executable cargo runs as the linker ([`relink`]).
    pub relinker: &'a Path,
}

/// What a bisection found.
#[derive(Debug)]
pub enum BisectOutcome {
    /// Good and bad name one commit.
    SameCommit {
        /// The commit.
        commit: String,
    },
    /// Good and bad build the same bench executable: no commit between them changed the suite.
    IdenticalEnds {
        /// Its SHA-256.
        sha256: String,
    },
    /// Bad is not slower than good on the benchmarks asked about (both ends recorded).
    NotSlower(Box<NotSlower>),
    /// The search ran: a culprit, or the range it could not narrow.
    Searched(Box<Bisected>),
}

/// The ends measured alike.
#[derive(Debug)]
pub struct NotSlower {
    /// The good end.
    pub good: ChainCommit,
    /// The bad end.
    pub bad: ChainCommit,
    /// The good end's run.
    pub good_run: StoredRun,
    /// The bad end's run.
    pub bad_run: StoredRun,
    /// Their comparison.
    pub comparison: Comparison,
}

/// A finished search.
#[derive(Debug)]
pub struct Bisected {
    /// What it found and what it cost.
    pub report: Report,
    /// Every recorded pair (base run, head run), in the order measured; the culprit's last.
    pub pairs: Vec<(RunId, RunId)>,
}

/// Why a bisection stopped. Pairs recorded before the failure stay in the ledger.
#[derive(Debug, thiserror::Error)]
pub enum BisectFailure {
    /// `--rounds 0`.
    #[error("--rounds must be at least 1")]
    NoRounds,
    /// `--layouts 0`.
    #[error("--layouts must be at least 1")]
    NoLayouts,
    /// A threshold that is not a positive percentage.
    #[error("--threshold must be a positive percentage, got {0}")]
    BadThreshold(f64),
    /// Git, the build home or a checkout failed.
    #[error(transparent)]
    Git(#[from] AbError),
    /// An end does not build: there is nothing to bisect from.
    #[error("cannot build suite {suite} at {end} `{rev}`")]
    EndBuild {
        /// The suite.
        suite: String,
        /// `good` or `bad`.
        end: &'static str,
        /// The revision as given.
        rev: String,
        /// Why.
        #[source]
        cause: Box<AbError>,
    },
    /// Listing, running or recording the paired rounds failed.
    #[error(transparent)]
    Rounds(Box<AbFailure>),
    /// The rounds hold no value to decide on.
    #[error("{0}")]
    Unusable(&'static str),
    /// Reading the runs back failed.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

impl From<AbFailure> for BisectFailure {
    fn from(failure: AbFailure) -> Self {
        Self::Rounds(Box::new(failure))
    }
}

/// Bisects `request`'s range, recording every measured step in `ledger`.
///
/// # Errors
/// See [`BisectFailure`].
pub async fn bisect(
    ledger: &Ledger,
    request: &BisectRequest<'_>,
    progress: &mut dyn AbProgress,
) -> Result<BisectOutcome, BisectFailure> {
    check(request)?;
    let (repo, within) = ab::repo_and_path(request.workspace_root)?;
    let good = ab::resolve_commit(&repo, request.good)?;
    let bad = ab::resolve_commit(&repo, request.bad)?;
    if good == bad {
        return Ok(BisectOutcome::SameCommit { commit: good });
    }
    let chain = ab::first_parent_chain(&repo, &good, &bad)?;
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
    let mut bisector = Bisector {
        request,
        ledger,
        progress,
        home,
        within,
        scratch,
        seeds: relink::layout_seeds(
            request.layouts.unwrap_or(relink::DEFAULT_LAYOUTS),
            request.seed,
        ),
        chain,
        built: BTreeMap::new(),
        measured: BTreeSet::new(),
        criterion_args: Vec::new(),
        benchmarks: Vec::new(),
        layouts: Vec::new(),
        started: Instant::now(),
        pairs: Vec::new(),
    };
    bisector.run().await
}

fn check(request: &BisectRequest<'_>) -> Result<(), BisectFailure> {
    if request.rounds == Some(0) {
        return Err(BisectFailure::NoRounds);
    }
    if request.layouts == Some(0) {
        return Err(BisectFailure::NoLayouts);
    }
    if let Some(t) = request.threshold_pct
        && !(t.is_finite() && t > 0.0)
    {
        return Err(BisectFailure::BadThreshold(t));
    }
    Ok(())
}

/// One benchmark (and metric) the bisection follows, and which way is slower.
#[derive(Debug, Clone)]
struct Target {
    benchmark: String,
    metric: String,
    direction: Direction,
}

impl Target {
    fn name(&self) -> String {
        if self.metric == bench_model::metric::TIME {
            self.benchmark.clone()
        } else {
            format!("{} [{}]", self.benchmark, self.metric)
        }
    }
}

/// A commit built: its side and the git state it was built from.
struct BuiltCommit {
    side: BuiltSide,
    git: GitInfo,
}

/// What a tested commit was found to be, its change against good and its recorded runs.
type Tested = (Status, Option<PairedChange>, Option<(RunId, RunId)>);

/// Builds, measures and records; the search state lives in [`Search`].
struct Bisector<'a, 'p> {
    request: &'a BisectRequest<'a>,
    ledger: &'a Ledger,
    progress: &'p mut dyn AbProgress,
    home: BuildHome,
    within: PathBuf,
    scratch: tempfile::TempDir,
    seeds: Vec<u64>,
    chain: Vec<ChainCommit>,
    built: BTreeMap<usize, BuiltCommit>,
    /// Executables measured (by hash).
    measured: BTreeSet<String>,
    criterion_args: Vec<String>,
    benchmarks: Vec<String>,
    layouts: Vec<u64>,
    started: Instant,
    pairs: Vec<(RunId, RunId)>,
}

impl Bisector<'_, '_> {
    #[expect(
        clippy::too_many_lines,
        reason = "one pass down: build the ends, confirm, search, measure the culprit"
    )]
    async fn run(&mut self) -> Result<BisectOutcome, BisectFailure> {
        let last = self.chain.len() - 1;
        let request = self.request;
        self.progress.step(&format!(
            "{} commit(s) after good {} up to bad {}; building both ends in {}",
            last,
            short(&self.chain[0].hash),
            short(&self.chain[last].hash),
            self.home.dir().display()
        ));
        let end_build = |end, rev: &str| {
            let (suite, rev) = (request.suite.to_owned(), rev.to_owned());
            move |cause| BisectFailure::EndBuild {
                suite,
                end,
                rev,
                cause: Box::new(cause),
            }
        };
        self.build(0, true)
            .map_err(end_build("good", request.good))?;
        // Later commits resolve dependencies as good did when Cargo.lock is not committed.
        let _ = std::fs::copy(
            self.home.src().join(&self.within).join("Cargo.lock"),
            self.scratch.path().join("Cargo.lock"),
        );
        self.build(last, true)
            .map_err(end_build("bad", request.bad))?;
        if self.side(0).sha256 == self.side(last).sha256 {
            return Ok(BisectOutcome::IdenticalEnds {
                sha256: self.side(0).sha256.clone(),
            });
        }
        self.prepare_processes()?;

        // The ends: is bad slower, on which benchmarks, and by how much?
        let confirm_rounds = request.rounds.unwrap_or_else(|| {
            if self.side(0).tool().repeats_exactly() {
                1
            } else {
                paired::rounds_needed(self.benchmarks.len(), request.config.alpha)
                    .next_multiple_of(self.layouts.len().max(1))
            }
        });
        self.progress.step(&format!(
            "step 0: good against bad, {} benchmark(s) x {confirm_rounds} rounds",
            self.benchmarks.len()
        ));
        // A slowdown not yet clear (not significant, or within the layout spread) gets more
        // rounds before the ends are called alike.
        let config = request.config;
        let (sides, plan) = self.measure(0, last, confirm_rounds, |sides, plan| {
            let (base, _) = sides.0.clone().into_measurements(config.confidence);
            let (head, _) = sides.1.clone().into_measurements(config.confidence);
            compare::compare_paired_layouts(&base, &head, &plan.round_layouts, config)
                .regressions()
                .next()
                .is_some()
        })?;
        let (good_run, bad_run, comparison) = self.record(0, last, sides, &plan).await?;
        let targets: Vec<Target> = comparison
            .regressions()
            .map(|r| Target {
                benchmark: r.benchmark.clone(),
                metric: r.metric.clone(),
                direction: r.direction,
            })
            .collect();
        if targets.is_empty() {
            return Ok(BisectOutcome::NotSlower(Box::new(NotSlower {
                good: self.chain[0].clone(),
                bad: self.chain[last].clone(),
                good_run: self.ledger.require_run(good_run).await?,
                bad_run: self.ledger.require_run(bad_run).await?,
                comparison,
            })));
        }
        let range_effect =
            self.change_of(good_run, bad_run, &targets)
                .await?
                .ok_or(BisectFailure::Unusable(
                    "the ends' rounds hold no usable value",
                ))?;
        let threshold = search::threshold(request.threshold_pct, range_effect.log_median);
        self.progress.step(&format!(
            "bad is slower on {} by {:+.1}% (runs #{good_run}, #{bad_run}); a commit is bad \
             above {:+.1}%",
            targets
                .iter()
                .map(Target::name)
                .collect::<Vec<_>>()
                .join(", "),
            range_effect.log_median.exp_m1() * 100.0,
            threshold.exp_m1() * 100.0
        ));
        let mut steps = vec![
            self.end_step(0, None, None),
            self.end_step(last, Some(range_effect), Some((good_run, bad_run))),
        ];

        let mut search = Search::new(self.chain.len());
        let mut same_binary = Vec::new();
        let mut unbuildable = Vec::new();
        let mut step = 0;
        while let Some(index) = search.next() {
            step += 1;
            let commit = self.chain[index].clone();
            self.progress.step(&format!(
                "step {step}: testing {} {} ({} commit(s) left, about {} more step(s); {:.0} s \
                 so far)",
                short(&commit.hash),
                commit.summary,
                search.left(),
                search::steps_left(search.left()),
                self.started.elapsed().as_secs_f64()
            ));
            let (status, change, runs) = self.test(index, &search, &targets, threshold).await?;
            match &status {
                Status::Good {
                    by: Decision::SameBinary,
                }
                | Status::Bad {
                    by: Decision::SameBinary,
                } => same_binary.push(commit.hash.clone()),
                Status::Unbuildable { reason } => {
                    unbuildable.push((commit.hash.clone(), reason.clone()));
                }
                _ => {}
            }
            self.progress.step(&format!(
                "step {step}: {}",
                describe(&status, change.as_ref())
            ));
            steps.push(Step {
                step,
                commit,
                status: status.clone(),
                change,
                runs,
            });
            search.mark(index, status);
        }

        let found = search.found();
        let (culprit, culprit_effect, left_range) = match found {
            Found::Culprit { index } => {
                let effect = self
                    .culprit_effect(index, confirm_rounds, &targets, &range_effect)
                    .await?;
                (Some(self.chain[index].clone()), Some(effect), None)
            }
            Found::Unresolved { good, bad } => (
                None,
                None,
                Some((self.chain[good].hash.clone(), self.chain[bad].hash.clone())),
            ),
        };
        let report = Report {
            suite: request.suite.to_owned(),
            good: self.chain[0].clone(),
            bad: self.chain[last].clone(),
            commits_in_range: last,
            targets: targets.iter().map(Target::name).collect(),
            range_effect,
            threshold_pct: threshold.exp_m1() * 100.0,
            found,
            culprit,
            culprit_effect,
            left_range,
            steps,
            executables_measured: self.measured.len(),
            same_binary,
            unbuildable,
            wall_s: self.started.elapsed().as_secs_f64(),
        };
        Ok(BisectOutcome::Searched(Box::new(Bisected {
            report,
            pairs: std::mem::take(&mut self.pairs),
        })))
    }

    fn side(&self, index: usize) -> &BuiltSide {
        &self.built[&index].side
    }

    fn end_step(
        &self,
        index: usize,
        change: Option<PairedChange>,
        runs: Option<(RunId, RunId)>,
    ) -> Step {
        Step {
            step: 0,
            commit: self.chain[index].clone(),
            status: if index == 0 {
                Status::Good { by: Decision::End }
            } else {
                Status::Bad { by: Decision::End }
            },
            change,
            runs,
        }
    }

    /// Builds commit `index` into its own executable directory (once; `force_link` relinks
    /// the layouts of a build cargo calls fresh).
    fn build(&mut self, index: usize, force_link: bool) -> Result<(), AbError> {
        let hash = self.chain[index].hash.clone();
        let needs_build = match self.built.get(&index) {
            None => true,
            Some(b) => force_link && b.side.fresh && !self.seeds.is_empty(),
        };
        if needs_build {
            self.home.switch_to(&hash)?;
            let checkout = self.home.src().join(&self.within);
            ab::share_lock_file(self.request.workspace_root, &checkout)?;
            ab::share_lock_file(self.scratch.path(), &checkout)?;
            let exe_dir = self.scratch.path().join(format!("c{index}"));
            let side = ab::build_side(
                &self.home,
                &self.within,
                &SideBuild {
                    bench_run: self.request.relinker,
                    suite: self.request.suite,
                    package: self.request.package,
                    options: self.request.build,
                    layout_seeds: &self.seeds,
                    exe_dir: &exe_dir,
                    force_link,
                },
            )?;
            let git = ab_use_case::git_state(&self.home.src(), self.progress);
            self.built.insert(index, BuiltCommit { side, git });
        }
        Ok(())
    }

    /// The process arguments, the benchmarks both ends share, and the usable layouts.
    fn prepare_processes(&mut self) -> Result<(), BisectFailure> {
        let last = self.chain.len() - 1;
        let (good, bad) = (self.side(0).clone(), self.side(last).clone());
        let mut user = self.request.criterion_args.to_vec();
        if let Some(pattern) = self.request.benchmark {
            user.push(pattern.to_owned());
        }
        let added = ab_use_case::process_args(bad.tool().as_ref(), self.request.suite, &user)?;
        self.criterion_args = criterion_cli::command_line(&added, &user);
        self.benchmarks = ab_use_case::common_benchmarks(
            &good,
            &bad,
            &self.criterion_args,
            self.scratch.path(),
            self.progress,
        )?;
        let wanted = self.request.layouts.unwrap_or(relink::DEFAULT_LAYOUTS);
        self.layouts = ab_use_case::usable_layouts(&good, &bad, wanted, self.progress);
        Ok(())
    }

    /// Paired rounds of `base` against `head` (both built): `rounds` at first, then as many
    /// again while `done` says no, up to [`ROUND_CAP_FACTOR`] times as many (`|_, _| true`: one
    /// batch).
    fn measure(
        &mut self,
        base: usize,
        head: usize,
        rounds: usize,
        mut done: impl FnMut(&(SideRounds, SideRounds), &PairingPlan) -> bool,
    ) -> Result<((SideRounds, SideRounds), PairingPlan), AbFailure> {
        let (base_side, head_side) = (self.side(base).clone(), self.side(head).clone());
        let seed = self.request.seed;
        let cap = rounds * ROUND_CAP_FACTOR;
        let mut plan = PairingPlan {
            seed,
            base_first: Vec::new(),
            base_rev: self.chain[base].hash.clone(),
            head_rev: Some(self.chain[head].hash.clone()),
            round_layouts: Vec::new(),
        };
        let mut sides = (SideRounds::default(), SideRounds::default());
        let mut batch = 0_u64;
        loop {
            let from = plan.base_first.len();
            // Each batch is balanced on its own, so a step stopped after any batch is too.
            plan.base_first.extend(paired::side_order(
                rounds,
                seed.wrapping_add(batch).wrapping_add(head as u64),
            ));
            if self.layouts.len() > 1 {
                plan.round_layouts = (0..plan.base_first.len())
                    .map(|r| self.layouts[r % self.layouts.len()])
                    .collect();
            }
            Rounds {
                plan: &plan,
                criterion_args: &self.criterion_args,
                benchmarks: &self.benchmarks,
                scratch: self.scratch.path(),
            }
            .run(
                &base_side,
                &head_side,
                from,
                &mut sides,
                |e| e,
                self.progress,
            )?;
            batch += 1;
            if done(&sides, &plan) || plan.base_first.len() + rounds > cap {
                break;
            }
            self.progress.step(&format!(
                "not yet clear after {} rounds; {rounds} more",
                plan.base_first.len()
            ));
        }
        self.measured.insert(base_side.sha256.clone());
        self.measured.insert(head_side.sha256.clone());
        Ok((sides, plan))
    }

    /// Records a step's two sides and their pairing, and compares them.
    async fn record(
        &mut self,
        base: usize,
        head: usize,
        sides: (SideRounds, SideRounds),
        plan: &PairingPlan,
    ) -> Result<(RunId, RunId, Comparison), BisectFailure> {
        let config = self.request.config;
        let (base_rounds, head_rounds) = sides;
        let (base_conditions, head_conditions) =
            (base_rounds.conditions(), head_rounds.conditions());
        let (base_results, _) = base_rounds.into_measurements(config.confidence);
        let (head_results, _) = head_rounds.into_measurements(config.confidence);
        if base_results.is_empty() || head_results.is_empty() {
            return Err(AbFailure::NothingMeasured.into());
        }
        let run = |index: usize, source, conditions, measurements| {
            let built = &self.built[&index];
            NewRun {
                source,
                provenance: ab::side_provenance(&SideRecord {
                    side: &built.side,
                    git: &built.git,
                    conditions,
                    command: self.request.command,
                    cwd: self.request.cwd,
                    build: self.request.build,
                    criterion_args: &self.criterion_args,
                    record_env: self.request.record_env,
                    duration_ms: None,
                }),
                measurements,
            }
        };
        let base_run = run(base, RunSource::BisectBase, base_conditions, base_results);
        let head_run = run(head, RunSource::BisectHead, head_conditions, head_results);
        let (base_id, head_id) = self
            .ledger
            .record_pair(&base_run, &head_run, plan)
            .await
            .map_err(|source| AbFailure::Record {
                location: self.ledger.location().to_string(),
                source,
            })?;
        self.pairs.push((base_id, head_id));
        let comparison = compare::compare_paired_layouts(
            &self.ledger.measurements(base_id).await?,
            &self.ledger.measurements(head_id).await?,
            &plan.round_layouts,
            config,
        );
        Ok((base_id, head_id, comparison))
    }

    /// The targets' change from run `base` to run `head` over their rounds.
    async fn change_of(
        &self,
        base: RunId,
        head: RunId,
        targets: &[Target],
    ) -> Result<Option<PairedChange>, LedgerError> {
        let base = self.ledger.measurements(base).await?;
        let head = self.ledger.measurements(head).await?;
        let values = |results: &[bench_model::Measurement]| -> Option<Vec<Vec<f64>>> {
            targets
                .iter()
                .map(|t| {
                    let m = results
                        .iter()
                        .find(|m| m.benchmark.full == t.benchmark && m.metric == t.metric)?;
                    let values = m.samples.as_ref()?.times_ns().to_vec();
                    Some(slower_is_higher(values, t.direction))
                })
                .collect()
        };
        let (Some(b), Some(h)) = (values(&base), values(&head)) else {
            return Ok(None);
        };
        Ok(search::round_changes(&b, &h)
            .and_then(|d| paired::analyze(&d, self.request.config.confidence)))
    }

    /// Tests commit `index`: builds it, judges it by its executable when a judged commit has
    /// the same one, else measures it against good.
    async fn test(
        &mut self,
        index: usize,
        search: &Search,
        targets: &[Target],
        threshold: f64,
    ) -> Result<Tested, BisectFailure> {
        let sha = match self.build(index, false) {
            Ok(()) => self.side(index).sha256.clone(),
            Err(AbError::Suite(e)) => {
                let reason = first_line(&e.to_string());
                return Ok((Status::Unbuildable { reason }, None, None));
            }
            Err(e) => return Err(e.into()),
        };
        // Identical executables run identical code: the verdict of the judged one holds.
        for (&other, built) in &self.built {
            if other == index || built.side.sha256 != sha {
                continue;
            }
            let by = Decision::SameBinary;
            match &search.statuses()[other] {
                Status::Good { .. } => return Ok((Status::Good { by }, None, None)),
                Status::Bad { .. } => return Ok((Status::Bad { by }, None, None)),
                _ => {}
            }
        }
        self.build(index, true)?;
        let rounds = self.step_rounds();
        let (sides, plan) = self.measure(0, index, rounds, |sides, _| {
            step_changes(sides, targets)
                .and_then(|d| search::likeness(&d, threshold, STEP_CONFIDENCE))
                .is_some_and(|l| l.verdict != Verdict::Unclear)
        })?;
        let d = step_changes(&sides, targets).ok_or(BisectFailure::Unusable(
            "a target was not measured in every round",
        ))?;
        let likeness = search::likeness(&d, threshold, STEP_CONFIDENCE).ok_or(
            BisectFailure::Unusable("the step's rounds hold no usable value"),
        )?;
        let (good_run, head_run, _) = self.record(0, index, sides, &plan).await?;
        let by = Decision::Measured;
        let status = match likeness.verdict {
            Verdict::Good => Status::Good { by },
            Verdict::Bad => Status::Bad { by },
            Verdict::Unclear => Status::Unclear,
        };
        Ok((status, Some(likeness.change), Some((good_run, head_run))))
    }

    fn step_rounds(&self) -> usize {
        if self.side(0).tool().repeats_exactly() {
            return self.request.rounds.unwrap_or(1);
        }
        self.request
            .rounds
            .unwrap_or(STEP_ROUNDS)
            .next_multiple_of(self.layouts.len().max(1))
    }

    /// Measures the culprit's parent against the culprit.
    async fn culprit_effect(
        &mut self,
        index: usize,
        rounds: usize,
        targets: &[Target],
        range_effect: &PairedChange,
    ) -> Result<CulpritEffect, BisectFailure> {
        let parent = index - 1;
        self.progress.step(&format!(
            "measuring the culprit {} against its parent {}",
            short(&self.chain[index].hash),
            short(&self.chain[parent].hash)
        ));
        self.build(parent, true)?;
        self.build(index, true)?;
        let (sides, plan) = self.measure(parent, index, rounds, |_, _| true)?;
        let (parent_run, culprit_run, _) = self.record(parent, index, sides, &plan).await?;
        let change = self
            .change_of(parent_run, culprit_run, targets)
            .await?
            .ok_or(BisectFailure::Unusable(
                "the culprit's rounds hold no usable value",
            ))?;
        let share = search::explained_share(change.log_median, range_effect.log_median);
        Ok(CulpritEffect {
            change,
            share_of_range: share,
            more_than_one_change: share.is_some_and(|s| s < search::SOLE_CHANGE_SHARE),
            runs: (parent_run, culprit_run),
        })
    }
}

/// The targets' per-round log-ratios of a step (head against base; positive is slower).
fn step_changes(sides: &(SideRounds, SideRounds), targets: &[Target]) -> Option<Vec<f64>> {
    let values = |side: &SideRounds| -> Option<Vec<Vec<f64>>> {
        targets
            .iter()
            .map(|t| {
                side.values_of(&t.benchmark, &t.metric)
                    .map(|v| slower_is_higher(v, t.direction))
            })
            .collect()
    };
    search::round_changes(&values(&sides.0)?, &values(&sides.1)?)
}

/// Values turned so that a higher one is slower (throughput-like metrics are inverted).
fn slower_is_higher(values: Vec<f64>, direction: Direction) -> Vec<f64> {
    match direction {
        Direction::HigherIsBetter => values.into_iter().map(|v| 1.0 / v).collect(),
        _ => values,
    }
}

/// A step's verdict as its progress line says it.
fn describe(status: &Status, change: Option<&PairedChange>) -> String {
    let change = change.map_or_else(String::new, |c| {
        format!(
            " ({:+.1}% [{:+.1}%, {:+.1}%] over {} rounds)",
            c.log_median.exp_m1() * 100.0,
            c.log_lower.exp_m1() * 100.0,
            c.log_upper.exp_m1() * 100.0,
            c.rounds
        )
    });
    match status {
        Status::Good {
            by: Decision::SameBinary,
        } => "good: the same bench executable as a good commit (not measured)".to_owned(),
        Status::Bad {
            by: Decision::SameBinary,
        } => "bad: the same bench executable as a bad commit (not measured)".to_owned(),
        Status::Good { .. } => format!("good{change}"),
        Status::Bad { .. } => format!("bad{change}"),
        Status::Unbuildable { reason } => format!("skipped: it does not build: {reason}"),
        Status::Unclear => format!("unclear at the round cap{change}"),
        Status::Untested => "untested".to_owned(),
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or(text);
    line.chars().take(200).collect()
}
