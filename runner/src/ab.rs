//! The mechanics of `bench-run ab`: checkouts of two revisions, their builds, one bench process
//! per side per round, and the per-round values of each side.
//!
//! ```text
//! repo ──git worktree──▶ <scratch>/base (REV)            build ─▶ exe A ─copy─▶ <scratch>/exe/base
//!      ──git worktree──▶ <scratch>/head (REV, or HEAD     build ─▶ exe B ─copy─▶ <scratch>/exe/head
//!                         + the working tree's changes)
//!           both builds share one CARGO_TARGET_DIR: dependencies compile once
//! round r: [A, B] or [B, A] (balanced, seeded) ─▶ one value per benchmark and process
//! ```
//!
//! Two checkouts of one workspace get the same cargo unit hashes, and cargo decides freshness
//! by comparing source mtimes with the last build's outputs. Each checkout is therefore created
//! right before its own build (its files are newer than the other side's outputs, so cargo must
//! recompile the workspace's crates), and a head build that cargo still calls fresh is rebuilt
//! after touching the checkout's files. The two executables are then hashed: identical hashes
//! mean identical code, and there is nothing to measure.
//!
//! The statistics live in [`bench_analysis::paired`] and [`bench_analysis::compare::compare_paired`]; this module
//! only produces their inputs.

use crate::build_home::BuildHome;
use crate::relink::{LinkPlan, Relinked, read_manifest};
use crate::sides::AbError;
use crate::sides::{git_text, io};
use crate::suite::{self, BuildOptions, Built, SuiteError, SuiteTarget, Workspace};
use crate::tool::{BenchTool, Criterion, Gungraun, ToolRun};
use bench_model::{BenchExe, Measurement, RunConditions, RunProvenance, Samples, SamplingMode};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The top directory of the git repository holding `dir`.
///
/// # Errors
/// When `dir` is not inside a git work tree.
pub fn repo_root(dir: &Path) -> Result<PathBuf, AbError> {
    git_text(dir, &["rev-parse", "--show-toplevel"]).map(PathBuf::from)
}

/// The git repository holding `workspace_root` and the workspace's path inside it (empty at
/// its top), which is where the workspace lies in a build home's checkout too.
///
/// # Errors
/// [`AbError::NotInGit`] when the workspace is not in a git work tree.
pub fn repo_and_path(workspace_root: &Path) -> Result<(PathBuf, PathBuf), AbError> {
    let repo = repo_root(workspace_root).map_err(|_| AbError::NotInGit {
        workspace: workspace_root.to_owned(),
    })?;
    let within = workspace_root
        .strip_prefix(&repo)
        .map(Path::to_owned)
        .unwrap_or_default();
    Ok((repo, within))
}

/// The full commit hash `rev` names: a git revision, or `merge-base:REV` for the merge base of
/// REV and the repository's `HEAD` ([`bench_git::merge_base_rev`]).
///
/// # Errors
/// When `rev` names no commit ([`AbError::MergeBase`] for `merge-base:REV`).
pub fn resolve_commit(repo: &Path, rev: &str) -> Result<String, AbError> {
    if let Some(rev) = bench_git::merge_base_rev(rev) {
        return Ok(bench_git::merge_base_with_head(repo, rev)?.commit);
    }
    git_text(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .map_err(|_| AbError::Git {
        command: format!("rev-parse {rev}"),
        reason: format!("`{rev}` names no commit of {}", repo.display()),
    })
}

/// A commit of a first-parent chain.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChainCommit {
    /// Full hash.
    pub hash: String,
    /// Its summary line.
    pub summary: String,
    /// Its author date (ISO 8601).
    pub author_date: String,
}

