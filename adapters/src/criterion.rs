//! criterion's on-disk output (versions 0.5 to 0.8).
//!
//! criterion writes one directory per benchmark under `CRITERION_HOME` (default
//! `target/criterion`), named after the benchmark id:
//!
//! ```text
//! CRITERION_HOME/
//!   report/                       HTML summary (ignored)
//!   checksum/fold/64/
//!     new/                        the latest run            <- parsed
//!       benchmark.json            id, throughput
//!       estimates.json            mean, median, median_abs_dev, slope (null when flat), std_dev
//!       sample.json               sampling_mode, iters[i], times[i] (total ns of sample i)
//!       tukey.json                outlier fences (ignored)
//!     base/                       the previous run, same files (skipped)
//!     change/estimates.json       relative change new vs base (skipped)
//!     <baseline>/                 `--save-baseline <baseline>` (skipped)
//!     report/                     HTML (ignored)
//! ```
//!
//! [`read_dir`] walks such a tree and parses every `new/` directory with [`parse_benchmark`].
//! A directory holding any of the three files is a benchmark snapshot: it is parsed when it is
//! called `new` and skipped otherwise (`base`, `change`, saved baselines), and never descended
//! into. Every other directory is descended into, so benchmark ids whose parts are called
//! `report` or `base` still work.
//!
//! The model it produces: metric [`metric::TIME`] in `ns`, lower is better, headline estimate the
//! median, all of criterion's statistics (slope only with linear sampling) and the raw samples.
//!
//! Versions differ only in details the parser tolerates: 0.7 added `Throughput::Bits`, 0.8
//! `Throughput::ElementsAndBytes` (mapped to its elements, criterion's primary count). Unknown
//! fields are ignored; an unknown throughput variant maps to no throughput.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::{
    AdapterError, MAX_FILE_BYTES, MAX_ITERATIONS, check_time_estimate, check_time_ns, from_json,
    read_limited,
};
use crate::model::{
    BenchmarkId, Direction, Estimate, Measurement, Samples, SamplingMode, Statistic, Throughput,
    ThroughputKind, metric,
};

/// The three files of a benchmark snapshot, in the order [`parse_benchmark`] takes them.
pub const SNAPSHOT_FILES: [&str; 3] = ["benchmark.json", "estimates.json", "sample.json"];

/// Deepest directory nesting [`read_dir`] descends to below its root.
pub const MAX_DEPTH: usize = 64;

/// Most directories [`read_dir`] visits.
pub const MAX_DIRECTORIES: usize = 100_000;

#[derive(Deserialize)]
struct RawBenchmark {
    group_id: String,
    function_id: Option<String>,
    value_str: Option<String>,
    #[serde(default)]
    throughput: Option<Value>,
    full_id: String,
}

#[derive(Deserialize)]
struct RawInterval {
    confidence_level: f64,
    lower_bound: f64,
    upper_bound: f64,
}

#[derive(Deserialize)]
struct RawEstimate {
    confidence_interval: RawInterval,
    point_estimate: f64,
    standard_error: f64,
}

#[derive(Deserialize)]
struct RawEstimates {
    mean: RawEstimate,
    median: RawEstimate,
    median_abs_dev: RawEstimate,
    #[serde(default)]
    slope: Option<RawEstimate>,
    std_dev: RawEstimate,
}

#[derive(Deserialize)]
enum RawSamplingMode {
    Linear,
    Flat,
}

#[derive(Deserialize)]
struct RawSample {
    sampling_mode: RawSamplingMode,
    iters: Vec<f64>,
    times: Vec<f64>,
}

/// Parses one benchmark snapshot: the contents of criterion's `new/benchmark.json`,
/// `new/estimates.json` and `new/sample.json`.
///
/// # Errors
/// [`AdapterError::Json`] when a file is not JSON of criterion's shape, [`AdapterError::Invalid`]
/// for an empty id, a malformed throughput, or a non-finite, negative or absurd estimate,
/// [`AdapterError::Samples`] when the samples break their invariants.
pub fn parse_benchmark(
    benchmark_json: &[u8],
    estimates_json: &[u8],
    sample_json: &[u8],
) -> Result<Measurement, AdapterError> {
    parse_labelled(
        [benchmark_json, estimates_json, sample_json],
        SNAPSHOT_FILES.map(str::to_owned),
    )
}

