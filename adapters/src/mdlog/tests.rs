//! The markdown log reader on the seed's own log (`testdata/mdlog/seed-002.md`) and on hostile
//! input.

#![allow(clippy::unwrap_used, clippy::float_cmp, clippy::panic)]

use super::records::MAX_PROBLEMS;
use super::*;
use crate::model::{Direction, Estimate, Statistic};
use std::path::Path;

fn seed() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/mdlog/seed-002.md")).unwrap()
}

/// The run of `suite` of the entry whose heading is on `line`.
fn run<'a>(log: &'a Log, line: usize, suite: &str) -> &'a LogRun {
    log.runs
        .iter()
        .find(|r| r.line == line && r.provenance.suite == suite)
        .unwrap_or_else(|| panic!("no run of {suite} at line {line}"))
}

/// The headline value, unit and statistics of a result.
fn value(run: &LogRun, benchmark: &str, metric: &str) -> (f64, String, Vec<Statistic>) {
    let m = run
        .measurements
        .iter()
        .find(|m| m.benchmark.full == benchmark && m.metric == metric)
        .unwrap_or_else(|| panic!("line {}: no {benchmark} {metric}", run.line));
    (
        m.estimate.point,
        m.unit.clone(),
        m.statistics.keys().copied().collect(),
    )
}

#[test]
fn every_entry_of_the_seed_log_is_a_run() {
    let log = parse(&seed()).unwrap();
    assert_eq!(log.entries, 10);
    assert!(log.unreadable.is_empty());
    assert_eq!(
        log.skipped,
        [SkippedEntry {
            line: 11,
            title: "TEMPLATE ENTRY".to_owned(),
            reason: "a template, not a measured entry".to_owned()
        }]
    );
    // (heading line, suite, date, results): the codec parity entry ran two suites.
    let want: [(usize, &str, &str, usize); 11] = [
        (35, "mathldbt_transport", "2026-02-14T17:26:18.000Z", 8),
        (73, "mathldbt_transport", "2026-02-14T18:37:25.000Z", 16),
        (120, "json_vs_mathldbt", "2026-02-14T18:37:25.000Z", 8),
        (
            159,
            "transport_pipeline_estimator",
            "2026-02-14T18:37:25.000Z",
            16,
        ),
        (
            205,
            "transport_pipeline_estimator",
            "2026-02-14T18:47:01.000Z",
            24,
        ),
        (255, "mathldbt_transport", "2026-02-15T18:15:00.000Z", 12),
        (255, "json_vs_mathldbt", "2026-02-15T18:15:00.000Z", 8),
        (325, "mathldbt_transport", "2026-02-15T18:45:00.000Z", 20),
        (380, "mathldbt_transport", "2026-02-15T20:30:00.000Z", 14),
        (
            435,
            "transport_pipeline_estimator",
            "2026-02-15T18:44:24.000Z",
            48,
        ),
        (494, "mathldbt_transport", "2026-02-16T08:42:54.000Z", 8),
    ];
    let got: Vec<(usize, &str, &str, usize)> = log
        .runs
        .iter()
        .map(|r| {
            (
                r.line,
                r.provenance.suite.as_str(),
                r.recorded_at.as_str(),
                r.measurements.len(),
            )
        })
        .collect();
    assert_eq!(got, want);
    // Every run has its own identity, and they are all on one machine and toolchain.
    let mut digests: Vec<&str> = log.runs.iter().map(|r| r.content_sha256.as_str()).collect();
    digests.sort_unstable();
    digests.dedup();
    assert_eq!(digests.len(), 11);
    assert!(digests.iter().all(|d| d.len() == 64));
    let first = &log.runs[0].provenance;
    for r in &log.runs {
        assert_eq!(r.provenance.machine.fingerprint, first.machine.fingerprint);
        assert_eq!(r.provenance.toolchain, first.toolchain);
        assert!(r.provenance.command.is_empty() && r.provenance.cwd.is_empty());
        assert_eq!(r.provenance.git.commit, None);
    }
}

