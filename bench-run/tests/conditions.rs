//! Run conditions on the fixture suite: two runs of unchanged code ran the same executable and
//! get no verdict (issue 20, "same binary, no verdict"), and a run measured beside a CPU hog is
//! marked busy and refused by the gate unless `--allow-busy` (issue 20, "busy-machine
//! detection").

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use util::{CpuHog, Sandbox, assert_exit, json, stderr, stdout};

fn bench_exe_sha256(sandbox: &Sandbox, run: &str) -> String {
    let out = sandbox
        .bench_run()
        .args(["show", run, "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let doc = json(&out);
    let sha = doc["run"]["bench_exe"]["sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(sha.len(), 64, "{sha}");
    assert!(doc["run"]["bench_exe"]["bytes"].as_u64().unwrap() > 0);
    sha
}

#[test]
fn unchanged_code_runs_the_same_executable_and_gets_no_verdict() {
    // Issue 20's first observation: two runs of the same commit, the second beside a CPU load,
    // were judged 19 significant "improvements". The same executable ran both: no alarm.
    let sandbox = Sandbox::new();
    assert_exit(&sandbox.quick_run(&[], &[]), 0);
    let loaded = {
        let _guard = util::bench_lock();
        let _hog = CpuHog::start();
        sandbox
            .bench_run()
            .args(["--suite", "tiny_suite", "--quick"])
            .output()
            .unwrap()
    };
    assert_exit(&loaded, 0);
    let first = bench_exe_sha256(&sandbox, "1");
    assert_eq!(first, bench_exe_sha256(&sandbox, "2"));

    let compare = sandbox
        .bench_run()
        .args(["compare", "1", "2"])
        .output()
        .unwrap();
    assert_exit(&compare, 0);
    let text = stdout(&compare);
    let note = format!(
        "Same executable: base and head ran the same executable (sha256 {})",
        &first[..12]
    );
    let table = text.find("benchmark").unwrap();
    assert!(
        text.find(&note).is_some_and(|at| at < table),
        "the note comes above the table:\n{text}"
    );

    let as_json = sandbox
        .bench_run()
        .args(["compare", "1", "2", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&as_json, 0);
    let doc = json(&as_json);
    assert_eq!(doc["same_binary"], first.as_str());
    assert_eq!(doc["base"]["bench_exe_sha256"], first.as_str());
    for row in doc["rows"].as_array().unwrap() {
        assert_eq!(row["verdict"], "unchanged", "{row:#}");
        assert!(
            row["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r.as_str().unwrap().contains("same executable")),
            "{row:#}"
        );
    }

    let markdown = sandbox
        .bench_run()
        .args(["compare", "1", "2", "--format", "markdown"])
        .output()
        .unwrap();
    assert!(
        stdout(&markdown).contains("same executable, no verdict"),
        "{}",
        stdout(&markdown)
    );

    // A no-op change must not fail CI, however busy the machine was.
    let gate = sandbox
        .bench_run()
        .args(["gate", "--base", "1", "--head", "2"])
        .output()
        .unwrap();
    assert_exit(&gate, 0);
    assert!(
        stderr(&gate).contains("gate: pass") && stderr(&gate).contains("same executable"),
        "{}",
        stderr(&gate)
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_run_beside_a_cpu_hog_is_busy_and_the_gate_refuses_it() {
    let sandbox = Sandbox::new();
    assert_exit(&sandbox.quick_run(&[], &[]), 0);
    // Another executable (the build-time setting names no benchmark, so the work is the same):
    // the same-binary rule must not decide this gate.
    let head = {
        // The lock first: the hog must not load another test's measurement.
        let _guard = util::bench_lock();
        let _hog = CpuHog::start();
        sandbox
            .bench_run()
            .args(["--suite", "tiny_suite", "--quick"])
            .env("FIXTURE_SLOWDOWN", "no-such-benchmark=1")
            .output()
            .unwrap()
    };
    assert_exit(&head, 0);
    assert!(
        stderr(&head).contains("warning: the machine was busy during run #2"),
        "{}",
        stderr(&head)
    );
    assert_ne!(
        bench_exe_sha256(&sandbox, "1"),
        bench_exe_sha256(&sandbox, "2")
    );

    let show = sandbox
        .bench_run()
        .args(["show", "2", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&show, 0);
    let run = &json(&show)["run"];
    assert_eq!(run["busy"], true, "{run:#}");
    let conditions = &run["conditions"];
    assert!(
        conditions["others_cpus"].as_f64().unwrap() > 0.25,
        "{conditions:#}"
    );
    assert_eq!(
        conditions["per_benchmark"].as_array().unwrap().len(),
        3,
        "one window per benchmark: {conditions:#}"
    );
    let text = sandbox.bench_run().args(["show", "2"]).output().unwrap();
    assert!(
        stdout(&text).contains("BUSY: other processes kept"),
        "{}",
        stdout(&text)
    );
    let list = sandbox.bench_run().arg("list").output().unwrap();
    assert!(stdout(&list).contains("BUSY"), "{}", stdout(&list));

    let refused = sandbox
        .bench_run()
        .args(["gate", "--base", "1", "--head", "2"])
        .output()
        .unwrap();
    assert_exit(&refused, 2);
    let message = stderr(&refused);
    assert!(
        // The base may be busy too on a shared machine (hypervisor steal); only the head's reason is ours.
        message.contains("gate: refusing to judge:")
            && message.contains("the head run #2 ran on a busy machine")
            && message.contains("CPUs busy on average over the run (limit 0.25)")
            && message.contains("--allow-busy"),
        "{message}"
    );

    let allowed = sandbox
        .bench_run()
        .args(["gate", "--base", "1", "--head", "2", "--allow-busy"])
        .output()
        .unwrap();
    assert!(
        matches!(allowed.status.code(), Some(0 | 1)),
        "{}",
        stderr(&allowed)
    );
    assert!(
        stderr(&allowed).contains("judged anyway: --allow-busy"),
        "{}",
        stderr(&allowed)
    );
    assert!(
        stdout(&allowed).contains("Busy machine: the head run #2 ran on a busy machine"),
        "{}",
        stdout(&allowed)
    );

    let compare = sandbox
        .bench_run()
        .args(["compare", "1", "2"])
        .output()
        .unwrap();
    assert_exit(&compare, 0);
    assert!(
        stderr(&compare).contains("warning: head run #2 ran on a busy machine"),
        "{}",
        stderr(&compare)
    );

    // Beside the hog again, with run #1's executable: not refused, and the gate says why.
    let same = {
        let _guard = util::bench_lock();
        let _hog = CpuHog::start();
        sandbox
            .bench_run()
            .args(["--suite", "tiny_suite", "--quick"])
            .output()
            .unwrap()
    };
    assert_exit(&same, 0);
    assert_eq!(
        bench_exe_sha256(&sandbox, "1"),
        bench_exe_sha256(&sandbox, "3")
    );
    let judged = sandbox
        .bench_run()
        .args(["gate", "--base", "1", "--head", "3"])
        .output()
        .unwrap();
    assert_exit(&judged, 0);
    assert!(
        stderr(&judged).contains("not refused: both ran the same executable"),
        "{}",
        stderr(&judged)
    );
}
