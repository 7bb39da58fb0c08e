//! `/suites/{suite}`: one trend chart per benchmark and metric.

use super::{drawn, render, shows};
use crate::AppState;
use crate::chart::{self, Note, RunLabels};
use crate::error::AppError;
use crate::extract::{Path, Query, non_empty};
use crate::trend::{self, CommitRange, MachineChoice, Series, Trend};
use crate::view;
use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::response::{Html, Response};
use axum::routing::get;
use bench_model::{format, metric};
use bench_store::{TrendRun, TrendRuns};
use serde::Deserialize;
use std::collections::HashMap;

pub fn router() -> Router<AppState> {
    Router::new().route("/suites/{suite}", get(suite_page))
}

/// Query parameters of `/suites/{suite}` and its API twin.
#[derive(Debug, Default, Deserialize)]
pub struct TrendParams {
    /// Machine fingerprint (prefix), `all`, or empty for the newest run's machine.
    pub machine: Option<String>,
    /// `linear` (default) or `log`.
    pub scale: Option<String>,
    /// `line` (default: the suite's ordinary full runs) or `all` (`ab` and bisect sides,
    /// profiles, confirmations and quick runs too).
    pub runs: Option<String>,
    /// The page of series, from 1 ([`trend::SERIES_PER_PAGE`] each unless `per_page`).
    pub page: Option<usize>,
    /// Series per page, at most [`trend::MAX_SERIES_PER_PAGE`].
    pub per_page: Option<usize>,
}

impl TrendParams {
    /// Which series to show.
    pub fn page(&self) -> Result<trend::SeriesPage, AppError> {
        trend::SeriesPage::new(self.page, self.per_page)
    }

    /// The machine choice.
    pub fn machine(&self) -> MachineChoice {
        MachineChoice::parse(self.machine.as_deref())
    }

    /// Which runs to draw.
    pub fn runs(&self) -> Result<TrendRuns, AppError> {
        match non_empty(self.runs.as_ref()) {
            None | Some("line") => Ok(TrendRuns::Line),
            Some("all") => Ok(TrendRuns::Everything),
            Some(other) => Err(AppError::BadRequest(format!(
                "parameter runs must be line or all, got {other:?}"
            ))),
        }
    }

    /// Whether a log scale was asked for.
    pub fn log_scale(&self) -> Result<bool, AppError> {
        match non_empty(self.scale.as_ref()) {
            None | Some("linear") => Ok(false),
            Some("log") => Ok(true),
            Some(other) => Err(AppError::BadRequest(format!(
                "parameter scale must be linear or log, got {other:?}"
            ))),
        }
    }
}

struct ChangeView {
    run_href: String,
    run_id: i64,
    commit: String,
    shift: String,
    before: String,
    after: String,
    class: &'static str,
    compare_href: Option<String>,
    /// Short hashes of the last commit before the change and the first at it.
    range: Option<(String, String)>,
    /// The `bench-run bisect` command that finds the commit (shell-quoted; escaped by the
    /// template like any text).
    bisect: Option<String>,
}

struct NoteView {
    run_href: String,
    run_id: i64,
    text: String,
}

struct ChartView {
    id: String,
    benchmark: String,
    metric: String,
    unit: String,
    runs: usize,
    latest: String,
    noise: String,
    svg: String,
    log_ignored: bool,
    changes: Vec<ChangeView>,
    notes: Vec<NoteView>,
}

struct MachineOption {
    value: String,
    label: String,
    selected: bool,
}

#[derive(Template)]
#[template(path = "suite.html")]
struct SuitePage {
    suite: String,
    machine_label: String,
    machines: Vec<MachineOption>,
    all_selected: bool,
    log_scale: bool,
    all_runs: bool,
    charts: Vec<ChartView>,
    runs_href: String,
    json_href: String,
    scale_href: String,
    /// Which series this page shows, 1-based, and of how many.
    shown: (usize, usize, usize),
    prev_href: Option<String>,
    next_href: Option<String>,
}

