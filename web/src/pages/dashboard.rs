//! `/`: suites, the newest run of every suite on every machine, and the regressions of each
//! against its baseline (the newest earlier full run of the same suite on the same machine,
//! `bench_verdicts::baseline::resolve_baseline`). `?testbed=NAME` keeps one testbed (a machine class a
//! run named with `BENCH_MACHINE`, or a fingerprint prefix).

use super::compare::{RowView, verdict_class};
use super::{HTML, render, respond, shows};
use crate::AppState;
use crate::error::AppError;
use crate::view;
use askama::Template;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::response::{Html, Response};
use axum::routing::get;
use bench_analysis::compare::{CompareConfig, Comparison, Verdict};

pub fn router() -> Router<AppState> {
    Router::new().route("/", get(dashboard))
}

/// The dashboard's query.
#[derive(Debug, Default, serde::Deserialize)]
pub struct DashboardParams {
    /// Only this testbed (name or fingerprint prefix).
    pub testbed: Option<String>,
}

/// Whether `machine` is the testbed `wanted` names: its testbed name, or a prefix of its
/// fingerprint.
#[must_use]
pub fn is_testbed(machine: &bench_model::Machine, wanted: &str) -> bool {
    machine.testbed.as_deref() == Some(wanted) || machine.fingerprint.starts_with(wanted)
}

struct TestbedView {
    label: String,
    href: String,
    runs: i64,
    selected: bool,
}

struct SuiteView {
    name: String,
    href: String,
    runs: i64,
    latest_href: String,
    latest: i64,
}

struct LatestView {
    suite: String,
    suite_href: String,
    machine: String,
    machine_href: String,
    cpu: String,
    run: i64,
    run_href: String,
    created: String,
    commit: String,
    baseline: Option<(i64, String)>,
    regressions: usize,
    improvements: usize,
    status: &'static str,
    /// The verdict is still being computed (a run pushed a moment ago).
    pending: bool,
}

struct RegressionView {
    suite: String,
    machine: String,
    compare_href: String,
    row: RowView,
}

struct ProjectView {
    name: String,
    href: String,
    suites: i64,
    runs: i64,
    current: bool,
}

#[derive(Template)]
#[template(path = "dashboard.html")]
struct Dashboard {
    project: String,
    show_project: bool,
    projects: Vec<ProjectView>,
    testbed: Option<String>,
    testbeds: Vec<TestbedView>,
    suites: Vec<SuiteView>,
    latest: Vec<LatestView>,
    regressions: Vec<RegressionView>,
}

/// The dashboard's verdict on `head`: its comparison with its baseline under the default
/// settings, kept; `None` when it has no baseline.
///
/// # Errors
/// Ledger errors.
pub async fn verdict(
    state: &AppState,
    ledger: &bench_store::Ledger,
    head: &bench_model::StoredRun,
) -> Result<Option<(bench_model::RunId, std::sync::Arc<Comparison>)>, AppError> {
    let Some(base) = bench_verdicts::baseline::resolve_baseline(ledger, head, None, None).await?
    else {
        return Ok(None);
    };
    let comparison = state
        .verdict_cache()
        .get_or_compute(
            (ledger.project().to_string(), base.id, head.id),
            bench_verdicts::evidence::compare_runs(ledger, &base, head, &CompareConfig::default()),
        )
        .await?;
    Ok(Some((base.id, comparison)))
}

/// How long a dashboard view waits for the verdicts that are not kept yet, in all, when no
/// push is in flight. A run pushed a moment ago may take longer to compare (seconds, at 1,000
/// benchmarks under load); its row says so and the comparison goes on, kept for the next view.
pub const VERDICT_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// The verdict on `head` against `base` if it is kept or computed by `deadline`; else `None`.
/// One comparison runs in the background at a time ([`AppState::comparing`]): it goes on past
/// the deadline and is kept; while it runs, other verdicts that are not kept are pending, so a
/// burst of pushes never queues comparisons behind the pages.
async fn verdict_by(
    state: &AppState,
    ledger: &bench_store::Ledger,
    base: bench_model::StoredRun,
    head: bench_model::StoredRun,
    deadline: tokio::time::Instant,
) -> Result<Option<std::sync::Arc<Comparison>>, AppError> {
    let key = (ledger.project().to_string(), base.id, head.id);
    if let Some(kept) = state.verdict_cache().get(&key) {
        return Ok(Some(kept));
    }
    let Ok(permit) = std::sync::Arc::clone(state.comparing()).try_acquire_owned() else {
        return Ok(None);
    };
    let (state, ledger) = (state.clone(), ledger.clone());
    let computing = tokio::spawn(async move {
        let _permit = permit;
        state
            .verdict_cache()
            .get_or_compute(
                key,
                bench_verdicts::evidence::compare_runs(
                    &ledger,
                    &base,
                    &head,
                    &CompareConfig::default(),
                ),
            )
            .await
    });
    match tokio::time::timeout_at(deadline, computing).await {
        Ok(Ok(answer)) => Ok(Some(answer?)),
        Ok(Err(e)) => Err(AppError::Internal(format!("the comparison failed: {e}"))),
        Err(_) => Ok(None),
    }
}

