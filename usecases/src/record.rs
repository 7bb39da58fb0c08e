//! The `bench-run --suite` use case: from a suite's name to a recorded run, one pass down the
//! layers.
//!
//! ```text
//! locate                                   which bench target (cargo metadata), also in a
//!                                            separate workspace below the root; callers
//!                                            open the ledger only after it succeeded
//! record_located
//!   suite::build_in                          its executable (cargo bench --no-run)
//!   tool::for_built                          criterion or gungraun (a BenchTool), and the
//!                                            criterion version it links (Cargo.lock)
//!   provenance::hash_executable              what code was measured, and where and how
//!     ::{machine, toolchain, git..}            it runs
//!   BenchTool::list                          what it will run
//!   BenchTool::run                           run it (process::follow), sampling conditions
//!   BenchTool::read_output                   its output -> model::Measurement (adapters)
//!   quick::check                             whether --quick took effect
//!   LedgerStore::record_run                  one transaction
//! ```
//!
//! What a person should see on the way (building, progress, warnings) goes to a [`Progress`];
//! the binary draws it on the terminal, tests collect it.

use bench_adapters::AdapterError;
use bench_analysis::contention::Finding;
use bench_model::{Measurement, NewRun, RunId, RunProvenance, RunSource};
use bench_runner::criterion_cli::{self, CriterionVersion};
use bench_runner::gungraun;
use bench_runner::locate::Located;
use bench_runner::provenance;
use bench_runner::suite::{self, BuildOptions, SuiteError, Workspace};
use bench_runner::tool::{self, ToolRun};
use bench_store::{Ledger, LedgerError};
use bench_verdicts::quick;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What to run and how to record it.
#[derive(Debug, Clone)]
pub struct SuiteRequest {
    /// The bench target's name.
    pub suite: String,
    /// Its package, when several packages have a bench target of that name.
    pub package: Option<String>,
    /// Where the workspace is looked for (`-C DIR`).
    pub start_dir: PathBuf,
    /// The working directory recorded with the run.
    pub cwd: PathBuf,
    /// Cargo features and profile.
    pub build: BuildOptions,
    /// `CARGO_TARGET_DIR` of the build; `None`: the workspace's.
    pub target_dir: Option<PathBuf>,
    /// Short measurement (`--quick`); never a default baseline.
    pub quick: bool,
    /// Arguments for the bench executable (a filter, criterion's settings).
    pub criterion_args: Vec<String>,
    /// Environment variables recorded beside the default ones.
    pub record_env: Vec<String>,
    /// The command line recorded with the run.
    pub command: Vec<String>,
    /// Why the run was made.
    pub source: RunSource,
}

/// What a recording tells the person waiting for it.
pub trait Progress {
    /// A step worth a line (building, the kind of suite, the run recorded).
    fn note(&mut self, text: &str);
    /// Something recorded less well than it could be, or a setting that had no effect.
    fn warning(&mut self, text: &str);
    /// The benchmarks start: `total` of them.
    fn started(&mut self, total: usize);
    /// Benchmark `n` of `total` (1-based), named `id`, started.
    fn benchmark(&mut self, n: usize, total: usize, id: &str);
    /// The benchmarks are done (also when they failed).
    fn finished(&mut self);
}

/// A recorded run.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Its id.
    pub id: RunId,
    /// The workspace the suite belongs to.
    pub workspace: Workspace,
    /// The executable that ran (pass it back as `prebuilt` to run it again unbuilt).
    pub executable: PathBuf,
    /// How many results were recorded.
    pub results: usize,
    /// How long the benchmarks ran.
    pub elapsed: Duration,
    /// What made the machine busy while they ran; empty when it was quiet or not measured.
    pub busy: Vec<Finding>,
}

/// Why nothing was recorded. The ledger is untouched by every error but [`Self::Record`]'s
/// (whose transaction rolled back).
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Finding, building or running the suite failed.
    #[error(transparent)]
    Suite(#[from] SuiteError),
    /// The instruction-count tools are missing or do not match.
    #[error(transparent)]
    Gungraun(#[from] gungraun::GungraunError),
    /// The suite's filter selects nothing.
    #[error("suite {suite} selects no benchmarks{filter}")]
    NoBenchmarks {
        /// The suite.
        suite: String,
        /// ` with arguments [...]`, or empty.
        filter: String,
    },
    /// The scratch directory for the tool's output could not be made.
    #[error("cannot create a scratch directory for the suite's output in {path}")]
    Scratch {
        /// Where.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The tool's output could not be read.
    #[error("cannot read {what} of suite {suite}")]
    Output {
        /// The suite.
        suite: String,
        /// Which output.
        what: &'static str,
        /// Why.
        #[source]
        source: AdapterError,
    },
    /// The suite links a criterion that writes its output where bench-run cannot read it.
    #[error(
        "suite {suite} links criterion {version}, which writes its results to target/criterion \
         whatever CRITERION_HOME says; bench-run reads those of criterion 0.3.3 and later \
         (`cargo update -p criterion` within 0.3 is enough)"
    )]
    CriterionTooOld {
        /// The suite.
        suite: String,
        /// The criterion it links.
        version: CriterionVersion,
    },
    /// The ledger refused the run.
    #[error("cannot record the run in {location}")]
    Record {
        /// The ledger.
        location: String,
        /// Why.
        #[source]
        source: LedgerError,
    },
}

