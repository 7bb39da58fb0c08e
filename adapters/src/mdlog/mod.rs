//! A hand-kept markdown log of benchmark results (`BENCHMARKS.md`), in the layout of seed 002:
//! the history a project kept before it had a ledger.
//!
//! ```text
//! # MBT — Benchmark Results (APPEND-ONLY)          <- preamble: skipped
//! ---
//! ## TEMPLATE ENTRY                                <- "template", no date, no result: skipped
//! ---
//! ## 2026-02-14 — `mathldbt_transport` (criterion, local)   <- an entry: a level-2 heading
//! Date (UTC): 2026-02-14T17:26:18Z                 <- the run's recording time
//! Operator: codex-cli                              <- other `Key: value` lines: notes
//! Machine:
//! - CPU: Intel(R) Xeon(R) W-2295 CPU @ 3.00GHz (18c/36t)
//! - OS: Linux 5.15.0-156-generic x86_64 GNU/Linux
//! - Rust: rustc 1.90.0, cargo 1.90.0
//! Command(s):
//! - `cargo bench --bench mathldbt_transport`       <- --bench/--bin names the suite
//! Profile:
//! - release (cargo bench; criterion)               <- first word: the build profile
//! Notes:
//! - ...                                            <- kept as a note
//! Results (median; lower is better):               <- "median" makes times medians
//! - rows=2,000:                                    <- a group: its value is a parameter
//!   - `encode_plain_ws`: ~14.99 µs                 <- a result; `~`: approximate
//! ### `json_vs_mathldbt` (median; lower is better) <- a heading naming a suite, or
//! #### rows = 2,000                                <- a heading giving a parameter
//! | Benchmark | Median | Delta vs baseline |       <- a table: label and value columns
//! ---                                              <- ends the entry
//! ```
//!
//! Each entry becomes one run per suite it measured (an entry whose two commands ran two bench
//! targets, results under a heading for each, becomes two runs): a run belongs to one suite,
//! and trends are drawn per suite. Its recording time is the entry's `Date (UTC)`, its machine
//! and toolchain those of the `Machine:` block, its cargo command the logged command(s) of its
//! suite (several as one `sh -c 'a; b'`), its build profile and features those the entry
//! states, its git commit a `Commit:` line if there is one. Everything else the entry says
//! (operator, profile, notes, WAN model, corrections) is kept verbatim as its note.
//!
//! ## Results
//!
//! Results are read from bullet lists under a `Results ...:` label or a `###` heading, and from
//! every table; any other text is a note. A benchmark is named as criterion names
//! `group/function/value`: `<suite>/<name parts>/<parameters>`, where the name parts are a
//! bullet's backticked name (with its qualifier: `` `encode_zstd_ws` (level=3) ``) or a table
//! row's label cells (`MATHLDBT`, `none`) and, when a table has several median columns, the
//! column (`Owned encode`); the parameters are the values of the headings and groups above it
//! (`rows = 2,000` gives `2000`). So `rows=2,000` / `` `encode_plain_ws` `` of suite
//! `mathldbt_transport` is `mathldbt_transport/encode_plain_ws/2000`, the id a criterion run of
//! that suite records: the log's history continues in the trend of the live suite.
//! Where a log names a benchmark otherwise than its live suite (a qualifier stating the live
//! settings, `` `encode_zstd_ws` (level=3) ``; the estimator's `MATHLDBT` / `zstd (level=3)` rows and
//! their times in ns), the result is recorded under the live id and unit instead (the table of
//! `live.rs`), so that history and live runs are one series.
//!
//! | written | metric, unit | statistic |
//! |---|---|---|
//! | a time (`ns`, `µs`, `ms`, `s`) stated as a median | `time`, ns | `median` |
//! | the same with `~` | `time`, ns | `approximate_median` (the value as written) |
//! | a time not stated as a median | `time`, or the column's name; ns | none |
//! | a byte count (`B`, `bytes`, or a `Bytes` column) | `bytes` (or the column's), bytes | none |
//! | a number in a column whose header gives the unit (`enc_s`) | the column's name (`enc`) | none |
//!
//! Values are converted in decimal (`14.99 µs` is exactly 14990 ns). A column whose header says
//! `delta` is left out: deltas are computed from the ledger. A column's name becomes a metric in
//! snake case without its unit or a leading `Estimated` (`Estimated t_transfer` and
//! `t_transfer_s` are one metric, `t_transfer`). Unless an entry says `higher is better`, lower
//! is better. `-` in a cell means no value.
//!
//! ## What cannot be read
//!
//! A line the parser cannot read (a result without a unit, a `~` on a value that is not a
//! median, a table row with a cell too many, a command outside backticks, an unknown unit, an
//! absurd or malformed number, a date that is no date), an entry missing its date, machine,
//! Rust version, command or results, results whose suite cannot be told, a result given twice,
//! and text between a `---` and the next entry are reported with their line numbers, never
//! dropped. [`parse`] refuses a log with any of them whole ([`AdapterError::Unreadable`]);
//! [`parse_lenient`] returns the readable entries and lists the others, for an importer that
//! takes a log entry by entry (a log is append-only, so an old entry cannot be fixed in place).
//! Either way an entry is taken whole or not at all, never with some of its results.
//!
//! A cut exactly at a line break inside a results list cannot be told from a shorter list; a
//! cut anywhere else leaves a line or an entry that cannot be read.
//!
//! ## Importing twice
//!
//! [`LogRun::content_sha256`] hashes the entry's own text (lines without trailing blanks, so
//! CRLF or LF alike) and the run's suite. An importer uses it as the run's idempotency key: the
//! same entry imported again, from this file or a copy that has grown since, is recorded once.

