//! `bench-run import markdown-log`: a hand-kept log (the seed's own BENCHMARKS.md) becomes runs
//! at their entries' dates, once however often it is imported, where the trend pages read them;
//! a log that cannot be read records nothing unless asked to skip what cannot be read; the
//! seed's history and the live suites recorded on top are one trend series per benchmark.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod util;

use bench_store::{Ledger, Location, TrendRuns};
use std::collections::BTreeMap;
use std::path::PathBuf;
use util::{Sandbox, assert_exit, json, run_count, stderr, stdout};

fn seed_log() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../adapters/testdata/mdlog/seed-002.md")
}

/// The entries' dates, in the order of the log (the codec parity entry measured two suites).
const DATES: [&str; 11] = [
    "2026-02-14T17:26:18.000Z",
    "2026-02-14T18:37:25.000Z",
    "2026-02-14T18:37:25.000Z",
    "2026-02-14T18:37:25.000Z",
    "2026-02-14T18:47:01.000Z",
    "2026-02-15T18:15:00.000Z",
    "2026-02-15T18:15:00.000Z",
    "2026-02-15T18:45:00.000Z",
    "2026-02-15T20:30:00.000Z",
    "2026-02-15T18:44:24.000Z",
    "2026-02-16T08:42:54.000Z",
];

/// Captured output of the live suites seed 002's log continues (`--list` of the criterion
/// suites, `--format bmf` of the estimator at 2,000 and 100,000 rows, merged).
fn live(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../adapters/testdata/mdlog/seed-002-live")
        .join(name)
}

/// The ids a criterion suite's `--list` printed (`<id>: benchmark`).
fn listed(suite: &str) -> Vec<String> {
    testkit::cargo_criterion::listed_ids(&live(&format!("{suite}.list")))
}

fn import(sandbox: &Sandbox, file: &std::path::Path, extra: &[&str]) -> std::process::Output {
    sandbox
        .bench_run()
        .args(["import", "markdown-log"])
        .arg(file)
        .args(extra)
        .output()
        .unwrap()
}

