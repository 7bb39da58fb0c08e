//! `/runs` (filtered, paginated) and `/runs/{ref}` (one run).

use super::{HTML, drawn, kept_until_recorded, render, resolve_run, shows};
use crate::AppState;
use crate::error::AppError;
use crate::extract::{Path, Query, non_empty, parse_param};
use crate::view::{self, RunRow};
use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::response::{Html, Response};
use axum::routing::get;
use bench_model::{Measurement, RunSummary, StoredRun, format};
use bench_store::{Ledger, RunFilter};
use serde::Deserialize;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/runs", get(runs_page))
        .route("/runs/{run}", get(run_page))
}

/// Runs per page.
pub const PAGE_SIZE: i64 = 50;
/// Largest `per_page` the API accepts.
pub const MAX_PAGE_SIZE: i64 = 500;

/// Filters and page of `/runs` and `/api/runs`.
#[derive(Debug, Default, Deserialize)]
pub struct RunsParams {
    pub suite: Option<String>,
    pub machine: Option<String>,
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub page: Option<String>,
    pub per_page: Option<String>,
}

/// A page of runs.
pub struct RunsPage {
    pub runs: Vec<RunSummary>,
    pub page: i64,
    pub per_page: i64,
    pub has_next: bool,
}

/// Lists one page of runs matching the filters, newest first.
pub async fn list(ledger: &Ledger, params: &RunsParams) -> Result<RunsPage, AppError> {
    let page = parse_param::<i64>("page", params.page.as_ref(), "a positive integer")?.unwrap_or(1);
    if page < 1 {
        return Err(AppError::BadRequest(format!(
            "parameter page must be a positive integer, got {page}"
        )));
    }
    let per_page = parse_param::<i64>(
        "per_page",
        params.per_page.as_ref(),
        "an integer from 1 to 500",
    )?
    .unwrap_or(PAGE_SIZE);
    if !(1..=MAX_PAGE_SIZE).contains(&per_page) {
        return Err(AppError::BadRequest(format!(
            "parameter per_page must be an integer from 1 to {MAX_PAGE_SIZE}, got {per_page}"
        )));
    }
    let own = |v: &Option<String>| non_empty(v.as_ref()).map(str::to_owned);
    let mut runs = ledger
        .runs(&RunFilter {
            suite: own(&params.suite),
            machine: own(&params.machine),
            branch: own(&params.branch),
            commit: own(&params.commit),
            // One more than a page tells whether there is a next page.
            limit: Some(per_page + 1),
            offset: (page - 1).saturating_mul(per_page),
        })
        .await?;
    let has_next = i64::try_from(runs.len()).unwrap_or(i64::MAX) > per_page;
    runs.truncate(usize::try_from(per_page).unwrap_or(0));
    Ok(RunsPage {
        runs,
        page,
        per_page,
        has_next,
    })
}

struct Choice {
    value: String,
    label: String,
    selected: bool,
}

#[derive(Template)]
#[template(path = "runs.html")]
struct RunsTemplate {
    suites: Vec<Choice>,
    machines: Vec<Choice>,
    branch: String,
    commit: String,
    runs: Vec<RunRow>,
    page: i64,
    prev_href: Option<String>,
    next_href: Option<String>,
    filtered: bool,
}

async fn runs_page(
    State(state): State<AppState>,
    Query(params): Query<RunsParams>,
) -> Result<Response, AppError> {
    let page = format!("/runs {params:?}");
    kept_until_recorded(&state, page, HTML, async {
        draw_runs_page(&state, &params)
            .await
            .map(|html| axum::body::Bytes::from(html.0))
    })
    .await
}