/// The first-parent chain from `good` to `bad`, both included, oldest first.
///
/// # Errors
/// When `good` is not on `bad`'s first-parent line (`git bisect` would follow merged branches;
/// a paired measurement needs one line of builds), or git fails.
pub fn first_parent_chain(repo: &Path, good: &str, bad: &str) -> Result<Vec<ChainCommit>, AbError> {
    let log = git_text(
        repo,
        &[
            "log",
            "--first-parent",
            "--reverse",
            "--format=%H%x09%aI%x09%s",
            &format!("{good}..{bad}"),
        ],
    )?;
    let parse = |line: &str| {
        let mut parts = line.splitn(3, '\t');
        ChainCommit {
            hash: parts.next().unwrap_or_default().to_owned(),
            author_date: parts.next().unwrap_or_default().to_owned(),
            summary: parts.next().unwrap_or_default().to_owned(),
        }
    };
    let mut chain = vec![parse(&git_text(
        repo,
        &["log", "-1", "--format=%H%x09%aI%x09%s", good],
    )?)];
    chain.extend(log.lines().filter(|l| !l.is_empty()).map(parse));
    // The first commit after good must be good's child on the first-parent line.
    let follows = chain.windows(2).next().is_none_or(|pair| {
        git_text(repo, &["rev-parse", &format!("{}^1", pair[1].hash)])
            .ok()
            .as_deref()
            == Some(pair[0].hash.as_str())
    });
    if chain.len() < 2 || !follows || chain.last().map(|c| c.hash.as_str()) != Some(bad) {
        return Err(AbError::Git {
            command: format!("log --first-parent {good}..{bad}"),
            reason: format!(
                "{} is not an ancestor of {} on its first-parent line: give a good revision \
                 that bad descends from through first parents (for a merged branch, its merge \
                 commit)",
                &good[..good.len().min(12)],
                &bad[..bad.len().min(12)]
            ),
        });
    }
    Ok(chain)
}

/// Copies the working tree's `Cargo.lock` of `workspace` into the same place of `checkout`
/// when the checkout has none (a lock file that git does not track), so both sides resolve
/// dependencies alike. Returns whether it copied.
///
/// # Errors
/// When the copy fails.
pub fn share_lock_file(workspace: &Path, checkout_workspace: &Path) -> Result<bool, AbError> {
    let from = workspace.join("Cargo.lock");
    let to = checkout_workspace.join("Cargo.lock");
    if from.is_file() && !to.exists() {
        std::fs::copy(&from, &to).map_err(io("cannot copy Cargo.lock into a checkout"))?;
        return Ok(true);
    }
    Ok(false)
}

/// SHA-256 of a file, in hex.
///
/// # Errors
/// When the file cannot be read.
pub fn sha256_file(path: &Path) -> Result<String, AbError> {
    let mut file =
        std::fs::File::open(path).map_err(io(format!("cannot read {}", path.display())))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(io(format!("cannot read {}", path.display())))?;
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// One link of a side's executable: a shuffled relink of the suite's bench executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutExe {
    /// The shuffle seed.
    pub seed: u64,
    /// The private copy of the executable.
    pub exe: PathBuf,
    /// SHA-256 of the executable.
    pub sha256: String,
}

/// One side, built: its suite in the build home's checkout and private copies of its
/// executables.
#[derive(Debug, Clone)]
pub struct BuiltSide {
    /// The suite target in the side's checkout (the process runs in its package directory).
    pub target: SuiteTarget,
    /// The side's workspace root in the checkout.
    pub workspace_root: PathBuf,
    /// The private copy of the executable as cargo linked it.
    pub exe: PathBuf,
    /// SHA-256 of the executable.
    pub sha256: String,
    /// Size of the executable in bytes.
    pub bytes: u64,
    /// Whether it is a gungraun suite (instruction counts under valgrind) rather than criterion.
    pub gungraun: bool,
    /// The criterion version it links, read once from its checkout's `Cargo.lock` after the
    /// build (`None` for gungraun suites, or when the lock does not name it).
    pub criterion: Option<crate::criterion_cli::CriterionVersion>,
    /// The relinked layouts, in seed order (empty: only the linker's own order).
    pub layouts: Vec<LayoutExe>,
    /// Why some relinks are missing (one line each).
    pub layout_failures: Vec<String>,
    /// Whether cargo reused its last build (nothing linked, so no layout was relinked).
    pub fresh: bool,
}

