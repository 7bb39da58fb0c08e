//! `/`: suites, the newest run of every suite on every machine, and the regressions of each
//! against its baseline (the newest earlier full run of the same suite on the same machine,
//! `LedgerStore::previous_run`).

use super::compare::{RowView, verdict_class};
use super::render;
use crate::AppState;
use crate::error::AppError;
use crate::view;
use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::response::Html;
use axum::routing::get;
use harness::compare::{CompareConfig, Verdict};

pub fn router() -> Router<AppState> {
    Router::new().route("/", get(dashboard))
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
}

struct RegressionView {
    suite: String,
    machine: String,
    compare_href: String,
    row: RowView,
}

#[derive(Template)]
#[template(path = "dashboard.html")]
struct Dashboard {
    suites: Vec<SuiteView>,
    latest: Vec<LatestView>,
    regressions: Vec<RegressionView>,
}

async fn dashboard(State(state): State<AppState>) -> Result<Html<String>, AppError> {
    let ledger = state.ledger();
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
    let config = CompareConfig::default();
    let mut latest = Vec::new();
    let mut regressions = Vec::new();
    for id in ledger.latest_runs_per_machine().await? {
        let head = ledger.require_run(id).await?;
        let p = &head.provenance;
        let machine = view::short_machine(&p.machine.fingerprint);
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
        };
        if let Some(base_id) = ledger.previous_run(id).await? {
            let base = ledger.require_run(base_id).await?;
            let comparison =
                harness::judge::compare_runs(state.ledger(), &base, &head, &config).await?;
            let compare_href = view::compare_href(base_id, id);
            row.baseline = Some((base_id, compare_href.clone()));
            row.regressions = comparison.counts.regressions;
            row.improvements = comparison.counts.improvements;
            row.status = if comparison.counts.regressions > 0 {
                verdict_class(Verdict::Regression)
            } else {
                "ok"
            };
            regressions.extend(comparison.regressions().map(|r| RegressionView {
                suite: p.suite.clone(),
                machine: machine.clone(),
                compare_href: compare_href.clone(),
                row: RowView::new(r),
            }));
        }
        latest.push(row);
    }
    render(&Dashboard {
        suites,
        latest,
        regressions,
    })
}
