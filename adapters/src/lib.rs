//! # bench-adapters
//!
//! Tool output -> the result model.
//!
//! Each adapter is a pure parser from the bytes a benchmarking tool (or a person) wrote to
//! [`Measurement`](crate::model::Measurement)s. Only [`criterion::read_dir`] and [`read_input`]
//! touch the file system, and both bound the work they do.
//!
//! | module | tool output | metric | samples |
//! |---|---|---|---|
//! | [`criterion`] | criterion 0.5–0.8 `CRITERION_HOME/<id>/new/{benchmark,estimates,sample}.json` | `time`, ns | yes (linear or flat) |
//! | [`cargo_criterion`] | `cargo criterion --message-format=json` (JSON lines) | `time`, ns | yes |
//! | [`bmf`] | Bencher Metric Format JSON | the measure's name | no |
//! | [`hyperfine`] | `hyperfine --export-json` | `time`, ns | yes (one run each) |
//! | [`gungraun`] | gungraun 0.20 `summary.json` (`--save-summary=json`) or `--output-format=json` | `instructions`, `estimated_cycles`, `l1_hits`, ... counts | no (exact values) |
//! | [`libtest`] | `cargo +nightly bench` stdout of `#[bench]` functions (`ns/iter (+/- ...)` lines) | `time`, ns (median; `+/-` kept as the range) | no |
//! | [`mdlog`] | a hand-kept markdown log (`BENCHMARKS.md`, seed 002's layout): one run per entry and suite, with its date, machine, toolchain and commands | `time`, ns (median; `~` kept as `approximate_median`); `bytes`; other columns by name | no |
//!
//! Every adapter is tested on real captured output under `adapters/testdata/<format>/` (each folder
//! has a `make.sh` that regenerates its capture) and on hostile input: truncation at every byte,
//! garbage, wrong types, non-finite and absurd values. Malformed input is an [`AdapterError`],
//! never a panic.
//!
//! ```
//! use std::collections::BTreeMap;
//! use bench_adapters::bmf;
//! use bench_model::Direction;
//!
//! let bmf = br#"{"decode/100000": {"latency": {"value": 42.0, "lower_value": 40.0, "upper_value": 45.0}}}"#;
//! let measurements = bmf::parse(bmf, &BTreeMap::new())?;
//! assert_eq!(measurements[0].benchmark.full, "decode/100000");
//! assert_eq!((measurements[0].metric.as_str(), measurements[0].unit.as_str()), ("latency", "ns"));
//! assert_eq!(measurements[0].direction, Direction::LowerIsBetter);
//! # Ok::<(), bench_adapters::AdapterError>(())
//! ```
//!
//! ## Glossary
//!
//! - **measure** (BMF): one named quantity of a benchmark, e.g. `latency` or `file-size`; it becomes
//!   the [`Measurement::metric`](crate::model::Measurement::metric).
//! - **headline estimate**: the one number a comparison looks at first; the median for times.
//! - **absurd value**: a finite number no real run produces, e.g. a time above [`MAX_TIME_NS`];
//!   rejected so that one corrupt file cannot poison a ledger's history.

use std::fs::File;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use bench_model as model;
use model::{Estimate, SamplesError};

pub mod bmf;
pub mod cargo_criterion;
pub mod criterion;
pub mod gungraun;
pub mod hyperfine;
pub mod libtest;
pub mod mdlog;

/// Largest file an adapter reads (64 MiB). Real tool output is orders of magnitude smaller.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Largest time accepted, in nanoseconds (1e18 ns, about 31.7 years).
pub const MAX_TIME_NS: f64 = 1e18;

/// Largest iteration count accepted for one sample (1e18).
pub const MAX_ITERATIONS: f64 = 1e18;