fn change_views(suite: &str, series: &Series, runs: &[TrendRun]) -> Vec<ChangeView> {
    series
        .change_points
        .iter()
        .filter_map(|cp| {
            let p = series.points.get(cp.index)?;
            let before = cp.index.checked_sub(1).and_then(|i| series.points.get(i));
            // A step up is bad for lower-is-better metrics and good for higher-is-better ones.
            let worse =
                (cp.shift_pct > 0.0) == (series.direction == bench_model::Direction::LowerIsBetter);
            let commit = runs.get(p.run).and_then(|r| r.git_commit.as_deref());
            let range = CommitRange::of(series, runs, cp);
            Some(ChangeView {
                bisect: range
                    .as_ref()
                    .map(|r| r.bisect_command(suite, &series.benchmark)),
                range: range.map(|r| {
                    (
                        view::short_commit(Some(&r.good), false),
                        view::short_commit(Some(&r.bad), false),
                    )
                }),
                run_href: view::run_href(p.run_id),
                run_id: p.run_id,
                commit: view::short_commit(commit, false),
                shift: format::pct(cp.shift_pct),
                before: format::value(cp.before, &series.unit),
                after: format::value(cp.after, &series.unit),
                class: if worse { "regression" } else { "improvement" },
                compare_href: before.map(|b| view::compare_href(b.run_id, p.run_id)),
            })
        })
        .collect()
}

/// Everything one chart needs that is shared by all charts of a page.
struct ChartContext<'a> {
    trend: &'a Trend,
    labels: RunLabels,
    notes_by_run: HashMap<i64, Vec<&'a str>>,
    log_scale: bool,
}

fn chart_view(ctx: &ChartContext<'_>, i: usize, series: &Series) -> Result<ChartView, AppError> {
    let mut notes = Vec::new();
    let mut note_views = Vec::new();
    if !ctx.notes_by_run.is_empty() {
        for (index, p) in series.points.iter().enumerate() {
            for text in ctx.notes_by_run.get(&p.run_id).into_iter().flatten() {
                notes.push(Note { index, text });
                note_views.push(NoteView {
                    run_href: view::run_href(p.run_id),
                    run_id: p.run_id,
                    text: (*text).to_owned(),
                });
            }
        }
    }
    let id = format!("chart-{i}");
    let drawn = chart::render(series, &ctx.labels, &notes, &id, ctx.log_scale)
        .map_err(|e| AppError::Internal(e.to_string()))?;
    Ok(ChartView {
        benchmark: series.benchmark.clone(),
        metric: if series.metric == metric::TIME {
            String::new()
        } else {
            view::metric_label(&series.metric, series.direction)
        },
        unit: series.unit.clone(),
        runs: series.points.len(),
        latest: series
            .points
            .last()
            .map(|p| format::value(p.estimate, &series.unit))
            .unwrap_or_default(),
        noise: format!(
            "{:.2}% ({})",
            series.noise_floor.pct,
            bench_report::noise_source(&series.noise_floor.source)
        ),
        log_ignored: ctx.log_scale && !drawn.log_scale,
        svg: drawn.svg,
        changes: change_views(&ctx.trend.suite, series, &ctx.trend.history.runs),
        notes: note_views,
        id,
    })
}

/// Draws every chart of the page, spread over the available cores (a page of 50 charts of
/// 1,000 points is tens of milliseconds of drawing).
fn chart_views(trend: &Trend, log_scale: bool) -> Result<Vec<ChartView>, AppError> {
    let mut notes_by_run: HashMap<i64, Vec<&str>> = HashMap::new();
    for a in &trend.annotations {
        notes_by_run.entry(a.run_id).or_default().push(&a.text);
    }
    let ctx = ChartContext {
        trend,
        labels: RunLabels::new(&trend.history.runs),
        notes_by_run,
        log_scale,
    };
    let series = trend.series();
    let first = trend.first_series();
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, MAX_CHART_THREADS);
    let per_thread = series.len().div_ceil(threads).max(1);
    let draw = |start: usize, chunk: &[Series]| -> Result<Vec<ChartView>, AppError> {
        chunk
            .iter()
            .enumerate()
            .map(|(j, s)| chart_view(&ctx, first + start + j, s))
            .collect()
    };
    if threads == 1 || series.len() < 2 * MIN_CHARTS_PER_THREAD {
        return draw(0, series);
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = series
            .chunks(per_thread)
            .enumerate()
            .map(|(k, chunk)| {
                let draw = &draw;
                scope.spawn(move || draw(k * per_thread, chunk))
            })
            .collect();
        let mut out = Vec::with_capacity(series.len());
        for handle in handles {
            let part = handle
                .join()
                .map_err(|_| AppError::Internal("a chart thread panicked".to_owned()))??;
            out.extend(part);
        }
        Ok(out)
    })
}