#[test]
fn the_first_entry_in_detail() {
    let log = parse(&seed()).unwrap();
    let r = run(&log, 35, "mathldbt_transport");
    assert_eq!(
        r.title,
        "2026-02-14 — `mathldbt_transport` (criterion, local)"
    );
    let p = &r.provenance;
    assert_eq!(p.machine.cpu_model, "Intel(R) Xeon(R) W-2295 CPU @ 3.00GHz");
    assert_eq!(
        (p.machine.physical_cores, p.machine.logical_cores),
        (Some(18), 36)
    );
    assert_eq!(p.machine.os, "GNU/Linux");
    assert_eq!(
        (p.machine.kernel.as_str(), p.machine.arch.as_str()),
        ("5.15.0-156-generic", "x86_64")
    );
    let t = p.toolchain.as_ref().unwrap();
    assert_eq!(
        (t.rustc_version.as_str(), t.cargo_version.as_str()),
        ("1.90.0", "cargo 1.90.0")
    );
    assert_eq!(
        p.cargo_command.as_deref().unwrap(),
        ["cargo", "bench", "--bench", "mathldbt_transport"]
    );
    assert_eq!(p.build.profile, "release");
    assert!(p.build.features.is_empty());
    // `~14.99 µs`: the value as written, in ns, marked approximate.
    assert_eq!(
        value(r, "mathldbt_transport/encode_plain_ws/2000", "time"),
        (
            14_990.0,
            "ns".to_owned(),
            vec![Statistic::ApproximateMedian]
        )
    );
    assert_eq!(
        value(r, "mathldbt_transport/encode_dict_delta_ws/100000", "time").0,
        5_280_000.0
    );
    let m = &r.measurements[0];
    assert_eq!(m.benchmark.group.as_deref(), Some("mathldbt_transport"));
    assert_eq!(m.benchmark.function.as_deref(), Some("encode_plain_ws"));
    assert_eq!(m.benchmark.value.as_deref(), Some("2000"));
    assert_eq!(m.direction, Direction::LowerIsBetter);
    assert_eq!(
        m.statistics[&Statistic::ApproximateMedian],
        Estimate::point(14_990.0)
    );
    assert!(m.samples.is_none() && m.throughput.is_none());
    assert_eq!(
        r.notes,
        "Profile:\n- release (cargo bench; criterion)\nNotes:\n- `gnuplot` not found; criterion \
         used plotters backend (this does not affect measured timings)."
    );
}

#[test]
fn concrete_values_of_the_other_entries() {
    let log = parse(&seed()).unwrap();
    let zstd = run(&log, 73, "mathldbt_transport");
    assert_eq!(
        zstd.provenance.build.features,
        ["compression-gzip", "compression-zstd"]
    );
    assert_eq!(
        value(zstd, "mathldbt_transport/encode_gzip_ws/2000", "time"),
        (
            2_921_600.0,
            "ns".to_owned(),
            vec![Statistic::ApproximateMedian]
        )
    );
    let json = run(&log, 120, "json_vs_mathldbt");
    assert_eq!(
        value(json, "json_vs_mathldbt/json_deserialize/100000", "time").0,
        41_114_000.0
    );
    // Bytes and estimated transfer times, not medians: no statistic, and a debug build.
    let estimator = run(&log, 159, "transport_pipeline_estimator");
    assert_eq!(estimator.provenance.build.profile, "debug");
    assert_eq!(
        value(estimator, "transport_pipeline/json_none/100000", "bytes"),
        (12_700_001.0, "bytes".to_owned(), vec![])
    );
    assert_eq!(
        value(
            estimator,
            "transport_pipeline/json_none/100000",
            "t_transfer_s"
        ),
        (1.046, "s".to_owned(), vec![])
    );
    // Two commands of one suite: one `sh -c` in the order logged.
    let two = estimator.provenance.cargo_command.as_deref().unwrap();
    assert_eq!(two[..2], ["sh", "-c"]);
    assert!(two[2].contains("--rows 2000") && two[2].contains("; cargo run"));
    // The codec parity entry: one run per suite, each with its own command, medians from tables.
    let parity = run(&log, 255, "mathldbt_transport");
    let parity_json = run(&log, 255, "json_vs_mathldbt");
    assert_eq!(
        parity_json.provenance.cargo_command.as_deref().unwrap(),
        ["cargo", "bench", "--bench", "json_vs_mathldbt"]
    );
    assert_ne!(parity.content_sha256, parity_json.content_sha256);
    assert_eq!(
        value(
            parity,
            "mathldbt_transport/decode_into_plain_ws/2000",
            "time"
        ),
        (8_463.6, "ns".to_owned(), vec![Statistic::Median])
    );
    assert_eq!(
        value(
            parity_json,
            "json_vs_mathldbt/mathldbt_decode_ws/2000",
            "time"
        )
        .0,
        49_308.0
    );
    let post = run(&log, 325, "mathldbt_transport");
    assert_eq!(
        value(post, "mathldbt_transport/encode_zstd_ws/2000", "time"),
        (332_401.0, "ns".to_owned(), vec![Statistic::Median])
    );
    // The delta column is left out; the operator is a note; `cargo test` is not the command.
    let helpers = run(&log, 380, "mathldbt_transport");
    assert!(helpers.measurements.iter().all(|m| m.metric == "time"));
    assert!(helpers.notes.starts_with("Operator: codex-cli\n"));
    assert_eq!(
        helpers.provenance.cargo_command.as_deref().unwrap()[..2],
        ["cargo", "bench"]
    );
    // Seconds in `_s` columns; `-` cells are no value.
    let release = run(&log, 435, "transport_pipeline_estimator");
    let mathldbt = "transport_pipeline/mathldbt_none/2000";
    assert_eq!(value(release, mathldbt, "enc_s").0, 0.000_688);
    assert_eq!(value(release, mathldbt, "t_total_s").0, 0.038_276);
    let json_zstd: Vec<&str> = release
        .measurements
        .iter()
        .filter(|m| m.benchmark.full == "transport_pipeline/json_zstd/2000")
        .map(|m| m.metric.as_str())
        .collect();
    assert_eq!(json_zstd, ["bytes", "t_transfer_s"]);
    assert!(release.notes.contains("Note (formatting correction):"));
    // Two median columns per row: the column names the benchmark. No core counts logged.
    let fast = run(&log, 494, "mathldbt_transport");
    assert_eq!(
        value(
            fast,
            "mathldbt_transport/encode_fast_path_dict_delta_ws/100000",
            "time"
        )
        .0,
        4_981_000.0
    );
    assert_eq!(fast.provenance.machine.physical_cores, None);
    assert_eq!(
        fast.provenance.cargo_command.as_deref().unwrap()[0],
        "CARGO_TARGET_DIR=/media/Development/tmp/cargo-target"
    );
}