fn show(sandbox: &Sandbox, run: &str) -> serde_json::Value {
    let out = sandbox
        .bench_run()
        .args(["show", run, "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    json(&out)
}

#[tokio::test]
async fn the_seed_log_imports_once_at_its_dates_and_feeds_the_trends() {
    let sandbox = Sandbox::empty();
    let out = import(&sandbox, &seed_log(), &["--format", "json"]);
    assert_exit(&out, 0);
    assert!(
        stderr(&out).contains("skipped line 11 (\"TEMPLATE ENTRY\"): a template"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("11 runs of 10 entries"),
        "{}",
        stderr(&out)
    );
    let report = json(&out);
    assert_eq!(report["entries"], 10);
    let runs = report["runs"].as_array().unwrap();
    let got: Vec<(i64, bool, &str)> = runs
        .iter()
        .map(|r| {
            (
                r["run"].as_i64().unwrap(),
                r["created"].as_bool().unwrap(),
                r["recorded_at"].as_str().unwrap(),
            )
        })
        .collect();
    let want: Vec<(i64, bool, &str)> = (1..=11).zip(DATES).map(|(id, d)| (id, true, d)).collect();
    assert_eq!(got, want);

    // The ledger lists them at their own dates, as imported from a log.
    let out = sandbox
        .bench_run()
        .args(["list", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let listed = json(&out);
    let mut dates: Vec<(i64, &str, &str)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_i64().unwrap(),
                r["created_at"].as_str().unwrap(),
                r["source"].as_str().unwrap(),
            )
        })
        .collect();
    dates.sort_unstable();
    let want: Vec<(i64, &str, &str)> = (1..=11)
        .zip(DATES)
        .map(|(id, d)| (id, d, "import-markdown-log"))
        .collect();
    assert_eq!(dates, want);

    // The first entry: its machine, toolchain, command, note and results with their units.
    let first = show(&sandbox, "1");
    let run = &first["run"];
    assert_eq!(run["created_at"], DATES[0]);
    assert_eq!(run["suite"], "mathldbt_transport");
    assert_eq!(
        run["machine"]["cpu_model"],
        "Intel(R) Xeon(R) W-2295 CPU @ 3.00GHz"
    );
    assert_eq!(run["machine"]["logical_cores"], 36);
    assert_eq!(run["machine"]["kernel"], "5.15.0-156-generic");
    assert_eq!(run["toolchain"]["rustc_version"], "1.90.0");
    assert_eq!(
        run["cargo_command"],
        serde_json::json!(["cargo", "bench", "--bench", "mathldbt_transport"])
    );
    assert_eq!(run["build"]["profile"], "release");
    let note = run["annotations"][0]["text"].as_str().unwrap();
    assert!(
        note.starts_with("Imported from the markdown log ")
            && note.contains("entry on line 35: 2026-02-14 — `mathldbt_transport`")
            && note.contains("`gnuplot` not found"),
        "{note}"
    );
    assert_eq!(run["annotations"][0]["created_at"], DATES[0]);
    let result = |shown: &serde_json::Value, benchmark: &str, metric: &str| {
        shown["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["benchmark"] == benchmark && r["metric"] == metric)
            .unwrap_or_else(|| panic!("no {benchmark} {metric}"))
            .clone()
    };
    // `~14.99 µs`: the value as written, in ns, marked approximate.
    let plain = result(&first, "mathldbt_transport/encode_plain_ws/2000", "time");
    assert_eq!(
        (plain["estimate"].as_f64(), plain["unit"].as_str()),
        (Some(14_990.0), Some("ns"))
    );
    assert_eq!(
        plain["statistics"]["approximate_median"]["estimate"],
        14_990.0
    );
    assert!(plain["statistics"]["median"].is_null());
    // A table median is a plain median.
    let parity = show(&sandbox, "6");
    let into = result(
        &parity,
        "mathldbt_transport/decode_into_plain_ws/100000",
        "time",
    );
    assert_eq!(into["statistics"]["median"]["estimate"], 798_080.0);
    // Bytes and seconds of the estimator's release entry.
    let estimator = show(&sandbox, "10");
    // Under the estimator's own names and units (its `--format bmf` output).
    let bytes = result(&estimator, "transport_pipeline/json_none/100000", "bytes");
    assert_eq!(
        (bytes["estimate"].as_f64(), bytes["unit"].as_str()),
        (Some(12_700_001.0), Some("bytes"))
    );
    let enc = result(&estimator, "transport_pipeline/json_none/100000", "enc_s");
    assert_eq!(
        (enc["estimate"].as_f64(), enc["unit"].as_str()),
        (Some(0.030_358), Some("s"))
    );

    // The log entry of an imported run carries its date.
    let out = sandbox
        .bench_run()
        .args(["log", "1", "--dry-run"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert!(
        stdout(&out).contains("2026-02-14T17:26:18"),
        "{}",
        stdout(&out)
    );

    // Importing again records nothing and answers the same runs.
    let out = import(&sandbox, &seed_log(), &["--format", "json"]);
    assert_exit(&out, 0);
    let again = json(&out);
    assert!(
        again["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["created"] == false)
    );
    let ids: Vec<i64> = again["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, (1..=11).collect::<Vec<_>>());
    assert!(
        stderr(&out).contains("0 recorded, 11 already in"),
        "{}",
        stderr(&out)
    );
    assert_eq!(run_count(&sandbox), 11);

    // The log grew by one entry (copied elsewhere, CRLF): only the new entry is recorded. It
    // was measured before the others (a late copy from a notebook): recorded last, dated first.
    let mut grown = std::fs::read_to_string(seed_log()).unwrap();
    grown.push_str(
        "\n---\n\n## 2026-02-13 — `mathldbt_transport` (criterion, local)\n\nDate (UTC): \
         2026-02-13T09:00:00Z\n\nMachine:\n\n- CPU: Intel(R) Xeon(R) W-2295 CPU @ 3.00GHz \
         (18c/36t)\n- OS: Linux 5.15.0-156-generic x86_64 GNU/Linux\n- Rust: rustc 1.90.0, cargo \
         1.90.0\n\nCommand(s):\n\n- `cargo bench --bench mathldbt_transport`\n\nResults (median; \
         lower is better):\n\n- rows=2,000:\n  - `encode_plain_ws`: ~4.70 µs\n",
    );
    let grown = sandbox.write("copy/BENCHMARKS.md", grown.replace('\n', "\r\n").as_bytes());
    let out = import(&sandbox, &grown, &[]);
    assert_exit(&out, 0);
    assert!(
        stderr(&out).contains("1 recorded, 11 already in"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("12  recorded"), "{}", stdout(&out));
    assert_eq!(
        show(&sandbox, "12")["run"]["created_at"],
        "2026-02-13T09:00:00.000Z"
    );

    // Where the trend pages read: the suite's trend on its machine, in date order.
    let ledger = Ledger::open(Location::parse(&sandbox.db()).unwrap())
        .await
        .unwrap();
    let machines = ledger.machines(Some("mathldbt_transport")).await.unwrap();
    assert_eq!(
        machines.len(),
        1,
        "one machine for every entry: {machines:?}"
    );
    let trend = ledger
        .trend(
            "mathldbt_transport",
            Some(machines[0].id),
            bench_store::TrendRuns::Line,
        )
        .await
        .unwrap();
    let order: Vec<i64> = trend.runs.iter().map(|r| r.id).collect();
    assert_eq!(order, [12, 1, 2, 6, 8, 9, 11]);
    let series = trend
        .series
        .iter()
        .find(|s| s.benchmark == "mathldbt_transport/encode_plain_ws/2000" && s.metric == "time")
        .unwrap();
    let points: Vec<(i64, f64)> = series
        .values
        .iter()
        .map(|v| (v.run_id, v.estimate))
        .collect();
    assert_eq!(
        points,
        [
            (12, 4_700.0),
            (1, 14_990.0),
            (2, 13_946.0),
            (6, 5_007.3),
            (8, 4_596.0),
            (9, 4_766.0),
            // The fast-path entry's "Owned encode" of `Plain` is this benchmark.
            (11, 4_518.0),
        ]
    );
    assert_eq!((series.unit.as_str(), series.values.len()), ("ns", 7));
    let estimator = ledger
        .trend(
            "transport_pipeline_estimator",
            None,
            bench_store::TrendRuns::Line,
        )
        .await
        .unwrap();
    let order: Vec<i64> = estimator.runs.iter().map(|r| r.id).collect();
    assert_eq!(order, [4, 5, 10]);
    assert!(
        estimator
            .series
            .iter()
            .any(|s| s.metric == "bytes" && s.values.len() == 3)
    );
    ledger.close().await;
}

#[test]
fn an_unreadable_log_records_nothing_unless_asked_to_skip() {
    let sandbox = Sandbox::empty();
    let mut text = std::fs::read_to_string(seed_log()).unwrap();
    let seed_lines = text.lines().count();
    text.push_str(
        "\n---\n\n## 2026-02-17 — `mathldbt_transport`\n\nDate (UTC): 2026-02-17T09:00:00Z\n\n\
         Machine:\n\n- CPU: X\n- OS: Linux 6.1 x86_64\n- Rust: rustc 1.91.0\n\nCommand(s):\n\n\
         - `cargo bench --bench mathldbt_transport`\n\nResults (median):\n\n- `a`: 12\n\
         - `b`: ~3 furlongs\n",
    );
    let bad_line = seed_lines + 20;
    let log = sandbox.write("BENCHMARKS.md", text.as_bytes());
    let out = import(&sandbox, &log, &[]);
    assert_exit(&out, 2);
    let err = stderr(&out);
    for needle in [
        "cannot import",
        "--skip-unreadable",
        "refused whole, nothing imported: 2 problems",
        &format!("line {bad_line}: \"12\" has no unit"),
        &format!("line {}: unknown unit \"furlongs\"", bad_line + 1),
    ] {
        assert!(err.contains(needle), "{needle:?} not in:\n{err}");
    }
    assert_eq!(run_count(&sandbox), 0);

    let out = import(&sandbox, &log, &["--skip-unreadable", "--format", "json"]);
    assert_exit(&out, 0);
    assert!(
        stderr(&out).contains("NOT imported: line"),
        "{}",
        stderr(&out)
    );
    let report = json(&out);
    assert_eq!(report["runs"].as_array().unwrap().len(), 11);
    assert_eq!(report["unreadable"][0]["line"], seed_lines + 4);
    assert_eq!(report["unreadable"][0]["problems"][1]["line"], bad_line + 1);
    assert_eq!(run_count(&sandbox), 11);

    // Garbage and a log cut inside a value are refused, naming what is wrong.
    let garbage = sandbox.write("garbage.md", b"\x89PNG\r\n\x1a\n\x00\x00\xff binary");
    let out = import(&sandbox, &garbage, &[]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("line 1: not UTF-8"),
        "{}",
        stderr(&out)
    );
    let seed = std::fs::read(seed_log()).unwrap();
    let at = seed.windows(5).position(|w| w == b"14.99").unwrap() + 4;
    let cut = sandbox.write("cut.md", &seed[..at]);
    let out = import(&sandbox, &cut, &[]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("line 60: \"~14.9\" has no unit"),
        "{}",
        stderr(&out)
    );
    assert_eq!(run_count(&sandbox), 11);

    let out = sandbox
        .bench_run()
        .args(["import", "markdown-log", "--help"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let help = stdout(&out);
    for word in [
        "seed 002",
        "approximate_median",
        "--skip-unreadable",
        "Examples:",
        "bench-run import markdown-log BENCHMARKS.md",
    ] {
        assert!(
            help.contains(word),
            "import markdown-log --help lacks {word}:\n{help}"
        );
    }
}

/// Seed 002 imported and the live suites recorded on top, as they record (criterion ids, the
/// estimator's BMF names and units): every benchmark and metric of the seed is one series
/// holding the seed's points and the live point, in one unit.
#[tokio::test]
async fn the_seed_history_and_the_live_suites_are_one_series_per_benchmark() {
    let sandbox = Sandbox::empty();
    let out = import(&sandbox, &seed_log(), &["--format", "json"]);
    assert_exit(&out, 0);
    let imported = json(&out);
    let mut live_runs: BTreeMap<&str, i64> = BTreeMap::new();
    for suite in ["mathldbt_transport", "json_vs_mathldbt"] {
        let messages: String = listed(suite)
            .iter()
            .map(|id| testkit::cargo_criterion::benchmark_complete(id, 1_000.0) + "\n")
            .collect();
        let file = sandbox.write(&format!("{suite}.jsonl"), messages.as_bytes());
        let out = sandbox
            .bench_run()
            .args(["import", "cargo-criterion"])
            .arg(&file)
            .args(["--suite", suite])
            .output()
            .unwrap();
        assert_exit(&out, 0);
        live_runs.insert(suite, stdout(&out).trim().parse().unwrap());
    }
    let out = sandbox
        .bench_run()
        .args(["import", "bmf"])
        .arg(live("transport_pipeline_estimator.bmf.json"))
        .args(["--suite", "transport_pipeline_estimator"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    live_runs.insert(
        "transport_pipeline_estimator",
        stdout(&out).trim().parse().unwrap(),
    );

    // The ids the import maps the log's names to are ids the live suite has.
    let ids = listed("mathldbt_transport");
    for function in bench_adapters::mdlog::live_functions("mathldbt_transport") {
        for rows in ["2000", "100000"] {
            let id = format!("mathldbt_transport/{function}/{rows}");
            assert!(ids.contains(&id), "{id} is not in the suite's --list");
        }
    }
    let log = bench_adapters::mdlog::parse(&std::fs::read(seed_log()).unwrap()).unwrap();
    let ledger = Ledger::open(Location::parse(&sandbox.db()).unwrap())
        .await
        .unwrap();
    let mut checked = 0;
    for (suite, live_run) in &live_runs {
        let trend = ledger.trend(suite, None, TrendRuns::Line).await.unwrap();
        // (benchmark, metric) -> the seed's runs that measured it, and its unit.
        let mut seed: BTreeMap<(&str, &str), (usize, &str)> = BTreeMap::new();
        for run in log.runs.iter().filter(|r| r.provenance.suite == *suite) {
            for m in &run.measurements {
                let entry = seed
                    .entry((m.benchmark.full.as_str(), m.metric.as_str()))
                    .or_insert((0, m.unit.as_str()));
                entry.0 += 1;
                assert_eq!(
                    entry.1, m.unit,
                    "{} {}: one unit in the log",
                    m.benchmark.full, m.metric
                );
            }
        }
        assert!(!seed.is_empty(), "{suite}: the seed measured it");
        for ((benchmark, metric), (seed_points, unit)) in seed {
            let series: Vec<_> = trend
                .series
                .iter()
                .filter(|s| s.benchmark == benchmark && s.metric == metric)
                .collect();
            let [series] = series.as_slice() else {
                panic!("{benchmark} [{metric}]: {} series", series.len());
            };
            assert_eq!(series.unit, unit, "{benchmark} [{metric}]: one unit");
            let live_points = series
                .values
                .iter()
                .filter(|v| v.run_id == *live_run)
                .count();
            assert_eq!(
                (series.values.len() - live_points, live_points),
                (seed_points, 1),
                "{benchmark} [{metric}]: the seed's points and the live one"
            );
            checked += 1;
        }
        // Nothing the seed measured is left under a name only the log uses.
        for s in &trend.series {
            assert!(
                s.values.iter().any(|v| v.run_id == *live_run),
                "{suite}: {} [{}] is not measured live",
                s.benchmark,
                s.metric
            );
        }
    }
    // Every result of the seed is in one of those series.
    let results: usize = imported["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["results"].as_u64().unwrap())
        .sum::<u64>()
        .try_into()
        .unwrap();
    let in_live_suites: usize = log
        .runs
        .iter()
        .filter(|r| live_runs.contains_key(r.provenance.suite.as_str()))
        .map(|r| r.measurements.len())
        .sum();
    assert_eq!(results, in_live_suites, "every seed suite is a live suite");
    assert!(checked >= 40, "{checked} series checked");

    // The example of the issue: zstd encode at 100,000 rows, three seed entries and the live run.
    let trend = ledger
        .trend("mathldbt_transport", None, TrendRuns::Line)
        .await
        .unwrap();
    let zstd = trend
        .series
        .iter()
        .find(|s| s.benchmark == "mathldbt_transport/encode_zstd_ws/100000")
        .unwrap();
    let points: Vec<(i64, f64)> = zstd.values.iter().map(|v| (v.run_id, v.estimate)).collect();
    assert_eq!(
        points,
        [
            (2, 16_896_000.0),
            (8, 17_492_000.0),
            (9, 15_647_000.0),
            (live_runs["mathldbt_transport"], 1_000.0)
        ]
    );
    ledger.close().await;
}