/// [`parse_benchmark`] with a label (file name or path) per file for error messages.
fn parse_labelled(files: [&[u8]; 3], labels: [String; 3]) -> Result<Measurement, AdapterError> {
    let [benchmark_json, estimates_json, sample_json] = files;
    let [benchmark_label, estimates_label, sample_label] = labels;

    let raw: RawBenchmark = from_json(&benchmark_label, benchmark_json)?;
    if raw.full_id.trim().is_empty() {
        return Err(AdapterError::invalid(benchmark_label, "full_id is empty"));
    }
    let id = raw.full_id.clone();
    let throughput = throughput(
        &format!("{benchmark_label} (benchmark `{id}`)"),
        raw.throughput.as_ref(),
    )?;
    let benchmark = BenchmarkId {
        full: raw.full_id,
        group: Some(raw.group_id),
        function: raw.function_id,
        value: raw.value_str,
    };

    let what = format!("{estimates_label} (benchmark `{id}`)");
    let raw: RawEstimates = from_json(&what, estimates_json)?;
    let mut statistics = BTreeMap::new();
    let named = [
        (Statistic::Mean, Some(raw.mean)),
        (Statistic::Median, Some(raw.median)),
        (Statistic::Slope, raw.slope),
        (Statistic::StdDev, Some(raw.std_dev)),
        (Statistic::MedianAbsDev, Some(raw.median_abs_dev)),
    ];
    for (statistic, raw) in named {
        if let Some(raw) = raw {
            let estimate = Estimate {
                point: raw.point_estimate,
                lower: Some(raw.confidence_interval.lower_bound),
                upper: Some(raw.confidence_interval.upper_bound),
                confidence_level: Some(raw.confidence_interval.confidence_level),
                standard_error: Some(raw.standard_error),
            };
            statistics.insert(
                statistic,
                check_time_estimate(&what, statistic.name(), estimate)?,
            );
        }
    }
    let estimate = statistics
        .get(&Statistic::Median)
        .copied()
        .ok_or_else(|| AdapterError::invalid(what.clone(), "no median"))?;

    let what = format!("{sample_label} (benchmark `{id}`)");
    let raw: RawSample = from_json(&what, sample_json)?;
    let mode = match raw.sampling_mode {
        RawSamplingMode::Linear => SamplingMode::Linear,
        RawSamplingMode::Flat => SamplingMode::Flat,
    };
    for (i, (&n, &t)) in raw.iters.iter().zip(&raw.times).enumerate() {
        if n > MAX_ITERATIONS {
            return Err(AdapterError::invalid(
                what,
                format!("sample {i} has an absurd iteration count ({n})"),
            ));
        }
        if t.is_finite() {
            check_time_ns(&what, &format!("time of sample {i}"), t)?;
        }
    }
    let samples = Samples::new(mode, raw.iters, raw.times)
        .map_err(|source| AdapterError::Samples { what, source })?;

    Ok(Measurement {
        benchmark,
        metric: metric::TIME.to_owned(),
        unit: "ns".to_owned(),
        direction: Direction::LowerIsBetter,
        estimate,
        statistics,
        throughput,
        samples: Some(samples),
    })
}