impl BuiltSide {
    /// The tool its suite is written with.
    #[must_use]
    pub fn tool(&self) -> Box<dyn BenchTool> {
        if self.gungraun {
            Box::new(Gungraun)
        } else {
            Box::new(Criterion {
                version: self.criterion,
            })
        }
    }

    /// The executable of layout `seed`; the default link for seed 0 or a seed not relinked.
    #[must_use]
    pub fn exe_of_layout(&self, seed: u64) -> &Path {
        self.layouts
            .iter()
            .find(|l| l.seed == seed)
            .map_or(&self.exe, |l| &l.exe)
    }
}

/// How to build one side.
#[derive(Debug, Clone)]
pub struct SideBuild<'a> {
    /// The suite's name.
    pub suite: &'a str,
    /// The package holding it, when the name is ambiguous.
    pub package: Option<&'a str>,
    /// Features and profile.
    pub options: &'a BuildOptions,
    /// The shuffle seeds of the relinks (empty: no relink).
    pub layout_seeds: &'a [u64],
    /// Where the side's executables are copied (created; one directory per side).
    pub exe_dir: &'a Path,
    /// The `bench-run` executable the linker shim runs as the linker (`bench-run` itself).
    pub bench_run: &'a Path,
    /// Link even when cargo calls the build fresh (by removing the executable first), so that
    /// the relinks run.
    pub force_link: bool,
}

/// Builds a side from the build home's checkout, which must hold its source already
/// ([`BuildHome::switch_to`]), and copies its executable (and its relinked layouts) out of the
/// target directory. `within_repo` is the workspace's path inside the repository.
///
/// Cargo's freshness is reliable here (only this checkout, at this path, builds into this
/// target directory, and git rewrites every file that changes). With `force_link`, a build
/// cargo calls fresh is repeated after removing the executable, so that the relinks run.
///
/// # Errors
/// When the suite cannot be found or built, or a copy fails.
pub fn build_side(
    home: &BuildHome,
    within_repo: &Path,
    side: &SideBuild<'_>,
) -> Result<BuiltSide, AbError> {
    let workspace = Workspace::discover(&home.src().join(within_repo))?;
    let target = workspace.find(side.suite, side.package)?.clone();
    let gungraun = crate::gungraun::detect(&target)?;
    std::fs::create_dir_all(side.exe_dir)
        .map_err(io(format!("cannot create {}", side.exe_dir.display())))?;
    let link_dir = side.exe_dir.join("link");
    let _ = std::fs::remove_dir_all(&link_dir);
    // Always through the shim, even without relinks: cargo fingerprints the linker, and a
    // different one would rebuild every dependency.
    let env = link_env(home, &workspace.root, &target, &link_dir, side)?;
    let target_dir = home.target_dir();
    let build = || {
        suite::build_with_env(
            &target,
            side.options,
            &workspace.root,
            Some(&target_dir),
            &env,
        )
    };
    let mut built: Built = build()?;
    if built.fresh && side.force_link {
        std::fs::remove_file(&built.exe)
            .map_err(io(format!("cannot remove {}", built.exe.display())))?;
        built = build()?;
        if built.fresh {
            return Err(AbError::Suite(SuiteError::Cargo {
                command: format!("cargo bench --no-run --bench {}", side.suite),
                reason: format!(
                    "cargo did not link the bench executable again after it was removed; remove \
                     {} and try again",
                    target_dir.display()
                ),
            }));
        }
    }
    let exe = side.exe_dir.join("exe");
    std::fs::copy(&built.exe, &exe).map_err(io(format!(
        "cannot copy {} to {}",
        built.exe.display(),
        exe.display()
    )))?;
    let bytes = std::fs::metadata(&exe)
        .map_err(io(format!("cannot read {}", exe.display())))?
        .len();
    let (layouts, layout_failures) = if side.layout_seeds.is_empty() || built.fresh {
        (Vec::new(), Vec::new())
    } else {
        collect_layouts(&link_dir, side.exe_dir, side.layout_seeds)?
    };
    let criterion = if gungraun {
        crate::gungraun::check_tools(side.suite, &workspace.root)?;
        None
    } else {
        crate::criterion_cli::detect(&workspace.root, &target.package, &target.package_version)
    };
    Ok(BuiltSide {
        sha256: sha256_file(&exe)?,
        bytes,
        gungraun,
        criterion,
        exe,
        layouts,
        layout_failures,
        fresh: built.fresh,
        workspace_root: workspace.root,
        target,
    })
}

