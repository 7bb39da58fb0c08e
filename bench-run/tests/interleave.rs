//! `bench-run interleave`: worker processes (POSIX shell scripts speaking `bench-run-worker/1`)
//! run in alternation; the run is recorded and its paired ratios printed; broken workers are an
//! error that records nothing and leaves no process behind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::path::PathBuf;
use std::time::{Duration, Instant};
use util::{Sandbox, assert_exit, json, run_count, stderr, stdout};

/// A worker script offering `benchmarks` (id, ns per trial); every trial of `id` takes the
/// given time, so ratios are exact. It logs each request to `log` to show the order.
fn worker(sandbox: &Sandbox, name: &str, benchmarks: &[(&str, u64)], log: &str) -> PathBuf {
    let script = testkit::worker::fixed_time_script(benchmarks, Some(log));
    sandbox.write(name, script.as_bytes())
}

/// Where the workers of a test log the requests they get.
fn request_log(sandbox: &Sandbox) -> String {
    let path = sandbox.dir.path().join("requests.log");
    path.to_str().unwrap().to_owned()
}

fn interleave(sandbox: &Sandbox, workers: &[&PathBuf], args: &[&str]) -> std::process::Output {
    let mut cmd = sandbox.bench_run();
    cmd.args(["interleave", "--suite", "h2h"]);
    for w in workers {
        cmd.arg("--worker").arg(format!("sh {}", w.display()));
    }
    cmd.args(args).output().unwrap()
}

