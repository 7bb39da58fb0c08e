//! The noise model and the quarantine list from the outside: `--quarantine FILE` and
//! `.bench-quarantine` keep a regression from failing the gate while still showing it,
//! flagged benchmarks are listed under the table, and `--quick` runs are never history.
//!
//! Runs are BMF imports with chosen values (no benchmark runs, so nothing here is timed).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use util::{Sandbox, assert_exit, json, stderr, stdout};

/// A BMF document: one `latency` measure per benchmark with a +-1% interval.
fn bmf(values: &[(&str, f64)]) -> String {
    let entries: Vec<String> = values
        .iter()
        .map(|(name, v)| {
            format!(
                r#""{name}": {{"latency": {{"value": {v}, "lower_value": {l}, "upper_value": {u}}}}}"#,
                l = v * 0.99,
                u = v * 1.01
            )
        })
        .collect();
    format!("{{{}}}", entries.join(","))
}

/// Imports `values` as a run of suite `wire`.
fn import(sandbox: &Sandbox, values: &[(&str, f64)]) {
    let file = sandbox.write("run.json", bmf(values).as_bytes());
    let out = sandbox
        .bench_run()
        .args(["import", "bmf"])
        .arg(&file)
        .args(["--suite", "wire"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
}

fn gate(sandbox: &Sandbox, extra: &[&str]) -> std::process::Output {
    sandbox
        .bench_run()
        .args(["gate", "--base", "1", "--head", "2"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn quarantined_regressions_are_shown_but_never_fail_the_gate() {
    let sandbox = Sandbox::empty();
    import(&sandbox, &[("stable", 100.0), ("flaky/io", 100.0)]);
    import(&sandbox, &[("stable", 100.0), ("flaky/io", 130.0)]);

    let plain = gate(&sandbox, &[]);
    assert_exit(&plain, 1);
    assert!(stderr(&plain).contains("flaky/io"), "{}", stderr(&plain));

    let list = sandbox.write(
        "quarantine.txt",
        b"# Known noisy benchmarks\n\nflaky/*   # bimodal since the allocator change\n",
    );
    let list_arg = list.to_str().unwrap();
    let quarantined = gate(&sandbox, &["--quarantine", list_arg]);
    assert_exit(&quarantined, 0);
    let err = stderr(&quarantined);
    assert!(
        err.contains("1 quarantined benchmark(s)") && err.contains("flaky/io (regression)"),
        "{err}"
    );
    assert!(err.contains("gate: pass"), "{err}");
    let out = stdout(&quarantined);
    assert!(out.contains("regression (quarantined)"), "{out}");
    assert!(
        out.contains("Quarantined (1; shown, never failing the gate): flaky/io [latency] (regression, pattern `flaky/*`)"),
        "{out}"
    );

    // JSON: the row keeps its verdict and names its pattern; the list is at the top level.
    let as_json = gate(&sandbox, &["--quarantine", list_arg, "--format", "json"]);
    assert_exit(&as_json, 0);
    let doc = json(&as_json);
    let row = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["benchmark"] == "flaky/io")
        .unwrap();
    assert_eq!(row["verdict"], "regression", "{doc:#}");
    assert_eq!(row["quarantined_by"], "flaky/*");
    assert_eq!(doc["quarantined"][0]["benchmark"], "flaky/io");
    assert_eq!(doc["counts"]["quarantined"], 1);

    // Markdown for a PR comment: no alarm for a quarantined row.
    let md = gate(
        &sandbox,
        &["--quarantine", list_arg, "--format", "markdown"],
    );
    assert_exit(&md, 0);
    assert!(stdout(&md).contains("✅ no regression"), "{}", stdout(&md));

    // `compare` takes the same list.
    let compare = sandbox
        .bench_run()
        .args(["compare", "1", "2", "--quarantine", list_arg])
        .output()
        .unwrap();
    assert_exit(&compare, 0);
    assert!(
        stdout(&compare).contains("regression (quarantined)"),
        "{}",
        stdout(&compare)
    );

    // `.bench-quarantine` at the workspace root applies without the flag ...
    sandbox.write(".bench-quarantine", b"flaky/io\n");
    assert_exit(&gate(&sandbox, &[]), 0);
    // ... and an explicit file replaces it.
    let empty = sandbox.write("empty.txt", b"# nothing quarantined\n");
    assert_exit(
        &gate(&sandbox, &["--quarantine", empty.to_str().unwrap()]),
        1,
    );

    // A quarantine file that cannot be read is an error, not an empty list.
    let missing = gate(&sandbox, &["--quarantine", "no-such-file"]);
    assert_exit(&missing, 2);
    assert!(
        stderr(&missing).contains("no-such-file"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn flagged_benchmarks_are_listed_under_the_table() {
    let sandbox = Sandbox::empty();
    // `split` lands 30% higher in a third of the runs, in no order; `steady` never moves.
    let split = [
        100.0, 130.0, 100.0, 100.0, 130.0, 100.0, 130.0, 100.0, 100.0, 130.0, 100.0, 100.0,
    ];
    for v in split {
        import(&sandbox, &[("steady", 100.0), ("split", v)]);
    }
    let out = sandbox
        .bench_run()
        .args(["compare", "previous", "latest", "--explain"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(
        text.contains("Flagged by the noise model (1; consider quarantining them): split [latency] too noisy to gate"),
        "{text}"
    );
    assert!(
        text.contains("bimodal (the latest runs form two clusters: 7 near 100 and 4 near 130"),
        "{text}"
    );
    assert!(
        text.contains("History: 11 run(s), 1 segment(s): #1-#11"),
        "{text}"
    );

    let doc = json(
        &sandbox
            .bench_run()
            .args(["compare", "previous", "latest", "--format", "json"])
            .output()
            .unwrap(),
    );
    let flagged = doc["flagged"].as_array().unwrap();
    assert_eq!(flagged.len(), 1, "{doc:#}");
    assert_eq!(flagged[0]["benchmark"], "split");
    let kinds: Vec<&str> = flagged[0]["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["too_noisy", "bimodal"]);
    let steady = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["benchmark"] == "steady")
        .unwrap();
    assert_eq!(steady["noise_floor_pct"], 0.0, "{steady:#}");
    assert_eq!(steady["noise"]["runs"], 11);
    assert_eq!(steady["noise"]["deltas"].as_array().unwrap().len(), 10);
}

#[test]
fn quick_runs_are_never_history() {
    use bench_model::{
        BenchmarkId, Direction, Estimate, Machine, Measurement, NewRun, RunProvenance, RunSource,
        metric,
    };
    let run = |value: f64, quick: bool| NewRun {
        source: RunSource::BenchRun,
        provenance: RunProvenance {
            suite: "s".into(),
            machine: Machine {
                fingerprint: "f".into(),
                ..Machine::default()
            },
            quick,
            ..RunProvenance::default()
        },
        measurements: vec![Measurement {
            benchmark: BenchmarkId::named("b"),
            metric: metric::TIME.into(),
            unit: "ns".into(),
            direction: Direction::LowerIsBetter,
            estimate: Estimate::point(value),
            statistics: std::collections::BTreeMap::new(),
            throughput: None,
            samples: None,
        }],
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ledger = bench_store::Ledger::open(&dir.path().join("l.sqlite"))
            .await
            .unwrap();
        let mut ids = Vec::new();
        for (value, quick) in [(10.0, false), (50.0, true), (11.0, false), (12.0, false)] {
            ids.push(ledger.record_run(&run(value, quick)).await.unwrap());
        }
        let machine = ledger.require_run(ids[0]).await.unwrap().machine_id;
        let history = ledger.history("s", machine, 1000, 10).await.unwrap();
        let points = &history[&bench_model::MetricKey::new("b", metric::TIME)];
        let runs: Vec<i64> = points.iter().map(|p| p.run).collect();
        assert_eq!(runs, [ids[0], ids[2], ids[3]], "the quick run is left out");
        let values: Vec<f64> = points.iter().map(|p| p.value).collect();
        assert_eq!(values, [10.0, 11.0, 12.0]);
        // The limit counts runs that are history: the two newest non-quick runs.
        let recent = ledger.history("s", machine, 1000, 2).await.unwrap();
        let runs: Vec<i64> = recent.values().flatten().map(|p| p.run).collect();
        assert_eq!(runs, [ids[2], ids[3]]);
    });
}
