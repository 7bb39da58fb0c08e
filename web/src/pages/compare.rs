//! `/compare?base=&head=`: the before/after table of two runs.

use super::{drawn, render, resolve_run, shows};
use crate::AppState;
use crate::error::AppError;
use crate::extract::{Query, non_empty, parse_param};
use crate::view::{self, RunRow};
use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use bench_analysis::compare::{CompareConfig, Comparison, Mismatch, Row, Verdict};
use bench_model::{StoredRun, format, metric};
use bench_store::{RunAnnotation, RunFilter};
use bench_verdicts::comparison::{CompareOutcome, compare_pair};
use serde::Deserialize;

pub fn router() -> Router<AppState> {
    Router::new().route("/compare", get(compare_page))
}

/// Query parameters of `/compare` and `/api/compare`.
#[derive(Debug, Default, Deserialize)]
pub struct CompareParams {
    pub base: Option<String>,
    pub head: Option<String>,
    pub threshold: Option<String>,
    pub hide: Option<String>,
    /// `1` or `true`: compare runs of different suites anyway (`--allow-mismatch`).
    pub allow_mismatch: Option<String>,
}

/// A loaded comparison: both runs, the verdicts and how the runs differ.
pub struct Loaded {
    pub base: StoredRun,
    pub head: StoredRun,
    pub comparison: Comparison,
    pub mismatches: Vec<Mismatch>,
    /// Set when the runs are of different suites and that was allowed.
    pub suite_warning: Option<String>,
    /// Set when one run is a `--quick` run and the other is not.
    pub quick_warning: Option<String>,
    pub config: CompareConfig,
    /// What was noted on the two runs and on the runs between them ([`annotations`]).
    pub annotations: Vec<RunAnnotation>,
}

/// Resolves `base` and `head` (head first; base narrowed to head's suite, as `bench-run
/// compare` does) and compares them.
pub async fn load(state: &AppState, params: &CompareParams) -> Result<Loaded, AppError> {
    let head = non_empty(params.head.as_ref())
        .ok_or_else(|| AppError::BadRequest("parameter head is required".to_owned()))?;
    let base = non_empty(params.base.as_ref())
        .ok_or_else(|| AppError::BadRequest("parameter base is required".to_owned()))?;
    let mut config = CompareConfig::default();
    if let Some(t) = parse_param::<f64>(
        "threshold",
        params.threshold.as_ref(),
        "a percentage such as 5",
    )? {
        config.threshold_pct = t;
    }
    config
        .validate()
        .map_err(|e| AppError::BadRequest(format!("parameter threshold: {e}")))?;
    let allow_mismatch = match non_empty(params.allow_mismatch.as_ref()) {
        None | Some("0" | "false") => false,
        Some("1" | "true") => true,
        Some(other) => {
            return Err(AppError::BadRequest(format!(
                "parameter allow_mismatch must be 1 or true, got {other:?}"
            )));
        }
    };
    let head = resolve_run(state, head, None).await?;
    let base = resolve_run(state, base, Some(&head.provenance.suite)).await?;
    let key = (
        state.ledger().project().to_string(),
        base.id,
        head.id,
        config.threshold_pct.to_bits(),
        allow_mismatch,
    );
    let compared = state
        .compared_cache()
        .get_or_compute(key, async {
            let evidence = bench_verdicts::evidence::gather(
                &state.ledger(),
                &base,
                &head,
                config.history_runs(),
            )
            .await?;
            match compare_pair(&evidence, &config, allow_mismatch) {
                CompareOutcome::Refused(refusal) => Err(AppError::Refused(format!(
                    "{refusal}; add allow_mismatch=1 to the query to compare anyway"
                ))),
                CompareOutcome::Compared(compared) => Ok(*compared),
            }
        })
        .await?;
    let suite_warning = compared
        .suite_differs
        .is_some()
        .then(|| compared.warnings().remove(0));
    let annotations = annotations(state, &base, &head).await?;
    Ok(Loaded {
        base,
        head,
        comparison: compared.comparison.clone(),
        mismatches: compared.mismatches.clone(),
        suite_warning,
        quick_warning: compared.quick_warning.clone(),
        config,
        annotations,
    })
}