/// The environment that makes cargo link through the shim and relink the suite per seed.
fn link_env(
    home: &BuildHome,
    workspace_root: &Path,
    target: &SuiteTarget,
    link_dir: &Path,
    side: &SideBuild<'_>,
) -> Result<Vec<(String, std::ffi::OsString)>, AbError> {
    let host = crate::provenance::toolchain(workspace_root)
        .map(|t| t.host)
        .map_err(|e| AbError::Layouts(format!("cannot read the toolchain's host: {e}")))?;
    let shim = home.linker_shim();
    crate::relink::write_shim(&shim).map_err(io(format!("cannot write {}", shim.display())))?;
    let plan = LinkPlan {
        real_linker: crate::cargo_config::effective_linker(workspace_root, &host)
            .unwrap_or_else(|| "cc".to_owned()),
        crate_name: target.name.replace('-', "_"),
        dir: link_dir.to_owned(),
        seeds: side.layout_seeds.to_vec(),
    };
    let mut env = plan.env(side.bench_run);
    env.push((crate::relink::linker_env_var(&host), shim.into_os_string()));
    Ok(env)
}

/// Moves the relinked layouts of a build out of `link_dir` into `exe_dir`, hashed; a missing
/// or failed relink becomes a line of the second list.
fn collect_layouts(
    link_dir: &Path,
    exe_dir: &Path,
    seeds: &[u64],
) -> Result<(Vec<LayoutExe>, Vec<String>), AbError> {
    let Some(manifest) = read_manifest(link_dir) else {
        return Ok((
            Vec::new(),
            vec![
                "the build did not link through bench-run (a linker set in RUSTFLAGS?), so no \
                 layout was relinked"
                    .to_owned(),
            ],
        ));
    };
    let mut layouts = Vec::new();
    let mut failures = Vec::new();
    for &seed in seeds {
        match manifest.layouts.iter().find(|l| l.seed == seed) {
            Some(Relinked {
                exe: Some(from), ..
            }) => {
                let to = exe_dir.join(crate::relink::layout_file_name(seed));
                std::fs::rename(from, &to)
                    .or_else(|_| std::fs::copy(from, &to).map(|_| ()))
                    .map_err(io(format!("cannot move {}", from.display())))?;
                layouts.push(LayoutExe {
                    seed,
                    sha256: sha256_file(&to)?,
                    exe: to,
                });
            }
            Some(Relinked { error, .. }) => failures.push(format!(
                "the relink with seed {seed} failed: {}",
                error.as_deref().unwrap_or("no reason given")
            )),
            None => failures.push(format!("no relink with seed {seed}")),
        }
    }
    Ok((layouts, failures))
}

