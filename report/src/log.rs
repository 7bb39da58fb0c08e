//! `bench-run log`: a run's entry for the append-only BENCHMARKS.md, written for a person to
//! read:
//!
//! ```text
//! ## DATE — TITLE (run #N, `suite`)
//!
//! CLAIM (one line)
//!
//! - Run: `LEDGER#N`, the run's citation: unique across ledgers (every ledger numbers its
//!   runs from 1), and `bench-run show LEDGER#N` finds it in that ledger or in a copy of it
//! - Command: the exact command stored in the ledger (and the cargo command it ran)
//! - Machine: its fingerprint; the full description only in the first entry on that machine
//! - Rust, Git, baseline, busy machine, notes, annotations
//!
//! Results: K of M — why these rows (see [`select`])
//! | at most 15 rows |
//!
//! All results: `bench-run show LEDGER#N`.
//! ```
//!
//! Whether the machine is already described is read from the log itself
//! ([`describes_machine`]); rendering is a pure function of the run, the chosen rows and that
//! answer. Appending is the only write: the command opens the file in append mode and never
//! truncates or rewrites what is there.

use super::format;
use super::table::{Align, Table, code_span};
use crate::model::{Direction, Measurement, StoredRun};
use crate::run_lines::{machine_line, shell_join, short_commit, toolchain_line};
use std::collections::BTreeMap;

pub mod select;

pub use select::{BAR_METRICS, Chosen, Delta, MAX_ROWS, Reason, held_against_bar, select_rows};

/// Everything one log entry shows.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// The run.
    pub run: &'a StoredRun,
    /// Its citation, `LEDGER#N` (`bench_verdicts::refs::citation`).
    pub citation: &'a str,
    /// The entry's title (one line).
    pub title: &'a str,
    /// What the run shows, in one line.
    pub claim: &'a str,
    /// The rows shown, in order, from [`select_rows`].
    pub rows: &'a [Chosen<'a>],
    /// How many results the run has.
    pub total_results: usize,
    /// The baseline run, if any.
    pub baseline: Option<&'a StoredRun>,
    /// Deltas against the baseline by (benchmark, metric).
    pub deltas: &'a BTreeMap<(String, String), Delta>,
    /// Extra notes (from the command line, and warnings).
    pub notes: &'a [String],
    /// Whether an earlier entry of the log already describes the run's machine in full
    /// ([`describes_machine`]): the entry then names it by fingerprint only.
    pub machine_described: bool,
}

/// Whether `log` (the text of BENCHMARKS.md) already describes the machine with `fingerprint`
/// in full. Every full description, in the old layout and in this one, has the line
/// ``Fingerprint: `FINGERPRINT` ``; a reference by fingerprint never does.
#[must_use]
pub fn describes_machine(log: &str, fingerprint: &str) -> bool {
    !fingerprint.is_empty() && log.contains(&format!("Fingerprint: `{fingerprint}`"))
}

/// Renders the entry as markdown, starting with a `---` separator.
#[must_use]
pub fn render(entry: &Entry<'_>) -> String {
    let run = entry.run;
    let p = &run.provenance;
    let date = run.created_at.get(..10).unwrap_or(&run.created_at);
    let mut out = String::from("\n---\n\n");
    // The heading names the run, unless the title already does.
    let names_run = names_run(entry.title, run.id);
    let heading = if names_run {
        entry.title.to_owned()
    } else {
        format!("{} (run #{}, {})", entry.title, run.id, code_span(&p.suite))
    };
    out.push_str(&format!("## {date} — {heading}\n\n{}\n\n", entry.claim));
    out.push_str(&format!("- Run: `{}`\n", entry.citation));
    out.push_str(&format!("- Command: {}\n", command_span(&p.command)));
    if let Some(cargo) = &p.cargo_command {
        out.push_str(&format!(
            "- Cargo command it ran: {}\n",
            command_span(cargo)
        ));
    }
    out.push_str(&machine_text(entry));
    out.push_str(&format!("- Rust: {}\n", toolchain_line(p)));
    out.push_str(&format!("- Git: {}\n", git_text(run)));
    if let Some(build) = build_text(run) {
        out.push_str(&format!("- Build: {build}\n"));
    }
    if let Some(c) = &p.conditions {
        let findings = crate::contention::assess(c);
        if !findings.is_empty() {
            out.push_str(&format!(
                "- **Busy machine**: {}\n",
                crate::contention::describe(&findings)
            ));
        }
    }
    out.push_str(&baseline_text(entry));
    for note in entry.notes {
        out.push_str(&format!("- {note}\n"));
    }
    for a in &run.annotations {
        out.push_str(&format!("- Annotation ({}): {}\n", a.created_at, a.text));
    }
    out.push('\n');
    out.push_str(&results_caption(entry));
    if !entry.rows.is_empty() {
        out.push_str("\n\n");
        out.push_str(&results_table(entry).to_markdown());
    }
    out.push_str(&format!(
        "\nAll results: `bench-run show {}`.\n",
        entry.citation
    ));
    out
}