/// Finds `request`'s suite ([`bench_runner::locate::locate`]). It only reads `cargo metadata`, so a
/// caller does it before opening (and so creating) a ledger: a misspelt suite leaves no files.
///
/// # Errors
/// When there is no such suite, or several.
pub fn locate(request: &SuiteRequest) -> Result<Located, RecordError> {
    Ok(bench_runner::locate::locate(
        &request.start_dir,
        &request.suite,
        request.package.as_deref(),
    )?)
}

/// Builds (unless `prebuilt` names the executable), runs and records `request`'s suite.
///
/// # Errors
/// See [`RecordError`].
pub async fn record_suite(
    ledger: &Ledger,
    request: &SuiteRequest,
    prebuilt: Option<&Path>,
    progress: &mut dyn Progress,
) -> Result<Recorded, RecordError> {
    let located = locate(request)?;
    record_located(ledger, request, &located, prebuilt, progress).await
}

/// [`record_suite`] of a suite [`locate`] found.
///
/// # Errors
/// See [`RecordError`].
pub async fn record_located(
    ledger: &Ledger,
    request: &SuiteRequest,
    located: &Located,
    prebuilt: Option<&Path>,
    progress: &mut dyn Progress,
) -> Result<Recorded, RecordError> {
    let workspace = located.workspace.clone();
    let target = located.target.clone();
    let build = &request.build;
    if let (Some(dir), None) = (&located.nested, prebuilt) {
        progress.note(&format!(
            "suite {} is in the separate cargo workspace {}/ (package {}); building it there",
            target.name,
            dir.display(),
            target.package,
        ));
    }

    let exe = match prebuilt {
        Some(exe) => exe.to_owned(),
        None => {
            progress.note(&format!(
                "building {} (package {})",
                target.name, target.package
            ));
            suite::build_in(
                &target,
                build,
                &workspace.root,
                request.target_dir.as_deref(),
            )?
            .exe
        }
    };
    let tool = tool::for_built(&target, &workspace.root)?;
    if let Some(line) = tool.check(&target.name, &workspace.root)? {
        progress.note(&line);
    }
    if request.quick && !tool.honours_budget() {
        progress.note("--quick has no effect on a gungraun suite (one run per benchmark)");
    }

    // Hashed before it runs: two runs of one executable measured the same code.
    let bench_exe = provenance::hash_executable(&exe)
        .inspect_err(|e| {
            progress.warning(&format!(
                "bench executable {} not hashed: {e}",
                exe.display()
            ));
        })
        .ok();

    // Criterion before 0.3.3 (which includes every version that takes no settings) writes
    // where bench-run cannot read: say so before it runs for nothing.
    if let Some(version) = tool
        .criterion_version()
        .filter(|v| !v.reads_criterion_home())
    {
        return Err(RecordError::CriterionTooOld {
            suite: target.name.clone(),
            version,
        });
    }
    let added = tool.added_args(
        request.quick.then_some(&criterion_cli::QUICK),
        &request.criterion_args,
    );
    let criterion_args = criterion_cli::command_line(&added, &request.criterion_args);
    let explain = |e: SuiteError| tool.explain(e, &added, &request.criterion_args);
    let toolchain = provenance::toolchain(&workspace.root)
        .inspect_err(|e| progress.warning(&format!("toolchain not recorded: {e}")))
        .ok();
    // Where and how it runs, read before it runs: the commit and machine it measured.
    let mut provenance = RunProvenance {
        suite: target.name.clone(),
        package: Some(target.package.clone()),
        command: request.command.clone(),
        cargo_command: Some(suite::cargo_bench_command(
            &target,
            build,
            &criterion_args,
            located
                .nested
                .as_ref()
                .map(|_| manifest_from(&request.cwd, &workspace.root)),
        )),
        cwd: request.cwd.display().to_string(),
        machine: provenance::machine(),
        build: build
            .recorded_build_config(&workspace.root, toolchain.as_ref().map(|t| t.host.as_str())),
        toolchain,
        env: provenance::environment(&request.record_env),
        git: provenance::git(&workspace.root).unwrap_or_else(|e| {
            progress.warning(&format!("git state not recorded: {e}"));
            bench_model::GitInfo::default()
        }),
        cpu_governor: provenance::cpu_governor(),
        turbo: provenance::turbo(),
        quick: false,
        duration_ms: None,
        bench_exe,
        conditions: None,
    };
    let scratch_parent = request
        .target_dir
        .as_deref()
        .unwrap_or(&workspace.target_dir)
        .join("bench-run");
    let scratch = std::fs::create_dir_all(&scratch_parent)
        .and_then(|()| {
            tempfile::Builder::new()
                .prefix("criterion-")
                .tempdir_in(&scratch_parent)
        })
        .map(|dir| Scratch {
            dir: Some(dir),
            parent: scratch_parent.clone(),
        })
        .map_err(|source| RecordError::Scratch {
            path: scratch_parent.clone(),
            source,
        })?;

    let run = ToolRun {
        exe: &exe,
        suite: &target,
        args: &criterion_args,
        home: scratch.path(),
        workspace_root: &workspace.root,
        env: &[],
    };
    let listed = tool.list(&run).map_err(explain)?;
    if listed.is_empty() {
        return Err(RecordError::NoBenchmarks {
            suite: target.name.clone(),
            filter: if request.criterion_args.is_empty() {
                String::new()
            } else {
                format!(" with arguments {:?}", request.criterion_args)
            },
        });
    }
    progress.started(listed.len());
    let output = tool.run(&run, &listed, &mut |n, total, id| {
        progress.benchmark(n, total, id);
    });
    progress.finished();
    let output = output.map_err(explain)?;

    let measurements = tool
        .read_output(scratch.path())
        .map_err(|source| RecordError::Output {
            suite: target.name.clone(),
            what: tool.output_name(),
            source,
        })?;
    let quick = request.quick
        && tool.honours_budget()
        && quick_took_effect(&criterion_args, &measurements, progress);

    provenance.quick = quick;
    provenance.duration_ms = i64::try_from(output.elapsed.as_millis()).ok();
    provenance.conditions = output.conditions;
    let busy = provenance
        .conditions
        .as_ref()
        .map(bench_analysis::contention::assess)
        .unwrap_or_default();
    let results = measurements.len();
    let id = ledger
        .record_run(&NewRun {
            source: request.source,
            provenance,
            measurements,
        })
        .await
        .map_err(|source| RecordError::Record {
            location: ledger.location().to_string(),
            source,
        })?;
    progress.note(&format!(
        "benchmarks ran for {:.1} s",
        output.elapsed.as_secs_f64()
    ));
    if !busy.is_empty() {
        progress.warning(&format!(
            "the machine was busy during run #{id}: {}; `bench-run gate` refuses it unless \
             --allow-busy",
            bench_analysis::contention::describe(&busy)
        ));
    }
    progress.note(&format!(
        "recorded run #{id} ({results} results) in {}",
        ledger.location()
    ));
    Ok(Recorded {
        id,
        workspace,
        executable: exe,
        results,
        elapsed: output.elapsed,
        busy,
    })
}

