//! `bench-run ratio`: our speeds against an anchor's, from stored runs (imported BMF and a
//! criterion run), with the bar's exit code.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use util::{Sandbox, assert_exit, json, stderr, stdout};

/// Imports a BMF document of `(benchmark, measure, value)` as suite `name` (runs are numbered
/// from 1 in import order).
fn import(sandbox: &Sandbox, name: &str, entries: &[(&str, &str, f64)]) {
    let mut by_bench: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for (bench, measure, value) in entries {
        by_bench
            .entry(bench)
            .or_default()
            .push(format!(r#""{measure}": {{"value": {value}}}"#));
    }
    let body: Vec<String> = by_bench
        .iter()
        .map(|(bench, measures)| format!(r#""{bench}": {{{}}}"#, measures.join(",")))
        .collect();
    let file = sandbox.write(name, format!("{{{}}}", body.join(",")).as_bytes());
    let out = sandbox
        .bench_run()
        .args(["import", "bmf"])
        .arg(&file)
        .args(["--suite", name, "--direction", "throughput=higher"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
}

fn ratio(sandbox: &Sandbox, args: &[&str]) -> std::process::Output {
    sandbox
        .bench_run()
        .arg("ratio")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn anchor_runs_pair_every_way_and_the_bar_sets_the_exit_code() {
    let sandbox = Sandbox::empty();
    import(
        &sandbox,
        "ours",
        &[("get", "throughput", 2.5e6), ("put", "throughput", 1e6)],
    );
    for (i, get) in [100e3, 125e3].iter().enumerate() {
        import(
            &sandbox,
            &format!("anchor{i}"),
            &[
                ("get", "throughput", *get),
                ("put", "throughput", 100e3),
                ("get", "latency", 1e9 / get),
            ],
        );
    }
    let out = ratio(
        &sandbox,
        &[
            "1",
            "--anchor",
            "2",
            "--anchor",
            "3",
            "--at-least",
            "20",
            "--format",
            "json",
        ],
    );
    // put is 10x: below the bar.
    assert_exit(&out, 1);
    let report = json(&out);
    assert_eq!(report["ours_runs"], serde_json::json!([1]));
    assert_eq!(report["anchor_runs"], serde_json::json!([2, 3]));
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let get = &rows[0];
    assert_eq!(get["benchmark"], "get");
    // Rates are preferred to the latency's iterations.
    assert_eq!(get["unit"], "ops/s");
    assert_eq!(get["ratios"], serde_json::json!([20.0, 25.0]));
    assert_eq!(get["ratio"], 22.5);
    assert_eq!(get["verdict"], "meets");
    assert_eq!(rows[1]["benchmark"], "put");
    assert_eq!(rows[1]["verdict"], "below");

    // Only the benchmark that meets it: exit 0, and the table says so.
    let out = ratio(
        &sandbox,
        &[
            "1",
            "--anchor",
            "2",
            "--anchor",
            "3",
            "--at-least",
            "20",
            "--only",
            "g*",
        ],
    );
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(text.contains("22.50x"), "{text}");
    assert!(text.contains("20.00x-25.00x"), "{text}");
    assert!(text.contains("meets"), "{text}");
    assert!(!text.contains("put"), "{text}");
}

#[test]
fn anchors_inside_our_runs_are_paired_within_each_run() {
    let sandbox = Sandbox::empty();
    import(
        &sandbox,
        "h2h",
        &[
            ("zstd/ours_read", "throughput", 3e9),
            ("zstd/crate_read", "throughput", 2e9),
            ("brotli/ours_read", "throughput", 1e9),
        ],
    );
    import(
        &sandbox,
        "h2h",
        &[
            ("zstd/ours_read", "throughput", 4e9),
            ("zstd/crate_read", "throughput", 2e9),
        ],
    );
    let out = ratio(
        &sandbox,
        &[
            "1",
            "2",
            "--pair",
            "*/ours_read=*/crate_read",
            "--format",
            "markdown",
        ],
    );
    assert_exit(&out, 0);
    let text = stdout(&out);
    // Within each run: 1.5 and 2.0, median 1.75 (never 3e9 / 2e9 of another run's pairing).
    assert!(
        text.contains("| `zstd/ours_read` | `zstd/crate_read` |"),
        "{text}"
    );
    assert!(text.contains("1.750x"), "{text}");
    assert!(text.contains("1.500x-2.000x"), "{text}");
    assert!(text.contains("not paired: brotli/ours_read"), "{text}");
}

#[test]
fn a_criterion_run_meets_an_imported_rate_in_elements_per_second() {
    let sandbox = Sandbox::new();
    assert_exit(&sandbox.quick_run(&[], &[]), 0);
    // The fixture's `sum/1000` declares 1000 elements per iteration; an anchor at 1000 ops/s.
    import(&sandbox, "anchor", &[("sum/1000", "throughput", 1000.0)]);
    let out = ratio(&sandbox, &["1", "--anchor", "2", "--format", "json"]);
    assert_exit(&out, 0);
    let report = json(&out);
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{report}");
    assert_eq!(rows[0]["unit"], "ops/s");
    // Summing 1000 integers takes well under a millisecond: far above 1000 ops/s.
    let ours = rows[0]["ours_per_second"].as_f64().unwrap();
    assert!(ours > 1e6, "{report}");
    assert!((rows[0]["ratio"].as_f64().unwrap() - ours / 1000.0).abs() < 1e-6 * ours);
    // The other benchmarks have no anchor and are listed as such.
    let unpaired = report["unpaired"].as_array().unwrap();
    assert!(unpaired.iter().any(|u| u["benchmark"] == "fnv"), "{report}");
}

#[test]
fn unusable_requests_are_errors() {
    let sandbox = Sandbox::empty();
    import(&sandbox, "ours", &[("get", "throughput", 1.0)]);
    let cases: [(&[&str], &str); 4] = [
        (&["1"], "give --anchor RUN"),
        (&["1", "--pair", "a*b*=c"], "pair rule"),
        (&["1", "--anchor", "1", "--at-least", "0"], "--at-least"),
        (&["1", "--pair", "get=nothing"], "could be paired"),
    ];
    for (args, message) in cases {
        let out = ratio(&sandbox, args);
        assert_exit(&out, 2);
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
}