/// Runs one bench process of `side` (named `label`, in 1-based `round`) under layout
/// `layout_seed` (its relinked executable and environment pad; 0: the default link, no pad)
/// with `criterion_args` (gungraun's arguments for a gungraun suite),
/// its output in a scratch directory under `scratch_parent`, and returns its results.
/// `on_progress(n, total, id)` follows it.
///
/// # Errors
/// When the process fails or its output cannot be read.
#[expect(
    clippy::too_many_arguments,
    reason = "one process of one round, fully described"
)]
pub fn run_process(
    side: &BuiltSide,
    label: &'static str,
    round: usize,
    layout_seed: u64,
    criterion_args: &[String],
    expected: Vec<String>,
    scratch_parent: &Path,
    on_progress: impl FnMut(usize, usize, &str),
) -> Result<ProcessOutput, AbError> {
    let home = tempfile::Builder::new()
        .prefix("criterion-")
        .tempdir_in(scratch_parent)
        .map_err(io(
            "cannot create a scratch directory for criterion's output",
        ))?;
    let tool = side.tool();
    // The environment pad of the layout (criterion; gungraun suites get no layouts).
    let pad = [crate::relink::env_pad(layout_seed)];
    let run = ToolRun {
        exe: side.exe_of_layout(layout_seed),
        suite: &side.target,
        args: criterion_args,
        home: home.path(),
        workspace_root: &side.workspace_root,
        env: &pad,
    };
    let mut on_progress = on_progress;
    let output = tool.run(&run, &expected, &mut on_progress)?;
    let results = tool.read_output(home.path()).map_err(|e| AbError::Output {
        side: label,
        round,
        reason: e.to_string(),
    })?;
    Ok(ProcessOutput {
        results,
        conditions: output.conditions,
    })
}

/// What one bench process produced.
#[derive(Debug)]
pub struct ProcessOutput {
    /// Its results.
    pub results: Vec<Measurement>,
    /// How busy the machine was while it ran (Linux).
    pub conditions: Option<RunConditions>,
}

/// Quantile of a process's per-iteration sample times taken as its value.
///
/// A neighbour that takes the CPU away (a compile job, a second benchmark) only ever *adds*
/// wall time to a sample, and only to the samples it overlaps; ab's processes take many short
/// samples, so the fast tail of a process's samples is the part that ran undisturbed. The
/// median would move with the share of samples that were disturbed; a low quantile does not
/// (the minimum is the classic choice for this, as in Chen and Revels 2016, "Robust benchmarking
/// in noisy environments"; a quantile slightly above it does not hang on one lucky sample).
pub const PROCESS_QUANTILE: f64 = 0.1;

/// One process's value of a result: the [`PROCESS_QUANTILE`] of its per-iteration sample times,
/// or the reported estimate when it has no samples.
#[must_use]
pub fn process_value(m: &Measurement) -> Option<f64> {
    let value = match &m.samples {
        Some(samples) => {
            bench_analysis::stats::quantile(&samples.per_iteration_ns(), PROCESS_QUANTILE)?
        }
        None => m.estimate.point,
    };
    // A count may be 0 (no RAM hit); a negative or non-finite value is not a measurement.
    (value.is_finite() && value >= 0.0).then_some(value)
}

/// One result over the rounds: the first process's result as the template (unit, direction,
/// throughput) and one value per round (`None`: not measured that round).
type RoundValues = (Measurement, Vec<Option<f64>>);

/// One side's results over the rounds, per `(benchmark, metric)`.
#[derive(Debug, Default, Clone)]
pub struct SideRounds {
    rounds: usize,
    values: BTreeMap<(String, String), RoundValues>,
    conditions: Vec<RunConditions>,
}

impl SideRounds {
    /// Adds the output of the next round's process.
    pub fn push_process(&mut self, output: &ProcessOutput) {
        self.push(&output.results);
        if let Some(c) = &output.conditions {
            self.conditions.push(c.clone());
        }
    }

    /// How busy the machine was over this side's processes, merged
    /// ([`crate::conditions::merge`]).
    #[must_use]
    pub fn conditions(&self) -> Option<RunConditions> {
        crate::conditions::merge(&self.conditions)
    }