/// What went wrong while reading tool output. Every variant says where (a path, a file label or a
/// benchmark id) and what.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AdapterError {
    /// A file or directory could not be read.
    #[error("cannot read {}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A file is larger than [`MAX_FILE_BYTES`].
    #[error("{} is {size} bytes, over the {limit}-byte limit", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size (at least `limit + 1` when it grew while being read).
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Input is not JSON, or not JSON of the expected shape (missing field, wrong type).
    #[error("{what}: malformed JSON")]
    Json {
        /// Which input: a path, a file name or a line.
        what: String,
        /// The parser's error, with line and column.
        #[source]
        source: serde_json::Error,
    },
    /// Well-formed input whose content breaks a rule (non-finite, negative or absurd value,
    /// inconsistent bounds, empty name, duplicate benchmark, ...).
    #[error("{what}: {reason}")]
    Invalid {
        /// Which input, and which benchmark when known.
        what: String,
        /// What is wrong.
        reason: String,
    },
    /// Raw samples break the invariants of [`Samples`](crate::model::Samples).
    #[error("{what}: invalid samples")]
    Samples {
        /// Which input, and which benchmark.
        what: String,
        /// The broken invariant.
        #[source]
        source: SamplesError,
    },
    /// The input holds no benchmark at all.
    #[error("no benchmarks found in {what}")]
    Empty {
        /// Which input.
        what: String,
    },
    /// Lines of a hand-written input (a markdown log) that cannot be read, each with its line
    /// number. The input is refused whole: nothing of it is taken.
    #[error("{what}: {}", list_problems(problems, *not_listed))]
    Unreadable {
        /// Which input.
        what: String,
        /// The problems, by line.
        problems: Vec<LineProblem>,
        /// How many more problems were found but not kept (a garbage file has one per line).
        not_listed: usize,
    },
}

/// A line of hand-written input that cannot be read, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineProblem {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong, as a sentence.
    pub problem: String,
}

impl std::fmt::Display for LineProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.problem)
    }
}

/// The message of [`AdapterError::Unreadable`]: one problem per line.
fn list_problems(problems: &[LineProblem], not_listed: usize) -> String {
    let count = problems.len() + not_listed;
    let mut out = format!(
        "refused whole, nothing imported: {count} problem{}",
        if count == 1 { "" } else { "s" }
    );
    for p in problems {
        out.push_str(&format!("\n  {p}"));
    }
    if not_listed > 0 {
        out.push_str(&format!("\n  ... and {not_listed} more"));
    }
    out
}

impl AdapterError {
    fn invalid(what: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Invalid {
            what: what.into(),
            reason: reason.into(),
        }
    }

    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Reads a whole regular file of at most [`MAX_FILE_BYTES`].
///
/// # Errors
/// [`AdapterError::Io`] when the path is missing or unreadable, [`AdapterError::Invalid`] when it
/// is not a regular file (a directory, a FIFO, ...), [`AdapterError::TooLarge`] over the limit.
pub fn read_input(path: &Path) -> Result<Vec<u8>, AdapterError> {
    read_limited(path, MAX_FILE_BYTES)
}

fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, AdapterError> {
    // `metadata` follows symlinks, so a symlink to a regular file is accepted; anything that could
    // block (FIFO, device) is refused before it is opened.
    let meta = std::fs::metadata(path).map_err(AdapterError::io(path))?;
    if !meta.is_file() {
        return Err(AdapterError::invalid(
            path.display().to_string(),
            "not a regular file",
        ));
    }
    if meta.len() > limit {
        return Err(AdapterError::TooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
            limit,
        });
    }
    let file = File::open(path).map_err(AdapterError::io(path))?;
    let capacity = usize::try_from(meta.len()).unwrap_or(0);
    let mut bytes = Vec::with_capacity(capacity);
    // The file may grow after `metadata`: never read more than the limit.
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(AdapterError::io(path))?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if read > limit {
        return Err(AdapterError::TooLarge {
            path: path.to_path_buf(),
            size: read,
            limit,
        });
    }
    Ok(bytes)
}

/// Parses JSON, labelling a failure with `what`.
fn from_json<'a, T: serde::Deserialize<'a>>(
    what: &str,
    bytes: &'a [u8],
) -> Result<T, AdapterError> {
    serde_json::from_slice(bytes).map_err(|source| AdapterError::Json {
        what: what.to_owned(),
        source,
    })
}