async fn draw_runs_page(state: &AppState, params: &RunsParams) -> Result<Html<String>, AppError> {
    let listed = list(&state.ledger(), params).await?;
    let suite = non_empty(params.suite.as_ref()).unwrap_or_default();
    let machine = non_empty(params.machine.as_ref()).unwrap_or_default();
    let branch = non_empty(params.branch.as_ref()).unwrap_or_default();
    let commit = non_empty(params.commit.as_ref()).unwrap_or_default();
    let per_page = if params.per_page.is_some() {
        listed.per_page.to_string()
    } else {
        String::new()
    };
    let page_href = |page: i64| {
        view::url(
            &view::href("/runs"),
            &[
                ("suite", suite),
                ("machine", machine),
                ("branch", branch),
                ("commit", commit),
                ("per_page", &per_page),
                ("page", &page.to_string()),
            ],
        )
    };
    let suites = state
        .ledger()
        .suites()
        .await?
        .into_iter()
        .map(|s| Choice {
            selected: s.suite == suite,
            label: format!("{} ({} runs)", s.suite, s.runs),
            value: s.suite,
        })
        .collect();
    let machines = state
        .ledger()
        .machines(None)
        .await?
        .into_iter()
        .map(|m| Choice {
            selected: !machine.is_empty() && m.fingerprint.starts_with(machine),
            label: format!("{} · {}", view::short_machine(&m.fingerprint), m.cpu_model),
            value: m.fingerprint,
        })
        .collect();
    render(&RunsTemplate {
        suites,
        machines,
        branch: branch.to_owned(),
        commit: commit.to_owned(),
        runs: listed.runs.iter().map(RunRow::new).collect(),
        page: listed.page,
        prev_href: (listed.page > 1).then(|| page_href(listed.page - 1)),
        next_href: listed.has_next.then(|| page_href(listed.page + 1)),
        filtered: [suite, machine, branch, commit]
            .iter()
            .any(|v| !v.is_empty()),
    })
}

struct ResultView {
    benchmark: String,
    metric: String,
    estimate: String,
    lower: String,
    upper: String,
    throughput: String,
    samples: usize,
}

impl ResultView {
    fn new(m: &Measurement) -> Self {
        let bound = |b: Option<f64>| b.map(|v| format::value(v, &m.unit)).unwrap_or_default();
        Self {
            benchmark: m.benchmark.full.clone(),
            metric: view::metric_label(&m.metric, m.direction),
            estimate: format::value(m.estimate.point, &m.unit),
            lower: bound(m.estimate.lower),
            upper: bound(m.estimate.upper),
            throughput: format::throughput(m).unwrap_or_default(),
            samples: m.samples.as_ref().map_or(0, bench_model::Samples::len),
        }
    }
}

