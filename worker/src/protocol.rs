//! The messages of `bench-run-worker/1` (see the crate docs): the names, the checks and the
//! errors. The worker server and the process driver both build on this file, which imports
//! neither.

use serde::{Deserialize, Serialize};

/// Protocol name and version a worker announces.
pub const PROTOCOL: &str = "bench-run-worker/1";

/// Most benchmarks one worker may announce (a bound on what a broken worker can make us hold).
pub const MAX_BENCHMARKS: usize = 10_000;

/// What went wrong with a worker's messages or the plan.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InterleaveError {
    /// A line that is not the expected JSON message.
    #[error("worker sent a malformed {what}: {reason}")]
    Malformed {
        /// Which message.
        what: &'static str,
        /// Why it was rejected.
        reason: String,
    },
    /// The worker speaks another protocol.
    #[error("worker speaks `{0}`, expected `{PROTOCOL}`")]
    Protocol(String),
    /// The worker reported a failed trial.
    #[error("benchmark `{id}` failed in its worker: {reason}")]
    TrialFailed {
        /// The benchmark.
        id: String,
        /// The worker's reason.
        reason: String,
    },
    /// Two benchmarks (in one worker or across workers) share a name.
    #[error("benchmark `{0}` is announced twice")]
    Duplicate(String),
    /// Nothing to run after filtering.
    #[error("no benchmark to run{0}")]
    NothingToRun(&'static str),
}

/// Work one iteration of a benchmark does, as a worker declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum DeclaredThroughput {
    /// Bytes per iteration.
    Bytes(u64),
    /// Elements (operations, records) per iteration.
    Elements(u64),
}

/// One benchmark a worker offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerBenchmark {
    /// Its name, unique across the workers of one run.
    pub id: String,
    /// Work per iteration, when declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<DeclaredThroughput>,
}

#[derive(Deserialize)]
struct Hello {
    protocol: String,
    benchmarks: Vec<WorkerBenchmark>,
}

/// The worker's first line: the benchmarks it offers.
///
/// # Errors
///
/// Malformed JSON, another protocol, an empty or repeated id, a zero throughput, or more than
/// [`MAX_BENCHMARKS`] benchmarks.
pub fn parse_hello(line: &str) -> Result<Vec<WorkerBenchmark>, InterleaveError> {
    let malformed = |reason: String| InterleaveError::Malformed {
        what: "greeting",
        reason,
    };
    let hello: Hello = serde_json::from_str(line).map_err(|e| malformed(e.to_string()))?;
    if hello.protocol != PROTOCOL {
        return Err(InterleaveError::Protocol(hello.protocol));
    }
    if hello.benchmarks.len() > MAX_BENCHMARKS {
        return Err(malformed(format!(
            "{} benchmarks (at most {MAX_BENCHMARKS})",
            hello.benchmarks.len()
        )));
    }
    let mut seen = std::collections::HashSet::new();
    for b in &hello.benchmarks {
        if b.id.trim().is_empty() {
            return Err(malformed("an empty benchmark id".to_owned()));
        }
        if matches!(
            b.throughput,
            Some(DeclaredThroughput::Bytes(0) | DeclaredThroughput::Elements(0))
        ) {
            return Err(malformed(format!("`{}` declares a zero throughput", b.id)));
        }
        if !seen.insert(b.id.as_str()) {
            return Err(InterleaveError::Duplicate(b.id.clone()));
        }
    }
    Ok(hello.benchmarks)
}

/// The request for one trial of `id`, as a line without its newline.
#[must_use]
pub fn request(id: &str) -> String {
    serde_json::json!({ "run": id }).to_string()
}

/// One timed trial: `iters` iterations in `ns` nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Trial {
    /// Iterations the worker timed.
    pub iters: f64,
    /// Their total time.
    pub ns: f64,
}

impl Trial {
    /// Time per iteration.
    #[must_use]
    pub fn per_iteration_ns(self) -> f64 {
        self.ns / self.iters
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Reply {
    id: String,
    iters: Option<f64>,
    ns: Option<f64>,
    error: Option<String>,
}

/// The worker's answer to [`request`]`(expected)`.
///
/// # Errors
///
/// Malformed JSON, another benchmark's id, a reported failure, or counts that are not finite
/// (`iters` at least 1, `ns` positive).
pub fn parse_reply(line: &str, expected: &str) -> Result<Trial, InterleaveError> {
    let malformed = |reason: String| InterleaveError::Malformed {
        what: "reply",
        reason,
    };
    let reply: Reply = serde_json::from_str(line).map_err(|e| malformed(e.to_string()))?;
    if reply.id != expected {
        return Err(malformed(format!(
            "answer for `{}` to a request for `{expected}`",
            reply.id
        )));
    }
    if let Some(reason) = reply.error {
        return Err(InterleaveError::TrialFailed {
            id: reply.id,
            reason,
        });
    }
    match (reply.iters, reply.ns) {
        (Some(iters), Some(ns))
            if iters.is_finite() && iters >= 1.0 && ns.is_finite() && ns > 0.0 =>
        {
            Ok(Trial { iters, ns })
        }
        (iters, ns) => Err(malformed(format!(
            "`{expected}`: iters {iters:?} and ns {ns:?} must be a count of at least 1 and a positive time"
        ))),
    }
}