    /// Adds the results of the next round's process.
    pub fn push(&mut self, results: &[Measurement]) {
        let round = self.rounds;
        for m in results {
            let key = (m.benchmark.full.clone(), m.metric.clone());
            let entry = self
                .values
                .entry(key)
                .or_insert_with(|| (m.clone(), vec![None; round]));
            if entry.1.len() == round {
                entry.1.push(process_value(m));
            }
        }
        self.rounds += 1;
        for (_, values) in self.values.values_mut() {
            values.resize(self.rounds, None);
        }
    }

    /// Rounds pushed so far.
    #[must_use]
    pub fn rounds(&self) -> usize {
        self.rounds
    }

    /// The per-round values of one result, when every round measured it.
    #[must_use]
    pub fn values_of(&self, benchmark: &str, metric: &str) -> Option<Vec<f64>> {
        let (_, values) = self
            .values
            .get(&(benchmark.to_owned(), metric.to_owned()))?;
        values.iter().copied().collect()
    }

    /// The side's results: per key, the median over the rounds with its order-statistic
    /// interval as the estimate, and the per-round values as [`SamplingMode::PerProcess`]
    /// samples. Keys missing a value in some round are left out and named in the second list.
    #[must_use]
    pub fn into_measurements(self, confidence: f64) -> (Vec<Measurement>, Vec<String>) {
        let mut kept = Vec::new();
        let mut dropped = Vec::new();
        for ((benchmark, metric), (template, values)) in self.values {
            let Some(values) = values.into_iter().collect::<Option<Vec<f64>>>() else {
                dropped.push(format!("{benchmark} [{metric}]"));
                continue;
            };
            let Some(estimate) = median_estimate(&values, confidence) else {
                dropped.push(format!("{benchmark} [{metric}]"));
                continue;
            };
            let samples =
                Samples::new(SamplingMode::PerProcess, vec![1.0; values.len()], values).ok();
            kept.push(Measurement {
                estimate,
                statistics: BTreeMap::new(),
                samples,
                ..template
            });
        }
        (kept, dropped)
    }
}

/// The median of per-round values with its distribution-free interval.
fn median_estimate(values: &[f64], confidence: f64) -> Option<bench_model::Estimate> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (k, coverage) = bench_analysis::paired::median_interval_rank(sorted.len(), confidence)?;
    Some(bench_model::Estimate {
        point: bench_analysis::stats::quantile_sorted(&sorted, 0.5)?,
        lower: sorted.get(k - 1).copied(),
        upper: sorted.get(sorted.len() - k).copied(),
        confidence_level: Some(coverage),
        standard_error: None,
    })
}

/// What a side's run records about how it was measured.
pub struct SideRecord<'a> {
    /// The side that ran.
    pub side: &'a BuiltSide,
    /// The git state of its revision.
    pub git: &'a bench_model::GitInfo,
    /// How busy the machine was while it ran.
    pub conditions: Option<RunConditions>,
    /// bench-run's own command line.
    pub command: &'a [String],
    /// Where bench-run ran.
    pub cwd: &'a Path,
    /// How the side was built.
    pub build: &'a crate::suite::BuildOptions,
    /// The arguments criterion got.
    pub criterion_args: &'a [String],
    /// The environment variables recorded.
    pub record_env: &'a [String],
    /// How long its rounds took.
    pub duration_ms: Option<i64>,
}

