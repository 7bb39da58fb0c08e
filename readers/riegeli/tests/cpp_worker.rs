//! `tools/riegeli_cpp_worker.py` speaks `bench-run-worker/1` with the head_to_head suite's names,
//! so `bench-run interleave` can pair its C++ trials with `examples/h2h_worker`'s.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::process::Command;
use std::time::Duration;

use bench_worker::process::{WorkerProcess, WorkerProcessError};
use bench_worker::{DeclaredThroughput, InterleaveError};

/// Generous: the worker builds its records and files at setup, on a loaded CI machine.
const TIMEOUT: Duration = Duration::from_secs(300);

#[test]
fn cpp_worker_announces_the_suite_names_and_times_trials() {
    let Some(python) = util::python("cpp_worker_announces_the_suite_names_and_times_trials") else {
        return;
    };
    let script = util::workspace_root().join("tools/riegeli_cpp_worker.py");
    // One small cell keeps the setup short.
    let mut command = Command::new(python);
    command.arg(&script).arg("simple_zstd_3_small");
    let mut worker = WorkerProcess::start(command, "riegeli_cpp_worker.py").unwrap();
    let hello = worker.hello(TIMEOUT).unwrap();
    let ids: Vec<&str> = hello.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "simple_zstd_3_small/cpp_write",
            "simple_zstd_3_small/cpp_read"
        ]
    );
    // 10,000 records of 100 bytes, as in benches/common.
    assert!(
        hello
            .iter()
            .all(|b| b.throughput == Some(DeclaredThroughput::Bytes(1_000_000)))
    );
    for id in ids.iter().chain(ids.iter()) {
        let trial = worker.trial(id, TIMEOUT).unwrap();
        assert!(trial.iters >= 1.0 && trial.ns > 0.0, "{trial:?}");
    }
    assert!(matches!(
        worker.trial("nope/cpp_write", TIMEOUT),
        Err(WorkerProcessError::Protocol {
            source: InterleaveError::TrialFailed { .. },
            ..
        })
    ));
    assert!(
        worker.finish(TIMEOUT),
        "the worker exits cleanly when its stdin closes"
    );
}
