//! The profiles of runs as the run and compare pages show them: a run's artifacts per
//! benchmark, and for a comparison the base and head flamegraphs, the differential one and
//! the functions whose share changed most. Flamegraphs are embedded as `<img>` (no script runs
//! in a page) and linked for the interactive SVG ([`crate::artifacts`]).

use crate::AppState;
use crate::artifacts::artifact_href;
use crate::error::AppError;
use crate::view;
use bench_model::{ArtifactKind, ArtifactSummary, CountUnit, FunctionCounts, format};
use std::collections::BTreeMap;

/// Rows of the top-functions table.
pub const TOP_FUNCTIONS: usize = 20;

/// One artifact as a link (and an image, for a flamegraph).
pub struct ArtifactLink {
    /// Where it is served.
    pub href: String,
    /// What it is, for people: `flamegraph`, `differential flamegraph against run #3`.
    pub label: String,
    /// `perf`, `callgrind`.
    pub profiler: String,
    /// Its size, scaled.
    pub size: String,
    /// Whether it is an image to embed.
    pub image: bool,
    /// Alternative text of the image.
    pub alt: String,
}

impl ArtifactLink {
    fn new(a: &ArtifactSummary) -> Self {
        let what = match a.kind {
            ArtifactKind::FoldedStacks => "folded stacks",
            ArtifactKind::Flamegraph => "flamegraph",
            ArtifactKind::DiffFlamegraph => "differential flamegraph",
            ArtifactKind::FunctionCounts => "function counts (JSON)",
        };
        let label = match a.against {
            Some(base) => format!("{what} against run #{base}"),
            None => what.to_owned(),
        };
        #[expect(clippy::cast_precision_loss, reason = "a size for reading")]
        let size = format::value(a.size as f64, "bytes");
        Self {
            href: artifact_href(a.id),
            alt: format!("{label} of {} ({})", a.benchmark, a.profiler),
            label,
            profiler: a.profiler.clone(),
            size,
            image: matches!(
                a.kind,
                ArtifactKind::Flamegraph | ArtifactKind::DiffFlamegraph
            ),
        }
    }
}

/// The artifacts of one benchmark of a run.
pub struct BenchmarkArtifacts {
    /// The benchmark's full id.
    pub benchmark: String,
    /// Its artifacts, in the ledger's order (kind, then oldest first).
    pub artifacts: Vec<ArtifactLink>,
    /// Comparisons the diffs among them belong to: (label, href).
    pub compares: Vec<(String, String)>,
}

/// A run's artifacts grouped by benchmark, as [`bench_store::LedgerStore::artifacts`]
/// lists them.
#[must_use]
pub fn per_benchmark(run: i64, artifacts: &[ArtifactSummary]) -> Vec<BenchmarkArtifacts> {
    let mut out: Vec<BenchmarkArtifacts> = Vec::new();
    for a in artifacts {
        if out.last().is_none_or(|b| b.benchmark != a.benchmark) {
            out.push(BenchmarkArtifacts {
                benchmark: a.benchmark.clone(),
                artifacts: Vec::new(),
                compares: Vec::new(),
            });
        }
        if let Some(group) = out.last_mut() {
            group.artifacts.push(ArtifactLink::new(a));
            if let Some(base) = a.against {
                let link = (
                    format!("compare with run #{base}"),
                    view::compare_href(base, run),
                );
                if !group.compares.contains(&link) {
                    group.compares.push(link);
                }
            }
        }
    }
    out
}

/// One row of the top-functions table.
pub struct FunctionRow {
    /// The symbol (untrusted text; the template escapes it).
    pub function: String,
    /// Share of the base run, as a percentage.
    pub base_share: String,
    /// Share of the head run.
    pub head_share: String,
    /// The change, in share points or counts.
    pub change: String,
    /// `regression`, `improvement` or empty: the row's class.
    pub class: &'static str,
    /// Self count in base.
    pub base: u64,
    /// Self count in head.
    pub head: u64,
}

/// The functions whose cost changed most between base and head.
pub struct FunctionTable {
    /// `samples` or `instructions`.
    pub unit: &'static str,
    /// What the change column holds.
    pub change_title: &'static str,
    /// The top rows.
    pub rows: Vec<FunctionRow>,
    /// Functions in the artifact.
    pub total: usize,
    /// The JSON.
    pub href: String,
}

