//! `bench-run profile` and `ab --profile-regressions`: profiles of built sides, recorded as
//! artifacts of their runs ([`bench_runner::profile`] captures and renders; this file records and
//! prints).

use super::support::{git_info, invocation, open_ledger};
use crate::cli::ProfileArgs;
use crate::outcome::Outcome;
use anyhow::{Context, Result, bail};
use bench_model::{
    BenchmarkId, Direction, Estimate, FunctionCounts, Measurement, NewRun, RunId, RunSource,
};
use bench_report::OutputFormat;
use bench_runner::ab::{self, BuiltSide, SideBuild};
use bench_runner::ab::{SideRecord, side_provenance};
use bench_runner::locate::locate;
use bench_runner::profile::{self, BenchmarkProfile};
use bench_runner::relink;
use bench_runner::tool::ToolRun;
use bench_store::Ledger;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// One benchmark's profile as printed and in JSON.
#[derive(Debug, Serialize)]
pub(crate) struct ProfileShown {
    pub benchmark: String,
    pub profiler: Option<&'static str>,
    /// The profile's total (samples or instructions).
    pub total: Option<u64>,
    /// Top functions: by self share, or by change against a base.
    pub counts: Option<FunctionCounts>,
    /// The run the profile belongs to and its base, if diffed.
    pub run: RunId,
    pub against: Option<RunId>,
    /// Stored artifacts: `(id, kind)`.
    pub artifacts: Vec<(i64, &'static str)>,
    /// Why there is no profile.
    pub error: Option<String>,
}

pub(crate) async fn profile(args: &ProfileArgs, db: Option<&str>, cwd: &Path) -> Result<Outcome> {
    if args.seconds == 0 {
        bail!("--seconds must be at least 1 (criterion's --profile-time)");
    }
    let start_dir = args.build.start_dir(cwd);
    let workspace = locate(&start_dir, &args.suite, args.build.package.as_deref())?.workspace;
    let ledger = open_ledger(db, &start_dir).await?;
    let (repo, within) = ab::repo_and_path(&workspace.root)?;
    let home = super::support::open_build_home(&repo, args.build_home.as_deref(), "profile")?;
    let scratch = home.scratch()?;
    let name = args
        .rev
        .clone()
        .unwrap_or_else(|| "the working tree".to_owned());
    match &args.rev {
        Some(rev) => home.switch_to(&ab::resolve_commit(&repo, rev)?)?,
        None => home.switch_to_working_tree(&ab::resolve_commit(&repo, "HEAD")?)?,
    }
    ab::share_lock_file(&workspace.root, &home.src().join(&within))?;
    eprintln!(
        "bench-run profile: building {} at {name} in {}",
        args.suite,
        home.dir().display()
    );
    let me = relink::own_executable().context("cannot find bench-run's own executable")?;
    let build = args.build.options();
    let side = ab::build_side(
        &home,
        &within,
        &SideBuild {
            bench_run: &me,
            suite: &args.suite,
            package: args.build.package.as_deref(),
            options: &build,
            layout_seeds: &[],
            exe_dir: &scratch.path().join("exe"),
            force_link: false,
        },
    )
    .with_context(|| format!("cannot build suite {} at {name}", args.suite))?;
    let git = git_info(&home.src());
    // Recorded as the run's arguments: what selected the benchmarks.
    let filter_args: Vec<String> = args.benchmark.iter().cloned().collect();
    let criterion_home = tempfile::tempdir_in(scratch.path()).context("cannot create scratch")?;
    let benchmarks = side.tool().matching(
        &ToolRun {
            exe: &side.exe,
            suite: &side.target,
            args: &[],
            home: criterion_home.path(),
            workspace_root: &side.workspace_root,
            env: &[],
        },
        args.benchmark.as_deref(),
    )?;
    if benchmarks.is_empty() {
        bail!(
            "no benchmark of suite {} matches {}",
            args.suite,
            args.benchmark.as_deref().unwrap_or("(no filter)")
        );
    }
    let profiles = capture(&side, &benchmarks, args.seconds, scratch.path(), "");
    let failures: Vec<&BenchmarkProfile> = profiles.iter().filter(|p| p.profile.is_err()).collect();
    if failures.len() == profiles.len() {
        let first = failures[0];
        bail!(
            "no benchmark could be profiled; {}: {}",
            first.benchmark,
            first
                .profile
                .as_ref()
                .err()
                .map(ToString::to_string)
                .unwrap_or_default()
        );
    }
    let measurements = profiles
        .iter()
        .filter_map(|p| {
            p.profile
                .as_ref()
                .ok()
                .map(|profile| total_measurement(&p.benchmark, profile))
        })
        .collect();
    let run = NewRun {
        source: RunSource::Profile,
        provenance: side_provenance(&SideRecord {
            side: &side,
            git: &git,
            conditions: None,
            command: &invocation(),
            cwd,
            build: &build,
            criterion_args: &filter_args,
            record_env: &args.build.record_env,
            duration_ms: None,
        }),
        measurements,
    };
    let run_id = ledger
        .record_run(&run)
        .await
        .with_context(|| format!("cannot record the run in {}", ledger.location()))?;
    let shown = store(
        &ledger,
        run_id,
        None,
        &profiles,
        &BTreeMap::new(),
        &BTreeMap::new(),
    )
    .await?;
    eprintln!(
        "bench-run profile: recorded run #{run_id} with {} profile(s) in {}",
        shown.iter().filter(|s| s.error.is_none()).count(),
        ledger.location()
    );
    print_profiles(&shown, args.format, false);
    if let Some(path) = &args.summary {
        std::fs::write(path, profiles_markdown(&shown, false))
            .with_context(|| format!("cannot write the summary to {}", path.display()))?;
    }
    super::push::push_run(&ledger, run_id, args.push.as_deref()).await;
    Ok(Outcome::Ok)
}

/// Profiles `benchmarks` of `side`, saying which one it is at.
pub(crate) fn capture(
    side: &BuiltSide,
    benchmarks: &[String],
    seconds: u32,
    scratch: &Path,
    label: &str,
) -> Vec<BenchmarkProfile> {
    let profiles = profile::profile_side(side, benchmarks, seconds, scratch, |i, n, id| {
        eprintln!("bench-run: profiling {label}{id} ({i}/{n})");
    });
    for p in &profiles {
        match &p.profile {
            Ok(_) => eprintln!(
                "bench-run: profiled {label}{} in {:.1} s ({seconds} s of criterion's \
                 --profile-time)",
                p.benchmark, p.seconds
            ),
            Err(e) => eprintln!("warning: no profile of {label}{}: {e}", p.benchmark),
        }
    }
    profiles
}

/// A profile's total as the profile run's result.
fn total_measurement(benchmark: &str, profile: &bench_profile::Profile) -> Measurement {
    #[expect(clippy::cast_precision_loss, reason = "a count as a result")]
    let total = profile.total as f64;
    let (metric, unit) = match profile.unit {
        bench_profile::Unit::Samples => ("profile_samples", "samples"),
        bench_profile::Unit::Instructions => ("instructions", "instructions"),
    };
    Measurement {
        benchmark: BenchmarkId::named(benchmark),
        metric: metric.to_owned(),
        unit: unit.to_owned(),
        direction: Direction::LowerIsBetter,
        estimate: Estimate::point(total),
        statistics: BTreeMap::new(),
        throughput: None,
        samples: None,
    }
}

/// Stores the artifacts of `profiles` on run `run` (diffed against `base`'s profiles of run
/// `base_run`, when given) and returns what to show.
pub(crate) async fn store(
    ledger: &Ledger,
    run: RunId,
    base_run: Option<RunId>,
    profiles: &[BenchmarkProfile],
    base: &BTreeMap<String, bench_profile::Profile>,
    time_ratios: &BTreeMap<String, f64>,
) -> Result<Vec<ProfileShown>> {
    let mut shown = Vec::new();
    for p in profiles {
        let mut entry = ProfileShown {
            benchmark: p.benchmark.clone(),
            profiler: None,
            total: None,
            counts: None,
            run,
            against: None,
            artifacts: Vec::new(),
            error: None,
        };
        match &p.profile {
            Err(e) => entry.error = Some(e.to_string()),
            Ok(head) => {
                let base_profile = base_run.zip(base.get(&p.benchmark));
                entry.profiler = Some(profile::profiler_of(head.unit));
                entry.total = Some(head.total);
                entry.against = base_profile.map(|(id, _)| id);
                let ratio = time_ratios.get(&p.benchmark).copied();
                match profile::artifacts(run, &p.benchmark, head, base_profile, ratio) {
                    Ok(artifacts) => {
                        for artifact in &artifacts {
                            let id = ledger.record_artifact(artifact).await.with_context(|| {
                                format!(
                                    "cannot store the {} of {}",
                                    artifact.kind.name(),
                                    p.benchmark
                                )
                            })?;
                            entry.artifacts.push((id, artifact.kind.name()));
                        }
                        entry.counts = profile::function_counts(
                            base_profile.map(|(_, b)| b),
                            head,
                            profile::TOP_FUNCTIONS,
                            ratio,
                        )
                        .ok();
                    }
                    Err(e) => entry.error = Some(e.to_string()),
                }
            }
        }
        shown.push(entry);
    }
    Ok(shown)
}

/// Prints the profiles' top functions (JSON on stdout; tables on stdout).
pub(crate) fn print_profiles(shown: &[ProfileShown], format: OutputFormat, diffed: bool) {
    match format {
        OutputFormat::Json => {
            println!(
                "{}",
                serde_json::to_string_pretty(shown).unwrap_or_default()
            );
        }
        OutputFormat::Markdown => print!("{}", profiles_markdown(shown, diffed)),
        OutputFormat::Table => print!("{}", profiles_table(shown, diffed)),
    }
}

/// The top functions of each profile as terminal tables.
pub(crate) fn profiles_table(shown: &[ProfileShown], diffed: bool) -> String {
    let mut out = String::new();
    for s in shown {
        match (&s.counts, &s.error) {
            (Some(counts), _) => {
                out.push('\n');
                out.push_str(&profile::counts_table(&s.benchmark, counts, diffed));
                out.push_str(&format!(
                    "  artifacts of run #{}: {}\n",
                    s.run,
                    s.artifacts
                        .iter()
                        .map(|(id, kind)| format!("{kind} #{id}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            (None, Some(e)) => out.push_str(&format!("\n{}: no profile: {e}\n", s.benchmark)),
            (None, None) => {}
        }
    }
    out
}

/// The top functions of each profile as markdown.
pub(crate) fn profiles_markdown(shown: &[ProfileShown], diffed: bool) -> String {
    let mut out = String::from("### Where the time went\n\n");
    for s in shown {
        if let Some(counts) = &s.counts {
            out.push_str(&profile::counts_markdown(&s.benchmark, counts, diffed));
            out.push('\n');
        }
    }
    out
}