/// The notes a comparison spans: those on the runs of the head's suite on the head's machine
/// from `base` to `head` in commit order (an annotation such as "kernel upgraded" on a run in
/// between explains a step as well as one on either end), and the base's own notes when the
/// base is not among those runs (another machine or suite).
async fn annotations(
    state: &AppState,
    base: &StoredRun,
    head: &StoredRun,
) -> Result<Vec<RunAnnotation>, AppError> {
    let mut notes = state
        .ledger()
        .annotations_between(&head.provenance.suite, head.machine_id, base.id, head.id)
        .await?;
    let base_in_span =
        base.provenance.suite == head.provenance.suite && base.machine_id == head.machine_id;
    if !base_in_span {
        let own = base.annotations.iter().map(|a| RunAnnotation {
            run_id: base.id,
            created_at: a.created_at.clone(),
            text: a.text.clone(),
        });
        notes.splice(0..0, own);
    }
    Ok(notes)
}

/// `/api/compare`: `bench-run compare --format json`, plus the ways the runs differ.
pub async fn compare_view_json(
    state: &AppState,
    params: &CompareParams,
) -> Result<serde_json::Value, AppError> {
    let loaded = load(state, params).await?;
    let text = bench_report::comparison_json(&loaded.comparison, &loaded.base, &loaded.head);
    let mut doc: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| AppError::Internal(format!("comparison JSON does not parse: {e}")))?;
    if let Some(obj) = doc.as_object_mut() {
        obj.insert(
            "mismatches".to_owned(),
            serde_json::to_value(&loaded.mismatches)
                .map_err(|e| AppError::Internal(e.to_string()))?,
        );
        obj.insert(
            "warnings".to_owned(),
            serde_json::json!(
                loaded
                    .suite_warning
                    .iter()
                    .chain(&loaded.quick_warning)
                    .collect::<Vec<_>>()
            ),
        );
        obj.insert(
            "threshold_pct".to_owned(),
            serde_json::json!(loaded.config.threshold_pct),
        );
        obj.insert(
            "annotations".to_owned(),
            serde_json::to_value(&loaded.annotations)
                .map_err(|e| AppError::Internal(e.to_string()))?,
        );
    }
    Ok(doc)
}

/// One row of the before/after table.
pub struct RowView {
    pub benchmark: String,
    pub metric: String,
    pub before: String,
    pub after: String,
    pub change: String,
    pub ci: String,
    pub noise: String,
    pub noise_title: String,
    pub p: String,
    pub verdict: &'static str,
    pub class: &'static str,
    pub reasons: Vec<String>,
    /// The layout spread (`ab --layouts K`), empty without layouts.
    pub layout: String,
    /// Each side's per-layout medians, for the cell's title.
    pub layout_title: String,
    /// A significant change within the layout spread, not attributed to the code.
    pub layout_sensitive: bool,
}

impl RowView {
    pub fn new(row: &Row) -> Self {
        let (change, ci) = match row.change {
            Some(c) => (
                format::pct(c.point_pct),
                match (c.lower_pct, c.upper_pct) {
                    (Some(l), Some(u)) => format!("[{}, {}]", format::pct(l), format::pct(u)),
                    _ => String::new(),
                },
            ),
            None => ("—".to_owned(), String::new()),
        };
        let noise = bench_report::noise_cell(row);
        let p = format::p_value(row.p_adjusted.or(row.p_value));
        Self {
            benchmark: row.benchmark.clone(),
            metric: if row.metric == metric::TIME {
                String::new()
            } else {
                view::metric_label(&row.metric, row.direction)
            },
            before: view::value_or_dash(row.before, &row.unit),
            after: view::value_or_dash(row.after, &row.unit),
            change,
            ci,
            noise,
            noise_title: bench_report::noise_source(&row.noise_floor.source),
            p,
            verdict: row.verdict.name(),
            class: verdict_class(row.verdict),
            reasons: row.reasons.clone(),
            layout: row
                .layout
                .as_ref()
                .map_or_else(String::new, |l| format!("{:.1}%", l.spread_pct())),
            layout_title: row.layout.as_ref().map_or_else(String::new, |l| {
                let side = |s: &bench_analysis::layout::SideLayouts| {
                    s.medians
                        .iter()
                        .map(|(_, m)| view::value_or_dash(Some(*m), &row.unit))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let changes = l
                    .changes
                    .iter()
                    .map(|(_, c)| format::pct(*c))
                    .collect::<Vec<_>>()
                    .join(", ");
                format!(
                    "{} layouts; the change under each: {changes}; medians per layout: base {}; head {}",
                    l.layouts(),
                    side(&l.base),
                    side(&l.head),
                )
            }),
            layout_sensitive: row.layout_sensitive,
        }
    }
}

/// The CSS class of a verdict.
pub const fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Regression => "regression",
        Verdict::Improvement => "improvement",
        Verdict::Unchanged => "unchanged",
        Verdict::New | Verdict::Missing => "unpaired",
        Verdict::Ignored => "ignored",
    }
}

