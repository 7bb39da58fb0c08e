//! `bench-run bisect`: the commit that made a suite slower, found by building first-parent
//! commits in the build home and measuring midpoints against the good end in paired rounds
//! ([`bench_usecases::bisect`] decides; this file builds, measures, records and prints).

use super::ab::TerminalAb;
use super::support::{compare_config, git_info, invocation, open_ledger};
use crate::cli::{BisectArgs, VerdictArgs};
use crate::outcome::Outcome;
use anyhow::{Context, Result, bail};
use bench_analysis::compare::{self, CompareConfig};
use bench_analysis::paired::{self, PairedChange};
use bench_model::{Direction, GitInfo, NewRun, RunSource};
use bench_report::OutputFormat;
use bench_runner::ab::{self, BuiltSide, ChainCommit, SideBuild, SideRounds};
use bench_runner::ab::{SideRecord, side_provenance};
use bench_runner::build_home::BuildHome;
use bench_runner::criterion_cli;
use bench_runner::locate::locate;
use bench_runner::relink;
use bench_runner::sides::AbError;
use bench_store::{Ledger, PairingPlan};
use bench_usecases::ab::{self as ab_use_case, Rounds};
use bench_usecases::bisect::{
    self, CulpritEffect, Decision, Found, Report, Search, Status, Step, Verdict,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Confidence of a step's interval. With 8 rounds the interval is their whole range at 0.95
/// as at 0.99 (all rounds must lie on one side of the threshold); later batches narrow it.
const STEP_CONFIDENCE: f64 = 0.95;
/// Rounds of a step at first, unless `--rounds` says otherwise.
const STEP_ROUNDS: usize = 8;
/// A step that is not yet clear runs again up to this many times its first rounds.
const ROUND_CAP_FACTOR: usize = 4;

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

/// Builds, measures and records; the search state lives in [`Search`].
struct Bisector<'a> {
    args: &'a BisectArgs,
    cwd: &'a Path,
    ledger: Ledger,
    config: CompareConfig,
    home: BuildHome,
    within: PathBuf,
    workspace_root: PathBuf,
    scratch: tempfile::TempDir,
    me: PathBuf,
    build: bench_runner::suite::BuildOptions,
    seeds: Vec<u64>,
    chain: Vec<ChainCommit>,
    built: BTreeMap<usize, BuiltCommit>,
    /// Executables measured (by hash).
    measured: BTreeSet<String>,
    criterion_args: Vec<String>,
    benchmarks: Vec<String>,
    layouts: Vec<u64>,
    seed: u64,
    started: Instant,
    pairs: Vec<(i64, i64)>,
}

pub(crate) async fn bisect(args: &BisectArgs, db: Option<&str>, cwd: &Path) -> Result<Outcome> {
    check_args(args)?;
    let start_dir = args.build.start_dir(cwd);
    let workspace = locate(&start_dir, &args.suite, args.build.package.as_deref())?.workspace;
    let ledger = open_ledger(db, &start_dir).await?;
    let config = compare_config(&default_verdict(), &start_dir)?;
    let (repo, within) = ab::repo_and_path(&workspace.root)?;
    let good = ab::resolve_commit(&repo, &args.good)?;
    let bad = ab::resolve_commit(&repo, &args.bad)?;
    if good == bad {
        eprintln!(
            "bench-run bisect: good `{}` and bad `{}` are the same commit; nothing to bisect",
            args.good, args.bad
        );
        return Ok(Outcome::Incomparable);
    }
    let chain = ab::first_parent_chain(&repo, &good, &bad)?;
    let home = super::support::open_build_home(&repo, args.build_home.as_deref(), "bisect")?;
    let scratch = home.scratch()?;
    let seed = args.seed.unwrap_or_else(ab_use_case::clock_seed);
    let me = relink::own_executable().context("cannot find bench-run's own executable")?;
    let mut bisector = Bisector {
        args,
        cwd,
        ledger,
        config,
        home,
        within,
        workspace_root: workspace.root,
        scratch,
        me,
        build: args.build.options(),
        seeds: relink::layout_seeds(args.layouts.unwrap_or(relink::DEFAULT_LAYOUTS), seed),
        chain,
        built: BTreeMap::new(),
        measured: BTreeSet::new(),
        criterion_args: Vec::new(),
        benchmarks: Vec::new(),
        layouts: Vec::new(),
        seed,
        started: Instant::now(),
        pairs: Vec::new(),
    };
    let outcome = bisector.run().await;
    bisector.ledger.close().await;
    outcome
}