/// The identity of an entry's runs survives CRLF line ends and a log that grew; it changes with
/// the entry's own text.
#[test]
fn digests_follow_the_entry_text_only() {
    let bytes = seed();
    let digests =
        |log: &Log| -> Vec<String> { log.runs.iter().map(|r| r.content_sha256.clone()).collect() };
    let original = digests(&parse(&bytes).unwrap());
    let crlf = String::from_utf8(bytes.clone())
        .unwrap()
        .replace('\n', "\r\n");
    assert_eq!(digests(&parse(crlf.as_bytes()).unwrap()), original);
    let grown = [
        bytes.as_slice(),
        b"\n---\n\n## 2026-02-17 - `mathldbt_transport`\n\nDate (UTC): 2026-02-17T10:00:00Z\n\n\
          Machine:\n\n- CPU: X\n- OS: Linux 6.1 x86_64\n- Rust: rustc 1.91.0\n\nCommand(s):\n\n\
          - `cargo bench --bench mathldbt_transport`\n\nResults (median):\n\n- `a`: 1 ms\n",
    ]
    .concat();
    let grown = digests(&parse(&grown).unwrap());
    assert_eq!(grown[..11], original[..]);
    assert_eq!(grown.len(), 12);
    let edited = String::from_utf8(bytes)
        .unwrap()
        .replace("~14.99 µs", "~14.98 µs");
    let edited = digests(&parse(edited.as_bytes()).unwrap());
    assert_ne!(edited[0], original[0]);
    assert_eq!(edited[1..], original[1..]);
}