/// The dashboard's row of run `id` (the newest of its line) and its regressions; `None` when
/// its machine is not the testbed `wanted`.
async fn latest_row(
    state: &AppState,
    ledger: &bench_store::Ledger,
    id: bench_model::RunId,
    wanted: Option<&str>,
    verdicts_by: tokio::time::Instant,
) -> Result<Option<(LatestView, Vec<RegressionView>)>, AppError> {
    let head = ledger.require_run(id).await?;
    let p = &head.provenance;
    if wanted.is_some_and(|w| !is_testbed(&p.machine, w)) {
        return Ok(None);
    }
    let machine = view::machine_label(&p.machine);
    let mut row = LatestView {
        suite: p.suite.clone(),
        suite_href: view::suite_href(&p.suite),
        machine_href: view::url(
            &view::suite_href(&p.suite),
            &[("machine", &p.machine.fingerprint)],
        ),
        machine: machine.clone(),
        cpu: p.machine.cpu_model.clone(),
        run: id,
        run_href: view::run_href(id),
        created: view::datetime(&head.created_at),
        commit: view::short_commit(p.git.commit.as_deref(), p.git.dirty),
        baseline: None,
        regressions: 0,
        improvements: 0,
        status: "no baseline",
        pending: false,
    };
    let Some(base) = bench_verdicts::baseline::resolve_baseline(ledger, &head, None, None).await?
    else {
        return Ok(Some((row, Vec::new())));
    };
    let compare_href = view::compare_href(base.id, id);
    row.baseline = Some((base.id, compare_href.clone()));
    let Some(comparison) = verdict_by(state, ledger, base, head.clone(), verdicts_by).await? else {
        row.pending = true;
        row.status = "pending";
        return Ok(Some((row, Vec::new())));
    };
    row.regressions = comparison.counts.regressions;
    row.improvements = comparison.counts.improvements;
    row.status = if comparison.counts.regressions > 0 {
        verdict_class(Verdict::Regression)
    } else {
        "ok"
    };
    let found = comparison
        .regressions()
        .map(|r| RegressionView {
            suite: p.suite.clone(),
            machine: machine.clone(),
            compare_href: compare_href.clone(),
            row: RowView::new(r),
        })
        .collect();
    Ok(Some((row, found)))
}

async fn dashboard(
    State(state): State<AppState>,
    Query(params): Query<DashboardParams>,
) -> Result<Response, AppError> {
    let wanted = params
        .testbed
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    // Everything the dashboard shows follows from the runs recorded: the same ledger draws
    // the same page, once every verdict on it is known (the stamp is read first, so a run
    // recorded while the page is drawn makes the next view draw it again).
    let stamp = state.ledger().stamp().await?;
    let key = (
        state.ledger().project().to_string(),
        format!("/?testbed={}", wanted.unwrap_or_default()),
        shows(&stamp),
    );
    if let Some(kept) = state.drawn_pages().get(&key) {
        return Ok(respond(HTML, Bytes::clone(&kept)));
    }
    let (page, pending) = draw(&state, wanted).await?;
    let page = Bytes::from(page.0);
    if !pending {
        state
            .drawn_pages()
            .put(key, std::sync::Arc::new(page.clone()));
    }
    Ok(respond(HTML, page))
}

/// The dashboard, and whether a verdict on it is still pending.
async fn draw(state: &AppState, wanted: Option<&str>) -> Result<(Html<String>, bool), AppError> {
    let ledger = state.ledger();
    let testbeds = ledger
        .machines(None)
        .await?
        .into_iter()
        .map(|m| {
            let label = m
                .testbed
                .clone()
                .unwrap_or_else(|| view::short_machine(&m.fingerprint));
            TestbedView {
                href: view::url(&view::href("/"), &[("testbed", &label)]),
                selected: wanted == Some(label.as_str()),
                runs: m.runs,
                label,
            }
        })
        .collect();
    let suites = ledger
        .suites()
        .await?
        .into_iter()
        .map(|s| SuiteView {
            href: view::suite_href(&s.suite),
            latest_href: view::run_href(s.latest_run),
            latest: s.latest_run,
            runs: s.runs,
            name: s.suite,
        })
        .collect();
    let mut latest = Vec::new();
    let mut regressions = Vec::new();
    // One wait for all the rows' verdicts, not one per row; none while runs are being pushed
    // (then every view would find a newer run to wait for, and the cores are the pushes').
    let wait = if state.push_slots().in_flight() > 0 {
        std::time::Duration::ZERO
    } else {
        VERDICT_WAIT
    };
    let verdicts_by = tokio::time::Instant::now() + wait;
    // The rows are read at once: each is a few lookups, which under ingest wait for the cores
    // more than they use them.
    let ids = ledger.latest_runs_per_machine().await?;
    let rows = futures_util::future::try_join_all(
        ids.into_iter()
            .map(|id| latest_row(state, &ledger, id, wanted, verdicts_by)),
    )
    .await?;
    for (row, found) in rows.into_iter().flatten() {
        latest.push(row);
        regressions.extend(found);
    }
    // The other projects of the ledger, when it holds more than the one shown.
    let current = ledger.project().to_string();
    let mut projects: Vec<ProjectView> = ledger
        .projects()
        .await?
        .into_iter()
        .map(|p| ProjectView {
            href: if p.name == bench_model::Project::DEFAULT {
                "/".to_owned()
            } else {
                format!("/p/{}/", p.name)
            },
            current: p.name == current,
            suites: p.suites,
            runs: p.runs,
            name: p.name,
        })
        .collect();
    if projects.iter().all(|p| p.current) {
        projects.clear();
    }
    let pending = latest.iter().any(|row| row.pending);
    let page = render(&Dashboard {
        show_project: current != bench_model::Project::DEFAULT || !projects.is_empty(),
        project: current,
        projects,
        testbed: wanted.map(str::to_owned),
        testbeds,
        suites,
        latest,
        regressions,
    })?;
    Ok((page, pending))
}
