//! `tools/booklet_python_worker.py` speaks `bench-run-worker/1` with the names `examples/ops_worker`
//! pairs with (`booklet_ops/<op>/<n>/python` against `.../ours`), so `bench-run interleave`
//! can alternate Python booklet's trials with ours.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../benches/common/mod.rs"]
mod common;
mod util;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use common::OPS;
use harness::interleave::{self, DeclaredThroughput, InterleaveError};

#[test]
fn python_worker_announces_every_op_and_times_each() {
    let Some(python) = util::python() else { return };
    let script = util::workspace_root().join("tools/booklet_python_worker.py");
    let mut child = Command::new(python)
        .arg(&script)
        .arg("200")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || lines.next().unwrap().unwrap();
    let hello = interleave::parse_hello(&next()).unwrap();
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
        writeln!(stdin, "{}", interleave::request(id)).unwrap();
        let trial = interleave::parse_reply(&next(), id).unwrap();
        assert!(trial.iters >= 1.0 && trial.ns > 0.0, "{id}: {trial:?}");
    }
    for bad in [
        "booklet_ops/nope/200/python",
        "booklet_ops/seq_write/7/python",
    ] {
        writeln!(stdin, "{}", interleave::request(bad)).unwrap();
        assert!(matches!(
            interleave::parse_reply(&next(), bad),
            Err(InterleaveError::TrialFailed { .. })
        ));
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