/// A command as one code span (plain text when it holds a backtick).
fn command_span(argv: &[String]) -> String {
    let text = shell_join(argv);
    if text.contains('`') {
        text
    } else {
        format!("`{text}`")
    }
}

/// The machine: its full description the first time the log meets it, its fingerprint after.
fn machine_text(entry: &Entry<'_>) -> String {
    let p = &entry.run.provenance;
    let m = &p.machine;
    if entry.machine_described {
        return format!(
            "- Machine: `{}` (described in an earlier entry)\n",
            m.fingerprint
        );
    }
    format!(
        "- Machine (first entry on it):\n  - CPU: {}\n  - OS: {}, Linux {} {}\n  - CPU \
         governor / turbo: {} / {}\n  - Fingerprint: `{}`\n",
        machine_line(p),
        m.os,
        m.kernel,
        m.arch,
        p.cpu_governor.as_deref().unwrap_or("unknown"),
        p.turbo.as_deref().unwrap_or("unknown"),
        m.fingerprint
    )
}

fn git_text(run: &StoredRun) -> String {
    let git = &run.provenance.git;
    match &git.commit {
        Some(c) => format!(
            "`{}` on `{}`{}",
            short_commit(Some(c), git.dirty),
            git.branch.as_deref().unwrap_or("detached HEAD"),
            git.summary
                .as_ref()
                .map(|s| format!(" — {}", s.replace('`', "'")))
                .unwrap_or_default()
        ),
        None => "not a git repository".to_owned(),
    }
}

