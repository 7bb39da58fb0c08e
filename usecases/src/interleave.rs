//! `bench-run interleave`: benchmarks of several long-lived worker processes (ours and an
//! anchor's, in any language) run in shuffled alternation, so that both sides meet the same
//! machine, and paired ratios read from trials that ran side by side.
//!
//! The use case measures; the caller records the result (its provenance is the caller's) and
//! renders it.

use bench_analysis::ratio::{PairRule, PairedRatio};
use bench_model::Measurement;
use bench_runner::interleave::{self, Observations, Plan, Unit};
use bench_worker::InterleaveError;
use bench_worker::process::{WorkerProcess, WorkerProcessError};
use std::time::{Duration, Instant};

/// How to interleave the workers' benchmarks.
#[derive(Debug)]
pub struct InterleaveRequest<'a> {
    /// Which benchmarks are compared with which: `OURS=ANCHOR` rules.
    pub rules: &'a [PairRule],
    /// Patterns of the benchmarks to run (all when empty).
    pub only: &'a [String],
    /// Rounds thrown away first.
    pub warmup: usize,
    /// Rounds measured.
    pub rounds: usize,
    /// Seed of the shuffle (the same seed gives the same order).
    pub seed: u64,
    /// How long one trial or greeting may take.
    pub timeout: Duration,
}

/// What a caller hears while the trials run.
pub trait TrialProgress {
    /// The schedule is known: `trials` trials of `units` units, `pairs` of them with anchors.
    fn planned(&mut self, trials: usize, units: usize, pairs: usize);
    /// Trial `done` of the schedule ran benchmark `id`.
    fn trial(&mut self, done: usize, id: &str);
}

/// What the trials measured.
#[derive(Debug)]
pub struct Interleaved {
    /// Which benchmark ran on which worker, and in which unit.
    pub plan: Plan,
    /// Every measured (not warm-up) trial, per benchmark.
    pub observations: Observations,
    /// The paired ratios of every `OURS=ANCHOR` pair.
    pub ratios: Vec<PairedRatio>,
    /// Per benchmark its time, then per pair its speedup: what a run records.
    pub measurements: Vec<Measurement>,
    /// How long the trials took.
    pub elapsed: Duration,
}

/// Why the trials stopped.
#[derive(Debug, thiserror::Error)]
pub enum InterleaveFailure {
    /// The request cannot be run.
    #[error("--rounds must be at least 1")]
    NoRounds,
    /// The workers' benchmarks cannot be planned (a name twice, nothing selected).
    #[error(transparent)]
    Plan(#[from] InterleaveError),
    /// A worker failed to greet or to run a trial.
    #[error(transparent)]
    Worker(#[from] WorkerProcessError),
    /// The schedule names what the plan does not hold (a bug, never a user's input).
    #[error("the schedule names an unknown {0}")]
    Schedule(&'static str),
}

/// Greets every worker (each set up already), plans and shuffles the trials, runs them and
/// reads the paired ratios. The workers are finished afterwards.
///
/// # Errors
/// See [`InterleaveFailure`].
pub fn interleave(
    workers: &mut [WorkerProcess],
    request: &InterleaveRequest<'_>,
    progress: &mut dyn TrialProgress,
) -> Result<Interleaved, InterleaveFailure> {
    if request.rounds == 0 {
        return Err(InterleaveFailure::NoRounds);
    }
    let announced = workers
        .iter_mut()
        .map(|w| w.hello(request.timeout))
        .collect::<Result<Vec<_>, _>>()?;
    let plan = interleave::plan(&announced, request.rules, request.only)?;
    let steps = interleave::schedule(&plan, request.warmup, request.rounds, request.seed);
    let pairs = plan
        .units
        .iter()
        .filter(|u| matches!(u, Unit::Group { .. }))
        .count();
    progress.planned(steps.len(), plan.units.len(), pairs);
    let started = Instant::now();
    let mut observations = Observations::new();
    for (done, &step) in steps.iter().enumerate() {
        let located = plan
            .benchmarks
            .get(step.benchmark)
            .ok_or(InterleaveFailure::Schedule("benchmark"))?;
        let worker = workers
            .get_mut(located.worker)
            .ok_or(InterleaveFailure::Schedule("worker"))?;
        let trial = worker.trial(&located.benchmark.id, request.timeout)?;
        interleave::observe(&mut observations, step, trial);
        progress.trial(done + 1, &located.benchmark.id);
    }
    for worker in workers.iter_mut() {
        worker.finish(Duration::from_secs(10));
    }
    let elapsed = started.elapsed();
    let ratios = interleave::paired_ratios(&plan, &observations);
    let mut measurements = interleave::measurements(&plan, &observations);
    measurements.extend(interleave::speedup_measurements(&ratios));
    Ok(Interleaved {
        plan,
        observations,
        ratios,
        measurements,
        elapsed,
    })
}