impl FunctionTable {
    fn new(counts: &FunctionCounts, href: String) -> Self {
        let pct = |share: f64| format!("{:.2}%", share * 100.0);
        let (change_title, change): (&'static str, fn(f64) -> String) = match counts.unit {
            CountUnit::Samples => ("Change (share points)", |c| format!("{:+.2} pp", c * 100.0)),
            CountUnit::Instructions => ("Change (instructions)", |c| format!("{c:+.0}")),
        };
        let rows = counts
            .top_by_change(TOP_FUNCTIONS)
            .into_iter()
            .map(|r| FunctionRow {
                function: r.function.clone(),
                base_share: pct(r.base_share),
                head_share: pct(r.head_share),
                change: change(r.change),
                // More of the head's cost in a function is where a slowdown went.
                class: if r.change > 0.0 {
                    "regression"
                } else if r.change < 0.0 {
                    "improvement"
                } else {
                    ""
                },
                base: r.base,
                head: r.head,
            })
            .collect();
        Self {
            unit: counts.unit.name(),
            change_title,
            rows,
            total: counts.rows.len(),
            href,
        }
    }
}

/// The profiles of one benchmark in a comparison.
pub struct BenchmarkProfiles {
    /// The benchmark's full id.
    pub benchmark: String,
    /// The base run's flamegraph.
    pub base: Option<ArtifactLink>,
    /// The head run's flamegraph.
    pub head: Option<ArtifactLink>,
    /// The head against the base.
    pub diff: Option<ArtifactLink>,
    /// The functions that changed most.
    pub functions: Option<FunctionTable>,
}

/// The newest artifact of each (benchmark, kind) of `artifacts` that `keep` accepts.
fn newest(
    artifacts: &[ArtifactSummary],
    keep: impl Fn(&ArtifactSummary) -> bool,
) -> BTreeMap<(&str, ArtifactKind), &ArtifactSummary> {
    let mut out: BTreeMap<(&str, ArtifactKind), &ArtifactSummary> = BTreeMap::new();
    for a in artifacts.iter().filter(|a| keep(a)) {
        let slot = out.entry((a.benchmark.as_str(), a.kind)).or_insert(a);
        if a.id > slot.id {
            *slot = a;
        }
    }
    out
}

/// The profiles of a comparison of run `base` and its artifacts with the head's, per benchmark
/// that has any: each run's own flamegraph, and the head's diff and function counts against
/// this base.
///
/// # Errors
/// When the ledger fails.
pub async fn comparison(
    state: &AppState,
    base: i64,
    base_artifacts: &[ArtifactSummary],
    head_artifacts: &[ArtifactSummary],
) -> Result<Vec<BenchmarkProfiles>, AppError> {
    let base_own = newest(base_artifacts, |a| a.against.is_none());
    let head_own = newest(head_artifacts, |a| a.against.is_none());
    let against = newest(head_artifacts, |a| a.against == Some(base));
    let mut benchmarks: Vec<&str> = base_own
        .keys()
        .chain(head_own.keys())
        .chain(against.keys())
        .filter(|(_, kind)| *kind != ArtifactKind::FoldedStacks)
        .map(|(b, _)| *b)
        .collect();
    benchmarks.sort_unstable();
    benchmarks.dedup();
    let mut out = Vec::new();
    for benchmark in benchmarks {
        let flamegraph = |map: &BTreeMap<(&str, ArtifactKind), &ArtifactSummary>, kind| {
            map.get(&(benchmark, kind)).map(|a| ArtifactLink::new(a))
        };
        let functions = match against.get(&(benchmark, ArtifactKind::FunctionCounts)) {
            Some(a) => function_table(state, a).await?,
            None => None,
        };
        let profiles = BenchmarkProfiles {
            benchmark: benchmark.to_owned(),
            base: flamegraph(&base_own, ArtifactKind::Flamegraph),
            head: flamegraph(&head_own, ArtifactKind::Flamegraph),
            diff: flamegraph(&against, ArtifactKind::DiffFlamegraph),
            functions,
        };
        let shown = profiles.base.is_some()
            || profiles.head.is_some()
            || profiles.diff.is_some()
            || profiles.functions.is_some();
        if shown {
            out.push(profiles);
        }
    }
    Ok(out)
}

/// The table of a function-counts artifact; `None` (logged) when it does not parse, which the
/// ledger's checks on recording should have made impossible.
async fn function_table(
    state: &AppState,
    summary: &ArtifactSummary,
) -> Result<Option<FunctionTable>, AppError> {
    let Some(stored) = state.ledger().artifact(summary.id).await? else {
        return Ok(None);
    };
    match FunctionCounts::from_json(&stored.bytes) {
        Ok(counts) => Ok(Some(FunctionTable::new(&counts, artifact_href(summary.id)))),
        Err(e) => {
            tracing::warn!(artifact = summary.id, error = %e, "unreadable function counts");
            Ok(None)
        }
    }
}
