//! `tools/riegeli_cpp_worker.py` speaks `bench-run-worker/1` with the head_to_head suite's names,
//! so `bench-run interleave` can pair its C++ trials with `examples/h2h_worker`'s.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use harness::interleave::{self, DeclaredThroughput, InterleaveError};

#[test]
fn cpp_worker_announces_the_suite_names_and_times_trials() {
    let Some(python) = util::python("cpp_worker_announces_the_suite_names_and_times_trials") else {
        return;
    };
    let script = util::workspace_root().join("tools/riegeli_cpp_worker.py");
    // One small cell keeps the setup short.
    let mut child = Command::new(python)
        .arg(&script)
        .arg("simple_zstd_3_small")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || lines.next().unwrap().unwrap();
    let hello = interleave::parse_hello(&next()).unwrap();
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
        writeln!(stdin, "{}", interleave::request(id)).unwrap();
        let trial = interleave::parse_reply(&next(), id).unwrap();
        assert!(trial.iters >= 1.0 && trial.ns > 0.0, "{trial:?}");
    }
    writeln!(stdin, "{}", interleave::request("nope/cpp_write")).unwrap();
    assert!(matches!(
        interleave::parse_reply(&next(), "nope/cpp_write"),
        Err(InterleaveError::TrialFailed { .. })
    ));
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
