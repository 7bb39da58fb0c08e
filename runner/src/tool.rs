//! The benchmark tools a suite can be written with, behind one trait: the arguments each adds,
//! how it lists, runs and reads its output. `bench-run --suite` walks a suite through a
//! [`BenchTool`] once, whichever tool it is; both tools start their process through
//! [`crate::process`].

use crate::criterion_cli::{self, AddedArg, Budget, CriterionVersion};
use crate::gungraun::{self, GungraunError};
use crate::process::RunOutput;
use crate::suite::run::{self as criterion_run, ProgressTracker};
use crate::suite::{SuiteError, SuiteTarget};
use bench_adapters::AdapterError;
use bench_model::Measurement;
use bench_profile::{GungraunOptions, PerfOptions, Profile, ProfileError};
use std::path::Path;

/// One run of a built bench executable.
#[derive(Debug, Clone, Copy)]
pub struct ToolRun<'a> {
    /// The executable.
    pub exe: &'a Path,
    /// Its bench target.
    pub suite: &'a SuiteTarget,
    /// Its arguments: what bench-run added, then the user's.
    pub args: &'a [String],
    /// Where the tool writes its output (a scratch directory).
    pub home: &'a Path,
    /// The root of the workspace it was built in.
    pub workspace_root: &'a Path,
    /// More environment variables for the process (`bench-run ab`'s layout pad; criterion only).
    pub env: &'a [(String, String)],
}

/// A benchmark tool: criterion (wall time) or gungraun (instruction counts under valgrind).
pub trait BenchTool {
    /// Checks that the tool can run here; a line to show before it runs, if any.
    ///
    /// # Errors
    /// When its programs are missing or of another version than the suite links.
    fn check(&self, suite: &str, workspace_root: &Path) -> Result<Option<String>, GungraunError>;
    /// The criterion version the suite links, for criterion suites whose lock names it.
    fn criterion_version(&self) -> Option<CriterionVersion>;
    /// Whether a time budget (`--quick`, ab's short rounds) shortens its runs (gungraun runs
    /// each benchmark once anyway).
    fn honours_budget(&self) -> bool;
    /// Whether one executable gives the same values in every run (instruction counts): one
    /// round says it all, and the order of its functions in memory cannot move them.
    fn repeats_exactly(&self) -> bool;
    /// The arguments bench-run adds of its own accord to the user's `user_args`: `budget`'s
    /// settings, when given and the tool takes them.
    fn added_args(&self, budget: Option<&Budget>, user_args: &[String]) -> Vec<AddedArg>;
    /// Explains a failed run by what bench-run added (criterion rejects unknown settings).
    fn explain(&self, error: SuiteError, added: &[AddedArg], user_args: &[String]) -> SuiteError;
    /// Lists the benchmarks `run.args` select, in the order they will run.
    ///
    /// # Errors
    /// When the executable cannot be run or fails.
    fn list(&self, run: &ToolRun<'_>) -> Result<Vec<String>, SuiteError> {
        criterion_run::list_benchmarks(run.exe, run.suite, run.args, run.home)
    }
    /// The benchmarks whose ids match `pattern` (a regular expression; `None`: every one), in
    /// the order they run. `run.args` are ignored.
    ///
    /// # Errors
    /// When the executable cannot list them, or the pattern is not a regular expression.
    fn matching(&self, run: &ToolRun<'_>, pattern: Option<&str>)
    -> Result<Vec<String>, SuiteError>;
    /// Profiles one benchmark in `work` (criterion suites under perf for `seconds`, gungraun
    /// suites under callgrind), running in the suite's package directory.
    ///
    /// # Errors
    /// When the profiler is missing or the run fails.
    fn profile(
        &self,
        exe: &Path,
        suite: &SuiteTarget,
        benchmark: &str,
        work: &Path,
        seconds: u32,
    ) -> Result<Profile, ProfileError>;
    /// Runs the `listed` benchmarks, calling `on_progress(n, total, id)` as each starts.
    ///
    /// # Errors
    /// When the executable cannot be started or exits unsuccessfully.
    fn run(
        &self,
        run: &ToolRun<'_>,
        listed: &[String],
        on_progress: &mut dyn FnMut(usize, usize, &str),
    ) -> Result<RunOutput, SuiteError>;
    /// Reads the measurements a run left in `home`.
    ///
    /// # Errors
    /// When the output is missing or cannot be parsed.
    fn read_output(&self, home: &Path) -> Result<Vec<Measurement>, AdapterError>;
    /// What its output is called in an error message.
    fn output_name(&self) -> &'static str;
}

/// Criterion suites: wall time, progress on its own lines, output under `CRITERION_HOME`.
#[derive(Debug, Clone, Copy)]
pub struct Criterion {
    /// The criterion version the suite links (from its workspace's `Cargo.lock`).
    pub version: Option<CriterionVersion>,
}

impl BenchTool for Criterion {
    fn check(&self, _: &str, _: &Path) -> Result<Option<String>, GungraunError> {
        Ok(None)
    }

    fn criterion_version(&self) -> Option<CriterionVersion> {
        self.version
    }

    fn honours_budget(&self) -> bool {
        true
    }

    fn repeats_exactly(&self) -> bool {
        false
    }

