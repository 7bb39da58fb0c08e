//! Markdown tables of results: a header, a separator, rows; label columns name the benchmark,
//! value columns hold measured values, `delta` columns are left out.

use super::records::quoted;
use super::results::{
    Context, Pending, Statement, Unit, header_unit, looks_numeric, metric_name, name_of, pending,
    quantity, split_parentheses,
};
use crate::LineProblem;

/// How a table column is read.
enum Column {
    /// Its cells name the benchmark.
    Label,
    /// A value computed from other entries (`Delta vs baseline`): left out, the ledger computes
    /// deltas itself.
    Derived,
    /// Measured values.
    Value {
        /// A name part for the benchmark (`Owned encode` of `Owned encode (median)`), when a
        /// table holds several medians per row.
        suffix: Option<String>,
        metric: Option<String>,
        unit: Option<Unit>,
        statement: Statement,
    },
}

/// Cells of a table row between its outer `|`.
fn cells(text: &str) -> Result<Vec<&str>, String> {
    let text = text.trim();
    let inner = text
        .strip_prefix('|')
        .and_then(|t| t.strip_suffix('|'))
        .filter(|_| text.len() >= 2)
        .ok_or_else(|| {
            format!(
                "a table row starts and ends with `|` (is it cut short?), got {:?}",
                quoted(text)
            )
        })?;
    Ok(inner.split('|').map(str::trim).collect())
}

fn missing(cell: &str) -> bool {
    matches!(cell, "" | "-" | "—" | "–" | "n/a" | "N/A")
}