/// An annotation as listed on the compare page.
pub struct NoteView {
    pub run_id: i64,
    pub run_href: String,
    /// `before`, `after`, or `between` for a run in between.
    pub role: &'static str,
    pub text: String,
    pub written: String,
}

impl NoteView {
    fn new(note: &RunAnnotation, base: &StoredRun, head: &StoredRun) -> Self {
        Self {
            run_id: note.run_id,
            run_href: view::run_href(note.run_id),
            role: if note.run_id == base.id {
                "before"
            } else if note.run_id == head.id {
                "after"
            } else {
                "between"
            },
            text: note.text.clone(),
            written: view::datetime(&note.created_at),
        }
    }
}

/// A run as named in the compare header.
pub struct RunLabel {
    pub id: i64,
    pub href: String,
    pub commit: String,
    pub summary: String,
    pub created: String,
}

impl RunLabel {
    pub fn new(run: &StoredRun) -> Self {
        let git = &run.provenance.git;
        Self {
            id: run.id,
            href: view::run_href(run.id),
            commit: view::short_commit(git.commit.as_deref(), git.dirty),
            summary: git.summary.clone().unwrap_or_default(),
            created: view::datetime(&run.created_at),
        }
    }
}

#[derive(Template)]
#[template(path = "compare.html")]
struct ComparePage {
    suite: String,
    suite_href: String,
    base: RunLabel,
    head: RunLabel,
    base_ref: String,
    head_ref: String,
    threshold: String,
    rows: Vec<RowView>,
    /// Whether the rows were measured under several layouts (a column more).
    layouts: bool,
    hidden: usize,
    hide_insignificant: bool,
    toggle_href: String,
    json_href: String,
    geomean: Option<(String, String, usize)>,
    summary: String,
    correction: &'static str,
    family_size: usize,
    mismatches: Vec<String>,
    /// Same executable, busy machine: what to know before reading the table.
    notes: Vec<String>,
    quick_warning: Option<String>,
    annotations: Vec<NoteView>,
    markdown: String,
    /// Flamegraphs and top functions of the benchmarks that have them.
    profiles: Vec<super::profiles::BenchmarkProfiles>,
}

#[derive(Template)]
#[template(path = "compare_form.html")]
struct CompareForm {
    runs: Vec<RunRow>,
}

