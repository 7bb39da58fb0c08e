//! The interleave use case as a library function, on two shell workers speaking
//! `bench-run-worker/1`: every trial of the shuffled schedule runs, warm-up rounds are dropped,
//! and a pair's ratio is exact when both sides report fixed times.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use bench_analysis::ratio::PairRule;
use bench_usecases::interleave::{InterleaveFailure, InterleaveRequest, TrialProgress, interleave};
use bench_worker::process::WorkerProcess;
use std::path::Path;
use std::time::Duration;

/// A worker announcing `benchmarks` (id, nanoseconds per 2 iterations) and answering each
/// trial with that fixed time ([`testkit::worker::fixed_time_script`]).
fn worker(dir: &Path, name: &str, benchmarks: &[(&str, u64)]) -> WorkerProcess {
    let script = testkit::worker::fixed_time_script(benchmarks, None);
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    WorkerProcess::shell(&format!("sh {}", path.display()), dir).unwrap()
}

#[derive(Default)]
struct Heard {
    planned: Option<(usize, usize, usize)>,
    trials: Vec<String>,
}

impl TrialProgress for Heard {
    fn planned(&mut self, trials: usize, units: usize, pairs: usize) {
        self.planned = Some((trials, units, pairs));
    }
    fn trial(&mut self, done: usize, id: &str) {
        assert_eq!(done, self.trials.len() + 1);
        self.trials.push(id.to_owned());
    }
}

#[test]
fn runs_every_trial_and_reads_exact_paired_ratios() {
    let dir = tempfile::tempdir().unwrap();
    let mut workers = vec![
        worker(dir.path(), "ours.sh", &[("a/ours", 1000), ("solo", 10)]),
        worker(dir.path(), "anchor.sh", &[("a/cpp", 3000)]),
    ];
    let rules = [PairRule::parse("*/ours=*/cpp").unwrap()];
    let request = InterleaveRequest {
        rules: &rules,
        only: &[],
        warmup: 1,
        rounds: 4,
        seed: 7,
        timeout: Duration::from_secs(10),
    };
    let mut heard = Heard::default();
    let done = interleave(&mut workers, &request, &mut heard).unwrap();
    // Two units (the pair, and `solo`), three benchmarks, five rounds in all.
    assert_eq!(heard.planned, Some((15, 2, 1)));
    assert_eq!(heard.trials.len(), 15);
    // Warm-up trials are not observations.
    assert!(done.observations.values().all(|trials| trials.len() == 4));
    let [ratio] = done.ratios.as_slice() else {
        panic!("{:?}", done.ratios);
    };
    assert_eq!(
        (ratio.benchmark.as_str(), ratio.anchor.as_str()),
        ("a/ours", "a/cpp")
    );
    assert!((ratio.median - 3.0).abs() < 1e-9, "{ratio:?}");
    // A time per benchmark, then a speedup per pair.
    assert_eq!(done.measurements.len(), 4);

    let mut more = vec![worker(dir.path(), "again.sh", &[("x", 5)])];
    let none = interleave(
        &mut more,
        &InterleaveRequest {
            rounds: 0,
            ..request
        },
        &mut Heard::default(),
    )
    .unwrap_err();
    assert!(matches!(none, InterleaveFailure::NoRounds), "{none}");
}
