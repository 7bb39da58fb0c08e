//! Traps a new user fell into (issue 20, "fewer traps"): `--quick` that had no effect, quick
//! runs becoming a baseline, a gate of a run against itself, comparing different suites, and a
//! gate that fails on one unlucky run (`--confirm`).
//!
//! The fixture suite `own_settings` has a group `own` that sets its own sample size and times
//! (as rand's `sample_size(1000)` does) and a group `plain` that takes the command line's.
//!
//! The `--confirm` scenario tests the plumbing, not the sensitivity, so its runs read the
//! fixture's work clock (FIXTURE_CLOCK=work, see tests/gate.rs): 3x the work in `sum/4000`
//! reads +200% and a re-run without it reads 0%, whatever else the machine is doing. (On the
//! real clock it once needed three attempts: two quick runs were seen 30% apart under load.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::process::Output;
use util::{Sandbox, assert_exit, git, json, stderr, stdout};

const THRESHOLD: &str = "15";

/// The fixture's work clock (see the module docs).
const WORK_CLOCK: (&str, &str) = ("FIXTURE_CLOCK", "work");

/// `bench-run --suite SUITE ARGS...` in the sandbox, holding the bench lock.
fn suite_run(sandbox: &Sandbox, suite: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let _guard = util::bench_lock();
    let mut command = sandbox.bench_run();
    command.args(["--suite", suite]).args(args);
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap()
}

fn bench_run(sandbox: &Sandbox, args: &[&str]) -> Output {
    sandbox.bench_run().args(args).output().unwrap()
}

/// The recorded provenance of a run, from `show --format json`.
fn show(sandbox: &Sandbox, run: &str) -> serde_json::Value {
    let out = bench_run(sandbox, &["show", run, "--format", "json"]);
    assert_exit(&out, 0);
    json(&out)
}

#[test]
fn quick_is_recorded_only_when_it_took_effect_and_is_never_a_default_baseline() {
    let sandbox = Sandbox::new();

    // Only the `own` group runs: it keeps its own settings, so --quick had no effect.
    let none = suite_run(&sandbox, "own_settings", &["--quick", "--", "own"], &[]);
    assert_exit(&none, 0);
    assert!(
        stderr(&none).contains("warning: --quick had no effect")
            && stderr(&none).contains("`own/fnv` took 10 samples"),
        "{}",
        stderr(&none)
    );
    assert_eq!(show(&sandbox, "1")["run"]["quick"], false);

    // The whole suite: `plain` follows the quick settings, so the run is quick, and the note
    // names the group that did not (how many of `plain` count as following is not asserted: a
    // sudden load between warm-up and measurement can stretch one past the time rule).
    let partial = suite_run(
        &sandbox,
        "own_settings",
        &["--quick", "--format", "json"],
        &[],
    );
    assert_exit(&partial, 0);
    let err = stderr(&partial);
    assert!(
        err.contains("bench-run: --quick took effect for ")
            && err.contains("of 3 benchmark(s)")
            && err.contains("`own/fnv` took 10 samples"),
        "{err}"
    );
    assert_eq!(show(&sandbox, "2")["run"]["quick"], true);
    // `list` says which runs are quick.
    let list = bench_run(&sandbox, &["list", "--format", "json"]);
    let listed = json(&list);
    assert_eq!(listed[0]["id"], 2);
    assert_eq!(listed[0]["quick"], true, "{listed:#}");
    assert_eq!(listed[1]["quick"], false, "{listed:#}");
    let table = bench_run(&sandbox, &["list"]);
    assert!(stdout(&table).contains("quick"), "{}", stdout(&table));
    // Its baseline is the full run #1, and the mix is a warning.
    assert_eq!(json(&partial)["base"]["id"], 1);
    assert!(
        err.contains("warning: the head run #2 is a --quick run and the base run #1 is a full run"),
        "{err}"
    );

    // Another quick run: its default baseline is still the full run #1, never the quick #2.
    let again = suite_run(
        &sandbox,
        "own_settings",
        &["--quick", "--format", "json"],
        &[],
    );
    assert_exit(&again, 0);
    assert_eq!(json(&again)["base"]["id"], 1, "{}", stderr(&again));

    // `previous` skips quick runs too, and compare warns about the mix.
    let previous = bench_run(
        &sandbox,
        &["compare", "previous", "latest", "--format", "json"],
    );
    assert_exit(&previous, 0);
    assert_eq!(json(&previous)["base"]["id"], 1);
    assert_eq!(json(&previous)["head"]["id"], 3);
    assert!(
        stderr(&previous).contains("the head run #3 is a --quick run and the base run #1"),
        "{}",
        stderr(&previous)
    );
    // Two quick runs are measured alike: no mixing warning.
    let alike = bench_run(&sandbox, &["compare", "2", "3"]);
    assert_exit(&alike, 0);
    assert!(
        !stderr(&alike).contains("--quick run"),
        "{}",
        stderr(&alike)
    );

    // The log entry of the quick run names its full baseline and carries the warning.
    let log = bench_run(&sandbox, &["log", "latest", "--dry-run"]);
    assert_exit(&log, 0);
    let entry = stdout(&log);
    assert!(entry.contains("Baseline for deltas: run #1"), "{entry}");
    assert!(
        entry.contains("- Warning: the head run #3 is a --quick run"),
        "{entry}"
    );
    assert!(
        stderr(&log).contains("warning: the head run #3"),
        "{}",
        stderr(&log)
    );

    // The gate keeps warning too.
    let gate = bench_run(&sandbox, &["gate", "--base", "1", "--threshold", "100"]);
    assert!(
        stderr(&gate).contains("the head run #3 is a --quick run"),
        "{}",
        stderr(&gate)
    );
}

