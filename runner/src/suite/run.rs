//! Running a built bench executable: listing its benchmarks, following criterion's progress
//! lines, reading the machine's conditions while it runs (steps 3 and 4 of [`super`]).

use super::{SuiteError, SuiteTarget};
use crate::process::{self, RunOutput, TAIL_LINES, bench_command};
use std::path::Path;
use std::process::Stdio;

/// Parses the output of `<criterion bench> --list`: one `name: benchmark` line per benchmark.
#[must_use]
pub fn parse_list(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            line.strip_suffix(": benchmark")
                .or_else(|| line.strip_suffix(": bench"))
        })
        .map(str::to_owned)
        .collect()
}

/// Turns criterion's progress lines into "benchmark n of m" events.
#[derive(Debug, Clone)]
pub struct ProgressTracker {
    expected: Vec<String>,
    started: usize,
    current: Option<String>,
}

impl ProgressTracker {
    /// A tracker expecting the benchmarks named by `--list`.
    #[must_use]
    pub fn new(expected: Vec<String>) -> Self {
        Self {
            expected,
            started: 0,
            current: None,
        }
    }

    /// Number of benchmarks expected.
    #[must_use]
    pub fn total(&self) -> usize {
        self.expected.len()
    }

    /// Feeds one output line; returns `Some((n, id))` when it starts benchmark number `n`
    /// (1-based).
    pub fn feed(&mut self, line: &str) -> Option<(usize, String)> {
        let rest = line
            .trim_start_matches('\r')
            .strip_prefix("Benchmarking ")?;
        // Ids may contain ": ", so prefer the longest expected id the line starts with.
        let id = self
            .expected
            .iter()
            .filter(|id| rest == id.as_str() || rest.starts_with(&format!("{id}:")))
            .max_by_key(|id| id.len())
            .cloned()
            .unwrap_or_else(|| rest.split(": ").next().unwrap_or(rest).to_owned());
        if self.current.as_deref() == Some(id.as_str()) {
            return None;
        }
        self.current = Some(id.clone());
        self.started += 1;
        Some((self.started, id))
    }
}

/// Runs a criterion bench executable, calling `on_progress(n, total, id)` whenever a new
/// benchmark starts. `criterion_home` receives criterion's output. The machine's CPU counters
/// are read at the start, at each benchmark start and at the end ([`crate::conditions`]).
///
/// # Errors
/// When the executable cannot be started or exits unsuccessfully.
pub fn run_bench(
    exe: &Path,
    suite: &SuiteTarget,
    criterion_args: &[String],
    criterion_home: &Path,
    tracker: &mut ProgressTracker,
    on_progress: impl FnMut(usize, usize, &str),
) -> Result<RunOutput, SuiteError> {
    run_bench_with_env(
        exe,
        suite,
        criterion_args,
        criterion_home,
        &[],
        tracker,
        on_progress,
    )
}

/// [`run_bench`] with more environment variables for the process (`bench-run ab`'s
/// environment-size pad).
///
/// # Errors
/// When the executable cannot be started or exits unsuccessfully.
pub fn run_bench_with_env(
    exe: &Path,
    suite: &SuiteTarget,
    criterion_args: &[String],
    criterion_home: &Path,
    env: &[(String, String)],
    tracker: &mut ProgressTracker,
    mut on_progress: impl FnMut(usize, usize, &str),
) -> Result<RunOutput, SuiteError> {
    let mut sampler = crate::conditions::Sampler::start();
    let mut command = bench_command(exe, suite, criterion_home);
    command
        .envs(env.iter().map(|(k, v)| (k, v)))
        .arg("--bench")
        .args(criterion_args);
    // Criterion writes progress to stderr (0.6+) or stdout (0.5): both streams are followed.
    let elapsed = process::follow(command, exe, &suite.name, |pid, _, line| {
        if let Some((n, id)) = tracker.feed(&line) {
            if let Some(sampler) = sampler.as_mut() {
                sampler.mark(&id, pid);
            }
            on_progress(n, tracker.total(), &id);
        }
        line
    })?;
    Ok(RunOutput {
        elapsed,
        conditions: sampler.and_then(crate::conditions::Sampler::finish),
    })
}

/// Lists the benchmarks `criterion_args` select (`<exe> --bench --list ...`).
///
/// # Errors
/// When the executable cannot be run or fails.
pub fn list_benchmarks(
    exe: &Path,
    suite: &SuiteTarget,
    criterion_args: &[String],
    criterion_home: &Path,
) -> Result<Vec<String>, SuiteError> {
    let output = bench_command(exe, suite, criterion_home)
        .arg("--bench")
        .arg("--list")
        .args(filter_args(criterion_args))
        .stdin(Stdio::null())
        .output()
        .map_err(|source| SuiteError::Io {
            what: format!("cannot start {}", exe.display()),
            source,
        })?;
    if !output.status.success() {
        return Err(SuiteError::BenchFailed {
            suite: suite.name.clone(),
            status: output.status.to_string(),
            tail: list_output_tail(&output),
            hint: None,
        });
    }
    Ok(parse_list(&String::from_utf8_lossy(&output.stdout)))
}

/// The last lines a failed `--list` printed: criterion 0.3 prints its argument errors on
/// stdout, later versions on stderr.
fn list_output_tail(output: &std::process::Output) -> String {
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
}

/// Criterion flags that take a value (the next argument).
pub const CRITERION_FLAGS_WITH_VALUE: &[&str] = &[
    "--warm-up-time",
    "--measurement-time",
    "--sample-size",
    "--nresamples",
    "--noise-threshold",
    "--confidence-level",
    "--significance-level",
    "--save-baseline",
    "-s",
    "--baseline",
    "-b",
    "--baseline-lenient",
    "--load-baseline",
    "--profile-time",
    "--plotting-backend",
    "--output-format",
    "--color",
    "-c",
    "--format",
];

/// The criterion arguments that select benchmarks (the positional filter and `--exact`,
/// `--ignored`), dropping measurement settings that `--list` has no use for.
#[must_use]
pub fn filter_args(criterion_args: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut args = criterion_args.iter();
    while let Some(arg) = args.next() {
        if CRITERION_FLAGS_WITH_VALUE.contains(&arg.as_str()) {
            args.next();
        } else if arg == "--exact" || arg == "--ignored" || !arg.starts_with('-') {
            kept.push(arg.clone());
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_output_and_progress_lines() {
        let list = parse_list("g/f/1: benchmark\ng/f/2: benchmark\n\nnoise\n");
        assert_eq!(list, ["g/f/1", "g/f/2"]);
        let mut tracker = ProgressTracker::new(vec!["a: b".into(), "a".into()]);
        assert_eq!(tracker.feed("Benchmarking a: b"), Some((1, "a: b".into())));
        assert_eq!(
            tracker.feed("Benchmarking a: b: Warming up for 3.0000 s"),
            None
        );
        assert_eq!(tracker.feed("a: b   time: [1 ns 2 ns 3 ns]"), None);
        assert_eq!(tracker.feed("Benchmarking a"), Some((2, "a".into())));
        assert_eq!(tracker.feed("Benchmarking a: Analyzing"), None);
        assert_eq!(tracker.total(), 2);
    }

    #[test]
    fn filters_drop_settings() {
        let args: Vec<String> = ["--sample-size", "10", "encode", "--exact", "--noplot"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(filter_args(&args), ["encode", "--exact"]);
    }
}