/// Reads a markdown table (`rows`: its lines with their numbers) into results. Every problem
/// found is returned, each with its line.
pub(super) fn read(
    rows: &[(usize, &str)],
    context: &Context,
) -> Result<Vec<Pending>, Vec<LineProblem>> {
    let problem = |line: usize, problem: String| vec![LineProblem { line, problem }];
    let Some(&(header_line, header)) = rows.first() else {
        return Ok(Vec::new());
    };
    let header = cells(header).map_err(|p| problem(header_line, p))?;
    let separator_ok = rows.get(1).is_some_and(|(_, text)| {
        cells(text).is_ok_and(|c| {
            c.len() == header.len()
                && c.iter().all(|cell| {
                    cell.contains('-') && cell.chars().all(|ch| matches!(ch, '-' | ':' | ' '))
                })
        })
    });
    if !separator_ok {
        return Err(problem(
            rows.get(1).map_or(header_line, |r| r.0),
            "a table's second line separates its header (`| --- | ---: |`, one per column)"
                .to_owned(),
        ));
    }
    let mut problems = Vec::new();
    let mut body: Vec<(usize, Vec<&str>)> = Vec::new();
    for &(line, text) in rows.get(2..).unwrap_or_default() {
        match cells(text) {
            Ok(c) if c.len() == header.len() => body.push((line, c)),
            Ok(c) => problems.push(LineProblem {
                line,
                problem: format!(
                    "the row has {} cells, the header {} (a `|` inside a cell is not read)",
                    c.len(),
                    header.len()
                ),
            }),
            Err(p) => problems.push(LineProblem { line, problem: p }),
        }
    }
    if body.is_empty() && problems.is_empty() {
        return Err(problem(header_line, "the table has no rows".to_owned()));
    }
    let medians = header
        .iter()
        .filter(|h| h.to_ascii_lowercase().contains("median"))
        .count();
    let columns: Vec<Column> = header
        .iter()
        .enumerate()
        .map(|(i, h)| {
            if h.to_ascii_lowercase().contains("delta") {
                return Column::Derived;
            }
            let numeric = body
                .iter()
                .filter_map(|(_, c)| c.get(i).copied())
                .filter(|c| !missing(c))
                .all(looks_numeric);
            let any = body
                .iter()
                .any(|(_, c)| c.get(i).is_some_and(|c| !missing(c)));
            if !(numeric && any) {
                return Column::Label;
            }
            let (main, inside) = split_parentheses(h);
            let statement = Statement::of(h);
            if statement.median {
                let rest = name_of(&main.replace("Median", "").replace("median", ""));
                return Column::Value {
                    suffix: (medians > 1 && !rest.is_empty()).then_some(rest),
                    metric: None,
                    unit: inside.split([';', ',']).find_map(Unit::parse),
                    statement,
                };
            }
            let (name, unit) = header_unit(h);
            Column::Value {
                suffix: None,
                metric: Some(metric_name(&name)),
                unit,
                statement,
            }
        })
        .collect();
    if !columns.iter().any(|c| matches!(c, Column::Value { .. })) {
        problems.push(LineProblem {
            line: header_line,
            problem: "the table has no column of measured values (numbers with a unit)".to_owned(),
        });
    }
    if !columns.iter().any(|c| matches!(c, Column::Label)) {
        problems.push(LineProblem {
            line: header_line,
            problem: "the table has no column naming the benchmark".to_owned(),
        });
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut found = Vec::new();
    for (line, row) in &body {
        let labels: Vec<String> = columns
            .iter()
            .zip(row)
            .filter(|(c, cell)| matches!(c, Column::Label) && !missing(cell))
            .map(|(_, cell)| name_of(cell))
            .collect();
        if labels.is_empty() {
            problems.push(LineProblem {
                line: *line,
                problem: "the row names no benchmark".to_owned(),
            });
            continue;
        }
        for ((column, cell), name) in columns.iter().zip(row).zip(&header) {
            let Column::Value {
                suffix,
                metric,
                unit,
                statement,
            } = column
            else {
                continue;
            };
            if missing(cell) {
                continue;
            }
            let mut function = labels.clone();
            function.extend(suffix.iter().cloned());
            let read = quantity(cell, *unit).and_then(|q| {
                if statement.median && !q.time {
                    return Err(format!("a median must be a time, got {:?}", quoted(cell)));
                }
                pending(*line, context, function, metric.clone(), *statement, q)
            });
            match read {
                Ok(p) => found.push(p),
                Err(p) => problems.push(LineProblem {
                    line: *line,
                    problem: format!("column `{}`: {p}", quoted(name)),
                }),
            }
        }
    }
    if problems.is_empty() {
        Ok(found)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::Statistic;

    fn lines(text: &str) -> Vec<(usize, &str)> {
        text.lines().enumerate().map(|(i, l)| (i + 1, l)).collect()
    }

    #[test]
    fn tables() {
        let t = "| Variant | Owned encode (median) | Fast-path encode (median) | Fast-path delta |\n\
                 | --- | ---: | ---: | ---: |\n\
                 | Plain | 4.518 µs | 4.741 µs | +4.92% |\n\
                 | Dict + Delta | - | 97.522 µs | -3.21% |";
        let found = read(&lines(t), &Context::default()).unwrap();
        let got: Vec<(String, f64, Option<Statistic>)> = found
            .iter()
            .map(|p| (p.function.join("/"), p.value, p.statistic))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "Plain/Owned encode".to_owned(),
                    4_518.0,
                    Some(Statistic::Median)
                ),
                (
                    "Plain/Fast-path encode".to_owned(),
                    4_741.0,
                    Some(Statistic::Median)
                ),
                (
                    "Dict + Delta/Fast-path encode".to_owned(),
                    97_522.0,
                    Some(Statistic::Median)
                ),
            ]
        );
        let cases: [(&str, &str); 9] = [
            ("| a | b |\n| x | y |", "line 2: a table's second line"),
            ("| a | b |", "line 1: a table's second line"),
            ("| a | b |\n|---|---|", "line 1: the table has no rows"),
            (
                "| a | b |\n|---|---|\n| x | 1 ms | 3 |",
                "line 3: the row has 3 cells",
            ),
            (
                "| a | b |\n|---|---|\n| x | 1 ms",
                "line 3: a table row starts and ends",
            ),
            (
                "| a | b |\n|---|---|\n| x | y |",
                "no column of measured values",
            ),
            ("| b |\n|---|\n| 1 ms |", "no column naming the benchmark"),
            (
                "| a | b |\n|---|---|\n| x | 12 |",
                "line 3: column `b`: \"12\" has no unit",
            ),
            (
                "| a | Median |\n|---|---|\n| x | 5 B |",
                "a median must be a time",
            ),
        ];
        for (i, (text, needle)) in cases.into_iter().enumerate() {
            let problems = read(&lines(text), &Context::default()).unwrap_err();
            let all: Vec<String> = problems
                .iter()
                .map(|p| format!("line {}: {}", p.line, p.problem))
                .collect();
            assert!(
                all.iter().any(|p| p.contains(needle)),
                "case {i}: {needle:?} not in {all:?}"
            );
        }
    }
}