mod entry;
mod fields;
mod live;
mod records;
mod results;
mod table;
#[cfg(test)]
mod tests;

use crate::{AdapterError, LineProblem};
use entry::{Outcome, entry};
pub use live::live_functions;
use records::heading_level;
pub use records::{LogRun, SkippedEntry, UnreadableEntry};

const WHAT: &str = "markdown log";

/// Most unreadable entries listed: a garbage file has a problem on every line.
const MAX_UNREADABLE: usize = 1000;

/// A log, read: its runs and what was not taken.
#[derive(Debug, Clone, PartialEq)]
pub struct Log {
    /// Entries read (each gave one run per suite it measured).
    pub entries: usize,
    /// The runs, in the order of the log.
    pub runs: Vec<LogRun>,
    /// Sections that are not measured entries (templates), by line.
    pub skipped: Vec<SkippedEntry>,
    /// Entries (and text outside entries) that cannot be read, by line.
    pub unreadable: Vec<UnreadableEntry>,
    /// Unreadable entries beyond the [`Log::unreadable`] listed.
    pub unreadable_not_listed: usize,
}

/// Reads a whole log; any line that cannot be read refuses it.
///
/// # Errors
/// [`AdapterError::Invalid`] when the log is not UTF-8 (naming the line);
/// [`AdapterError::Unreadable`] listing every problem, by line, when any entry (or text outside
/// the entries) cannot be read; [`AdapterError::Empty`] when it holds no entry.
pub fn parse(bytes: &[u8]) -> Result<Log, AdapterError> {
    let log = parse_lenient(bytes)?;
    if !log.unreadable.is_empty() {
        let mut problems: Vec<LineProblem> = Vec::new();
        let mut not_listed = 0;
        for entry in &log.unreadable {
            for p in &entry.problems {
                if problems.len() < MAX_UNREADABLE {
                    problems.push(p.clone());
                } else {
                    not_listed += 1;
                }
            }
        }
        return Err(AdapterError::Unreadable {
            what: WHAT.to_owned(),
            problems,
            not_listed: not_listed + log.unreadable_not_listed,
        });
    }
    Ok(log)
}

