//! Settings shared by the mathldbt suites.

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, SamplingMode};
use std::time::Duration;

/// Row counts of every suite, as in seed 002.
pub const ROWS: [usize; 2] = [2_000, 100_000];

/// Flat sampling at 100,000 rows: the slowest benchmarks (JSON, gzip) take tens of
/// milliseconds per iteration, and criterion's linear sampling would need minutes for them.
pub fn configure_sampling(group: &mut BenchmarkGroup<'_, WallTime>, rows: usize) {
    if rows >= 100_000 {
        group
            .sampling_mode(SamplingMode::Flat)
            .sample_size(30)
            .measurement_time(Duration::from_secs(5));
    } else {
        group.sampling_mode(SamplingMode::Auto).sample_size(100);
    }
}