async fn compare_page(
    State(state): State<AppState>,
    Query(params): Query<CompareParams>,
) -> Result<Response, AppError> {
    if non_empty(params.base.as_ref()).is_none() && non_empty(params.head.as_ref()).is_none() {
        let runs = state
            .ledger()
            .runs(&RunFilter {
                limit: Some(20),
                ..RunFilter::default()
            })
            .await?;
        return Ok(render(&CompareForm {
            runs: runs.iter().map(RunRow::new).collect(),
        })?
        .into_response());
    }
    let hide_insignificant = match non_empty(params.hide.as_ref()) {
        None => false,
        Some("insignificant") => true,
        Some(other) => {
            return Err(AppError::BadRequest(format!(
                "parameter hide must be \"insignificant\" or empty, got {other:?}"
            )));
        }
    };
    let loaded = load(&state, &params).await?;
    let ledger = state.ledger();
    let artifacts = (
        ledger.artifacts(loaded.base.id).await?,
        ledger.artifacts(loaded.head.id).await?,
    );
    // Two stored runs compare the same forever; what may still be added is a note on a run
    // of the span and a profile of either run.
    let notes: Vec<_> = loaded
        .annotations
        .iter()
        .map(|a| (a.run_id, &a.created_at, &a.text))
        .collect();
    let profiles: Vec<_> = artifacts
        .0
        .iter()
        .chain(&artifacts.1)
        .map(|a| a.id)
        .collect();
    let page = format!(
        "/compare?{}",
        serde_urlencoded::to_string([
            ("base", params.base.as_deref().unwrap_or_default()),
            ("head", params.head.as_deref().unwrap_or_default()),
            ("threshold", params.threshold.as_deref().unwrap_or_default()),
            ("hide", params.hide.as_deref().unwrap_or_default()),
            (
                "allow_mismatch",
                params.allow_mismatch.as_deref().unwrap_or_default()
            ),
        ])
        .unwrap_or_default()
    );
    let shown = shows(&(loaded.base.id, loaded.head.id, notes, profiles));
    drawn(
        &state,
        page,
        shown,
        draw_compare_page(&state, params, hide_insignificant, loaded, artifacts),
    )
    .await
}

async fn draw_compare_page(
    state: &AppState,
    params: CompareParams,
    hide_insignificant: bool,
    loaded: Loaded,
    (base_artifacts, head_artifacts): (
        Vec<bench_model::ArtifactSummary>,
        Vec<bench_model::ArtifactSummary>,
    ),
) -> Result<Html<String>, AppError> {
    let profiles =
        super::profiles::comparison(state, loaded.base.id, &base_artifacts, &head_artifacts)
            .await?;
    let c = &loaded.comparison;
    let base_ref = params.base.clone().unwrap_or_default();
    let head_ref = params.head.clone().unwrap_or_default();
    let threshold = params.threshold.clone().unwrap_or_default();
    let link = |path: &str, hide: &str| {
        view::url(
            &view::href(path),
            &[
                ("base", base_ref.trim()),
                ("head", head_ref.trim()),
                ("threshold", threshold.trim()),
                ("hide", hide),
            ],
        )
    };
    let rows: Vec<RowView> = c
        .rows
        .iter()
        .filter(|r| !hide_insignificant || r.significant)
        .map(RowView::new)
        .collect();
    let page = ComparePage {
        suite: loaded.head.provenance.suite.clone(),
        suite_href: view::suite_href(&loaded.head.provenance.suite),
        base: RunLabel::new(&loaded.base),
        head: RunLabel::new(&loaded.head),
        hidden: c.rows.len() - rows.len(),
        layouts: c.rows.iter().any(|r| r.layout.is_some()),
        rows,
        hide_insignificant,
        toggle_href: link(
            "/compare",
            if hide_insignificant {
                ""
            } else {
                "insignificant"
            },
        ),
        json_href: link("/api/compare", ""),
        geomean: c.geomean.map(|g| {
            let ci = match (g.lower_pct, g.upper_pct) {
                (Some(l), Some(u)) => format!("[{}, {}]", format::pct(l), format::pct(u)),
                _ => String::new(),
            };
            (format::pct(g.change_pct), ci, g.n_rows)
        }),
        summary: bench_report::summary(c),
        correction: c.correction.name(),
        family_size: c.family_size,
        mismatches: loaded
            .suite_warning
            .iter()
            .cloned()
            .chain(loaded.mismatches.iter().map(ToString::to_string))
            .collect(),
        notes: bench_report::comparison_notes(c, &loaded.base, &loaded.head),
        quick_warning: loaded.quick_warning.clone(),
        annotations: loaded
            .annotations
            .iter()
            .map(|n| NoteView::new(n, &loaded.base, &loaded.head))
            .collect(),
        markdown: bench_report::comparison_markdown(c, &loaded.base, &loaded.head),
        threshold: format!("{}", loaded.config.threshold_pct),
        profiles,
        base_ref,
        head_ref,
    };
    render(&page)
}