/// A cut anywhere is an error or leaves whole entries and, in the last one, the results before
/// the cut: never a changed value, date, machine or command.
///
/// A cut inside an entry leaves the entries before it as they were, so (to keep the test quick)
/// each prefix is read from the start of the entry it cuts.
#[test]
fn truncation_at_every_byte() {
    let bytes = seed();
    let full = parse(&bytes).unwrap();
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            bytes
                .windows(4)
                .enumerate()
                .filter(|(_, w)| *w == b"\n## ")
                .map(|(at, _)| at + 1),
        )
        .collect();
    let (mut parsed, mut whole_entries) = (0, 0);
    for len in 0..bytes.len() {
        let start = starts
            .iter()
            .rev()
            .copied()
            .find(|&s| s <= len)
            .unwrap_or(0);
        let lines_before = bytes[..start].iter().filter(|&&b| b == b'\n').count();
        let Ok(log) = parse(&bytes[start..len]) else {
            continue;
        };
        parsed += 1;
        assert!(log.runs.len() <= 2, "length {len}");
        for r in &log.runs {
            let whole = run(&full, r.line + lines_before, &r.provenance.suite);
            assert_eq!(r.recorded_at, whole.recorded_at, "length {len}");
            assert_eq!(r.provenance, whole.provenance, "length {len}");
            assert!(!r.measurements.is_empty(), "length {len}");
            assert_eq!(
                r.measurements[..],
                whole.measurements[..r.measurements.len()],
                "length {len}, line {}",
                whole.line
            );
        }
        if len + 1
            == starts
                .iter()
                .copied()
                .find(|&s| s > len)
                .unwrap_or(bytes.len())
        {
            // The whole entry (up to the next one's heading) reads as in the whole log.
            whole_entries += usize::from(!log.runs.is_empty());
            for r in &log.runs {
                let whole = run(&full, r.line + lines_before, &r.provenance.suite);
                assert_eq!(r.measurements, whole.measurements, "length {len}");
                assert_eq!(r.content_sha256, whole.content_sha256, "length {len}");
            }
        }
    }
    assert!(parsed > 100, "only {parsed} prefixes parsed");
    assert_eq!(whole_entries, 10);
}

/// A small valid entry whose `Results` block is `results`.
fn entry_with(results: &str) -> String {
    format!(
        "# Log\n\n---\n\n## 2026-02-14 — `suite_a` (local)\n\nDate (UTC): 2026-02-14T17:26:18Z\n\n\
         Machine:\n\n- CPU: Some CPU (2c/4t)\n- OS: Linux 6.1.0 x86_64\n- Rust: rustc 1.90.0, \
         cargo 1.90.0\n\nCommand(s):\n\n- `cargo bench --bench suite_a`\n\n{results}\n"
    )
}