#[test]
fn pairs_run_back_to_back_and_give_exact_paired_ratios() {
    let sandbox = Sandbox::empty();
    let log = &request_log(&sandbox);
    let ours = worker(
        &sandbox,
        "ours.sh",
        &[("a/ours", 1000), ("b/ours", 4000), ("solo", 10)],
        log,
    );
    let cpp = worker(&sandbox, "cpp.sh", &[("a/cpp", 3000), ("b/cpp", 2000)], log);
    let out = interleave(
        &sandbox,
        &[&ours, &cpp],
        &[
            "--pair",
            "*/ours=*/cpp",
            "--rounds",
            "6",
            "--seed",
            "11",
            "--at-least",
            "1",
            "--format",
            "json",
        ],
    );
    // b/ours is half the anchor's speed: below the bar of 1x, so exit 1, and the run is kept.
    assert_exit(&out, 1);
    // Without a terminal, progress is a line per round (the warm-up round counts).
    let progress = stderr(&out);
    assert!(progress.contains("round 1/7 done"), "{progress}");
    assert!(progress.contains("round 7/7 done"), "{progress}");
    let report = json(&out);
    assert_eq!(report["rounds"], 6);
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let row = |b: &str| rows.iter().find(|r| r["benchmark"] == b).unwrap();
    assert_eq!(row("a/ours")["anchor"], "a/cpp");
    assert_eq!(row("a/ours")["ratio"].as_f64(), Some(3.0));
    assert_eq!(row("a/ours")["ratios"].as_array().unwrap().len(), 6);
    assert_eq!(row("a/ours")["verdict"], "meets");
    assert_eq!(row("b/ours")["ratio"].as_f64(), Some(0.5));
    assert_eq!(row("b/ours")["verdict"], "below");

    // 7 rounds (one warm-up) x 5 benchmarks, and each pair's two trials are adjacent.
    let requests: Vec<String> = std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(requests.len(), 35);
    for round in requests.chunks(5) {
        let at = |id: &str| {
            round
                .iter()
                .position(|l| l.contains(&format!("\"{id}\"")))
                .unwrap()
        };
        assert_eq!(at("a/ours").abs_diff(at("a/cpp")), 1, "{round:?}");
        assert_eq!(at("b/ours").abs_diff(at("b/cpp")), 1, "{round:?}");
    }

    // The run is in the ledger as an interleaved run, with per-iteration medians and samples,
    // and `ratio` reads it again.
    assert_eq!(run_count(&sandbox), 1);
    let show = sandbox
        .bench_run()
        .args(["show", "latest", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&show, 0);
    let text = stdout(&show);
    assert!(text.contains("interleaved"), "{text}");
    assert!(
        text.contains("--seed"),
        "the seed is part of the recorded command: {text}"
    );
    // Each pair's speedup is recorded too: the median paired ratio, higher is better.
    let shown = json(&show);
    let speedup = |b: &str| {
        shown["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["benchmark"] == b)
            .unwrap_or_else(|| panic!("no {b} in {text}"))
            .clone()
    };
    let a = speedup("a/ours vs a/cpp");
    assert_eq!(a["metric"], "speedup");
    assert_eq!(a["unit"], "x");
    assert_eq!(a["direction"], "higher_is_better");
    assert_eq!(a["estimate"].as_f64(), Some(3.0));
    assert_eq!(speedup("b/ours vs b/cpp")["estimate"].as_f64(), Some(0.5));
    let ratio = sandbox
        .bench_run()
        .args([
            "ratio",
            "latest",
            "--pair",
            "*/ours=*/cpp",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_exit(&ratio, 0);
    let note = stderr(&ratio);
    assert!(note.contains("paired speedups"), "{note}");
    let ratio = json(&ratio);
    let a = ratio["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["benchmark"] == "a/ours")
        .unwrap()
        .clone();
    assert_eq!(a["ratio"].as_f64(), Some(3.0));
    assert_eq!(a["unit"], "bytes/s");
}

#[test]
fn the_same_seed_replays_the_same_order() {
    let sandbox = Sandbox::empty();
    let orders: Vec<String> = (0..2)
        .map(|i| {
            let log = sandbox.dir.path().join(format!("log{i}"));
            let log = log.to_str().unwrap();
            let ours = worker(&sandbox, "o.sh", &[("a/ours", 1), ("b/ours", 1)], log);
            let cpp = worker(&sandbox, "c.sh", &[("a/cpp", 1), ("b/cpp", 1)], log);
            let args = ["--pair", "*/ours=*/cpp", "--rounds", "5", "--seed", "3"];
            assert_exit(&interleave(&sandbox, &[&ours, &cpp], &args), 0);
            std::fs::read_to_string(log).unwrap()
        })
        .collect();
    assert_eq!(orders[0], orders[1]);
}

#[test]
fn labeled_workers_pair_two_builds_of_one_worker() {
    let sandbox = Sandbox::empty();
    let log = &request_log(&sandbox);
    // The same benchmark names from both builds: only the labels tell them apart.
    let before = worker(
        &sandbox,
        "before.sh",
        &[("a/ours", 3000), ("b/ours", 1000)],
        log,
    );
    let after = worker(
        &sandbox,
        "after.sh",
        &[("a/ours", 1000), ("b/ours", 1000)],
        log,
    );
    let out = sandbox
        .bench_run()
        .args(["interleave", "--suite", "ab"])
        .arg("--worker-as")
        .arg(format!("before=sh {}", before.display()))
        .arg("--worker-as")
        .arg(format!("after=sh {}", after.display()))
        .args([
            "--pair",
            "after/*=before/*",
            "--rounds",
            "3",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let report = json(&out);
    let rows = report["rows"].as_array().unwrap();
    let row = |b: &str| rows.iter().find(|r| r["benchmark"] == b).unwrap();
    assert_eq!(row("after/a/ours")["anchor"], "before/a/ours");
    assert_eq!(row("after/a/ours")["ratio"].as_f64(), Some(3.0));
    assert_eq!(row("after/b/ours")["ratio"].as_f64(), Some(1.0));
    // Each worker is asked for its own names, without the label.
    let requests = std::fs::read_to_string(log).unwrap();
    assert_eq!(requests.lines().count(), 4 * 4, "{requests}");
    assert!(
        requests
            .lines()
            .all(|l| l == r#"{"run":"a/ours"}"# || l == r#"{"run":"b/ours"}"#),
        "{requests}"
    );

    for (bad, message) in [
        ("no label here", "LABEL=COMMAND"),
        ("two words=sh x", "use letters"),
        ("a/b=sh x", "use letters"),
        ("empty=  ", "no command"),
    ] {
        let out = sandbox
            .bench_run()
            .args(["interleave", "--suite", "ab", "--worker-as", bad])
            .output()
            .unwrap();
        assert_exit(&out, 2);
        assert!(stderr(&out).contains(message), "{bad}: {}", stderr(&out));
    }
    assert_eq!(run_count(&sandbox), 1);
}

#[test]
fn one_anchor_faces_two_of_ours_and_runs_once_a_round() {
    let sandbox = Sandbox::empty();
    let log = &request_log(&sandbox);
    // Say a write into a buffer and one into a file, both against C++'s file write.
    let ours = worker(
        &sandbox,
        "ours.sh",
        &[("a/vec", 1000), ("a/file", 500)],
        log,
    );
    let cpp = worker(&sandbox, "cpp.sh", &[("a/cpp", 2000)], log);
    let out = interleave(
        &sandbox,
        &[&ours, &cpp],
        &[
            "--pair",
            "*/vec=*/cpp",
            "--pair",
            "*/file=*/cpp",
            "--rounds",
            "3",
            "--format",
            "json",
        ],
    );
    assert_exit(&out, 0);
    let report = json(&out);
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{report}");
    let row = |b: &str| rows.iter().find(|r| r["benchmark"] == b).unwrap();
    assert_eq!(row("a/vec")["anchor"], "a/cpp");
    assert_eq!(row("a/vec")["ratio"].as_f64(), Some(2.0));
    assert_eq!(row("a/file")["anchor"], "a/cpp");
    assert_eq!(row("a/file")["ratio"].as_f64(), Some(4.0));
    // One group of three: each of the 4 rounds (one warm-up) asks for each benchmark once.
    let requests = std::fs::read_to_string(log).unwrap();
    assert_eq!(requests.lines().count(), 4 * 3, "{requests}");
    for round in requests.lines().collect::<Vec<_>>().chunks(3) {
        assert_eq!(
            round.iter().filter(|l| l.contains("a/cpp")).count(),
            1,
            "{round:?}"
        );
    }
}

#[test]
fn broken_workers_are_errors_that_record_nothing() {
    let sandbox = Sandbox::empty();
    let log = sandbox.dir.path().join("log");
    let ok = worker(&sandbox, "ok.sh", &[("a/ours", 5)], log.to_str().unwrap());
    let cases: [(&str, &str, &str); 5] = [
        (
            "protocol.sh",
            "echo '{\"protocol\":\"other/2\",\"benchmarks\":[]}'\nsleep 30\n",
            "other/2",
        ),
        ("garbage.sh", "echo hello\nsleep 30\n", "malformed greeting"),
        (
            "dies.sh",
            "echo '{\"protocol\":\"bench-run-worker/1\",\"benchmarks\":[{\"id\":\"a/cpp\"}]}'\nexit 3\n",
            "worker",
        ),
        (
            "fails.sh",
            "echo '{\"protocol\":\"bench-run-worker/1\",\"benchmarks\":[{\"id\":\"a/cpp\"}]}'\nread -r l\necho '{\"id\":\"a/cpp\",\"error\":\"out of disk\"}'\nsleep 30\n",
            "out of disk",
        ),
        (
            "silent.sh",
            "echo '{\"protocol\":\"bench-run-worker/1\",\"benchmarks\":[{\"id\":\"a/cpp\"}]}'\nsleep 30\n",
            "said nothing for 1 s",
        ),
    ];
    for (name, script, message) in cases {
        let bad = sandbox.write(name, script.as_bytes());
        let started = Instant::now();
        let out = interleave(
            &sandbox,
            &[&ok, &bad],
            &["--pair", "*/ours=*/cpp", "--rounds", "2", "--timeout", "1"],
        );
        assert_exit(&out, 2);
        assert!(stderr(&out).contains(message), "{name}: {}", stderr(&out));
        // Neither a hang nor a wait for the worker's sleep.
        assert!(started.elapsed() < Duration::from_secs(20), "{name}");
        assert_eq!(run_count(&sandbox), 0, "{name}: nothing is recorded");
    }
    // Two workers announcing the same name.
    let twin = worker(&sandbox, "twin.sh", &[("a/ours", 5)], log.to_str().unwrap());
    let out = interleave(&sandbox, &[&ok, &twin], &["--rounds", "1"]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("announced twice"), "{}", stderr(&out));
    let out = interleave(&sandbox, &[&ok], &["--rounds", "0"]);
    assert_exit(&out, 2);
}