/// Maps criterion's serialized `Throughput` enum.
///
/// `{"Bytes": n}`, `{"BytesDecimal": n}`, `{"Elements": n}`, `{"Bits": n}` map to their kind;
/// `{"ElementsAndBytes": {"elements": e, "bytes": b}}` maps to `e` elements. A variant this
/// parser does not know (a later criterion's) maps to `None`; a known variant with a malformed
/// count, or a value of another shape, is an error.
fn throughput(what: &str, value: Option<&Value>) -> Result<Option<Throughput>, AdapterError> {
    let malformed =
        |detail: &str| AdapterError::invalid(what, format!("malformed throughput: {detail}"));
    let object = match value {
        None | Some(Value::Null) => return Ok(None),
        // A unit variant serializes as a bare string: unknown to us, so no throughput.
        Some(Value::String(_)) => return Ok(None),
        Some(Value::Object(object)) => object,
        Some(_) => return Err(malformed("expected an object or null")),
    };
    let mut entries = object.iter();
    let (Some((variant, count)), None) = (entries.next(), entries.next()) else {
        return Err(malformed("expected exactly one variant"));
    };
    let count_of = |value: &Value, name: &str| {
        value
            .as_u64()
            .ok_or_else(|| malformed(&format!("{name} is not a non-negative integer: {value}")))
    };
    let (kind, per_iteration) = match variant.as_str() {
        "Bytes" => (ThroughputKind::Bytes, count_of(count, variant)?),
        "BytesDecimal" => (ThroughputKind::BytesDecimal, count_of(count, variant)?),
        "Elements" => (ThroughputKind::Elements, count_of(count, variant)?),
        "Bits" => (ThroughputKind::Bits, count_of(count, variant)?),
        "ElementsAndBytes" => {
            let elements = count
                .get("elements")
                .ok_or_else(|| malformed("ElementsAndBytes without elements"))?;
            (ThroughputKind::Elements, count_of(elements, "elements")?)
        }
        _ => return Ok(None),
    };
    Ok(Some(Throughput {
        kind,
        per_iteration,
    }))
}

/// Parses every benchmark under a criterion output directory (`CRITERION_HOME` or
/// `target/criterion`), sorted by full id.
///
/// Only `new/` snapshots are read (see the module docs). The walk follows symlinks but visits
/// each directory once (so a symlink loop ends), descends at most [`MAX_DEPTH`] levels, visits at
/// most [`MAX_DIRECTORIES`] directories and refuses files over [`MAX_FILE_BYTES`].
///
/// Passing a benchmark's `new/` directory itself parses that one benchmark.
///
/// # Errors
/// [`AdapterError::Io`] when `dir` or a snapshot file is missing or unreadable (naming the path),
/// [`AdapterError::Empty`] when there is no benchmark, [`AdapterError::Invalid`] for two snapshots
/// with the same id or a tree over the limits, and any error of [`parse_benchmark`], labelled
/// with the offending file's path.
pub fn read_dir(dir: &Path) -> Result<Vec<Measurement>, AdapterError> {
    let meta = std::fs::metadata(dir).map_err(AdapterError::io(dir))?;
    if !meta.is_dir() {
        return Err(AdapterError::invalid(
            dir.display().to_string(),
            "not a directory",
        ));
    }
    let mut found: Vec<(PathBuf, Measurement)> = Vec::new();
    let mut visited: HashSet<PathBuf> = HashSet::new();
    let mut stack: Vec<(PathBuf, usize)> = vec![(dir.to_path_buf(), 0)];
    while let Some((current, depth)) = stack.pop() {
        let canonical = std::fs::canonicalize(&current).map_err(AdapterError::io(&current))?;
        if !visited.insert(canonical) {
            continue; // reached again through a symlink
        }
        if visited.len() > MAX_DIRECTORIES {
            return Err(AdapterError::invalid(
                dir.display().to_string(),
                format!("more than {MAX_DIRECTORIES} directories; is this a criterion directory?"),
            ));
        }
        let mut subdirs = Vec::new();
        let mut holds_snapshot_file = false;
        for entry in std::fs::read_dir(&current).map_err(AdapterError::io(&current))? {
            let entry = entry.map_err(AdapterError::io(&current))?;
            let path = entry.path();
            let file_type = entry.file_type().map_err(AdapterError::io(&path))?;
            let is_dir = if file_type.is_symlink() {
                // A dangling symlink is not a directory; if it is a snapshot file the read below
                // reports it.
                std::fs::metadata(&path).is_ok_and(|m| m.is_dir())
            } else {
                file_type.is_dir()
            };
            if is_dir {
                subdirs.push(path);
            } else if SNAPSHOT_FILES.iter().any(|f| entry.file_name() == *f) {
                holds_snapshot_file = true;
            }
        }
        if holds_snapshot_file {
            if current.file_name().is_some_and(|name| name == "new") {
                let measurement = read_snapshot(&current)?;
                found.push((current, measurement));
            }
            // `base`, `change` and saved baselines are skipped; snapshots have no children.
            continue;
        }
        if !subdirs.is_empty() && depth >= MAX_DEPTH {
            return Err(AdapterError::invalid(
                current.display().to_string(),
                format!(
                    "nested more than {MAX_DEPTH} levels below {}",
                    dir.display()
                ),
            ));
        }
        // Reverse order on the stack, so the walk visits names in order.
        subdirs.sort_unstable_by(|a, b| b.cmp(a));
        stack.extend(subdirs.into_iter().map(|d| (d, depth + 1)));
    }
    if found.is_empty() {
        return Err(AdapterError::Empty {
            what: format!("criterion directory {}", dir.display()),
        });
    }
    found.sort_by(|(a_path, a), (b_path, b)| {
        a.benchmark
            .full
            .cmp(&b.benchmark.full)
            .then_with(|| a_path.cmp(b_path))
    });
    for pair in found.windows(2) {
        if let [(first_path, first), (second_path, second)] = pair
            && first.benchmark.full == second.benchmark.full
        {
            return Err(AdapterError::invalid(
                second_path.display().to_string(),
                format!(
                    "benchmark `{}` also found in {}",
                    second.benchmark.full,
                    first_path.display()
                ),
            ));
        }
    }
    Ok(found.into_iter().map(|(_, m)| m).collect())
}

