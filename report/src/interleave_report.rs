//! `interleave` output: the paired ratios of an interleaved run, as a table, markdown or JSON.

use super::format::sig4;
use super::table::{Align, Table, code_span};
use crate::output::{OutputFormat, to_json};
use crate::ratio::PairedRatio;
use serde_json::{Value, json};

/// Renders the paired ratios of run `run`, measured over `rounds` counted rounds; `bar` adds a
/// verdict column.
#[must_use]
pub fn interleave_report(
    run: i64,
    rounds: usize,
    rows: &[PairedRatio],
    bar: Option<f64>,
    format: OutputFormat,
) -> String {
    if format == OutputFormat::Json {
        let row = |r: &PairedRatio| {
            json!({
                "benchmark": r.benchmark,
                "anchor": r.anchor,
                "ratio": r.median,
                "lower": r.lower,
                "upper": r.upper,
                "ratios": r.ratios,
                "verdict": bar.map(|b| r.verdict(b).as_str()),
            })
        };
        let value = json!({
            "run": run,
            "rounds": rounds,
            "bar": bar,
            "rows": rows.iter().map(row).collect::<Vec<Value>>(),
        });
        return to_json(&value);
    }
    let markdown = format == OutputFormat::Markdown;
    let mut columns = vec![
        ("benchmark", Align::Left),
        ("anchor", Align::Left),
        ("ratio", Align::Right),
        ("95% interval", Align::Right),
        ("rounds", Align::Right),
    ];
    if bar.is_some() {
        columns.push(("verdict", Align::Left));
    }
    let name = |s: &str| if markdown { code_span(s) } else { s.to_owned() };
    let mut table = Table::new(&columns);
    for r in rows {
        let mut cells = vec![
            name(&r.benchmark),
            name(&r.anchor),
            format!("{}x", sig4(r.median)),
            format!("{}x-{}x", sig4(r.lower), sig4(r.upper)),
            r.ratios.len().to_string(),
        ];
        if let Some(b) = bar {
            cells.push(r.verdict(b).as_str().to_owned());
        }
        table.push(cells);
    }
    let mut out = format!(
        "run #{run}, {rounds} interleaved rounds. Ratio: the median over rounds of how many times faster ours ran than its anchor in the same round, with the median's 95% interval."
    );
    if let Some(b) = bar {
        out.push_str(&format!(
            " Bar: {}x on the median (\"meets\": the whole interval is above it).",
            sig4(b)
        ));
    }
    out.push_str("\n\n");
    out.push_str(&if markdown {
        table.to_markdown()
    } else {
        table.to_terminal()
    });
    out
}
