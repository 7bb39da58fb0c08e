//! `bench-run interleave`: the trial loop over the worker processes.

use anyhow::{Result, anyhow};
use bench_runner::interleave::{self, Observations, Plan, Step};
use bench_worker::process::WorkerProcess;
use std::time::Duration;

/// Runs every step of `steps` on its worker, calling `progress` after each trial.
pub fn run_trials(
    workers: &mut [WorkerProcess],
    plan: &Plan,
    steps: &[Step],
    timeout: Duration,
    mut progress: impl FnMut(&str),
) -> Result<Observations> {
    let mut observations = Observations::new();
    for &step in steps {
        let located = plan
            .benchmarks
            .get(step.benchmark)
            .ok_or_else(|| anyhow!("schedule names an unknown benchmark"))?;
        let worker = workers
            .get_mut(located.worker)
            .ok_or_else(|| anyhow!("plan names an unknown worker"))?;
        let trial = worker.trial(&located.benchmark.id, timeout)?;
        interleave::observe(&mut observations, step, trial);
        progress(&located.benchmark.id);
    }
    for worker in workers.iter_mut() {
        worker.finish(Duration::from_secs(10));
    }
    Ok(observations)
}