/// Reads and parses one `new/` directory.
fn read_snapshot(dir: &Path) -> Result<Measurement, AdapterError> {
    let paths = SNAPSHOT_FILES.map(|name| dir.join(name));
    let [benchmark, estimates, sample] = &paths;
    let benchmark = read_limited(benchmark, MAX_FILE_BYTES)?;
    let estimates = read_limited(estimates, MAX_FILE_BYTES)?;
    let sample = read_limited(sample, MAX_FILE_BYTES)?;
    parse_labelled(
        [&benchmark, &estimates, &sample],
        paths.map(|p| p.display().to_string()),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;

    const VERSIONS: [&str; 4] = ["0.5", "0.6", "0.7", "0.8"];

    /// (full id, function, value, throughput, sampling mode)
    type Expected<'a> = (
        &'a str,
        Option<&'a str>,
        Option<&'a str>,
        Option<Throughput>,
        SamplingMode,
    );

    fn testdata() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/criterion")
    }

    fn snapshot(version: &str, bench: &str) -> [Vec<u8>; 3] {
        let dir = testdata().join(version).join(bench).join("new");
        SNAPSHOT_FILES.map(|f| std::fs::read(dir.join(f)).unwrap())
    }

    fn parse(files: &[Vec<u8>; 3]) -> Result<Measurement, AdapterError> {
        parse_benchmark(&files[0], &files[1], &files[2])
    }

    /// Every version's capture parses, with the ids, throughputs, modes and sample counts the
    /// capture bench (make.sh) declares.
    #[test]
    fn real_captures_of_every_version() {
        for version in VERSIONS {
            let measurements = read_dir(&testdata().join(version)).unwrap();
            let mut expected: Vec<Expected<'_>> = vec![
                (
                    "checksum/fold/64",
                    Some("fold"),
                    Some("64"),
                    Some(Throughput {
                        kind: ThroughputKind::Bytes,
                        per_iteration: 64,
                    }),
                    SamplingMode::Linear,
                ),
                (
                    "elements/sum",
                    Some("sum"),
                    None,
                    Some(Throughput {
                        kind: ThroughputKind::Elements,
                        per_iteration: 100,
                    }),
                    SamplingMode::Flat,
                ),
                ("plain add", None, None, None, SamplingMode::Linear),
            ];
            if version >= "0.7" {
                expected.push((
                    "bits/xor",
                    Some("xor"),
                    None,
                    Some(Throughput {
                        kind: ThroughputKind::Bits,
                        per_iteration: 512,
                    }),
                    SamplingMode::Linear,
                ));
            }
            if version >= "0.8" {
                expected.push((
                    "rows/scan",
                    Some("scan"),
                    None,
                    Some(Throughput {
                        kind: ThroughputKind::Elements,
                        per_iteration: 10,
                    }),
                    SamplingMode::Linear,
                ));
            }
            expected.sort_by_key(|e| e.0);
            let ids: Vec<&str> = measurements
                .iter()
                .map(|m| m.benchmark.full.as_str())
                .collect();
            let expected_ids: Vec<&str> = expected.iter().map(|e| e.0).collect();
            assert_eq!(ids, expected_ids, "version {version}");
            for (i, (m, (full, function, value, thr, mode))) in
                measurements.iter().zip(&expected).enumerate()
            {
                let ctx = format!("version {version}, case {i} ({full})");
                assert_eq!(m.benchmark.function.as_deref(), *function, "{ctx}");
                assert_eq!(m.benchmark.value.as_deref(), *value, "{ctx}");
                assert_eq!(
                    m.benchmark.group.as_deref(),
                    full.split('/').next(),
                    "{ctx}"
                );
                assert_eq!(m.throughput, *thr, "{ctx}");
                assert_eq!(m.metric, "time", "{ctx}");
                assert_eq!(m.unit, "ns", "{ctx}");
                assert_eq!(m.direction, Direction::LowerIsBetter, "{ctx}");
                let samples = m.samples.as_ref().unwrap();
                assert_eq!(samples.mode(), *mode, "{ctx}");
                assert_eq!(samples.len(), 10, "{ctx}: --sample-size 10");
                // Slope exists exactly for linear sampling.
                assert_eq!(
                    m.statistics.contains_key(&Statistic::Slope),
                    *mode == SamplingMode::Linear,
                    "{ctx}"
                );
                assert_eq!(
                    m.statistics.len(),
                    if *mode == SamplingMode::Linear { 5 } else { 4 },
                    "{ctx}"
                );
                cross_check(version, full, m, &ctx);
            }
        }
    }

    /// Compares parsed numbers with the fixture's JSON, read independently.
    fn cross_check(version: &str, full: &str, m: &Measurement, ctx: &str) {
        let dir = testdata().join(version).join(full).join("new");
        let est: Value =
            serde_json::from_slice(&std::fs::read(dir.join("estimates.json")).unwrap()).unwrap();
        for statistic in Statistic::ALL {
            let raw = &est[statistic.name()];
            let Some(parsed) = m.statistics.get(&statistic) else {
                assert!(raw.is_null(), "{ctx}: {} missing", statistic.name());
                continue;
            };
            assert_eq!(
                parsed.point,
                raw["point_estimate"].as_f64().unwrap(),
                "{ctx}"
            );
            assert_eq!(
                parsed.lower,
                raw["confidence_interval"]["lower_bound"].as_f64(),
                "{ctx}"
            );
            assert_eq!(
                parsed.upper,
                raw["confidence_interval"]["upper_bound"].as_f64(),
                "{ctx}"
            );
            assert_eq!(parsed.confidence_level, Some(0.95), "{ctx}");
            assert_eq!(
                parsed.standard_error,
                raw["standard_error"].as_f64(),
                "{ctx}"
            );
        }
        assert_eq!(
            m.estimate,
            m.statistics[&Statistic::Median],
            "{ctx}: headline is the median"
        );
        let sample: Value =
            serde_json::from_slice(&std::fs::read(dir.join("sample.json")).unwrap()).unwrap();
        let samples = m.samples.as_ref().unwrap();
        let times: Vec<f64> = sample["times"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let iters: Vec<f64> = sample["iters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(samples.times_ns(), times.as_slice(), "{ctx}");
        assert_eq!(samples.iters(), iters.as_slice(), "{ctx}");
    }

    /// Spot values of the committed captures (update after regenerating with make.sh).
    #[test]
    fn pinned_values_of_the_committed_capture() {
        let m = parse(&snapshot("0.8", "checksum/fold/64")).unwrap();
        assert_eq!(m.estimate.point, 298.400_547_364_049_03);
        assert_eq!(m.estimate.lower, Some(264.619_574_569_080_6));
        assert_eq!(m.statistics[&Statistic::Slope].point, 288.742_530_801_147_7);
        let m = parse(&snapshot("0.5", "checksum/fold/64")).unwrap();
        assert_eq!(m.estimate.point, 215.209_605_577_940_07);
    }

    #[test]
    fn read_dir_skips_baselines_and_reports_and_survives_symlink_loops() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let src = testdata().join("0.8");
        for bench in ["checksum/fold/64", "plain add"] {
            let files = snapshot("0.8", bench);
            for sub in ["new", "base", "my-baseline"] {
                let d = root.join(bench).join(sub);
                std::fs::create_dir_all(&d).unwrap();
                for (name, bytes) in SNAPSHOT_FILES.iter().zip(&files) {
                    std::fs::write(d.join(name), bytes).unwrap();
                }
            }
            // change/ holds only estimates.json; report/ holds HTML.
            let change = root.join(bench).join("change");
            std::fs::create_dir_all(&change).unwrap();
            std::fs::write(
                change.join("estimates.json"),
                b"{\"mean\": \"not criterion's shape\"}",
            )
            .unwrap();
            let report = root.join(bench).join("report");
            std::fs::create_dir_all(&report).unwrap();
            std::fs::write(report.join("index.html"), b"<html>").unwrap();
        }
        std::fs::create_dir_all(root.join("report")).unwrap();
        std::fs::write(root.join("report/index.html"), b"<html>").unwrap();
        // A benchmark whose function is literally called `base` is still found.
        let d = root.join("checksum/base/new");
        std::fs::create_dir_all(&d).unwrap();
        let files = snapshot("0.8", "plain add");
        let bench = String::from_utf8(files[0].clone())
            .unwrap()
            .replace("\"plain add\"", "\"checksum/base\"");
        std::fs::write(d.join("benchmark.json"), bench).unwrap();
        std::fs::write(d.join("estimates.json"), &files[1]).unwrap();
        std::fs::write(d.join("sample.json"), &files[2]).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root, root.join("checksum/loop")).unwrap();
            std::os::unix::fs::symlink(root.join("nowhere"), root.join("dangling")).unwrap();
        }
        let found = read_dir(root).unwrap();
        let ids: Vec<&str> = found.iter().map(|m| m.benchmark.full.as_str()).collect();
        assert_eq!(ids, ["checksum/base", "checksum/fold/64", "plain add"]);
        // Pointing at one `new/` directory reads that benchmark.
        let one = read_dir(&src.join("plain add/new")).unwrap();
        assert_eq!(one.len(), 1);
    }

    #[test]
    fn read_dir_errors_name_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        // Empty directory.
        let err = read_dir(root).unwrap_err();
        assert!(matches!(err, AdapterError::Empty { .. }), "{err:?}");
        assert!(err.to_string().contains("no benchmarks"), "{err}");
        // Missing directory.
        let err = read_dir(&root.join("nope")).unwrap_err();
        assert!(matches!(err, AdapterError::Io { .. }), "{err:?}");

        let files = snapshot("0.6", "elements/sum");
        let cases: [(&str, Option<&[u8]>, &str); 4] = [
            ("missing sample", None, "sample.json"),
            (
                "truncated sample",
                Some(&files[2][..files[2].len() / 2]),
                "sample.json",
            ),
            ("garbage", Some(b"\x00\xff garbage"), "sample.json"),
            (
                "negative time",
                Some(b"{\"sampling_mode\":\"Flat\",\"iters\":[1.0],\"times\":[-5.0]}"),
                "sample.json",
            ),
        ];
        for (i, (name, sample, needle)) in cases.into_iter().enumerate() {
            let d = root.join(format!("case{i}/new"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("benchmark.json"), &files[0]).unwrap();
            std::fs::write(d.join("estimates.json"), &files[1]).unwrap();
            if let Some(sample) = sample {
                std::fs::write(d.join("sample.json"), sample).unwrap();
            }
            let err = read_dir(&root.join(format!("case{i}"))).unwrap_err();
            let msg = format!("{err}");
            assert!(
                msg.contains(&format!("case{i}")) && msg.contains(needle),
                "case {i} ({name}): {msg}"
            );
        }
        // Two snapshots with the same id.
        let dup = root.join("dup");
        for sub in ["a/new", "b/new"] {
            let d = dup.join(sub);
            std::fs::create_dir_all(&d).unwrap();
            for (name, bytes) in SNAPSHOT_FILES.iter().zip(&files) {
                std::fs::write(d.join(name), bytes).unwrap();
            }
        }
        let err = read_dir(&dup).unwrap_err();
        assert!(err.to_string().contains("also found in"), "{err}");
        // A file is not a directory.
        let err = read_dir(&dup.join("a/new/sample.json")).unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
    }

    #[test]
    fn read_dir_bounds_depth() {
        let tmp = tempfile::tempdir().unwrap();
        let mut deep = tmp.path().to_path_buf();
        for _ in 0..=MAX_DEPTH + 1 {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        let err = read_dir(tmp.path()).unwrap_err();
        assert!(err.to_string().contains("nested more than"), "{err}");
    }

    #[test]
    fn truncation_at_every_byte_is_an_error() {
        for version in VERSIONS {
            let files = snapshot(version, "checksum/fold/64");
            parse(&files).unwrap();
            for which in 0..3 {
                for len in 0..files[which].len() {
                    let mut cut = files.clone();
                    cut[which].truncate(len);
                    assert!(
                        parse(&cut).is_err(),
                        "version {version}, file {which}, length {len}"
                    );
                }
            }
        }
    }

    #[test]
    fn hostile_inputs_are_errors() {
        let good = snapshot("0.7", "checksum/fold/64");
        let bench = String::from_utf8(good[0].clone()).unwrap();
        let est = String::from_utf8(good[1].clone()).unwrap();
        let median =
            serde_json::from_str::<Value>(&est).unwrap()["median"]["point_estimate"].to_string();
        let cases: Vec<(usize, String, &str)> = vec![
            (0, String::new(), "malformed JSON"),
            (0, "[]".into(), "malformed JSON"),
            (0, "\u{0}\u{1}garbage".into(), "malformed JSON"),
            (
                0,
                bench.replace("\"full_id\":\"checksum/fold/64\"", "\"full_id\":\"\""),
                "full_id is empty",
            ),
            (
                0,
                bench.replace("\"full_id\":\"checksum/fold/64\"", "\"full_id\":5"),
                "malformed JSON",
            ),
            (
                0,
                bench.replace("{\"Bytes\":64}", "{\"Bytes\":-64}"),
                "malformed throughput",
            ),
            (
                0,
                bench.replace("{\"Bytes\":64}", "{\"Bytes\":\"64\"}"),
                "malformed throughput",
            ),
            (
                0,
                bench.replace("{\"Bytes\":64}", "{\"Bytes\":64,\"Elements\":1}"),
                "malformed throughput",
            ),
            (
                0,
                bench.replace("{\"Bytes\":64}", "[64]"),
                "malformed throughput",
            ),
            (
                0,
                bench.replace("{\"Bytes\":64}", "{\"ElementsAndBytes\":{\"bytes\":8}}"),
                "ElementsAndBytes",
            ),
            (
                1,
                est.replacen(&median, "-1.0", 1),
                "median point estimate is negative",
            ),
            (1, est.replacen(&median, "1e300", 1), "absurdly large"),
            (1, est.replacen(&median, "1e999", 1), "malformed JSON"),
            (1, est.replacen(&median, "NaN", 1), "malformed JSON"),
            (1, est.replacen(&median, "\"12\"", 1), "malformed JSON"),
            (
                1,
                est.replacen("\"confidence_level\":0.95", "\"confidence_level\":95", 1),
                "confidence level",
            ),
            (
                1,
                est.replacen("\"median\"", "\"medium\"", 1),
                "malformed JSON",
            ),
            (
                2,
                r#"{"sampling_mode":"Linear","iters":[1.0,2.0],"times":[1.0]}"#.into(),
                "invalid samples",
            ),
            (
                2,
                r#"{"sampling_mode":"Linear","iters":[],"times":[]}"#.into(),
                "invalid samples",
            ),
            (
                2,
                r#"{"sampling_mode":"Linear","iters":[0.0],"times":[1.0]}"#.into(),
                "invalid samples",
            ),
            (
                2,
                r#"{"sampling_mode":"Linear","iters":[1e30],"times":[1.0]}"#.into(),
                "absurd iteration count",
            ),
            (
                2,
                r#"{"sampling_mode":"Linear","iters":[1.0],"times":[1e30]}"#.into(),
                "absurdly large",
            ),
            (
                2,
                r#"{"sampling_mode":"Sideways","iters":[1.0],"times":[1.0]}"#.into(),
                "malformed JSON",
            ),
            (
                2,
                r#"{"sampling_mode":"Flat","iters":{"0":1.0},"times":[1.0]}"#.into(),
                "malformed JSON",
            ),
        ];
        for (i, (which, text, needle)) in cases.into_iter().enumerate() {
            let mut files = good.clone();
            files[which] = text.into_bytes();
            let err = parse(&files).unwrap_err();
            let chain = format!(
                "{err}: {}",
                std::error::Error::source(&err)
                    .map(ToString::to_string)
                    .unwrap_or_default()
            );
            assert!(
                chain.contains(needle),
                "case {i}: expected {needle:?} in {chain:?}"
            );
            assert!(
                chain.contains(SNAPSHOT_FILES[which]),
                "case {i}: {chain:?} does not name the file"
            );
        }
    }

    #[test]
    fn tolerated_variations() {
        let good = snapshot("0.5", "checksum/fold/64");
        let bench = String::from_utf8(good[0].clone()).unwrap();
        let cases: [(String, Option<Throughput>); 6] = [
            (bench.replace("{\"Bytes\":64}", "null"), None),
            (bench.replace("{\"Bytes\":64}", "{\"Value\":3}"), None),
            (bench.replace("{\"Bytes\":64}", "\"SomethingNew\""), None),
            (
                bench.replace("{\"Bytes\":64}", "{\"BytesDecimal\":1000}"),
                Some(Throughput {
                    kind: ThroughputKind::BytesDecimal,
                    per_iteration: 1000,
                }),
            ),
            (bench.replace(",\"throughput\":{\"Bytes\":64}", ""), None),
            (
                bench.replace(
                    "{\"group_id\"",
                    "{\"future_field\":[1,{\"x\":2}],\"group_id\"",
                ),
                Some(Throughput {
                    kind: ThroughputKind::Bytes,
                    per_iteration: 64,
                }),
            ),
        ];
        for (i, (text, thr)) in cases.into_iter().enumerate() {
            let m = parse_benchmark(text.as_bytes(), &good[1], &good[2])
                .unwrap_or_else(|e| panic!("case {i}: {e}"));
            assert_eq!(m.throughput, thr, "case {i}");
        }
        // Missing slope key (rather than null) is a flat benchmark.
        let est: Value = serde_json::from_slice(&snapshot("0.5", "elements/sum")[1]).unwrap();
        let mut est = est.as_object().unwrap().clone();
        est.remove("slope");
        let m = parse_benchmark(
            &good[0],
            serde_json::to_string(&est).unwrap().as_bytes(),
            &good[2],
        )
        .unwrap();
        assert!(!m.statistics.contains_key(&Statistic::Slope));
    }

    #[test]
    fn huge_sample_arrays_are_bounded_by_the_input() {
        let good = snapshot("0.8", "plain add");
        let n = 200_000;
        let iters = vec!["1.0"; n].join(",");
        let times = vec!["2.5"; n].join(",");
        let sample =
            format!("{{\"sampling_mode\":\"Flat\",\"iters\":[{iters}],\"times\":[{times}]}}");
        let m = parse_benchmark(&good[0], &good[1], sample.as_bytes()).unwrap();
        assert_eq!(m.samples.unwrap().len(), n);
        // An array far longer than its partner is refused without panicking.
        let sample = format!("{{\"sampling_mode\":\"Flat\",\"iters\":[{iters}],\"times\":[1.0]}}");
        assert!(parse_benchmark(&good[0], &good[1], sample.as_bytes()).is_err());
        // Deep nesting hits serde_json's recursion limit, not the stack.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse_benchmark(deep.as_bytes(), &good[1], &good[2]).is_err());
    }
}