#[test]
fn hostile_inputs_are_errors() {
    let median =
        |lines: &str| entry_with(&format!("Results (median; lower is better):\n\n{lines}"));
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            b"".to_vec(),
            "no benchmarks found in markdown log (no entry",
        ),
        (b"# only a title\n\nsome text\n".to_vec(), "no entry"),
        (
            b"\x00\x01\x02 binary \xff\xfe garbage".to_vec(),
            "line 1: not UTF-8",
        ),
        (b"## ok\n\xc3\x28\n".to_vec(), "line 2: not UTF-8"),
        (
            b"## 2026-02-14 x\n".to_vec(),
            "line 1: the entry lacks its date (`Date (UTC): 2026-02-14T17:26:18Z`), a `- CPU:` \
             line under `Machine:`",
        ),
        (
            entry_with("Results (median):\n\n- `a`: 1 ms")
                .replace("2026-02-14T17:26:18Z", "soon")
                .into_bytes(),
            "line 7: cannot read the date \"soon\"",
        ),
        (
            entry_with("Results (median):\n\n- `a`: 1 ms")
                .replace("2026-02-14T17:26:18Z", "0001-01-01T00:00:00Z")
                .into_bytes(),
            "is not between 1970 and 9999",
        ),
        (
            entry_with("Date (UTC): 2026-02-15T00:00:00Z\n\nResults (median):\n\n- `a`: 1 ms")
                .into_bytes(),
            "line 19: a second date (the first is on line 7)",
        ),
        (
            entry_with("Results (median):\n\n- `a`: 1 ms")
                .replace("- OS:", "- GPU:")
                .into_bytes(),
            "line 12: unknown machine line `gpu`",
        ),
        (
            entry_with("Results (median):\n\n- `a`: 1 ms")
                .replace("rustc 1.90.0, cargo 1.90.0", "stable")
                .into_bytes(),
            "cannot read the Rust version in \"stable\"",
        ),
        (
            entry_with("Results (median):\n\n- `a`: 1 ms")
                .replace("- `cargo bench --bench suite_a`", "- cargo bench")
                .into_bytes(),
            "line 17: a command is written in backticks",
        ),
        (
            entry_with("Results (median):\n\n- `a`: 1 ms")
                .replace("--bench suite_a", "--features \"a b")
                .into_bytes(),
            "unterminated \" quote",
        ),
        (
            median("- `a`: 12").into_bytes(),
            "line 21: \"12\" has no unit",
        ),
        (
            median("- `a`: 12 parsecs").into_bytes(),
            "unknown unit \"parsecs\"",
        ),
        (
            median("- `a`: -3 ms").into_bytes(),
            "\"-3 ms\" is not a number",
        ),
        (median("- `a`: 1e9 s").into_bytes(), "unknown unit \"e9 s\""),
        (
            median("- `a`: 99,999,999,999 s").into_bytes(),
            "is absurdly large",
        ),
        (
            median(&format!("- `a`: {} ns", "9".repeat(400))).into_bytes(),
            "is not finite",
        ),
        (median("- `a` 3 ms").into_bytes(), "line 21: a result reads"),
        (
            entry_with("Results:\n\n- `a`: ~3 ms").into_bytes(),
            "line 21: `~` marks an approximate median",
        ),
        (
            median("- `a`: 1 ms\n- `a`: 2 ms").into_bytes(),
            "line 22: benchmark `suite_a/a` metric `time` is given twice (first on line 21)",
        ),
        (
            median("| a | Median |\n|---|---|\n| x | 1 ms | 2 ms |").into_bytes(),
            "line 23: the row has 3 cells, the header 2",
        ),
        (
            median("| a | Median |\n|---|---|\n| x | 1 m").into_bytes(),
            "line 23: a table row starts and ends with `|` (is it cut short?)",
        ),
        (
            median("| a | b |\n|---|---|\n| x | 7 |").into_bytes(),
            "line 23: column `b`: \"7\" has no unit",
        ),
        (median("").into_bytes(), "the entry lacks results"),
        (
            entry_with("Results (median):\n\n- `a`: 1 ms")
                .replace(
                    "- `cargo bench --bench suite_a`",
                    "- `cargo bench --bench x`\n- `cargo bench --bench y`",
                )
                .into_bytes(),
            "measure several targets (x, y)",
        ),
        (
            entry_with("Results (median):\n\n- `a`: 1 ms")
                .replace("`suite_a` (local)", "local")
                .replace("--bench suite_a", "")
                .into_bytes(),
            "cannot tell which suite this result belongs to",
        ),
        (
            format!("{}\n---\n\nstray text\n", median("- `a`: 1 ms")).into_bytes(),
            "line 25: text after a `---` or a `# ` heading and before the next `## ` entry",
        ),
        (
            format!("{}\n# Another title\n", median("- `a`: 1 ms")).into_bytes(),
            "line 23: text after a `---` or a `# ` heading",
        ),
    ];
    for (i, (bytes, needle)) in cases.into_iter().enumerate() {
        match parse(&bytes) {
            Ok(log) => panic!("case {i}: parsed {log:?}, expected {needle:?}"),
            Err(err) => assert!(
                err.to_string().contains(needle),
                "case {i}: expected {needle:?} in {err}"
            ),
        }
    }
}

/// Every problem of a log is listed with its line, the log is refused whole, and the lenient
/// reader takes the readable entries and lists the others.
#[test]
fn problems_are_listed_and_the_lenient_reader_keeps_the_readable_entries() {
    let good = entry_with("Results (median):\n\n- `a`: 1 ms");
    let bad = entry_with("Results (median):\n\n- `a`: 1 parsec\n- `b` 2 ms")
        .replace("# Log\n\n", "")
        .replace("2026-02-14T17:26:18Z", "2026-02-16T00:00:00Z");
    let log = format!("{good}{bad}");
    let err = parse(log.as_bytes()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("markdown log: refused whole, nothing imported: 2 problems\n"),
        "{text}"
    );
    assert!(
        text.contains("\n  line 40: unknown unit \"parsec\""),
        "{text}"
    );
    assert!(text.contains("\n  line 41: a result reads"), "{text}");
    assert!(
        matches!(&err, AdapterError::Unreadable { problems, not_listed: 0, .. } if problems.len() == 2)
    );
    let lenient = parse_lenient(log.as_bytes()).unwrap();
    assert_eq!((lenient.entries, lenient.runs.len()), (1, 1));
    assert_eq!(lenient.runs[0].recorded_at, "2026-02-14T17:26:18.000Z");
    assert_eq!(lenient.unreadable.len(), 1);
    assert_eq!(lenient.unreadable[0].line, 24);
    assert_eq!(
        lenient.unreadable[0]
            .problems
            .iter()
            .map(|p| p.line)
            .collect::<Vec<_>>(),
        [40, 41]
    );
}

