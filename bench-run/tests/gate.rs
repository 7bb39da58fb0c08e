//! The gate on the fixture suite: an injected 30% slowdown fails it (exit 1) and is named, an
//! A/A rerun passes (exit 0), and runs built differently are refused (exit 2).
//!
//! The runs read the fixture's work clock (FIXTURE_CLOCK=work: one nanosecond per element, a
//! fixed ±1% wobble), so the 30% slowdown reads +30% ± 2% however busy the machine is: this
//! test is about the gate's verdicts and refusals, and needs no luck. (It once needed three
//! attempts: a shared host moved one benchmark by +65% between two real-clock processes.) How
//! well a slowdown is caught on a real clock is the work of `ab` and its tests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use util::{Sandbox, assert_exit, json, stderr, stdout};

const THRESHOLD: &str = "15";

/// The fixture's work clock (see the module docs).
const WORK_CLOCK: (&str, &str) = ("FIXTURE_CLOCK", "work");

#[test]
fn slowdown_fails_the_gate_aa_passes_and_mismatches_are_refused() {
    let sandbox = Sandbox::new();
    assert_exit(&sandbox.quick_run(&[], &[WORK_CLOCK]), 0);
    sandbox
        .bench_run()
        .args(["tag", "1", "base"])
        .output()
        .map(|o| assert_exit(&o, 0))
        .unwrap();

    // A/A: the same code again. Cargo hands back the same executable, so the same-binary rule
    // passes it whatever the timings (and however busy the machine was).
    assert_exit(&sandbox.quick_run(&[], &[WORK_CLOCK]), 0);
    let aa = sandbox
        .bench_run()
        .args([
            "gate",
            "--base",
            "base",
            "--head",
            "2",
            "--threshold",
            THRESHOLD,
            "--explain",
        ])
        .output()
        .unwrap();
    assert_exit(&aa, 0);
    assert!(stderr(&aa).contains("gate: pass"), "{}", stderr(&aa));
    assert!(
        stdout(&aa).contains("Explanation of each verdict"),
        "{}",
        stdout(&aa)
    );

    // 30% more work in one benchmark: FIXTURE_SLOWDOWN is read at build time, so this is another
    // executable. The gates below judge timings, so they take --allow-busy: this test is about
    // the verdict, and the shared test machine is rarely quiet.
    assert_exit(
        &sandbox.quick_run(&[], &[("FIXTURE_SLOWDOWN", "sum/4000=1.3"), WORK_CLOCK]),
        0,
    );
    let slow = sandbox
        .bench_run()
        .args([
            "gate",
            "--base",
            "base",
            "--threshold",
            THRESHOLD,
            "--allow-busy",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_exit(&slow, 1);
    assert!(
        stderr(&slow).contains("sum/4000"),
        "the regression is named: {}",
        stderr(&slow)
    );
    let doc = json(&slow);
    let rows = doc["rows"].as_array().unwrap();
    let regressed: Vec<&str> = rows
        .iter()
        .filter(|r| r["verdict"] == "regression")
        .map(|r| r["benchmark"].as_str().unwrap())
        .collect();
    assert_eq!(regressed, ["sum/4000"], "{doc:#}");
    let row = rows.iter().find(|r| r["benchmark"] == "sum/4000").unwrap();
    let change = row["change_pct"].as_f64().unwrap();
    assert!(
        (27.0..33.0).contains(&change),
        "change {change}% should be +30% within the clock's wobble"
    );

    // The same ledger and arguments give the same verdict, byte for byte.
    let again = sandbox
        .bench_run()
        .args([
            "gate",
            "--base",
            "base",
            "--threshold",
            THRESHOLD,
            "--allow-busy",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_exit(&again, 1);
    assert_eq!(stdout(&slow), stdout(&again));

    // Ignoring the benchmark lets the gate pass.
    let ignored = sandbox
        .bench_run()
        .args([
            "gate",
            "--base",
            "base",
            "--threshold",
            THRESHOLD,
            "--allow-busy",
            "--ignore",
            "sum/4*",
        ])
        .output()
        .unwrap();
    assert_exit(&ignored, 0);

    // A build with other features is a different program: refused unless allowed.
    assert_exit(
        &sandbox.quick_run(&["--features", "extra"], &[WORK_CLOCK]),
        0,
    );
    let mismatch = sandbox
        .bench_run()
        .args(["gate", "--base", "base", "--threshold", THRESHOLD])
        .output()
        .unwrap();
    assert_exit(&mismatch, 2);
    assert!(
        stderr(&mismatch).contains("extra"),
        "the reason names the feature: {}",
        stderr(&mismatch)
    );
    let allowed = sandbox
        .bench_run()
        .args([
            "gate",
            "--base",
            "base",
            "--threshold",
            THRESHOLD,
            "--allow-mismatch",
            "--allow-busy",
        ])
        .output()
        .unwrap();
    assert!(
        matches!(allowed.status.code(), Some(0 | 1)),
        "{}",
        stderr(&allowed)
    );

    // Unknown references are unusable input.
    let unknown = sandbox
        .bench_run()
        .args(["gate", "--base", "no-such-tag"])
        .output()
        .unwrap();
    assert_exit(&unknown, 2);
    assert!(
        stderr(&unknown).contains("no-such-tag"),
        "{}",
        stderr(&unknown)
    );
}

#[test]
fn calibrate_records_repeated_runs_and_reports_the_noise() {
    let sandbox = Sandbox::new();
    let _guard = util::bench_lock();
    let out = sandbox
        .bench_run()
        .args([
            "calibrate",
            "--suite",
            "tiny_suite",
            "--runs",
            "2",
            "--quick",
        ])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(
        text.contains("noise floor") && text.contains("sum/1000"),
        "{text}"
    );
    // Two runs are one A/A comparison per benchmark: its alarms and the smallest change it
    // would catch are reported.
    assert!(
        text.contains("A/A alarms") && text.contains("detects"),
        "{text}"
    );
    let sum_line = text.lines().find(|l| l.starts_with("sum/1000")).unwrap();
    assert!(
        sum_line.contains("0/1") || sum_line.contains("1/1"),
        "{sum_line}"
    );
    assert!(sum_line.contains(">= "), "{sum_line}");
    let list = json(
        &sandbox
            .bench_run()
            .args(["list", "--format", "json"])
            .output()
            .unwrap(),
    );
    let runs = list.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!(
        runs.iter().all(|r| r["source"] == "calibration"),
        "{list:#}"
    );
    let too_few = sandbox
        .bench_run()
        .args(["calibrate", "--suite", "tiny_suite", "--runs", "1"])
        .output()
        .unwrap();
    assert_exit(&too_few, 2);
}