fn check_args(args: &BisectArgs) -> Result<()> {
    if args.rounds == Some(0) {
        bail!("--rounds must be at least 1");
    }
    if args.layouts == Some(0) {
        bail!("--layouts must be at least 1");
    }
    if let Some(t) = args.threshold
        && !(t.is_finite() && t > 0.0)
    {
        bail!("--threshold must be a positive percentage, got {t}");
    }
    Ok(())
}

/// The verdict settings of the confirming step: ab's defaults.
fn default_verdict() -> VerdictArgs {
    VerdictArgs {
        threshold: None,
        threshold_for: Vec::new(),
        ignore: Vec::new(),
        quarantine: None,
        alpha: None,
        correction: None,
        explain: false,
        layout_strict: false,
    }
}

impl Bisector<'_> {
    async fn run(&mut self) -> Result<Outcome> {
        let last = self.chain.len() - 1;
        let args = self.args;
        eprintln!(
            "bench-run bisect: {} commit(s) after good {} up to bad {}; building both ends in {}",
            last,
            short(&self.chain[0].hash),
            short(&self.chain[last].hash),
            self.home.dir().display()
        );
        self.build(0, true).with_context(|| {
            format!("cannot build suite {} at good `{}`", args.suite, args.good)
        })?;
        // Later commits resolve dependencies as good did when Cargo.lock is not committed.
        let _ = std::fs::copy(
            self.home.src().join(&self.within).join("Cargo.lock"),
            self.scratch.path().join("Cargo.lock"),
        );
        self.build(last, true)
            .with_context(|| format!("cannot build suite {} at bad `{}`", args.suite, args.bad))?;
        if self.side(0).sha256 == self.side(last).sha256 {
            eprintln!(
                "bench-run bisect: good and bad build the same bench executable (sha256 {}): no \
                 commit in between changed this suite's code, so there is nothing to bisect",
                short(&self.side(0).sha256)
            );
            return Ok(Outcome::Incomparable);
        }
        self.prepare_processes()?;

        // The ends: is bad slower, on which benchmarks, and by how much?
        let confirm_rounds = self.args.rounds.unwrap_or_else(|| {
            if self.side(0).gungraun {
                1
            } else {
                paired::rounds_needed(self.benchmarks.len(), self.config.alpha)
                    .next_multiple_of(self.layouts.len().max(1))
            }
        });
        eprintln!(
            "bench-run bisect: step 0: good against bad, {} benchmark(s) x {confirm_rounds} rounds",
            self.benchmarks.len()
        );
        // A slowdown not yet clear (not significant, or within the layout spread) gets more
        // rounds before the ends are called alike.
        let config = self.config.clone();
        let (sides, plan) = self.measure(0, last, confirm_rounds, |sides, plan| {
            let (base, _) = sides.0.clone().into_measurements(config.confidence);
            let (head, _) = sides.1.clone().into_measurements(config.confidence);
            compare::compare_paired_layouts(&base, &head, &plan.round_layouts, &config)
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
            eprint!(
                "{}",
                bench_report::comparison_terminal(
                    &comparison,
                    &self.ledger.require_run(good_run).await?,
                    &self.ledger.require_run(bad_run).await?,
                )
            );
            eprintln!(
                "bench-run bisect: bad ({}) is not slower than good ({}) on {}: nothing to \
                 bisect (runs #{good_run} and #{bad_run})",
                short(&self.chain[last].hash),
                short(&self.chain[0].hash),
                self.args
                    .benchmark
                    .as_deref()
                    .map_or_else(|| "any benchmark".to_owned(), |p| format!("`{p}`"))
            );
            return Ok(Outcome::Incomparable);
        }
        let range_effect = self
            .change_of(good_run, bad_run, &targets)
            .await?
            .context("the ends' rounds hold no usable value")?;
        let threshold = bisect::threshold(self.args.threshold, range_effect.log_median);
        eprintln!(
            "bench-run bisect: bad is slower on {} by {:+.1}% (runs #{good_run}, #{bad_run}); a \
             commit is bad above {:+.1}%",
            targets
                .iter()
                .map(Target::name)
                .collect::<Vec<_>>()
                .join(", "),
            range_effect.log_median.exp_m1() * 100.0,
            threshold.exp_m1() * 100.0
        );
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
            eprintln!(
                "bench-run bisect: step {step}: testing {} {} ({} commit(s) left, about {} more \
                 step(s); {:.0} s so far)",
                short(&commit.hash),
                commit.summary,
                search.left(),
                bisect::steps_left(search.left()),
                self.started.elapsed().as_secs_f64()
            );
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
            eprintln!(
                "bench-run bisect: step {step}: {}",
                describe(&status, change.as_ref())
            );
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
            suite: self.args.suite.clone(),
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
        self.finish(&report).await?;
        Ok(match report.found {
            Found::Culprit { .. } => Outcome::Ok,
            Found::Unresolved { .. } => Outcome::Regression,
        })
    }

    fn side(&self, index: usize) -> &BuiltSide {
        &self.built[&index].side
    }

    fn end_step(
        &self,
        index: usize,
        change: Option<PairedChange>,
        runs: Option<(i64, i64)>,
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
            ab::share_lock_file(&self.workspace_root, &checkout)?;
            ab::share_lock_file(self.scratch.path(), &checkout)?;
            let exe_dir = self.scratch.path().join(format!("c{index}"));
            let side = ab::build_side(
                &self.home,
                &self.within,
                &SideBuild {
                    bench_run: &self.me,
                    suite: &self.args.suite,
                    package: self.args.build.package.as_deref(),
                    options: &self.build,
                    layout_seeds: &self.seeds,
                    exe_dir: &exe_dir,
                    force_link,
                },
            )?;
            let git = git_info(&self.home.src());
            self.built.insert(index, BuiltCommit { side, git });
        }
        Ok(())
    }

    /// The criterion arguments, the benchmarks both ends share, and the usable layouts.
    fn prepare_processes(&mut self) -> Result<()> {
        let last = self.chain.len() - 1;
        let (good, bad) = (self.side(0).clone(), self.side(last).clone());
        let mut user = self.args.criterion_args.clone();
        if let Some(pattern) = &self.args.benchmark {
            user.push(pattern.clone());
        }
        let added = if bad.gungraun {
            Vec::new()
        } else {
            let criterion = bad.criterion;
            if let Some(version) = criterion.filter(|v| !v.reads_criterion_home()) {
                return Err(bench_usecases::record::RecordError::CriterionTooOld {
                    suite: self.args.suite.clone(),
                    version,
                }
                .into());
            }
            ab_use_case::process_args(&user, criterion)
        };
        self.criterion_args = criterion_cli::command_line(&added, &user);
        self.benchmarks = ab_use_case::common_benchmarks(
            &good,
            &bad,
            &self.criterion_args,
            self.scratch.path(),
            &mut TerminalAb("bench-run bisect"),
        )?;
        let wanted = self.args.layouts.unwrap_or(relink::DEFAULT_LAYOUTS);
        self.layouts =
            ab_use_case::usable_layouts(&good, &bad, wanted, &mut TerminalAb("bench-run bisect"));
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
    ) -> Result<((SideRounds, SideRounds), PairingPlan)> {
        let (base_side, head_side) = (self.side(base).clone(), self.side(head).clone());
        let cap = rounds * ROUND_CAP_FACTOR;
        let mut plan = PairingPlan {
            seed: self.seed,
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
                self.seed.wrapping_add(batch).wrapping_add(head as u64),
            ));
            if self.layouts.len() > 1 {
                plan.round_layouts = (0..plan.base_first.len())
                    .map(|r| self.layouts[r % self.layouts.len()])
                    .collect();
            }
            let runner = Rounds {
                plan: &plan,
                criterion_args: &self.criterion_args,
                benchmarks: &self.benchmarks,
                scratch: self.scratch.path(),
            };
            runner.run(
                &base_side,
                &head_side,
                from,
                &mut sides,
                |e| e,
                &mut TerminalAb("bench-run bisect"),
            )?;
            batch += 1;
            if done(&sides, &plan) || plan.base_first.len() + rounds > cap {
                break;
            }
            eprintln!(
                "bench-run bisect: not yet clear after {} rounds; {rounds} more",
                plan.base_first.len()
            );
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
    ) -> Result<(i64, i64, compare::Comparison)> {
        let (base_rounds, head_rounds) = sides;
        let (base_conditions, head_conditions) =
            (base_rounds.conditions(), head_rounds.conditions());
        let (base_results, _) = base_rounds.into_measurements(self.config.confidence);
        let (head_results, _) = head_rounds.into_measurements(self.config.confidence);
        if base_results.is_empty() || head_results.is_empty() {
            bail!("no benchmark was measured in every round; nothing recorded");
        }
        let mut command = invocation();
        if self.args.seed.is_none() {
            command.extend(["--seed".to_owned(), self.seed.to_string()]);
        }
        let run = |index: usize, source, conditions, measurements| {
            let built = &self.built[&index];
            NewRun {
                source,
                provenance: side_provenance(&SideRecord {
                    side: &built.side,
                    git: &built.git,
                    conditions,
                    command: &command,
                    cwd: self.cwd,
                    build: &self.build,
                    criterion_args: &self.criterion_args,
                    record_env: &self.args.build.record_env,
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
            .with_context(|| format!("cannot record the runs in {}", self.ledger.location()))?;
        self.pairs.push((base_id, head_id));
        let comparison = compare::compare_paired_layouts(
            &self.ledger.measurements(base_id).await?,
            &self.ledger.measurements(head_id).await?,
            &plan.round_layouts,
            &self.config,
        );
        Ok((base_id, head_id, comparison))
    }

    /// The targets' change from run `base` to run `head` over their rounds.
    async fn change_of(
        &self,
        base: i64,
        head: i64,
        targets: &[Target],
    ) -> Result<Option<PairedChange>> {
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
        Ok(bisect::round_changes(&b, &h).and_then(|d| paired::analyze(&d, self.config.confidence)))
    }

    /// Tests commit `index`: builds it, judges it by its executable when a judged commit has
    /// the same one, else measures it against good.
    async fn test(
        &mut self,
        index: usize,
        search: &Search,
        targets: &[Target],
        threshold: f64,
    ) -> Result<(Status, Option<PairedChange>, Option<(i64, i64)>)> {
        let sha = match self.build(index, false) {
            Ok(()) => self.side(index).sha256.clone(),
            Err(AbError::Suite(e)) => {
                return Ok((
                    Status::Unbuildable {
                        reason: first_line(&e.to_string()),
                    },
                    None,
                    None,
                ));
            }
            Err(e) => return Err(e.into()),
        };
        // Identical executables run identical code: the verdict of the judged one holds.
        for (&other, built) in &self.built {
            if other == index || built.side.sha256 != sha {
                continue;
            }
            match &search.statuses()[other] {
                Status::Good { .. } => {
                    return Ok((
                        Status::Good {
                            by: Decision::SameBinary,
                        },
                        None,
                        None,
                    ));
                }
                Status::Bad { .. } => {
                    return Ok((
                        Status::Bad {
                            by: Decision::SameBinary,
                        },
                        None,
                        None,
                    ));
                }
                _ => {}
            }
        }
        self.build(index, true)?;
        let rounds = self.step_rounds();
        let targets_owned = targets.to_vec();
        let confidence = STEP_CONFIDENCE;
        let (sides, plan) = self.measure(0, index, rounds, |sides, _| {
            step_changes(sides, &targets_owned)
                .and_then(|d| bisect::likeness(&d, threshold, confidence))
                .is_some_and(|l| l.verdict != Verdict::Unclear)
        })?;
        let d =
            step_changes(&sides, targets).context("a target was not measured in every round")?;
        let likeness = bisect::likeness(&d, threshold, confidence)
            .context("the step's rounds hold no usable value")?;
        let (good_run, head_run, _) = self.record(0, index, sides, &plan).await?;
        let status = match likeness.verdict {
            Verdict::Good => Status::Good {
                by: Decision::Measured,
            },
            Verdict::Bad => Status::Bad {
                by: Decision::Measured,
            },
            Verdict::Unclear => Status::Unclear,
        };
        Ok((status, Some(likeness.change), Some((good_run, head_run))))
    }

    fn step_rounds(&self) -> usize {
        if self.side(0).gungraun {
            return self.args.rounds.unwrap_or(1);
        }
        self.args
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
    ) -> Result<CulpritEffect> {
        let parent = index - 1;
        eprintln!(
            "bench-run bisect: measuring the culprit {} against its parent {}",
            short(&self.chain[index].hash),
            short(&self.chain[parent].hash)
        );
        self.build(parent, true)?;
        self.build(index, true)?;
        let (sides, plan) = self.measure(parent, index, rounds, |_, _| true)?;
        let (parent_run, culprit_run, _) = self.record(parent, index, sides, &plan).await?;
        let change = self
            .change_of(parent_run, culprit_run, targets)
            .await?
            .context("the culprit's rounds hold no usable value")?;
        let share = bisect::explained_share(change.log_median, range_effect.log_median);
        Ok(CulpritEffect {
            change,
            share_of_range: share,
            more_than_one_change: share.is_some_and(|s| s < bisect::SOLE_CHANGE_SHARE),
            runs: (parent_run, culprit_run),
        })
    }

    /// Prints the report, writes the summary, pushes the steps.
    async fn finish(&self, report: &Report) -> Result<()> {
        match self.args.format {
            OutputFormat::Json => println!(
                "{}",
                serde_json::to_string_pretty(report).context("cannot write the report as JSON")?
            ),
            OutputFormat::Markdown => print!("{}", report.markdown()),
            _ => print!("{}", report.table()),
        }
        let mut links = Vec::new();
        if let Some(url) = &self.args.push {
            for &(base, head) in &self.pairs {
                if let Some(link) = super::push::push_pair(&self.ledger, base, head, url).await {
                    links.push(link);
                }
            }
        }
        if let Some(path) = &self.args.summary {
            let mut text = report.markdown();
            if let Some(link) = links.last() {
                text.push_str(&format!(
                    "\nOn the team's server: [the culprit's step]({link})\n"
                ));
            }
            std::fs::write(path, text)
                .with_context(|| format!("cannot write the summary to {}", path.display()))?;
            eprintln!(
                "bench-run bisect: wrote the markdown summary to {}",
                path.display()
            );
        }
        eprintln!("bisect: {} ({:.0} s)", report.headline(), report.wall_s);
        Ok(())
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
    bisect::round_changes(&values(&sides.0)?, &values(&sides.1)?)
}

/// Values turned so that a higher one is slower (throughput-like metrics are inverted).
fn slower_is_higher(values: Vec<f64>, direction: Direction) -> Vec<f64> {
    match direction {
        Direction::HigherIsBetter => values.into_iter().map(|v| 1.0 / v).collect(),
        _ => values,
    }
}

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

fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}