/// A garbage log has a problem on every line: the lists stay bounded.
#[test]
fn problem_lists_are_bounded() {
    let lines: String = (0..100).map(|i| format!("- `b{i}` {i} ms\n")).collect();
    let err = parse(entry_with(&format!("Results (median):\n\n{lines}")).as_bytes()).unwrap_err();
    let AdapterError::Unreadable { problems, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(problems.len(), MAX_PROBLEMS + 1);
    assert!(
        problems[MAX_PROBLEMS]
            .problem
            .contains("and 80 more problems")
    );

    let headings = "## x\n".repeat(MAX_UNREADABLE + 500);
    let log = parse_lenient(headings.as_bytes()).unwrap();
    assert_eq!(log.unreadable.len(), MAX_UNREADABLE);
    assert_eq!(log.unreadable_not_listed, 500);
    let text = parse(headings.as_bytes()).unwrap_err().to_string();
    assert!(
        text.contains("... and 500 more"),
        "{}",
        &text[text.len() - 200..]
    );
}

#[test]
fn tolerated_variations() {
    // A plain `cargo bench` (the title names the suite), `*` bullets, CRLF, a commit and branch,
    // `higher is better`, byte counts, a unit in a header, a date with an offset, a nested group.
    let text = "## 2026-03-01 — `suite_b`\r\n\r\nDate (UTC): 2026-03-01T10:00:00+02:00\r\n\
                Commit: `0123abcd` (dirty)\r\nBranch: main\r\n\r\nMachine:\r\n\r\n* CPU: Some \
                CPU\r\n* OS: Darwin 23.1.0 arm64\r\n* Rust: rustc 1.91.0\r\n\r\nCommand(s):\r\n\
                \r\n* `cargo bench`\r\n* `cargo test`\r\n\r\nResults (higher is better):\r\n\r\n\
                * `wire size`: 1,234 bytes\r\n* big:\r\n  * rows=10:\r\n    * `a`: 1 ms\r\n\r\n\
                ### Times\r\n\r\n| Benchmark | Time (ms) |\r\n|:--|--:|\r\n| `b` | 2.5 |\r\n";
    let log = parse(text.as_bytes()).unwrap();
    let [r] = log.runs.as_slice() else {
        panic!("{log:?}")
    };
    assert_eq!(r.recorded_at, "2026-03-01T08:00:00.000Z");
    assert_eq!(r.provenance.suite, "suite_b");
    assert_eq!(
        (r.provenance.git.commit.as_deref(), r.provenance.git.dirty),
        (Some("0123abcd"), true)
    );
    assert_eq!(r.provenance.git.branch.as_deref(), Some("main"));
    assert_eq!(r.provenance.machine.arch, "arm64");
    // Both commands name no target: both are the run's.
    assert_eq!(
        r.provenance.cargo_command.as_deref().unwrap()[..2],
        ["sh", "-c"]
    );
    let got: Vec<(&str, &str, f64, Direction)> = r
        .measurements
        .iter()
        .map(|m| {
            (
                m.benchmark.full.as_str(),
                m.metric.as_str(),
                m.estimate.point,
                m.direction,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "suite_b/wire size",
                "bytes",
                1234.0,
                Direction::HigherIsBetter
            ),
            ("suite_b/a/big/10", "time", 1e6, Direction::HigherIsBetter),
            ("suite_b/b/Times", "time", 2.5e6, Direction::HigherIsBetter),
        ]
    );
}

/// Only the log's own template is skipped: an entry about a template benchmark is read, and a
/// template someone filled in halfway is an entry that cannot be read.
#[test]
fn templates_are_told_from_entries() {
    let text =
        entry_with("Results (median):\n\n- `render`: 3 ms").replace("(local)", "template_render");
    let log = parse(text.as_bytes()).unwrap();
    assert_eq!((log.runs.len(), log.skipped.len()), (1, 0));
    let filled = "## TEMPLATE ENTRY\n\nDate (UTC): 2026-02-14T00:00:00Z\n";
    let log = parse_lenient(filled.as_bytes()).unwrap();
    assert!(log.skipped.is_empty());
    assert_eq!(log.unreadable[0].title, "TEMPLATE ENTRY");
}

#[test]
fn many_results_are_bounded_by_the_input() {
    let lines: String = (0..50_000).map(|i| format!("- `b{i}`: {i} ns\n")).collect();
    let log = parse(entry_with(&format!("Results (median):\n\n{lines}")).as_bytes()).unwrap();
    assert_eq!(log.runs[0].measurements.len(), 50_000);
    assert_eq!(log.runs[0].measurements[49_999].estimate.point, 49_999.0);
}
