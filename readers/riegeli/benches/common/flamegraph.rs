//! Criterion's `--profile-time` hook: while criterion iterates one benchmark, pprof samples the
//! process's CPU time and the hook writes the stacks as `flamegraph.svg` into the directory
//! criterion names for the benchmark, `<criterion dir>/<group>/<bench>/profile/` (seed 004's
//! `target/criterion/simple_brotli_6/write/profile/flamegraph.svg`).
//!
//! pprof's own `criterion` feature implements criterion 0.5's `Profiler`; ours is 0.8, hence this.
//! Criterion calls the hook only in profile mode, so measuring runs are not sampled. pprof samples
//! with `setitimer(ITIMER_PROF)` and `SIGPROF`: no perf_event permissions needed.

use std::fs::{self, File};
use std::path::Path;

use criterion::profiler::Profiler;
use pprof::{ProfilerGuard, ProfilerGuardBuilder};

/// Seed 004's sampling rate.
pub const FREQUENCY_HZ: i32 = 100;

/// The file written into each benchmark's profile directory.
pub const SVG_NAME: &str = "flamegraph.svg";

/// A [`Profiler`] writing one pprof flamegraph per profiled benchmark.
pub struct Flamegraph {
    frequency: i32,
    guard: Option<ProfilerGuard<'static>>,
}

impl Flamegraph {
    /// Samples at `frequency` Hz once criterion starts profiling.
    pub fn new(frequency: i32) -> Self {
        Flamegraph {
            frequency,
            guard: None,
        }
    }
}

impl Profiler for Flamegraph {
    fn start_profiling(&mut self, benchmark_id: &str, _benchmark_dir: &Path) {
        let guard = ProfilerGuardBuilder::default()
            .frequency(self.frequency)
            // A signal that lands in these libraries' own code can't be unwound safely (pprof's
            // README); their frames are lost, the callers' samples are not.
            .blocklist(&["libc", "libgcc", "pthread", "vdso"])
            .build()
            .unwrap_or_else(|e| panic!("starting pprof for {benchmark_id}: {e}"));
        self.guard = Some(guard);
    }

    fn stop_profiling(&mut self, benchmark_id: &str, benchmark_dir: &Path) {
        let Some(guard) = self.guard.take() else {
            return;
        };
        let report = guard
            .report()
            .build()
            .unwrap_or_else(|e| panic!("pprof report for {benchmark_id}: {e}"));
        // Stop sampling before the SVG is rendered, so the rendering is not in it.
        drop(guard);
        fs::create_dir_all(benchmark_dir)
            .unwrap_or_else(|e| panic!("creating {}: {e}", benchmark_dir.display()));
        let path = benchmark_dir.join(SVG_NAME);
        let file =
            File::create(&path).unwrap_or_else(|e| panic!("creating {}: {e}", path.display()));
        report
            .flamegraph(file)
            .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
}
