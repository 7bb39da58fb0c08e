//! `tools/booklet_python_worker.py` speaks `bench-run-worker/1` with the names `examples/ops_worker`
//! pairs with (`booklet_ops/<op>/<n>/python` against `.../ours`), so `bench-run interleave`
//! can alternate Python booklet's trials with ours.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../benches/common/mod.rs"]
mod common;
mod util;

use std::process::Command;
use std::time::Duration;

use bench_worker::process::{WorkerProcess, WorkerProcessError};
use bench_worker::{DeclaredThroughput, InterleaveError};
use common::OPS;

/// Generous: the worker writes its files at setup, on a loaded CI machine.
const TIMEOUT: Duration = Duration::from_secs(120);

#[test]
fn python_worker_announces_every_op_and_times_each() {
    let Some(python) = util::python() else { return };
    let script = util::workspace_root().join("tools/booklet_python_worker.py");
    let mut command = Command::new(python);
    command.arg(&script).arg("200");
    let mut worker = WorkerProcess::start(command, "booklet_python_worker.py").unwrap();
    let hello = worker.hello(TIMEOUT).unwrap();
    let expected: Vec<String> = OPS
        .iter()
        .map(|op| format!("booklet_ops/{op}/200/python"))
        .collect();
    let ids: Vec<&str> = hello.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids, expected);
    for b in &hello {
        let elements = if b.id.contains("/contains/") {
            400
        } else {
            200
        };
        assert_eq!(b.throughput, Some(DeclaredThroughput::Elements(elements)));
    }
    // Every op twice: the second trial reuses the count fixed by the first (and the read
    // handle, the files of the write ops are fresh each time).
    for id in ids.iter().chain(ids.iter()) {
        let trial = worker.trial(id, TIMEOUT).unwrap();
        assert!(trial.iters >= 1.0 && trial.ns > 0.0, "{id}: {trial:?}");
    }
    for bad in [
        "booklet_ops/nope/200/python",
        "booklet_ops/seq_write/7/python",
    ] {
        assert!(matches!(
            worker.trial(bad, TIMEOUT),
            Err(WorkerProcessError::Protocol {
                source: InterleaveError::TrialFailed { .. },
                ..
            })
        ));
    }
    assert!(
        worker.finish(TIMEOUT),
        "the worker exits cleanly when its stdin closes"
    );
}
