//! `ratio` output: our speeds against an anchor's, as a table, markdown or JSON.

use super::format::{sig4, value};
use super::table::{Align, Table, code_span};
use crate::output::{OutputFormat, to_json};
use crate::ratio::{BarVerdict, RatioRow, RatioTable};
use serde_json::{Value, json};

/// Which runs the ratios come from, for the report's heading.
#[derive(Debug, Clone)]
pub struct RatioSources {
    /// Our runs' ids.
    pub ours: Vec<i64>,
    /// The anchor runs' ids (empty: the anchors are in our runs).
    pub anchors: Vec<i64>,
}

/// Renders the ratios; `bar` adds a verdict column.
#[must_use]
pub fn ratio_report(
    table: &RatioTable,
    sources: &RatioSources,
    bar: Option<f64>,
    format: OutputFormat,
) -> String {
    match format {
        OutputFormat::Json => ratio_json(table, sources, bar),
        OutputFormat::Table | OutputFormat::Markdown => {
            let markdown = format == OutputFormat::Markdown;
            let mut columns = vec![
                ("benchmark", Align::Left),
                ("anchor", Align::Left),
                ("ours", Align::Right),
                ("anchor speed", Align::Right),
                ("ratio", Align::Right),
                ("range", Align::Right),
                ("pairings", Align::Right),
            ];
            if bar.is_some() {
                columns.push(("verdict", Align::Left));
            }
            let name = |s: &str| if markdown { code_span(s) } else { s.to_owned() };
            let mut out_table = Table::new(&columns);
            for row in &table.rows {
                let mut cells = vec![
                    name(&row.benchmark),
                    name(&row.anchor),
                    value(row.ours, &row.unit),
                    value(row.theirs, &row.unit),
                    times(row.median()),
                    format!("{}-{}", times(row.lowest()), times(row.highest())),
                    row.ratios.len().to_string(),
                ];
                if let Some(bar) = bar {
                    cells.push(BarVerdict::of(row, bar).as_str().to_owned());
                }
                out_table.push(cells);
            }
            let mut out = heading(sources, bar);
            out.push_str("\n\n");
            out.push_str(&if markdown {
                out_table.to_markdown()
            } else {
                out_table.to_terminal()
            });
            for (benchmark, why) in &table.unpaired {
                out.push_str(&format!("\nnot paired: {benchmark}: {why}"));
            }
            if !table.unpaired.is_empty() {
                out.push('\n');
            }
            out
        }
    }
}

fn heading(sources: &RatioSources, bar: Option<f64>) -> String {
    let ids = |ids: &[i64]| {
        ids.iter()
            .map(|i| format!("#{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let anchors = if sources.anchors.is_empty() {
        "in the same runs".to_owned()
    } else {
        format!("runs {}", ids(&sources.anchors))
    };
    let mut out = format!(
        "ours: runs {}; anchors: {anchors}. Ratio: the median over every pairing of runs of our speed over the anchor's.",
        ids(&sources.ours)
    );
    if let Some(bar) = bar {
        out.push_str(&format!(
            " Bar: {}x on the median (\"meets\": every pairing is above it).",
            sig4(bar)
        ));
    }
    out
}

fn times(ratio: f64) -> String {
    format!("{}x", sig4(ratio))
}

fn ratio_json(table: &RatioTable, sources: &RatioSources, bar: Option<f64>) -> String {
    let row = |r: &RatioRow| {
        json!({
            "benchmark": r.benchmark,
            "anchor": r.anchor,
            "unit": r.unit,
            "ours_per_second": r.ours,
            "anchor_per_second": r.theirs,
            "ratio": r.median(),
            "lowest": r.lowest(),
            "highest": r.highest(),
            "ratios": r.ratios,
            "verdict": bar.map(|b| BarVerdict::of(r, b).as_str()),
        })
    };
    let value = json!({
        "ours_runs": sources.ours,
        "anchor_runs": sources.anchors,
        "bar": bar,
        "rows": table.rows.iter().map(row).collect::<Vec<Value>>(),
        "unpaired": table.unpaired.iter().map(|(b, why)| json!({"benchmark": b, "reason": why})).collect::<Vec<Value>>(),
    });
    to_json(&value)
}