/// The manifest of the workspace at `root` as seen from `cwd`: relative when below it.
fn manifest_from(cwd: &Path, root: &Path) -> PathBuf {
    let manifest = root.join("Cargo.toml");
    manifest
        .strip_prefix(cwd)
        .map_or_else(|_| manifest.clone(), Path::to_owned)
}

/// Whether `--quick` took effect (see [`quick`]); says so when it did not, or only in part.
fn quick_took_effect(
    criterion_args: &[String],
    measurements: &[Measurement],
    progress: &mut dyn Progress,
) -> bool {
    let Some(requested) = quick::RequestedSettings::from_criterion_args(criterion_args) else {
        return true;
    };
    let check = quick::check(measurements, requested);
    if let Some(message) = check.message() {
        match check.effect() {
            quick::QuickEffect::Partial => progress.note(&message),
            _ => progress.warning(&message),
        }
    }
    check.effect().is_quick()
}

/// Criterion's output of one run: a temporary directory under `target/bench-run/`, removed
/// with that folder when it is left empty, so a run leaves nothing behind in the user's target.
struct Scratch {
    dir: Option<tempfile::TempDir>,
    parent: PathBuf,
}

impl Scratch {
    fn path(&self) -> &Path {
        self.dir
            .as_ref()
            .map_or(self.parent.as_path(), tempfile::TempDir::path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        drop(self.dir.take());
        // Only when empty: another bench-run may be using it.
        let _ = std::fs::remove_dir(&self.parent);
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use bench_runner::criterion_cli::{self, QUICK};
    use bench_verdicts::quick::RequestedSettings;

    /// `--quick` records its settings, and the quick check reads the same settings back from
    /// the arguments it adds: the two crates agree on what a quick run asked for.
    #[test]
    fn the_quick_check_reads_back_what_quick_adds() {
        let added: Vec<String> = criterion_cli::budget_args(&QUICK, None, &[])
            .into_iter()
            .flat_map(|a| a.words)
            .collect();
        let requested = RequestedSettings::from_criterion_args(&added).expect("settings");
        assert_eq!(requested.sample_size, QUICK.sample_size as usize);
        assert!((requested.measurement_time_s - QUICK.measurement_s).abs() < f64::EPSILON);
    }
}