#[test]
fn a_gate_of_a_run_against_itself_is_refused() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    git(&ws, &["init", "-q", "-b", "main"]);
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-q", "-m", "first state"]);
    assert_exit(&suite_run(&sandbox, "own_settings", &["--", "own"], &[]), 0);

    // On main, `--base main` names the run being judged.
    for args in [
        &["gate", "--base", "main"][..],
        &["gate", "--base", "1", "--head", "latest"],
        &["gate", "--base", "latest", "--confirm", "2"],
    ] {
        let out = bench_run(&sandbox, args);
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains(
                "gate: base and head are the same run #1: nothing to compare; on main, gate \
                 against the previous commit or use bench-run ab"
            ),
            "{args:?}: {}",
            stderr(&out)
        );
    }

    // --confirm refuses to re-run a head recorded at another commit than the workspace's.
    std::fs::write(ws.join("NOTES"), "second").unwrap();
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-q", "-m", "second state"]);
    let bmf = sandbox.write("own.json", br#"{"own/fnv": {"latency": {"value": 5.0}}}"#);
    let import = sandbox
        .bench_run()
        .args(["import", "bmf", "--suite", "own_settings"])
        .arg(&bmf)
        .output()
        .unwrap();
    assert_exit(&import, 0);
    let moved = bench_run(
        &sandbox,
        &["gate", "--base", "2", "--head", "1", "--confirm", "1"],
    );
    assert_exit(&moved, 2);
    assert!(
        stderr(&moved).contains("the re-runs would measure other code"),
        "{}",
        stderr(&moved)
    );
}

#[test]
fn compare_narrows_by_suite_and_refuses_different_suites() {
    let sandbox = Sandbox::empty();
    let import = |suite: &str, scale: f64| {
        let file = sandbox.write(
            &format!("{suite}-{scale}.json"),
            util::bmf(3, scale).as_bytes(),
        );
        let out = sandbox
            .bench_run()
            .args(["import", "bmf", "--suite", suite])
            .arg(&file)
            .output()
            .unwrap();
        assert_exit(&out, 0);
    };
    import("alpha", 1.0);
    import("alpha", 1.1);
    import("beta", 1.0);

    let refused = bench_run(&sandbox, &["compare", "1", "3"]);
    assert_exit(&refused, 2);
    let err = stderr(&refused);
    assert!(
        err.contains(
            "compare: refusing to compare suite \"alpha\" (run #1) with suite \"beta\" (run #3)"
        ) && err.contains("--allow-mismatch"),
        "{err}"
    );
    let allowed = bench_run(&sandbox, &["compare", "1", "3", "--allow-mismatch"]);
    assert_exit(&allowed, 0);
    assert!(
        stderr(&allowed).contains("suite differs"),
        "{}",
        stderr(&allowed)
    );

    // `latest` is beta's only run, which has no `previous`; --suite narrows both to alpha.
    assert_exit(&bench_run(&sandbox, &["compare", "previous", "latest"]), 2);
    let narrowed = bench_run(
        &sandbox,
        &[
            "compare", "previous", "latest", "--suite", "alpha", "--format", "json",
        ],
    );
    assert_exit(&narrowed, 0);
    let doc = json(&narrowed);
    assert_eq!(
        (doc["base"]["id"].clone(), doc["head"]["id"].clone()),
        (1.into(), 2.into())
    );

    // --confirm needs a suite to re-run: an imported head is refused before anything runs.
    let confirm = bench_run(
        &sandbox,
        &["gate", "--base", "1", "--head", "2", "--confirm", "1"],
    );
    assert_exit(&confirm, 2);
    assert!(
        stderr(&confirm)
            .contains("head run #2 was recorded by `import-bmf`, not by `bench-run --suite`"),
        "{}",
        stderr(&confirm)
    );
}

