//! Recording: a fixture suite run twice lands in the ledger with full provenance and raw
//! samples; `show`, `list` and `compare` honour their JSON contract
//! (the ledger's own guarantees are tested on both engines in store/tests).

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
