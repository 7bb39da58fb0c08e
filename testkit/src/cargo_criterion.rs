//! Criterion output for tests that record runs without running a suite: the ids a bench's
//! `--list` printed, captured in a file, and cargo-criterion's `benchmark-complete` message for
//! each (`bench-run import cargo-criterion` reads them as a run of the suite).

use std::path::Path;

/// The ids a criterion bench's `--list` printed (`<id>: benchmark` lines) into `path`.
///
/// # Panics
/// When the file cannot be read (a test fixture is missing).
#[must_use]
pub fn listed_ids(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .lines()
        .filter_map(|l| l.strip_suffix(": benchmark"))
        .map(str::to_owned)
        .collect()
}

/// A cargo-criterion `benchmark-complete` message: `id` at `ns` per iteration, three samples.
#[must_use]
pub fn benchmark_complete(id: &str, ns: f64) -> String {
    let interval = |x: f64| {
        serde_json::json!({"estimate": x, "lower_bound": x * 0.99, "upper_bound": x * 1.01,
                           "unit": "ns"})
    };
    serde_json::json!({
        "reason": "benchmark-complete", "id": id, "unit": "ns", "throughput": [],
        "iteration_count": [10.0, 20.0, 30.0],
        "measured_values": [10.0 * ns, 20.0 * ns, 30.0 * ns],
        "typical": interval(ns), "mean": interval(ns), "median": interval(ns),
        "median_abs_dev": interval(ns * 0.01), "slope": interval(ns), "change": null,
    })
    .to_string()
}