/// At most this many threads draw the charts of one page.
const MAX_CHART_THREADS: usize = 4;
/// Below twice this many charts, one thread draws them all.
const MIN_CHARTS_PER_THREAD: usize = 4;

async fn suite_page(
    State(state): State<AppState>,
    Path(suite): Path<String>,
    Query(params): Query<TrendParams>,
) -> Result<Response, AppError> {
    let log_scale = params.log_scale()?;
    let runs = params.runs()?;
    let trend = trend::load(
        &state.ledger(),
        state.trend_cache(),
        &suite,
        &params.machine(),
        runs,
        params.page()?,
    )
    .await?;
    // A drawn page is kept until anything it shows changes ([`trend_shows`]).
    let page = format!(
        "/suites/{suite}?machine={:?}&runs={runs:?}&page={}&per_page={}&log={log_scale}",
        trend.machine.as_ref().map(|m| m.id),
        trend.page.page,
        trend.page.per_page,
    );
    let shown = trend_shows(&trend);
    drawn(
        &state,
        page,
        shown,
        draw_suite_page(trend, suite, log_scale, runs),
    )
    .await
}

/// What a drawn trend (page or API answer) depends on besides its query: every machine's
/// runs of the suite (the machine list counts them) and the notes shown, hashed.
#[must_use]
pub fn trend_shows(trend: &Trend) -> u64 {
    let machines: Vec<_> = trend
        .machines
        .iter()
        .map(|m| (m.id, m.runs, m.latest_run))
        .collect();
    let notes: Vec<_> = trend
        .annotations
        .iter()
        .map(|a| (a.run_id, &a.created_at, &a.text))
        .collect();
    shows(&(machines, notes))
}

/// Draws the trend page.
async fn draw_suite_page(
    trend: Trend,
    suite: String,
    log_scale: bool,
    runs: TrendRuns,
) -> Result<Html<String>, AppError> {
    let machine_value = trend
        .machine
        .as_ref()
        .map_or_else(|| "all".to_owned(), |m| m.fingerprint.clone());
    let machines = trend
        .machines
        .iter()
        .map(|m| MachineOption {
            selected: trend.machine.as_ref().is_some_and(|t| t.id == m.id),
            label: format!(
                "{} · {} ({} runs)",
                view::short_machine(&m.fingerprint),
                m.cpu_model,
                m.runs
            ),
            value: m.fingerprint.clone(),
        })
        .collect();
    // Drawing 50 charts of 1,000 points takes tens of milliseconds of CPU: keep it off the
    // async workers.
    let charts = {
        let trend = trend.clone();
        tokio::task::spawn_blocking(move || chart_views(&trend, log_scale))
            .await
            .map_err(|e| AppError::Internal(format!("the chart task failed: {e}")))??
    };
    let base = view::suite_href(&suite);
    let all_runs = runs == TrendRuns::Everything;
    let runs_value = if all_runs { "all" } else { "line" };
    let total = trend.history.series.len();
    let first = trend.first_series();
    let page_href = |n: usize| {
        let page = n.to_string();
        let per_page = trend.page.per_page.to_string();
        let mut query = vec![
            ("machine", machine_value.as_str()),
            ("runs", runs_value),
            ("page", page.as_str()),
        ];
        if log_scale {
            query.push(("scale", "log"));
        }
        if trend.page.per_page != trend::SERIES_PER_PAGE {
            query.push(("per_page", per_page.as_str()));
        }
        view::url(&base, &query)
    };
    let prev_href = (trend.page.page > 1).then(|| page_href(trend.page.page - 1));
    let next_href = trend.next_page().map(page_href);
    let page = SuitePage {
        shown: (first + usize::from(total > 0), first + charts.len(), total),
        prev_href,
        next_href,
        machine_label: trend.machine.as_ref().map_or_else(
            || "all machines".to_owned(),
            |m| format!("{} · {}", view::short_machine(&m.fingerprint), m.cpu_model),
        ),
        all_selected: trend.machine.is_none(),
        machines,
        log_scale,
        all_runs,
        charts,
        runs_href: view::url(&view::href("/runs"), &[("suite", &suite)]),
        json_href: view::url(
            &view::href(&format!("/api/suites/{}/trend", view::path_segment(&suite))),
            &[("machine", &machine_value), ("runs", runs_value)],
        ),
        scale_href: view::url(
            &base,
            &[
                ("machine", &machine_value),
                ("scale", if log_scale { "linear" } else { "log" }),
                ("runs", runs_value),
            ],
        ),
        suite,
    };
    render(&page)
}