/// The provenance of one side of paired rounds.
pub fn side_provenance(r: &SideRecord<'_>) -> RunProvenance {
    let side = r.side;
    let toolchain = crate::provenance::toolchain(&side.workspace_root).ok();
    RunProvenance {
        suite: side.target.name.clone(),
        package: Some(side.target.package.clone()),
        command: r.command.to_vec(),
        cargo_command: Some(crate::suite::cargo_bench_command(
            &side.target,
            r.build,
            r.criterion_args,
            None,
        )),
        cwd: r.cwd.display().to_string(),
        machine: crate::provenance::machine(),
        build: r.build.recorded_build_config(
            &side.workspace_root,
            toolchain.as_ref().map(|t| t.host.as_str()),
        ),
        toolchain,
        env: crate::provenance::environment(r.record_env),
        git: r.git.clone(),
        cpu_governor: crate::provenance::cpu_governor(),
        turbo: crate::provenance::turbo(),
        quick: false,
        duration_ms: r.duration_ms,
        bench_exe: Some(BenchExe {
            sha256: side.sha256.clone(),
            bytes: side.bytes,
        }),
        conditions: r.conditions.clone(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;
    use bench_model::{BenchmarkId, Direction, Estimate};

    fn result(benchmark: &str, times: &[f64]) -> Measurement {
        Measurement {
            benchmark: BenchmarkId::named(benchmark),
            metric: "time".to_owned(),
            unit: "ns".to_owned(),
            direction: Direction::LowerIsBetter,
            estimate: Estimate::point(times[0]),
            statistics: BTreeMap::new(),
            throughput: None,
            samples: Samples::new(SamplingMode::Linear, vec![2.0; times.len()], times.to_vec())
                .ok(),
        }
    }

    #[test]
    fn a_process_value_is_the_fast_tail_of_its_samples() {
        // Two iterations per sample: per-iteration times 5, 6, 50 (a burst); the 10% quantile
        // (type 7) is 5 + 0.2 * (6 - 5).
        let value = process_value(&result("b", &[10.0, 12.0, 100.0])).unwrap();
        assert!((value - 5.2).abs() < 1e-9, "{value}");
        let mut no_samples = result("b", &[10.0]);
        no_samples.samples = None;
        no_samples.estimate = Estimate::point(7.0);
        assert_eq!(process_value(&no_samples), Some(7.0));
        no_samples.estimate = Estimate::point(0.0);
        assert_eq!(process_value(&no_samples), Some(0.0));
        no_samples.estimate = Estimate::point(f64::NAN);
        assert_eq!(process_value(&no_samples), None);
        no_samples.estimate = Estimate::point(-1.0);
        assert_eq!(process_value(&no_samples), None);
    }

    #[test]
    fn rounds_become_per_process_samples() {
        let mut side = SideRounds::default();
        side.push(&[result("a", &[10.0, 10.0]), result("b", &[4.0, 4.0])]);
        side.push(&[result("a", &[12.0, 12.0])]); // b failed to report in round 2
        side.push(&[result("a", &[11.0, 11.0]), result("b", &[4.0, 4.0])]);
        assert_eq!(side.rounds(), 3);
        let (kept, dropped) = side.into_measurements(0.95);
        assert_eq!(dropped, vec!["b [time]".to_owned()]);
        assert_eq!(kept.len(), 1);
        let a = &kept[0];
        let samples = a.samples.as_ref().unwrap();
        assert_eq!(samples.mode(), SamplingMode::PerProcess);
        assert_eq!(samples.times_ns(), &[5.0, 6.0, 5.5]);
        assert_eq!(a.estimate.point, 5.5);
        assert_eq!((a.estimate.lower, a.estimate.upper), (Some(5.0), Some(6.0)));
    }

    #[test]
    fn a_late_benchmark_is_missing_its_early_rounds() {
        let mut side = SideRounds::default();
        side.push(&[result("a", &[10.0])]);
        side.push(&[result("a", &[10.0]), result("late", &[3.0])]);
        let (kept, dropped) = side.into_measurements(0.95);
        assert_eq!(kept.len(), 1);
        assert_eq!(dropped, vec!["late [time]".to_owned()]);
    }

    #[test]
    fn sha256_of_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        std::fs::write(&path, b"abc").unwrap();
        assert_eq!(
            sha256_file(&path).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(sha256_file(&dir.path().join("missing")).is_err());
    }
}
