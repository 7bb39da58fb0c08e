//! Where the time went: `bench-run profile` records a run whose artifacts are the profiles of
//! its benchmarks, and `ab --profile-regressions` profiles both sides of a regression and puts
//! the function the head added at the top of their diff.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::path::Path;
use util::{Sandbox, assert_exit, bench_lock, json, stderr};

/// perf is installed by tools/test.sh; elsewhere these tests say why they did not run.
fn perf_available() -> bool {
    let ok = std::process::Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "perf is missing on CI (tools/test.sh installs linux-perf)"
        );
        eprintln!("skipped: perf is not installed");
    }
    ok
}

/// Makes the fnv benchmark also run a new, named, slow function, in the bench's code.
fn add_slow_function(dir: &Path) {
    let path = dir.join("benches/tiny_suite.rs");
    let text = std::fs::read_to_string(&path).unwrap();
    let slower = text
        .replace(
            "|| tiny::fnv1a(black_box(bytes))",
            "|| tiny::fnv1a(black_box(bytes)) ^ slow_added_in_head(black_box(bytes))",
        )
        .replace(
            "criterion_group!(benches, suite);",
            "#[inline(never)]\nfn slow_added_in_head(bytes: &[u8]) -> u64 {\n    \
             bytes.iter().fold(7u64, |h, b| h.rotate_left(5).wrapping_mul(31) ^ u64::from(*b))\n}\n\n\
             criterion_group!(benches, suite);",
        );
    assert_ne!(text, slower, "the fixture's fnv benchmark has moved");
    std::fs::write(&path, slower).unwrap();
}

#[test]
fn a_profile_is_recorded_with_its_flamegraph_and_top_functions() {
    if !perf_available() {
        return;
    }
    let sandbox = Sandbox::repository();
    let output = {
        let _guard = bench_lock();
        sandbox
            .bench_run()
            .args(["profile", "--suite", "tiny_suite", "--benchmark", "^fnv$"])
            .args(["--seconds", "1", "--format", "json"])
            .output()
            .unwrap()
    };
    assert_exit(&output, 0);
    let shown = json(&output);
    let fnv = &shown[0];
    assert_eq!(fnv["benchmark"], "fnv", "{shown:#}");
    assert_eq!(fnv["profiler"], "perf");
    assert_eq!(fnv["counts"]["unit"], "samples");
    let top = fnv["counts"]["rows"][0]["function"].as_str().unwrap();
    assert!(top.contains("fnv1a"), "top function {top}: {shown:#}");
    let kinds = util::artifact_kinds(fnv);
    assert_eq!(kinds, ["folded", "flamegraph", "function-counts"]);

    let run = fnv["run"].as_i64().unwrap();
    let show = sandbox
        .bench_run()
        .args(["show", &run.to_string(), "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&show, 0);
    assert_eq!(json(&show)["run"]["source"], "profile");
    // The profiles go with their run into another ledger, once.
    let copy_to = sandbox.dir.path().join("copy.sqlite");
    for expected in [3, 0] {
        let copy = sandbox
            .command()
            .args(["ledger", "copy", "--from", &sandbox.db(), "--to"])
            .arg(&copy_to)
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert_exit(&copy, 0);
        assert_eq!(
            json(&copy)["artifacts_copied"],
            expected,
            "{}",
            stderr(&copy)
        );
    }
    // A profile run is no suite run's baseline.
    let gate = sandbox
        .bench_run()
        .args(["compare", "--base", "previous", "--head", &run.to_string()])
        .output()
        .unwrap();
    assert_ne!(gate.status.code(), Some(0), "{}", stderr(&gate));
}

#[test]
fn ab_profiles_a_regression_and_the_new_function_tops_the_diff() {
    if !perf_available() {
        return;
    }
    let sandbox = Sandbox::repository();
    add_slow_function(&sandbox.workspace());
    let summary = sandbox.dir.path().join("summary.md");
    let output = {
        let _guard = bench_lock();
        sandbox
            .bench_run()
            .args([
                "ab",
                "--suite",
                "tiny_suite",
                "--base",
                "HEAD",
                "--seed",
                "3",
            ])
            .args([
                "--layouts",
                "2",
                "--profile-regressions",
                "--profile-time",
                "1",
            ])
            .arg("--summary")
            .arg(&summary)
            .args(["--format", "json", "--", "^fnv$"])
            .output()
            .unwrap()
    };
    assert_exit(&output, 1);
    let doc = json(&output);
    let profiles = doc["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 1, "{doc:#}");
    let fnv = &profiles[0];
    assert_eq!(fnv["benchmark"], "fnv");
    assert!(fnv["against"].is_i64(), "{fnv:#}");
    let top = &fnv["counts"]["rows"][0];
    assert!(
        top["function"]
            .as_str()
            .unwrap()
            .contains("slow_added_in_head"),
        "{fnv:#}"
    );
    assert_eq!(top["base"], 0);
    assert!(top["head_share"].as_f64().unwrap() > 0.2, "{fnv:#}");
    let kinds = util::artifact_kinds(fnv);
    assert!(kinds.contains(&"diff-flamegraph"), "{kinds:?}");
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.contains("Where the time went") && text.contains("slow_added_in_head"));
}
