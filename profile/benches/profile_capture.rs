//! `profile_capture`: what profiling one benchmark costs, beside its floor.
//!
//! The floor is the profiled benchmark run alone (criterion's `--profile-time T`, no perf):
//! no profile of T seconds can take less. `capture` is [`bench_profile::capture_criterion`]
//! on the same benchmark: `perf record` around that run, then `perf script` and the folding.
//! The ratio of the two is the share of the floor a capture reaches.
//!
//! | benchmark | what is timed |
//! |---|---|
//! | `bare_run/Ts` | the fixture's `digest` benchmark under `--profile-time T`, no profiler |
//! | `capture/Ts` | `capture_criterion` of it, T seconds, a default `cargo bench` build |
//! | `capture_debuginfo/1s` | the same, built with `debug = true` (perf resolves inlined frames) |
//!
//! The fixture is `tests/fixtures/profiled`, built once by the bench's setup. One iteration
//! is one whole run, so each benchmark takes ten of them (criterion's smallest sample).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    reason = "benches fail loudly"
)]

#[path = "../tests/util/mod.rs"]
mod util;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use bench_profile::{PerfOptions, capture_criterion};
use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use util::{Side, build, build_with_debug_info, fixture};

/// The fixture's benchmark that is profiled.
const BENCHMARK: &str = "digest";

fn bare_run(exe: &Path, seconds: u32, scratch: &Path) {
    let status = Command::new(exe)
        .args(["--bench", "--profile-time", &seconds.to_string()])
        .args(["--exact", BENCHMARK])
        .current_dir(fixture())
        .env("CRITERION_HOME", scratch.join("criterion"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{} exited with {status}", exe.display());
}

fn capture(exe: &Path, seconds: u32, scratch: &Path) {
    let options = PerfOptions {
        seconds,
        current_dir: Some(fixture()),
        ..PerfOptions::default()
    };
    let profile = capture_criterion(exe, BENCHMARK, scratch, &options).unwrap();
    assert!(profile.total > 0, "no samples");
}

/// A benchmark: its name, the executable, the profile seconds and what is timed.
type Case<'a> = (&'static str, &'a Path, u32, fn(&Path, u32, &Path));

fn profile_capture(c: &mut Criterion) {
    let plain = build(Side::Base).wall;
    let with_debug_info = build_with_debug_info().wall;
    let mut group = c.benchmark_group("profile_capture");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(1));
    let cases: [Case; 5] = [
        ("bare_run", &plain, 1, bare_run),
        ("capture", &plain, 1, capture),
        ("capture_debuginfo", &with_debug_info, 1, capture),
        ("bare_run", &plain, 5, bare_run),
        ("capture", &plain, 5, capture),
    ];
    for (name, exe, seconds, run) in cases {
        group.bench_function(format!("{name}/{seconds}s"), |b| {
            b.iter(|| {
                let scratch = tempfile::tempdir().unwrap();
                run(exe, seconds, scratch.path());
            });
        });
    }
    group.finish();
}

criterion_group!(benches, profile_capture);
criterion_main!(benches);