    /// The budget's settings as the suite's criterion takes them, unless the user gave their
    /// own, and `--noplot` (criterion's plots would land in the scratch directory and be
    /// thrown away).
    fn added_args(&self, budget: Option<&Budget>, user_args: &[String]) -> Vec<AddedArg> {
        let mut added = budget.map_or_else(Vec::new, |budget| {
            criterion_cli::budget_args(budget, self.version, user_args)
        });
        added.extend(criterion_cli::noplot_arg(user_args));
        added
    }

    fn explain(&self, error: SuiteError, added: &[AddedArg], user_args: &[String]) -> SuiteError {
        criterion_cli::explain_failure(error, added, user_args, self.version)
    }

    fn run(
        &self,
        run: &ToolRun<'_>,
        listed: &[String],
        on_progress: &mut dyn FnMut(usize, usize, &str),
    ) -> Result<RunOutput, SuiteError> {
        let mut tracker = ProgressTracker::new(listed.to_vec());
        criterion_run::run_bench_with_env(
            run.exe,
            run.suite,
            run.args,
            run.home,
            run.env,
            &mut tracker,
            on_progress,
        )
    }

    /// criterion takes the pattern as its filter.
    fn matching(
        &self,
        run: &ToolRun<'_>,
        pattern: Option<&str>,
    ) -> Result<Vec<String>, SuiteError> {
        let filter: Vec<String> = pattern.into_iter().map(str::to_owned).collect();
        criterion_run::list_benchmarks(run.exe, run.suite, &filter, run.home)
    }

    fn profile(
        &self,
        exe: &Path,
        suite: &SuiteTarget,
        benchmark: &str,
        work: &Path,
        seconds: u32,
    ) -> Result<Profile, ProfileError> {
        bench_profile::capture_criterion(
            exe,
            benchmark,
            work,
            &PerfOptions {
                seconds,
                current_dir: Some(suite.package_dir().to_owned()),
                ..PerfOptions::default()
            },
        )
    }

    fn read_output(&self, home: &Path) -> Result<Vec<Measurement>, AdapterError> {
        bench_adapters::criterion::read_dir(home)
    }

    fn output_name(&self) -> &'static str {
        "criterion's output (is it a criterion bench with `harness = false`?)"
    }
}

/// gungraun suites: exact instruction counts under valgrind, JSON summaries.
#[derive(Debug, Clone, Copy)]
pub struct Gungraun;

impl BenchTool for Gungraun {
    fn check(&self, suite: &str, workspace_root: &Path) -> Result<Option<String>, GungraunError> {
        let tools = gungraun::check_tools(suite, workspace_root)?;
        Ok(Some(format!(
            "{suite} is a gungraun suite: counting instructions under valgrind ({} {})",
            tools.runner, tools.runner_version
        )))
    }

    fn criterion_version(&self) -> Option<CriterionVersion> {
        None
    }

    fn honours_budget(&self) -> bool {
        false
    }

    fn repeats_exactly(&self) -> bool {
        true
    }

    /// Nothing: criterion's settings mean nothing to gungraun, which rejects unknown arguments.
    fn added_args(&self, _: Option<&Budget>, _: &[String]) -> Vec<AddedArg> {
        Vec::new()
    }

    fn explain(&self, error: SuiteError, _: &[AddedArg], _: &[String]) -> SuiteError {
        error
    }

    fn run(
        &self,
        run: &ToolRun<'_>,
        listed: &[String],
        on_progress: &mut dyn FnMut(usize, usize, &str),
    ) -> Result<RunOutput, SuiteError> {
        gungraun::run_bench(
            run.exe,
            run.suite,
            run.args,
            run.home,
            run.workspace_root,
            listed,
            on_progress,
        )
    }

    /// gungraun's filter is not criterion's: list every benchmark, then match their ids.
    fn matching(
        &self,
        run: &ToolRun<'_>,
        pattern: Option<&str>,
    ) -> Result<Vec<String>, SuiteError> {
        let listed = criterion_run::list_benchmarks(run.exe, run.suite, &[], run.home)?;
        gungraun::matching_ids(&listed, pattern).map_err(|e| SuiteError::Filter {
            pattern: pattern.unwrap_or_default().to_owned(),
            reason: e.to_string(),
        })
    }

    /// Under callgrind: exact instruction counts; `seconds` means nothing to it.
    fn profile(
        &self,
        exe: &Path,
        suite: &SuiteTarget,
        benchmark: &str,
        work: &Path,
        _: u32,
    ) -> Result<Profile, ProfileError> {
        bench_profile::capture_gungraun(
            exe,
            benchmark,
            work,
            &GungraunOptions {
                current_dir: Some(suite.package_dir().to_owned()),
                ..GungraunOptions::default()
            },
        )
    }

    fn read_output(&self, home: &Path) -> Result<Vec<Measurement>, AdapterError> {
        bench_adapters::gungraun::read_dir(home)
    }

    fn output_name(&self) -> &'static str {
        "gungraun's summaries"
    }
}

/// The tool a built suite is written with. Read after the build: the build writes the
/// `Cargo.lock` that names the suite's criterion version when the workspace had none.
///
/// # Errors
/// When the suite's source cannot be read to tell.
pub fn for_built(
    target: &SuiteTarget,
    workspace_root: &Path,
) -> Result<Box<dyn BenchTool>, GungraunError> {
    Ok(if gungraun::detect(target)? {
        Box::new(Gungraun)
    } else {
        Box::new(Criterion {
            version: criterion_cli::detect(
                workspace_root,
                &target.package,
                &target.package_version,
            ),
        })
    })
}