/// Reads a log entry by entry: the readable entries' runs, and the unreadable ones listed with
/// their problems (see the module docs).
///
/// # Errors
/// [`AdapterError::Invalid`] when the log is not UTF-8 (naming the line);
/// [`AdapterError::Empty`] when it holds no entry at all, readable or not.
pub fn parse_lenient(bytes: &[u8]) -> Result<Log, AdapterError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes
            .get(..e.valid_up_to())
            .unwrap_or_default()
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        AdapterError::invalid(format!("{WHAT}, line {line}"), "not UTF-8")
    })?;
    let lines: Vec<(usize, &str)> = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
        .collect();
    let mut log = Log {
        entries: 0,
        runs: Vec::new(),
        skipped: Vec::new(),
        unreadable: Vec::new(),
        unreadable_not_listed: 0,
    };
    let mut sections = 0;
    for section in sections_of(&lines) {
        let outcome = match section {
            Section::Entry(lines) => {
                sections += 1;
                entry(lines)
            }
            Section::Stray(lines) => Outcome::Unreadable(stray(lines)),
        };
        match outcome {
            Outcome::Runs(runs) => {
                log.entries += 1;
                log.runs.extend(runs);
            }
            Outcome::Skipped(skipped) => log.skipped.push(skipped),
            Outcome::Unreadable(entry) => {
                if log.unreadable.len() < MAX_UNREADABLE {
                    log.unreadable.push(entry);
                } else {
                    log.unreadable_not_listed += 1;
                }
            }
        }
    }
    if sections == 0 {
        return Err(AdapterError::Empty {
            what: format!("{WHAT} (no entry: an entry starts with a `## ` heading)"),
        });
    }
    Ok(log)
}

/// `---`, `***` or `___` (three or more, spaces allowed): the break between entries.
fn is_break(line: &str) -> bool {
    let chars: Vec<char> = line.chars().filter(|c| !c.is_whitespace()).collect();
    chars.len() >= 3
        && matches!(chars.first(), Some('-' | '*' | '_'))
        && chars.iter().all(|c| Some(c) == chars.first())
}

enum Section<'a> {
    /// From a `## ` heading to the next heading of level 1 or 2, or a break.
    Entry(&'a [(usize, &'a str)]),
    /// Text after a break or a level-1 heading, before the next entry.
    Stray(&'a [(usize, &'a str)]),
}

/// Splits the log into entries and stray text (the preamble, before the first entry, is not
/// read).
fn sections_of<'a>(lines: &'a [(usize, &'a str)]) -> Vec<Section<'a>> {
    #[derive(PartialEq)]
    enum State {
        Preamble,
        Entry(usize),
        Between,
    }
    let mut out = Vec::new();
    let mut state = State::Preamble;
    let mut stray: Option<usize> = None;
    let close = |out: &mut Vec<Section<'a>>, state: &State, stray: &mut Option<usize>, end| {
        if let State::Entry(start) = *state {
            out.push(Section::Entry(lines.get(start..end).unwrap_or_default()));
        }
        if let Some(start) = stray.take() {
            out.push(Section::Stray(lines.get(start..end).unwrap_or_default()));
        }
    };
    for (index, &(_, text)) in lines.iter().enumerate() {
        match heading_level(text) {
            Some((2, _)) => {
                close(&mut out, &state, &mut stray, index);
                state = State::Entry(index);
            }
            Some((1, _)) => {
                close(&mut out, &state, &mut stray, index);
                if state != State::Preamble {
                    // A level-1 heading among the entries: what follows is in no entry.
                    stray = Some(index);
                    state = State::Between;
                }
            }
            _ if is_break(text) => {
                close(&mut out, &state, &mut stray, index);
                if state != State::Preamble {
                    state = State::Between;
                }
            }
            _ => {
                if state == State::Between && stray.is_none() && !text.trim().is_empty() {
                    stray = Some(index);
                }
            }
        }
    }
    close(&mut out, &state, &mut stray, lines.len());
    out
}

fn stray(lines: &[(usize, &str)]) -> UnreadableEntry {
    let line = lines.first().map_or(0, |l| l.0);
    UnreadableEntry {
        line,
        title: "text outside any entry".to_owned(),
        problems: vec![LineProblem {
            line,
            problem: "text after a `---` or a `# ` heading and before the next `## ` entry \
                      heading belongs to no entry (is an entry's heading missing?)"
                .to_owned(),
        }],
    }
}