const SLOW: (&str, &str) = ("FIXTURE_SLOWDOWN", "sum/4000=3");

fn gate_confirm(sandbox: &Sandbox, env: &[(&str, &str)]) -> Output {
    let _guard = util::bench_lock();
    let mut command = sandbox.bench_run();
    command.args([
        "gate",
        "--allow-busy",
        "--base",
        "1",
        "--head",
        "2",
        "--threshold",
        THRESHOLD,
        "--confirm",
        "2",
    ]);
    for (k, v) in env.iter().chain([&WORK_CLOCK]) {
        command.env(k, v);
    }
    command.output().unwrap()
}

#[test]
fn gate_confirm_reruns_the_flagged_benchmarks_and_fails_only_if_they_stay_slow() {
    let sandbox = Sandbox::new();
    assert_exit(&sandbox.quick_run(&[], &[WORK_CLOCK]), 0);
    assert_exit(&sandbox.quick_run(&[], &[SLOW, WORK_CLOCK]), 0);
    let flagged = bench_run(
        &sandbox,
        &[
            "gate",
            "--base",
            "1",
            "--head",
            "2",
            "--threshold",
            THRESHOLD,
            // This shared machine is always busy; the timings are judged anyway.
            "--allow-busy",
        ],
    );
    assert_exit(&flagged, 1);

    // The slowdown is still there when the flagged benchmark runs again: it holds.
    let held = gate_confirm(&sandbox, &[SLOW]);
    assert_exit(&held, 1);
    let out = stdout(&held);
    assert!(
        out.contains("sum/4000 [time]: flagged +")
            && out.contains("kept in 2 of 2 re-run(s) (#3 +"),
        "{out}"
    );
    assert!(out.contains(": holds"), "{out}");
    assert!(
        stderr(&held).contains("gate: FAIL (run #2 vs base run #1)")
            && stderr(&held).contains("held in 2 re-run(s): sum/4000"),
        "{}",
        stderr(&held)
    );
    // Two confirmation runs were recorded, holding only the flagged benchmark.
    for run in ["3", "4"] {
        let doc = show(&sandbox, run);
        assert_eq!(doc["run"]["source"], "confirmation", "{doc:#}");
        assert_eq!(doc["run"]["quick"], true, "measured like the quick head");
        let benchmarks: Vec<&str> = doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["benchmark"].as_str().unwrap())
            .collect();
        assert_eq!(benchmarks, ["sum/4000"], "{doc:#}");
    }

    // A slowdown that was only in the flagged run (a busy moment) does not hold.
    let cleared = gate_confirm(&sandbox, &[]);
    assert_exit(&cleared, 0);
    let out = stdout(&cleared);
    assert!(
        out.contains("sum/4000 [time]: flagged +") && out.contains("kept in 0 of 2 re-run(s) (#5 "),
        "{out}"
    );
    assert!(out.contains("not confirmed"), "{out}");
    assert!(
        stderr(&cleared).contains("gate: pass (run #2 vs base run #1)")
            && stderr(&cleared).contains("did not hold in 2 re-run(s)"),
        "{}",
        stderr(&cleared)
    );

    // Quick runs and confirmation re-runs are nobody's default baseline: here every run is one.
    let previous = bench_run(&sandbox, &["show", "previous", "--format", "json"]);
    assert_exit(&previous, 2);
}