/// Features, RUSTFLAGS and --quick, when any differs from a plain `cargo bench`.
fn build_text(run: &StoredRun) -> Option<String> {
    let p = &run.provenance;
    let mut parts = Vec::new();
    if !p.build.features.is_empty() {
        parts.push(format!("features `{}`", p.build.features.join(",")));
    }
    if let Some(flags) = &p.build.rustflags {
        parts.push(format!("RUSTFLAGS=`{flags}`"));
    }
    if p.quick {
        parts.push("--quick (a smoke run: short warm-up and measurement)".to_owned());
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

fn baseline_text(entry: &Entry<'_>) -> String {
    let Some(base) = entry.baseline else {
        return "- No baseline: no earlier full run of this suite on this machine.\n".to_owned();
    };
    let commit = short_commit(
        base.provenance.git.commit.as_deref(),
        base.provenance.git.dirty,
    );
    let mut out = format!(
        "- Baseline for deltas: run #{} ({}{}).\n",
        base.id,
        base.created_at,
        if commit.is_empty() {
            String::new()
        } else {
            format!(", commit `{commit}`")
        }
    );
    if let Some(sha256) = crate::compare::same_binary(&base.provenance, &entry.run.provenance) {
        out.push_str(&format!(
            "- Same executable: {}.\n",
            crate::compare::same_binary_sentence(&sha256)
        ));
    }
    out
}

/// `Results: 15 of 200 — 3 ratios held against a bar, ...`: how many rows and why these.
fn results_caption(entry: &Entry<'_>) -> String {
    let count = |reason: Reason| entry.rows.iter().filter(|c| c.reason == reason).count();
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut why = Vec::new();
    let bars = count(Reason::Bar);
    if bars > 0 {
        why.push(format!(
            "{} against a bar",
            plural(bars, "ratio held", "ratios held")
        ));
    }
    let changed = count(Reason::Changed);
    if changed > 0 {
        let against = entry
            .baseline
            .map(|b| format!(" against run #{}", b.id))
            .unwrap_or_default();
        why.push(format!(
            "{}{against}{}",
            plural(changed, "significant change", "significant changes"),
            if changed > 1 { ", largest first" } else { "" }
        ));
    }
    let others = count(Reason::Other);
    let shown = entry.rows.len();
    if others > 0 && shown < entry.total_results {
        why.push(format!(
            "{} (one of each benchmark group in turn)",
            plural(others, "other", "others")
        ));
    } else if others > 0 && !why.is_empty() {
        why.push(plural(others, "other", "others"));
    }
    let how_many = if shown == entry.total_results {
        format!("all {shown}")
    } else {
        format!("{shown} of {}", entry.total_results)
    };
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(" — {}", why.join(", "))
    };
    format!("Results: {how_many}{why}. Median with 95% CI; lower is better unless marked ↑.")
}

fn results_table(entry: &Entry<'_>) -> Table {
    let with_throughput = entry
        .rows
        .iter()
        .any(|c| format::throughput(c.row).is_some());
    let change_header = entry
        .baseline
        .map(|b| format!("Change vs #{}", b.id))
        .unwrap_or_default();
    let mut columns = vec![
        ("Benchmark", Align::Left),
        ("Median", Align::Right),
        ("95% CI", Align::Right),
    ];
    if with_throughput {
        columns.push(("Throughput", Align::Right));
    }
    if entry.baseline.is_some() {
        columns.push((change_header.as_str(), Align::Right));
        columns.push(("Verdict", Align::Left));
    }
    let mut table = Table::new(&columns);
    for chosen in entry.rows {
        let m = chosen.row;
        let mut cells = vec![
            row_name(m),
            format::value(m.estimate.point, &m.unit),
            match (m.estimate.lower, m.estimate.upper) {
                (Some(l), Some(u)) => format!(
                    "[{}, {}]",
                    format::value(l, &m.unit),
                    format::value(u, &m.unit)
                ),
                _ => String::new(),
            },
        ];
        if with_throughput {
            cells.push(format::throughput(m).unwrap_or_default());
        }
        if entry.baseline.is_some() {
            let delta = entry
                .deltas
                .get(&(m.benchmark.full.clone(), m.metric.clone()));
            cells.push(delta.map_or_else(|| "—".to_owned(), |d| format::pct(d.change_pct)));
            cells.push(
                delta
                    .map(|d| d.verdict.name().to_owned())
                    .unwrap_or_default(),
            );
        }
        table.push(cells);
    }
    table
}

/// The benchmark's name, with its metric unless it is a time (`↑`: higher is better).
fn row_name(m: &Measurement) -> String {
    if m.metric == crate::model::metric::TIME {
        return code_span(&m.benchmark.full);
    }
    format!(
        "{} ({}{})",
        code_span(&m.benchmark.full),
        m.metric,
        if m.direction == Direction::HigherIsBetter {
            " ↑"
        } else {
            ""
        }
    )
}

/// Header written when the log file does not exist yet.
pub const NEW_LOG_HEADER: &str = "# Benchmark log (append-only)\n\nRules:\n\n- Append-only; never edit old entries. Corrections are new entries or ledger annotations.\n- Entries are written by `bench-run log`, from the ledger; each names its run (`LEDGER#N`, unique\n  across ledgers), title, claim, exact command(s), machine (in full in the first entry on it, by\n  fingerprint after), toolchain and git commit, and shows at most 15 results; `bench-run show\n  LEDGER#N` has all of them.\n- Any performance claim in this repository cites one of these entries.\n";

/// Whether `title` names run `id` as `run #id` (not `run #id0`, another run).
fn names_run(title: &str, id: i64) -> bool {
    let name = format!("run #{id}");
    title
        .match_indices(&name)
        .any(|(at, _)| !title[at + name.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Verdict;
    use crate::model::{Estimate, Machine, RunProvenance, RunSource};

    const FINGERPRINT: &str = "0845446e52e76cf5";

    fn run(id: i64) -> StoredRun {
        StoredRun {
            id,
            created_at: "2026-11-27T00:02:44.123Z".to_owned(),
            source: RunSource::ImportBmf,
            machine_id: 1,
            provenance: RunProvenance {
                suite: "root_ceiling_ratios".to_owned(),
                command: [
                    "bench-run",
                    "import",
                    "bmf",
                    "--suite",
                    "root_ceiling_ratios",
                    "--direction",
                    "ratio=higher",
                    "/tmp/ratios 5.json",
                ]
                .map(str::to_owned)
                .to_vec(),
                machine: Machine {
                    fingerprint: FINGERPRINT.to_owned(),
                    cpu_model: "Intel(R) Xeon(R) Processor".to_owned(),
                    physical_cores: Some(2),
                    logical_cores: 2,
                    os: "Debian GNU/Linux 12 (bookworm)".to_owned(),
                    kernel: "6.18.44".to_owned(),
                    arch: "x86_64".to_owned(),
                    ..Machine::default()
                },
                ..RunProvenance::default()
            },
            tags: Vec::new(),
            annotations: Vec::new(),
        }
    }

    /// 200 results: 2 ratios (with ranges), the rest times; two of the times changed
    /// significantly against the baseline.
    fn results_200() -> (Vec<Measurement>, BTreeMap<(String, String), Delta>) {
        let mut results: Vec<Measurement> = (0..198)
            .map(|i| Measurement::time_ns(&format!("g{}/b{i:03}", i % 9), 1000.0 + f64::from(i)))
            .collect();
        for name in ["zstd/pt/2t_over_1t", "zlib/pt/2t_over_1t"] {
            results.push(Measurement {
                metric: "ratio".to_owned(),
                unit: String::new(),
                direction: Direction::HigherIsBetter,
                estimate: Estimate {
                    lower: Some(1.772),
                    upper: Some(1.906),
                    ..Estimate::point(1.859)
                },
                ..Measurement::time_ns(name, 0.0)
            });
        }
        let deltas = [
            ("g1/b010", 8.0, Verdict::Regression),
            ("g2/b020", -30.0, Verdict::Improvement),
            ("g3/b030", 1.0, Verdict::Unchanged),
        ]
        .into_iter()
        .map(|(b, pct, verdict)| {
            (
                (b.to_owned(), "time".to_owned()),
                Delta {
                    change_pct: pct,
                    verdict,
                },
            )
        })
        .collect();
        (results, deltas)
    }

    fn table_rows(text: &str) -> Vec<&str> {
        text.lines().filter(|l| l.starts_with("| `")).collect()
    }

    fn entry<'a>(
        run: &'a StoredRun,
        rows: &'a [Chosen<'a>],
        total_results: usize,
        baseline: Option<&'a StoredRun>,
        deltas: &'a BTreeMap<(String, String), Delta>,
        machine_described: bool,
    ) -> Entry<'a> {
        Entry {
            run,
            citation: "0123abcd#8",
            title: "Two threads read pt 1.86x faster",
            claim: "On the readspeed files two threads over one reach 1.86 under zstd (bar 1.8: met).",
            rows,
            total_results,
            baseline,
            deltas,
            notes: &[],
            machine_described,
        }
    }

    #[test]
    fn a_title_that_names_its_run_is_not_named_twice() {
        let (results, deltas) = results_200();
        let rows = select_rows(&results, &deltas, &[], MAX_ROWS);
        let head = run(8);
        let mut e = entry(&head, &rows, 200, None, &deltas, true);
        e.title = "Two threads (run #8, paired A/B)";
        let text = render(&e);
        assert!(
            text.contains("## 2026-11-27 — Two threads (run #8, paired A/B)\n"),
            "{text}"
        );
        // Another run's number that starts with the same digits is not this run's name.
        e.title = "Against run #80";
        assert!(
            render(&e).contains("## 2026-11-27 — Against run #80 (run #8, "),
            "{}",
            render(&e)
        );
    }

    #[test]
    fn an_entry_of_200_results_shows_15_rows_bars_first_and_points_to_show() {
        let (results, deltas) = results_200();
        let rows = select_rows(&results, &deltas, &[], MAX_ROWS);
        let (head, mut base) = (run(8), run(5));
        base.provenance.git.commit = Some("2fff1edb52e0c1d2".to_owned());
        base.provenance.git.dirty = true;
        let text = render(&entry(&head, &rows, 200, Some(&base), &deltas, true));
        assert!(text.starts_with(
            "\n---\n\n## 2026-11-27 — Two threads read pt 1.86x faster (run #8, `root_ceiling_ratios`)\n\nOn the readspeed files"
        ), "{text}");
        assert!(
            text.contains("- Command: `bench-run import bmf --suite root_ceiling_ratios --direction ratio=higher '/tmp/ratios 5.json'`\n"),
            "{text}"
        );
        let table = table_rows(&text);
        assert_eq!(table.len(), MAX_ROWS, "{text}");
        assert!(
            table[0].starts_with("| `zlib/pt/2t_over_1t` (ratio ↑)"),
            "{text}"
        );
        assert!(
            table[0].contains("[1.772, 1.906]"),
            "the ratio's range: {text}"
        );
        assert!(
            table[1].starts_with("| `zstd/pt/2t_over_1t` (ratio ↑)"),
            "{text}"
        );
        assert!(
            table[2].starts_with("| `g2/b020`") && table[2].contains("-30.00%"),
            "{text}"
        );
        assert!(
            table[3].starts_with("| `g1/b010`") && table[3].contains("regression"),
            "{text}"
        );
        assert!(text.contains("| Change vs #5 |"), "{text}");
        assert!(
            text.contains("Results: 15 of 200 — 2 ratios held against a bar, 2 significant changes against run #5, largest first, 11 others (one of each benchmark group in turn)."),
            "{text}"
        );
        assert!(text.contains("\n- Run: `0123abcd#8`\n"), "{text}");
        assert!(
            text.ends_with("\nAll results: `bench-run show 0123abcd#8`.\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "- Baseline for deltas: run #5 (2026-11-27T00:02:44.123Z, commit `2fff1edb52+`).\n"
            ),
            "{text}"
        );
        let no_git = render(&entry(&head, &rows, 200, Some(&run(5)), &deltas, true));
        assert!(
            no_git.contains("- Baseline for deltas: run #5 (2026-11-27T00:02:44.123Z).\n"),
            "{no_git}"
        );
    }

    #[test]
    fn a_described_machine_is_named_by_fingerprint_a_new_one_in_full() {
        let (results, _) = results_200();
        let deltas = BTreeMap::new();
        let rows = select_rows(&results, &deltas, &[], 3);
        let head = run(8);
        let seen = render(&entry(&head, &rows, 200, None, &deltas, true));
        assert!(
            seen.contains(&format!(
                "- Machine: `{FINGERPRINT}` (described in an earlier entry)\n"
            )),
            "{seen}"
        );
        assert!(
            !seen.contains("CPU:") && !seen.contains("Fingerprint:"),
            "{seen}"
        );
        assert!(!describes_machine(&seen, FINGERPRINT));

        let unseen = render(&entry(&head, &rows, 200, None, &deltas, false));
        assert!(
            unseen.contains(&format!(
                "- Machine (first entry on it):\n  - CPU: Intel(R) Xeon(R) Processor (2c/2t)\n  - OS: Debian GNU/Linux 12 (bookworm), Linux 6.18.44 x86_64\n  - CPU governor / turbo: unknown / unknown\n  - Fingerprint: `{FINGERPRINT}`\n"
            )),
            "{unseen}"
        );
        // The entry that describes the machine makes the next one name it.
        assert!(describes_machine(&unseen, FINGERPRINT));
        // Without a baseline: no change columns, and the entry says so.
        assert!(
            !unseen.contains("Change vs") && !unseen.contains("Verdict"),
            "{unseen}"
        );
        assert!(unseen.contains("- No baseline:"), "{unseen}");
        assert!(unseen.contains("Results: 3 of 200 — 2 ratios held against a bar, 1 other (one of each benchmark group in turn)."), "{unseen}");
    }

    #[test]
    fn the_old_layout_describes_its_machine_and_references_do_not() {
        let old = "Machine:\n\n- CPU: Intel(R) Xeon(R) Processor (2c/2t, 23.5 GiB)\n- Fingerprint: `0845446e52e76cf5`\n";
        assert!(describes_machine(old, FINGERPRINT));
        assert!(!describes_machine(old, "ffffffffffffffff"));
        assert!(!describes_machine(
            "- Machine: `0845446e52e76cf5` (described in an earlier entry)\n",
            FINGERPRINT
        ));
        assert!(!describes_machine(old, ""));
        assert!(!describes_machine("", FINGERPRINT));
    }

    #[test]
    fn small_runs_show_all_rows_and_hostile_text_stays_in_its_cell() {
        let results = vec![
            Measurement::time_ns("a|b", 12.0),
            Measurement::time_ns("<script>", 3.0),
        ];
        let deltas = BTreeMap::new();
        let rows = select_rows(&results, &deltas, &[], MAX_ROWS);
        let mut head = run(3);
        head.provenance.quick = true;
        head.provenance.command = vec![
            "bench-run".to_owned(),
            "--suite".to_owned(),
            "x`y".to_owned(),
        ];
        let notes = ["Warning: the head run #3 is a --quick run.".to_owned()];
        let text = render(&Entry {
            notes: &notes,
            citation: "0123abcd#3",
            ..entry(&head, &rows, 2, None, &deltas, true)
        });
        assert!(
            text.contains("Results: all 2. Median with 95% CI"),
            "{text}"
        );
        assert!(text.contains("| a\\|b "), "{text}");
        assert!(text.contains("&lt;script&gt;"), "{text}");
        assert!(
            text.contains("- Command: bench-run --suite 'x`y'\n"),
            "{text}"
        );
        assert!(text.contains("- Build: --quick (a smoke run"), "{text}");
        assert!(
            text.contains("- Warning: the head run #3 is a --quick run.\n"),
            "{text}"
        );
        assert!(
            text.ends_with("All results: `bench-run show 0123abcd#3`.\n"),
            "{text}"
        );
    }
}
