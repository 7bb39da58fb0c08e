//! Recording: a fixture suite run twice lands in the ledger with full provenance and raw
//! samples; `show`, `list` and `compare` honour their JSON contract; the ledger is append-only.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use serde_json::Value;
use util::{Sandbox, assert_exit, json, stdout};

#[test]
fn two_quick_runs_are_recorded_with_provenance_and_compared() {
    let sandbox = Sandbox::new();
    let first = sandbox.quick_run(
        &["--record-env", "FIXTURE_NOTE"],
        &[("FIXTURE_NOTE", "first")],
    );
    assert_exit(&first, 0);
    assert!(
        util::stderr(&first).contains("[3/3]"),
        "progress shows n of m:\n{}",
        util::stderr(&first)
    );
    // The second run prints the delta table against the first (named: a --quick run is never
    // a default baseline).
    let second = sandbox.quick_run(&["--base", "1"], &[]);
    assert_exit(&second, 0);
    let table = stdout(&second);
    assert!(
        table.contains("run #1") && table.contains("run #2"),
        "{table}"
    );
    for bench in ["sum/1000", "sum/4000", "fnv", "geomean"] {
        assert!(table.contains(bench), "delta table lacks {bench}:\n{table}");
    }

    // list: an array of runs with the documented keys, newest first.
    let list = sandbox
        .bench_run()
        .args(["list", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&list, 0);
    let runs = json(&list);
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for key in ["id", "suite", "created_at", "git_commit"] {
        assert!(
            runs[0].get(key).is_some(),
            "list entry lacks {key}: {}",
            runs[0]
        );
    }
    assert_eq!(runs[0]["id"], 2);
    assert_eq!(runs[1]["suite"], "tiny_suite");
    // Outside a git repository the commit is recorded empty.
    assert_eq!(runs[0]["git_commit"], Value::Null);

    // show: provenance and results with raw sample counts, times in ns.
    let show = sandbox
        .bench_run()
        .args(["show", "1", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&show, 0);
    let doc = json(&show);
    let run = &doc["run"];
    assert_eq!(run["id"], 1);
    assert_eq!(run["suite"], "tiny_suite");
    assert_eq!(run["git_dirty"], false);
    assert!(
        run["command"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "--quick")
    );
    assert!(
        run["cargo_command"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "tiny_suite")
    );
    for key in [
        "fingerprint",
        "cpu_model",
        "logical_cores",
        "os",
        "kernel",
        "arch",
    ] {
        assert!(
            !run["machine"][key].is_null(),
            "machine lacks {key}: {}",
            run["machine"]
        );
    }
    assert!(
        run["toolchain"]["rustc_verbose"]
            .as_str()
            .unwrap()
            .contains("release:")
    );
    assert!(
        run["toolchain"]["cargo_version"]
            .as_str()
            .unwrap()
            .starts_with("cargo ")
    );
    assert_eq!(run["build"]["profile"], "bench");
    assert_eq!(run["env"]["FIXTURE_NOTE"], "first");
    assert_eq!(run["quick"], true);

    let results = doc["results"].as_array().unwrap();
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["benchmark"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fnv", "sum/1000", "sum/4000"]);
    for r in results {
        assert_eq!(r["metric"], "time");
        assert_eq!(r["unit"], "ns");
        let (lower, estimate, upper) = (
            r["lower"].as_f64().unwrap(),
            r["estimate"].as_f64().unwrap(),
            r["upper"].as_f64().unwrap(),
        );
        assert!(
            lower <= estimate && estimate <= upper && estimate > 1.0,
            "{r}"
        );
        assert_eq!(r["samples"], 20, "quick runs keep 20 raw samples: {r}");
        for stat in ["mean", "median", "std_dev", "median_abs_dev"] {
            assert!(
                r["statistics"][stat]["estimate"].is_number(),
                "{stat} missing: {r}"
            );
        }
    }
    let sum = results
        .iter()
        .find(|r| r["benchmark"] == "sum/1000")
        .unwrap();
    assert_eq!(sum["throughput"]["kind"], "elements");
    assert_eq!(sum["throughput"]["per_iteration"], 1000);
    assert!(sum["throughput"]["per_second"].as_f64().unwrap() > 0.0);
    assert_eq!(
        results.iter().find(|r| r["benchmark"] == "fnv").unwrap()["throughput"],
        Value::Null
    );

    // export keeps the raw samples themselves.
    let export = sandbox
        .bench_run()
        .args(["export", "1", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&export, 0);
    let exported = json(&export);
    let raw = &exported["results"][0]["raw_samples"];
    assert_eq!(raw["iters"].as_array().unwrap().len(), 20);
    assert_eq!(raw["times_ns"].as_array().unwrap().len(), 20);

    // compare: one row per benchmark with before, after, change and a verdict.
    let compare = sandbox
        .bench_run()
        .args(["compare", "1", "latest", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&compare, 0);
    let cmp = json(&compare);
    assert_eq!(cmp["base"]["id"], 1);
    assert_eq!(cmp["head"]["id"], 2);
    let rows = cmp["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for row in rows {
        assert!(
            row["before"].is_number() && row["after"].is_number() && row["change_pct"].is_number(),
            "{row}"
        );
        assert!(row["p_value"].is_number(), "samples give a p-value: {row}");
        assert!(row["verdict"].is_string());
    }
    assert!(cmp["geomean"]["change_pct"].is_number());

    // markdown for a pull request
    let md = sandbox
        .bench_run()
        .args(["compare", "1", "2", "--format", "markdown"])
        .output()
        .unwrap();
    assert_exit(&md, 0);
    assert!(stdout(&md).contains("| benchmark"), "{}", stdout(&md));
}

#[test]
fn every_ledger_table_rejects_update_and_delete() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let ledger = harness::ledger::Ledger::open(&path).await.unwrap();
        let run = sample_run();
        let id = ledger.record_run(&run).await.unwrap();
        ledger.tag(id, "baseline").await.unwrap();
        ledger.annotate(id, "a note").await.unwrap();
        let pool = ledger.pool();
        let statements = [
            (
                "machines",
                "UPDATE machines SET cpu_model = 'x'",
                "DELETE FROM machines",
            ),
            (
                "toolchains",
                "UPDATE toolchains SET host = 'x'",
                "DELETE FROM toolchains",
            ),
            ("runs", "UPDATE runs SET suite = 'x'", "DELETE FROM runs"),
            (
                "results",
                "UPDATE results SET estimate = 0",
                "DELETE FROM results",
            ),
            (
                "statistics",
                "UPDATE statistics SET point = 0",
                "DELETE FROM statistics",
            ),
            (
                "samples",
                "UPDATE samples SET iters = x''",
                "DELETE FROM samples",
            ),
            ("tags", "UPDATE tags SET name = 'x'", "DELETE FROM tags"),
            (
                "annotations",
                "UPDATE annotations SET text = 'x'",
                "DELETE FROM annotations",
            ),
            (
                "run_conditions",
                "UPDATE run_conditions SET others_cpus = 0",
                "DELETE FROM run_conditions",
            ),
        ];
        for (table, update, delete) in statements {
            let count: i64 =
                sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
                    .fetch_one(pool)
                    .await
                    .unwrap();
            assert!(count > 0, "{table} should hold a row for this test");
            for sql in [update, delete] {
                let err = sqlx::query(sql)
                    .execute(pool)
                    .await
                    .expect_err(sql)
                    .to_string();
                assert!(err.contains("append-only"), "{sql}: {err}");
            }
            let after: i64 =
                sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
                    .fetch_one(pool)
                    .await
                    .unwrap();
            assert_eq!(count, after, "{table} changed");
        }
        // A replacing insert would delete without firing DELETE triggers: refused too.
        let err = sqlx::query("INSERT OR REPLACE INTO runs SELECT * FROM runs WHERE id = 1")
            .execute(pool)
            .await
            .expect_err("replace")
            .to_string();
        assert!(err.contains("append-only"), "{err}");
        let err = sqlx::query(
            "INSERT OR REPLACE INTO run_conditions (run_id, others_cpus) VALUES (1, 0)",
        )
        .execute(pool)
        .await
        .expect_err("replace")
        .to_string();
        assert!(err.contains("append-only"), "{err}");
        // The stored run reads back unchanged.
        let results = ledger.measurements(id).await.unwrap();
        assert_eq!(results, run.measurements);
        let stored = ledger.require_run(id).await.unwrap().provenance;
        assert_eq!(stored.bench_exe, run.provenance.bench_exe);
        assert_eq!(stored.conditions, run.provenance.conditions);
    });
}

#[test]
fn executable_and_conditions_round_trip_and_are_optional() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let ledger = harness::ledger::Ledger::in_memory().await.unwrap();
        let full = sample_run();
        let full_id = ledger.record_run(&full).await.unwrap();

        // A run that recorded neither (an import, or a run from before they existed).
        let mut bare = sample_run();
        bare.provenance.bench_exe = None;
        bare.provenance.conditions = None;
        let bare_id = ledger.record_run(&bare).await.unwrap();
        // Only a hash (conditions could not be read, e.g. not Linux).
        let mut hash_only = sample_run();
        hash_only.provenance.conditions = None;
        let hash_id = ledger.record_run(&hash_only).await.unwrap();

        for (id, run) in [(full_id, &full), (bare_id, &bare), (hash_id, &hash_only)] {
            let stored = ledger.require_run(id).await.unwrap().provenance;
            assert_eq!(stored.bench_exe, run.provenance.bench_exe, "run {id}");
            assert_eq!(stored.conditions, run.provenance.conditions, "run {id}");
        }
        let listed = ledger
            .runs(&harness::ledger::RunFilter::default())
            .await
            .unwrap();
        let busy: Vec<(i64, Option<bool>)> = listed.iter().map(|r| (r.id, r.busy)).collect();
        assert_eq!(
            busy,
            [(hash_id, None), (bare_id, None), (full_id, Some(true))]
        );

        // Figures the ledger cannot store faithfully are refused, and nothing is recorded.
        let mut bad = sample_run();
        if let Some(c) = bad.provenance.conditions.as_mut() {
            c.others_cpus = f64::NAN;
        }
        let err = ledger.record_run(&bad).await.unwrap_err().to_string();
        assert!(err.contains("others_cpus"), "{err}");
        let mut bad = sample_run();
        if let Some(e) = bad.provenance.bench_exe.as_mut() {
            e.sha256 = "not a hash".into();
        }
        let err = ledger.record_run(&bad).await.unwrap_err().to_string();
        assert!(err.contains("64 lowercase hex digits"), "{err}");
        assert_eq!(ledger.runs(&Default::default()).await.unwrap().len(), 3);
    });
}

