//! The worker side of `bench-run interleave` for Rust benchmarks: announce the benchmarks, then
//! answer each request with one timed trial (see the crate docs for the protocol).
//!
//! ```no_run
//! use bench_worker::{DeclaredThroughput, WorkerBenchmark};
//! use std::time::Instant;
//!
//! let data = vec![1u8; 1 << 20];
//! let benchmarks = vec![WorkerBenchmark {
//!     id: "sum/ours".to_owned(),
//!     throughput: Some(DeclaredThroughput::Bytes(data.len() as u64)),
//! }];
//! bench_worker::serve(&benchmarks, |_id| {
//!     let start = Instant::now();
//!     std::hint::black_box(data.iter().map(|&b| u64::from(b)).sum::<u64>());
//!     Ok((1, start.elapsed()))
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```

use crate::protocol::{PROTOCOL, WorkerBenchmark};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::time::Duration;

/// Announces `benchmarks` on stdout, then for each request on stdin calls `trial(id)`, which
/// runs and times some iterations itself and returns `(iterations, elapsed)`, or a message
/// that is reported as the trial's failure. Returns when stdin closes.
///
/// # Errors
///
/// Reading stdin or writing stdout failed.
pub fn serve<F>(benchmarks: &[WorkerBenchmark], trial: F) -> std::io::Result<()>
where
    F: FnMut(&str) -> Result<(u64, Duration), String>,
{
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    serve_on(benchmarks, trial, stdin.lock(), stdout.lock())
}

/// [`serve`] over any line reader and writer.
///
/// # Errors
///
/// Reading `input` or writing `output` failed.
pub fn serve_on<F, R, W>(
    benchmarks: &[WorkerBenchmark],
    mut trial: F,
    input: R,
    mut output: W,
) -> std::io::Result<()>
where
    F: FnMut(&str) -> Result<(u64, Duration), String>,
    R: BufRead,
    W: Write,
{
    let hello = serde_json::json!({ "protocol": PROTOCOL, "benchmarks": benchmarks });
    writeln!(output, "{hello}")?;
    output.flush()?;
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<serde_json::Value>(&line)
            .ok()
            .and_then(|v| v.get("run")?.as_str().map(str::to_owned))
        {
            None => serde_json::json!({ "id": "", "error": format!("not a request: {line}") }),
            Some(id) if !benchmarks.iter().any(|b| b.id == id) => {
                serde_json::json!({ "id": id, "error": "no such benchmark in this worker" })
            }
            Some(id) => match trial(&id) {
                Ok((iters, elapsed)) => serde_json::json!({
                    "id": id,
                    "iters": iters.max(1),
                    // At least 1 ns: a zero time is not a measurement.
                    "ns": (elapsed.as_nanos() as f64).max(1.0),
                }),
                Err(reason) => serde_json::json!({ "id": id, "error": reason }),
            },
        };
        writeln!(output, "{reply}")?;
        output.flush()?;
    }
    Ok(())
}

/// Iteration counts per benchmark that make a trial last about `target`: counted from one
/// untimed iteration on a benchmark's first trial, then fixed, so every trial of a benchmark
/// does the same work.
#[derive(Debug, Clone)]
pub struct TrialLength {
    target: Duration,
    iterations: HashMap<String, u64>,
}

/// Most iterations one trial runs.
const MAX_TRIAL_ITERATIONS: u64 = 10_000;

impl TrialLength {
    /// Trials of about `target` each.
    #[must_use]
    pub fn new(target: Duration) -> Self {
        TrialLength {
            target,
            iterations: HashMap::new(),
        }
    }

    /// One trial of `id`: `iteration` runs one iteration and returns the time of its timed part
    /// (so setup it does before starting its clock is left out). Returns the iterations counted
    /// and their total time, as [`serve`]'s trial function does.
    pub fn run(&mut self, id: &str, mut iteration: impl FnMut() -> Duration) -> (u64, Duration) {
        let n = match self.iterations.get(id) {
            Some(&n) => n,
            None => {
                let once = iteration().max(Duration::from_micros(1));
                let n = u64::try_from(self.target.as_nanos() / once.as_nanos())
                    .unwrap_or(MAX_TRIAL_ITERATIONS)
                    .clamp(1, MAX_TRIAL_ITERATIONS);
                self.iterations.insert(id.to_owned(), n);
                n
            }
        };
        let total = (0..n).map(|_| iteration()).sum();
        (n, total)
    }
}

#[cfg(test)]
#[allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::float_cmp,
    reason = "tests fail loudly"
)]
mod tests {
    use super::*;
    use crate::protocol::{DeclaredThroughput, InterleaveError};

    #[test]
    fn serves_the_protocol_that_interleave_parses() {
        let benchmarks = vec![
            WorkerBenchmark {
                id: "a/ours".to_owned(),
                throughput: Some(DeclaredThroughput::Elements(5)),
            },
            WorkerBenchmark {
                id: "b/ours".to_owned(),
                throughput: None,
            },
        ];
        let input = format!(
            "{}\n{}\n{}\nnot json\n",
            crate::protocol::request("a/ours"),
            crate::protocol::request("b/ours"),
            crate::protocol::request("c/ours")
        );
        let mut out = Vec::new();
        serve_on(
            &benchmarks,
            |id| match id {
                "a/ours" => Ok((3, Duration::from_micros(7))),
                _ => Err("broken".to_owned()),
            },
            input.as_bytes(),
            &mut out,
        )
        .expect("serve");
        let text = String::from_utf8(out).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(crate::protocol::parse_hello(lines[0]), Ok(benchmarks));
        let trial = crate::protocol::parse_reply(lines[1], "a/ours").expect("trial");
        assert_eq!((trial.iters, trial.ns), (3.0, 7000.0));
        assert!(matches!(
            crate::protocol::parse_reply(lines[2], "b/ours"),
            Err(InterleaveError::TrialFailed { .. })
        ));
        assert!(matches!(
            crate::protocol::parse_reply(lines[3], "c/ours"),
            Err(InterleaveError::TrialFailed { .. })
        ));
        assert!(crate::protocol::parse_reply(lines[4], "x").is_err());
    }

    #[test]
    fn trial_length_fixes_the_count_on_the_first_trial_and_times_only_what_iterations_report() {
        let mut lengths = TrialLength::new(Duration::from_millis(10));
        let calls = std::cell::Cell::new(0);
        let fast = || {
            calls.set(calls.get() + 1);
            Duration::from_micros(100)
        };
        assert_eq!(lengths.run("fast", fast), (100, Duration::from_millis(10)));
        // One untimed calibration iteration, then the 100 counted.
        assert_eq!(calls.get(), 101);
        assert_eq!(lengths.run("fast", fast).0, 100);
        assert_eq!(calls.get(), 201);
        // A slow benchmark still runs once; a count never exceeds the cap.
        assert_eq!(
            lengths.run("slow", || Duration::from_secs(1)),
            (1, Duration::from_secs(1))
        );
        assert_eq!(
            lengths.run("instant", || Duration::ZERO).0,
            MAX_TRIAL_ITERATIONS
        );
    }
}