/// Checks a duration or spread in nanoseconds: finite, not negative, not absurd.
fn check_time_ns(what: &str, name: &str, value: f64) -> Result<f64, AdapterError> {
    if !value.is_finite() {
        return Err(AdapterError::invalid(
            what,
            format!("{name} is not finite ({value})"),
        ));
    }
    if value < 0.0 {
        return Err(AdapterError::invalid(
            what,
            format!("{name} is negative ({value})"),
        ));
    }
    if value > MAX_TIME_NS {
        return Err(AdapterError::invalid(
            what,
            format!("{name} is absurdly large ({value} ns > {MAX_TIME_NS} ns)"),
        ));
    }
    Ok(value)
}

/// Checks the confidence interval and standard error of an estimate in nanoseconds.
///
/// The point estimate is not required to lie inside its bounds: criterion's bootstrap percentile
/// intervals may exclude the point estimate of a skewed statistic (the standard deviation of a
/// tiny sample, for instance), and such real output must import.
fn check_time_estimate(
    what: &str,
    name: &str,
    estimate: Estimate,
) -> Result<Estimate, AdapterError> {
    check_time_ns(what, &format!("{name} point estimate"), estimate.point)?;
    if let Some(lower) = estimate.lower {
        check_time_ns(what, &format!("{name} lower bound"), lower)?;
    }
    if let Some(upper) = estimate.upper {
        check_time_ns(what, &format!("{name} upper bound"), upper)?;
    }
    if let (Some(lower), Some(upper)) = (estimate.lower, estimate.upper)
        && lower > upper
    {
        return Err(AdapterError::invalid(
            what,
            format!("{name} lower bound {lower} is above its upper bound {upper}"),
        ));
    }
    if let Some(level) = estimate.confidence_level
        && !(level > 0.0 && level < 1.0)
    {
        return Err(AdapterError::invalid(
            what,
            format!("{name} confidence level {level} is not strictly between 0 and 1"),
        ));
    }
    if let Some(se) = estimate.standard_error {
        check_time_ns(what, &format!("{name} standard error"), se)?;
    }
    Ok(estimate)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn read_limited_refuses_large_files_and_non_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read_limited(&path, 10).unwrap(), b"0123456789");
        let err = read_limited(&path, 9).unwrap_err();
        assert!(
            matches!(
                err,
                AdapterError::TooLarge {
                    size: 10,
                    limit: 9,
                    ..
                }
            ),
            "{err:?}"
        );
        let err = read_limited(dir.path(), 9).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let missing = dir.path().join("missing.json");
        let err = read_input(&missing).unwrap_err();
        assert!(
            matches!(err, AdapterError::Io { ref path, .. } if *path == missing),
            "{err:?}"
        );
        assert!(err.to_string().contains("missing.json"), "{err}");
    }

    #[test]
    fn time_checks() {
        let cases: [(f64, bool); 7] = [
            (0.0, true),
            (1.5, true),
            (MAX_TIME_NS, true),
            (-1.0, false),
            (f64::NAN, false),
            (f64::INFINITY, false),
            (1e19, false),
        ];
        for (i, (value, ok)) in cases.into_iter().enumerate() {
            assert_eq!(
                check_time_ns("x", "t", value).is_ok(),
                ok,
                "case {i}: {value}"
            );
        }
        let mut e = Estimate::point(5.0);
        e.lower = Some(6.0);
        e.upper = Some(4.0);
        assert!(check_time_estimate("x", "mean", e).is_err());
        let mut e = Estimate::point(5.0);
        e.confidence_level = Some(1.5);
        assert!(check_time_estimate("x", "mean", e).is_err());
        // Point outside its bounds is tolerated (see the function's docs).
        let mut e = Estimate::point(5.0);
        e.lower = Some(1.0);
        e.upper = Some(4.0);
        assert!(check_time_estimate("x", "std_dev", e).is_ok());
    }
}