fn sample_run() -> harness::model::NewRun {
    use harness::model::*;
    let samples = Samples::new(
        SamplingMode::Linear,
        vec![1.0, 2.0, 3.0],
        vec![10.0, 21.0, 29.0],
    )
    .unwrap();
    let mut statistics = std::collections::BTreeMap::new();
    statistics.insert(Statistic::Mean, Estimate::point(10.0));
    NewRun {
        source: RunSource::ImportCriterion,
        provenance: RunProvenance {
            suite: "s".into(),
            command: vec!["bench-run".into()],
            machine: Machine {
                fingerprint: "f".into(),
                cpu_model: "cpu".into(),
                logical_cores: 2,
                ..Machine::default()
            },
            toolchain: Some(Toolchain {
                fingerprint: "t".into(),
                rustc_version: "1".into(),
                host: "h".into(),
                ..Toolchain::default()
            }),
            build: BuildConfig {
                profile: "bench".into(),
                ..BuildConfig::default()
            },
            bench_exe: Some(BenchExe {
                sha256: "0123456789abcdef".repeat(4),
                bytes: 3_581_016,
            }),
            conditions: Some(RunConditions {
                cpus: 2,
                wall_ms: 5300,
                load_start: Some(LoadAverage {
                    one: 5.09,
                    five: 2.5,
                    fifteen: 1.25,
                }),
                load_end: None,
                own_cpus: 0.58,
                others_cpus: 1.42,
                steal_pct: 0.1,
                per_benchmark: vec![BenchmarkConditions {
                    benchmark: "g/f/1".into(),
                    wall_ms: 1700,
                    others_cpus: 1.49,
                    steal_pct: 0.0,
                }],
            }),
            ..RunProvenance::default()
        },
        measurements: vec![Measurement {
            benchmark: BenchmarkId::named("g/f/1"),
            metric: metric::TIME.into(),
            unit: "ns".into(),
            direction: Direction::LowerIsBetter,
            estimate: Estimate {
                point: 10.0,
                lower: Some(9.0),
                upper: Some(11.0),
                confidence_level: Some(0.95),
                standard_error: None,
            },
            statistics,
            throughput: Some(Throughput {
                kind: ThroughputKind::Bytes,
                per_iteration: 64,
            }),
            samples: Some(samples),
        }],
    }
}