#[derive(Template)]
#[template(path = "run.html")]
struct RunTemplate {
    id: i64,
    suite: String,
    suite_href: String,
    source: &'static str,
    created: String,
    facts: Vec<(&'static str, String)>,
    env: Vec<(String, String)>,
    tags: Vec<String>,
    annotations: Vec<(String, String)>,
    results: Vec<ResultView>,
    previous_href: Option<String>,
    json_href: String,
    /// What made the machine busy while the run measured, when it was.
    busy: Option<String>,
    /// Its profiles and other artifacts, per benchmark.
    profiles: Vec<super::profiles::BenchmarkArtifacts>,
}

fn facts(run: &StoredRun) -> Vec<(&'static str, String)> {
    let p = &run.provenance;
    let mut out = vec![
        ("Command", bench_report::shell_join(&p.command)),
        (
            "Cargo command",
            p.cargo_command
                .as_ref()
                .map(|c| bench_report::shell_join(c))
                .unwrap_or_default(),
        ),
        ("Package", p.package.clone().unwrap_or_default()),
        ("Working directory", p.cwd.clone()),
        (
            "Git commit",
            p.git.commit.clone().map_or_else(
                || "not a git repository".to_owned(),
                |c| {
                    if p.git.dirty {
                        format!("{c} (dirty)")
                    } else {
                        c
                    }
                },
            ),
        ),
        ("Branch", p.git.branch.clone().unwrap_or_default()),
        ("Commit message", p.git.summary.clone().unwrap_or_default()),
        (
            "Commit time",
            p.git.commit_time.map(view::date).unwrap_or_default(),
        ),
        ("Machine", bench_report::machine_line(p)),
        ("Fingerprint", p.machine.fingerprint.clone()),
        ("Host", p.machine.hostname.clone()),
        (
            "OS",
            format!(
                "{}, kernel {} {}",
                p.machine.os, p.machine.kernel, p.machine.arch
            ),
        ),
        (
            "CPU governor / turbo",
            format!(
                "{} / {}",
                p.cpu_governor.as_deref().unwrap_or("unknown"),
                p.turbo.as_deref().unwrap_or("unknown")
            ),
        ),
        ("Toolchain", bench_report::toolchain_line(p)),
        ("Profile", p.build.profile.clone()),
        (
            "Features",
            if p.build.features.is_empty() {
                "none".to_owned()
            } else {
                p.build.features.join(", ")
            },
        ),
        ("Feature flags", {
            let flags = p.build.feature_flags.join(" ");
            if flags.is_empty() {
                "none".to_owned()
            } else {
                flags
            }
        }),
        ("RUSTFLAGS", p.build.rustflags.clone().unwrap_or_default()),
        (
            "Quick",
            if p.quick {
                "yes (short warm-up and measurement; a smoke run)".to_owned()
            } else {
                "no".to_owned()
            },
        ),
        (
            "Executable",
            p.bench_exe
                .as_ref()
                .map(|e| format!("sha256 {} ({} bytes)", e.sha256, e.bytes))
                .unwrap_or_default(),
        ),
        (
            "Machine conditions",
            p.conditions
                .as_ref()
                .map(|c| {
                    let quiet = if bench_analysis::contention::assess(c).is_empty() {
                        " (quiet)"
                    } else {
                        " (busy)"
                    };
                    bench_analysis::contention::summary_line(c) + quiet
                })
                .unwrap_or_default(),
        ),
        (
            "Duration",
            p.duration_ms
                .map(|ms| {
                    #[expect(clippy::cast_precision_loss, reason = "display only")]
                    let s = ms as f64 / 1000.0;
                    format!("{s:.1} s")
                })
                .unwrap_or_default(),
        ),
    ];
    out.retain(|(_, v)| !v.is_empty());
    out
}

async fn run_page(
    State(state): State<AppState>,
    Path(reference): Path<String>,
) -> Result<Response, AppError> {
    let run = resolve_run(&state, &reference, None).await?;
    let previous =
        bench_verdicts::baseline::resolve_baseline(&state.ledger(), &run, None, None).await?;
    let artifacts = state.ledger().artifacts(run.id).await?;
    // Its results never change; what may be added to it are tags, notes and profiles (and
    // its baseline is fixed once it has one).
    let tags = &run.tags;
    let notes: Vec<_> = run
        .annotations
        .iter()
        .map(|a| (&a.created_at, &a.text))
        .collect();
    let profiles: Vec<_> = artifacts.iter().map(|a| a.id).collect();
    let shown = shows(&(tags, notes, previous.as_ref().map(|b| b.id), profiles));
    let page = format!("/runs/{}", run.id);
    drawn(
        &state,
        page,
        shown,
        draw_run_page(&state, run, previous, artifacts),
    )
    .await
}

async fn draw_run_page(
    state: &AppState,
    run: StoredRun,
    previous: Option<StoredRun>,
    artifacts: Vec<bench_model::ArtifactSummary>,
) -> Result<Html<String>, AppError> {
    let results = state.ledger().measurements(run.id).await?;
    let p = &run.provenance;
    render(&RunTemplate {
        id: run.id,
        suite: p.suite.clone(),
        suite_href: view::suite_href(&p.suite),
        source: run.source.name(),
        created: run.created_at.clone(),
        facts: facts(&run),
        env: p.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        tags: run.tags.clone(),
        annotations: run
            .annotations
            .iter()
            .map(|a| (view::datetime(&a.created_at), a.text.clone()))
            .collect(),
        results: results.iter().map(ResultView::new).collect(),
        previous_href: previous.map(|b| view::compare_href(b.id, run.id)),
        json_href: view::href(&format!("/api/runs/{}", run.id)),
        busy: p.conditions.as_ref().and_then(|c| {
            let findings = bench_analysis::contention::assess(c);
            (!findings.is_empty()).then(|| bench_analysis::contention::describe(&findings))
        }),
        profiles: super::profiles::per_benchmark(run.id, &artifacts),
    })
}
