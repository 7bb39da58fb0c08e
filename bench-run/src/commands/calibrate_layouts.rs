//! `bench-run calibrate --layouts K`: how far each benchmark of a suite moves between links of
//! the same code in K function orders (issue 45), so users know which benchmarks cannot carry a
//! small threshold. Nothing is recorded.

use crate::cli::RunArgs;
use crate::outcome::Outcome;
use anyhow::{Context, Result, bail};
use bench_analysis::layout::{self, Sensitivity};
use bench_runner::ab::{self, SideBuild};
use bench_runner::build_home;
use bench_runner::build_home::BuildHome;
use bench_runner::criterion_cli::{self, CriterionVersion};
use bench_runner::locate::locate;
use bench_runner::relink;
use std::collections::BTreeMap;
use std::path::Path;

/// One (benchmark, metric)'s unit and its value in every process, with the process's layout.
type Processes = (String, Vec<(u64, f64)>);

pub(crate) fn calibrate_layouts(
    args: &RunArgs,
    rounds: u32,
    layouts: usize,
    seed: Option<u64>,
    cwd: &Path,
) -> Result<Outcome> {
    if layouts < 2 {
        bail!("--layouts must be at least 2 to measure how far layouts are apart");
    }
    if rounds < 2 {
        bail!("--runs must be at least 2: each layout's median needs more than one process");
    }
    let suite = args.suite.as_deref().unwrap_or_default();
    let start_dir = args.build.start_dir(cwd);
    let workspace = locate(&start_dir, suite, args.build.package.as_deref())?.workspace;
    let (repo, within_repo) = ab::repo_and_path(&workspace.root)?;
    let seed = seed.unwrap_or_else(bench_usecases::ab::clock_seed);
    let home = BuildHome::open(&repo, &build_home::default_root(), |dir| {
        eprintln!(
            "bench-run calibrate: waiting for another bench-run of this repository ({} is in use)",
            dir.display()
        );
    })?;
    let scratch = home.scratch()?;
    home.switch_to_working_tree(&ab::resolve_commit(&repo, "HEAD")?)?;
    ab::share_lock_file(&workspace.root, &home.src().join(&within_repo))?;
    let seeds = relink::layout_seeds(layouts, seed);
    let me = relink::own_executable().context("cannot find bench-run's own executable")?;
    let options = args.build.options();
    eprintln!(
        "bench-run calibrate: building {suite} (the working tree) in {}, linked in {layouts} \
         function orders",
        home.dir().display()
    );
    let built = ab::build_side(
        &home,
        &within_repo,
        &SideBuild {
            suite,
            package: args.build.package.as_deref(),
            options: &options,
            layout_seeds: &seeds,
            exe_dir: &scratch.path().join("exe"),
            bench_run: &me,
            force_link: true,
        },
    )?;
    for failure in &built.layout_failures {
        eprintln!("warning: {failure}");
    }
    let tool = built.tool();
    if tool.repeats_exactly() {
        bail!("{suite} counts instructions, which do not depend on the order of functions");
    }
    let usable: Vec<u64> = built.layouts.iter().map(|l| l.seed).collect();
    if usable.len() < 2 {
        bail!(
            "fewer than two layouts could be relinked (see the warnings above): the linker must \
             be lld (rustc's default on x86_64 Linux), which takes --shuffle-sections"
        );
    }
    if let Some(version) = tool
        .criterion_version()
        .filter(|v: &CriterionVersion| !v.reads_criterion_home())
    {
        bail!("{suite} links criterion {version}, which cannot write its output elsewhere");
    }
    let added = tool.added_args(Some(&criterion_cli::AB), &args.criterion_args);
    let criterion_args = criterion_cli::command_line(&added, &args.criterion_args);

    let mut values: BTreeMap<(String, String), Processes> = BTreeMap::new();
    let mut rng = bench_analysis::stats::SplitMix64(seed);
    for round in 1..=rounds {
        let mut order = usable.clone();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        for &layout_seed in &order {
            let output = ab::run_process(
                &built,
                "layout",
                round as usize,
                layout_seed,
                &criterion_args,
                Vec::new(),
                scratch.path(),
                |_, _, _| {},
            )
            .with_context(|| format!("the process of layout {layout_seed} in round {round}"))?;
            for m in &output.results {
                if let Some(v) = ab::process_value(m) {
                    values
                        .entry((m.benchmark.full.clone(), m.metric.clone()))
                        .or_insert_with(|| (m.unit.clone(), Vec::new()))
                        .1
                        .push((layout_seed, v));
                }
            }
        }
        eprintln!("bench-run calibrate: round {round}/{rounds} done");
    }
    let rows: Vec<Sensitivity> = values
        .into_iter()
        .filter_map(|((benchmark, metric), (unit, pairs))| {
            let (seeds, vals): (Vec<u64>, Vec<f64>) = pairs.into_iter().unzip();
            Some(Sensitivity {
                layouts: layout::side_layouts(&vals, &seeds)?,
                within_pct: layout::within_layout_pct(&vals, &seeds),
                benchmark,
                metric,
                unit,
            })
        })
        .collect();
    let threshold = args
        .verdict
        .threshold
        .unwrap_or(bench_analysis::compare::DEFAULT_THRESHOLD_PCT);
    print!(
        "{}",
        bench_report::layout_sensitivity(&rows, threshold, args.format)
    );
    Ok(Outcome::Ok)
}
