//! gungraun 0.20 benchmark summaries (`summary.json`, schema version 7).
//!
//! gungraun (formerly iai-callgrind) runs each benchmark once under valgrind and, with
//! `--save-summary=json` (env `GUNGRAUN_SAVE_SUMMARY=json`), writes one `summary.json` per
//! benchmark under its home directory (`--home` / `GUNGRAUN_HOME`, default `target/gungraun`):
//!
//! ```text
//! GUNGRAUN_HOME/
//!   <package>/<bench file>/<group>/<function>[.<id>]/
//!     summary.json                 one benchmark                       <- parsed
//!     callgrind.<function>.<id>.out, .log, dhat.*, ...                  (ignored)
//! ```
//!
//! With `--output-format=json` the same documents are printed on standard output, one line per
//! benchmark ([`parse_lines`]). The parts of a summary read here:
//!
//! ```text
//! {
//!   "version": "7",                          <- schema version; only "7" is accepted
//!   "group": "checksum", "function_name": "fold", "id": "small",   <- id optional
//!   "profiles": [                            <- one per valgrind tool
//!     { "tool": "Callgrind",
//!       "data": { "total": { "metrics": {    <- summed over the tool's parts (processes, threads)
//!         "Ir": { "values": { "new": 23750, "old": 23750 }, "change": {...} }, ... } } } },
//!     { "tool": "DHAT", ... } ]
//! }
//! ```
//!
//! Each benchmark becomes one [`Measurement`] per metric below, with the `new` value as the
//! headline estimate and no bounds, samples or statistics: compare judges these rows on exact
//! values (evidence `exact`). Every metric is lower-is-better. The benchmark's full id is
//! `group/function` or `group/function/id` (the bench file is the suite and is left out).
//!
//! | gungraun name | metric | unit | source |
//! |---|---|---|---|
//! | `Ir` | `instructions` | `count` | Callgrind (or Cachegrind) |
//! | `EstimatedCycles` | `estimated_cycles` | `count` | 〃 |
//! | `L1hits` | `l1_hits` | `count` | 〃 |
//! | `LLhits` | `ll_hits` | `count` | 〃 |
//! | `RamHits` | `ram_hits` | `count` | 〃 |
//! | `TotalRW` | `total_read_write` | `count` | 〃 |
//! | `SysCount` | `syscalls` | `count` | 〃, with `--collect-systime` |
//! | `Ge` | `global_bus_events` | `count` | 〃, with `--collect-bus=yes` |
//! | `Bc` / `Bcm` | `conditional_branches` / `conditional_branch_misses` | `count` | 〃, with `--branch-sim=yes` |
//! | `Bi` / `Bim` | `indirect_branches` / `indirect_branch_misses` | `count` | 〃, with `--branch-sim=yes` |
//! | `TotalBytes` / `TotalBlocks` | `heap_total_bytes` / `heap_total_blocks` | `bytes` / `count` | DHAT |
//! | `AtTGmaxBytes` / `AtTGmaxBlocks` | `heap_peak_bytes` / `heap_peak_blocks` | `bytes` / `count` | DHAT |
//! | `AtTEndBytes` / `AtTEndBlocks` | `heap_end_bytes` / `heap_end_blocks` | `bytes` / `count` | DHAT |
//! | `ReadsBytes` / `WritesBytes` | `heap_read_bytes` / `heap_write_bytes` | `bytes` | DHAT |
//!
//! Not recorded: the raw cache-miss counters (`Dr`, `Dw`, `I1mr`, `D1mr`, `D1mw`, `ILmr`, `DLmr`,
//! `DLmw`), from which gungraun derives the hits above, and the rates (`L1HitRate`,
//! `D1MissRate`, ...), which are ratios of the recorded counts; system times (`SysTime`,
//! `SysCpuTime`), which are wall-clock and not deterministic; and every other metric or tool
//! (Memcheck, Massif, perf, ...). When a benchmark has both a Callgrind and a Cachegrind
//! profile, the counts come from Callgrind.
//!
//! Counts must be non-negative integers of at most [`MAX_EXACT_COUNT`] (2^53), so that they are
//! stored exactly as `f64`. A summary of an unsupported schema version, a benchmark with no
//! recorded metric, a malformed value or two summaries of one benchmark are errors.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::criterion::{MAX_DEPTH, MAX_DIRECTORIES};
use super::{AdapterError, from_json, read_input};
use crate::model::{BenchmarkId, Direction, Estimate, Measurement};

/// The summary schema version this adapter reads (gungraun 0.20).
pub const SCHEMA_VERSION: &str = "7";

/// The file gungraun writes per benchmark with `--save-summary=json`.
pub const SUMMARY_FILE: &str = "summary.json";

/// Largest count accepted: 2^53, the largest integer below which every integer is an exact
/// `f64`.
pub const MAX_EXACT_COUNT: u64 = 1 << 53;

/// A recorded metric: gungraun's name, our metric name, its unit.
type MetricSpec = (&'static str, &'static str, &'static str);

/// Counts recorded from a Callgrind (or, without one, Cachegrind) profile, in output order.
pub const CALLGRIND_METRICS: [MetricSpec; 12] = [
    ("Ir", "instructions", "count"),
    ("EstimatedCycles", "estimated_cycles", "count"),
    ("L1hits", "l1_hits", "count"),
    ("LLhits", "ll_hits", "count"),
    ("RamHits", "ram_hits", "count"),
    ("TotalRW", "total_read_write", "count"),
    ("SysCount", "syscalls", "count"),
    ("Ge", "global_bus_events", "count"),
    ("Bc", "conditional_branches", "count"),
    ("Bcm", "conditional_branch_misses", "count"),
    ("Bi", "indirect_branches", "count"),
    ("Bim", "indirect_branch_misses", "count"),
];

/// Heap figures recorded from a DHAT profile, in output order.
pub const DHAT_METRICS: [MetricSpec; 8] = [
    ("TotalBytes", "heap_total_bytes", "bytes"),
    ("TotalBlocks", "heap_total_blocks", "count"),
    ("AtTGmaxBytes", "heap_peak_bytes", "bytes"),
    ("AtTGmaxBlocks", "heap_peak_blocks", "count"),
    ("AtTEndBytes", "heap_end_bytes", "bytes"),
    ("AtTEndBlocks", "heap_end_blocks", "count"),
    ("ReadsBytes", "heap_read_bytes", "bytes"),
    ("WritesBytes", "heap_write_bytes", "bytes"),
];

#[derive(Deserialize)]
struct RawSummary {
    version: String,
    group: String,
    function_name: String,
    #[serde(default)]
    id: Option<String>,
    profiles: Vec<RawProfile>,
}

#[derive(Deserialize)]
struct RawProfile {
    tool: String,
    data: RawData,
}

#[derive(Deserialize)]
struct RawData {
    total: RawTotal,
}

#[derive(Deserialize)]
struct RawTotal {
    metrics: super::bmf::Entries<RawResult>,
}

#[derive(Deserialize)]
struct RawResult {
    values: RawValues,
}

/// gungraun writes `new` (this run), `old` (the previous run in the same home) or both.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawValues {
    #[serde(default)]
    new: Option<Value>,
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "parsed to validate the shape; only `new` is recorded"
    )]
    old: Option<Value>,
}

/// Parses one `summary.json` document; `what` labels errors (a path or a name).
///
/// # Errors
/// [`AdapterError::Json`] when the input is not a gungraun summary (missing field, wrong type,
/// duplicate metric); [`AdapterError::Invalid`] for another schema version, an empty group or
/// function name, a value that is not a count, or a benchmark with no recorded metric (see the
/// module docs).
pub fn parse_summary(what: &str, bytes: &[u8]) -> Result<Vec<Measurement>, AdapterError> {
    let raw: RawSummary = from_json(what, bytes)?;
    convert(what, raw)
}

/// Parses gungraun's `--output-format=json` standard output: summary documents separated by
/// whitespace (normally one per line). Input order is kept.
///
/// # Errors
/// As [`parse_summary`], labelled with the document's number; [`AdapterError::Empty`] when there
/// is no document; [`AdapterError::Invalid`] when two documents describe the same benchmark.
pub fn parse_lines(bytes: &[u8]) -> Result<Vec<Measurement>, AdapterError> {
    let mut measurements = Vec::new();
    let mut seen = HashSet::new();
    let stream = serde_json::Deserializer::from_slice(bytes).into_iter::<RawSummary>();
    for (index, raw) in stream.enumerate() {
        let what = format!("gungraun JSON output, document {}", index + 1);
        let raw = raw.map_err(|source| AdapterError::Json {
            what: what.clone(),
            source,
        })?;
        let rows = convert(&what, raw)?;
        if let Some(first) = rows.first()
            && !seen.insert(first.benchmark.full.clone())
        {
            return Err(AdapterError::invalid(
                what,
                format!("benchmark `{}` appears twice", first.benchmark.full),
            ));
        }
        measurements.extend(rows);
    }
    if measurements.is_empty() {
        return Err(AdapterError::Empty {
            what: "gungraun JSON output".to_owned(),
        });
    }
    Ok(measurements)
}

/// Reads every `summary.json` below `dir` (a gungraun home), sorted by benchmark id.
///
/// The walk follows symlinks but visits each directory once (so a symlink loop ends), descends
/// at most [`MAX_DEPTH`] levels, visits at most [`MAX_DIRECTORIES`] directories and refuses files
/// over [`super::MAX_FILE_BYTES`]. Nothing but files named [`SUMMARY_FILE`] is read.
///
/// # Errors
/// [`AdapterError::Io`] when `dir` or a summary is missing or unreadable (naming the path),
/// [`AdapterError::Empty`] when there is no summary, [`AdapterError::Invalid`] for two summaries
/// of one benchmark or a tree over the limits, and any error of [`parse_summary`], labelled with
/// the offending file's path.
pub fn read_dir(dir: &Path) -> Result<Vec<Measurement>, AdapterError> {
    let meta = std::fs::metadata(dir).map_err(AdapterError::io(dir))?;
    if !meta.is_dir() {
        return Err(AdapterError::invalid(
            dir.display().to_string(),
            "not a directory",
        ));
    }
    let mut found: Vec<(PathBuf, Vec<Measurement>)> = Vec::new();
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
                format!("more than {MAX_DIRECTORIES} directories; is this a gungraun home?"),
            ));
        }
        let mut subdirs = Vec::new();
        for entry in std::fs::read_dir(&current).map_err(AdapterError::io(&current))? {
            let entry = entry.map_err(AdapterError::io(&current))?;
            let path = entry.path();
            let file_type = entry.file_type().map_err(AdapterError::io(&path))?;
            let is_dir = if file_type.is_symlink() {
                std::fs::metadata(&path).is_ok_and(|m| m.is_dir())
            } else {
                file_type.is_dir()
            };
            if is_dir {
                subdirs.push(path);
            } else if entry.file_name() == SUMMARY_FILE {
                let bytes = read_input(&path)?;
                let rows = parse_summary(&path.display().to_string(), &bytes)?;
                found.push((path, rows));
            }
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
        stack.extend(subdirs.into_iter().map(|d| (d, depth + 1)));
    }
    if found.is_empty() {
        return Err(AdapterError::Empty {
            what: format!(
                "gungraun home {} (no {SUMMARY_FILE}; was the suite run with --save-summary=json?)",
                dir.display()
            ),
        });
    }
    // `convert` never returns an empty list, so every entry has a first row.
    let key = |rows: &[Measurement]| rows.first().map(|m| m.benchmark.full.clone());
    found.sort_by(|(a_path, a), (b_path, b)| key(a).cmp(&key(b)).then_with(|| a_path.cmp(b_path)));
    for pair in found.windows(2) {
        if let [(first_path, first), (second_path, second)] = pair
            && key(first) == key(second)
        {
            return Err(AdapterError::invalid(
                second_path.display().to_string(),
                format!(
                    "benchmark `{}` also found in {}",
                    key(second).unwrap_or_default(),
                    first_path.display()
                ),
            ));
        }
    }
    Ok(found.into_iter().flat_map(|(_, rows)| rows).collect())
}

fn convert(what: &str, raw: RawSummary) -> Result<Vec<Measurement>, AdapterError> {
    if raw.version != SCHEMA_VERSION {
        return Err(AdapterError::invalid(
            what,
            format!(
                "summary schema version {:?}; this adapter reads version {SCHEMA_VERSION} \
                 (gungraun 0.20)",
                raw.version
            ),
        ));
    }
    for (field, value) in [("group", &raw.group), ("function_name", &raw.function_name)] {
        if value.trim().is_empty() {
            return Err(AdapterError::invalid(what, format!("{field} is empty")));
        }
    }
    if raw.id.as_deref().is_some_and(|id| id.trim().is_empty()) {
        return Err(AdapterError::invalid(what, "id is empty"));
    }
    let mut full = format!("{}/{}", raw.group, raw.function_name);
    if let Some(id) = &raw.id {
        full = format!("{full}/{id}");
    }
    let benchmark = BenchmarkId {
        full,
        group: Some(raw.group),
        function: Some(raw.function_name),
        value: raw.id,
    };
    let what = format!("{what} (benchmark `{}`)", benchmark.full);

    let mut tools: BTreeMap<&str, &RawProfile> = BTreeMap::new();
    for profile in &raw.profiles {
        if tools.insert(profile.tool.as_str(), profile).is_some() {
            return Err(AdapterError::invalid(
                &what,
                format!("two {} profiles", profile.tool),
            ));
        }
    }
    let counts = tools
        .get("Callgrind")
        .or_else(|| tools.get("Cachegrind"))
        .map(|p| (*p, CALLGRIND_METRICS.as_slice()));
    let heap = tools.get("DHAT").map(|p| (*p, DHAT_METRICS.as_slice()));
    let mut measurements = Vec::new();
    for (profile, specs) in counts.into_iter().chain(heap) {
        for &(name, metric, unit) in specs {
            let Some(value) = new_value(&profile.data.total.metrics.0, name) else {
                continue;
            };
            let point = count(&what, name, value)?;
            measurements.push(Measurement {
                benchmark: benchmark.clone(),
                metric: metric.to_owned(),
                unit: unit.to_owned(),
                direction: Direction::LowerIsBetter,
                estimate: Estimate::point(point),
                statistics: BTreeMap::new(),
                throughput: None,
                samples: None,
            });
        }
    }
    if measurements.is_empty() {
        let tools: Vec<&str> = tools.keys().copied().collect();
        return Err(AdapterError::invalid(
            what,
            format!(
                "no metric bench-run records (profiles: {}); bench-run reads Callgrind or \
                 Cachegrind counts and DHAT heap figures",
                if tools.is_empty() {
                    "none".to_owned()
                } else {
                    tools.join(", ")
                }
            ),
        ));
    }
    Ok(measurements)
}

/// The `new` value of metric `name`, if the profile has one.
fn new_value<'a>(metrics: &'a [(String, RawResult)], name: &str) -> Option<&'a Value> {
    metrics
        .iter()
        .find(|(key, _)| key == name)
        .and_then(|(_, result)| result.values.new.as_ref())
}

/// A count as an exact `f64`: a non-negative integer of at most [`MAX_EXACT_COUNT`].
fn count(what: &str, name: &str, value: &Value) -> Result<f64, AdapterError> {
    let n = value.as_u64().ok_or_else(|| {
        AdapterError::invalid(
            what,
            format!("{name} is {value}, not a non-negative integer count"),
        )
    })?;
    if n > MAX_EXACT_COUNT {
        return Err(AdapterError::invalid(
            what,
            format!("{name} is {n}, above {MAX_EXACT_COUNT} (not exact as a float)"),
        ));
    }
    #[expect(clippy::cast_precision_loss, reason = "n <= 2^53 is exact")]
    Ok(n as f64)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn testdata() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/gungraun")
    }

    fn summary(run: &str, rel: &str) -> Vec<u8> {
        std::fs::read(
            testdata()
                .join(run)
                .join("gungraun-capture")
                .join(rel)
                .join(SUMMARY_FILE),
        )
        .unwrap()
    }

    /// The `new` value of `tool`'s total metric `name`, straight from the JSON file.
    fn json_value(bytes: &[u8], tool: &str, name: &str) -> Option<f64> {
        let doc: Value = serde_json::from_slice(bytes).unwrap();
        doc["profiles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["tool"] == tool)?["data"]["total"]["metrics"][name]["values"]["new"]
            .as_f64()
    }

    const BENCHMARKS: [(&str, &str); 7] = [
        ("capture/checksum/fold.large", "checksum/fold/large"),
        ("capture/checksum/fold.small", "checksum/fold/small"),
        ("capture/checksum/listed.sizes_0", "checksum/listed/sizes_0"),
        ("capture/checksum/listed.sizes_1", "checksum/listed/sizes_1"),
        ("capture/misc/plain_add", "misc/plain_add"),
        ("capture/misc/with_dhat", "misc/with_dhat"),
        ("capture_bin/binary/echo.hundred", "binary/echo/hundred"),
    ];

    #[test]
    fn captured_summaries_match_their_json() {
        for run in ["first", "rerun"] {
            for (i, (rel, full)) in BENCHMARKS.iter().enumerate() {
                let bytes = summary(run, rel);
                let rows = parse_summary(rel, &bytes).unwrap();
                let case = format!("{run} case {i}: {full}");
                assert!(rows.iter().all(|m| m.benchmark.full == *full), "{case}");
                let callgrind: Vec<&str> = rows
                    .iter()
                    .filter(|m| !m.metric.starts_with("heap_"))
                    .map(|m| m.metric.as_str())
                    .collect();
                // Default callgrind settings give the six headline counts, in table order.
                assert_eq!(
                    callgrind,
                    [
                        "instructions",
                        "estimated_cycles",
                        "l1_hits",
                        "ll_hits",
                        "ram_hits",
                        "total_read_write"
                    ],
                    "{case}"
                );
                for m in &rows {
                    let (name, _, unit) = CALLGRIND_METRICS
                        .iter()
                        .chain(&DHAT_METRICS)
                        .find(|(_, metric, _)| *metric == m.metric)
                        .unwrap();
                    let tool = if m.metric.starts_with("heap_") {
                        "DHAT"
                    } else {
                        "Callgrind"
                    };
                    assert_eq!(
                        Some(m.estimate.point),
                        json_value(&bytes, tool, name),
                        "{case} {name}"
                    );
                    assert_eq!(m.unit, *unit, "{case}");
                    assert_eq!(m.direction, Direction::LowerIsBetter, "{case}");
                    assert_eq!(m.estimate, Estimate::point(m.estimate.point), "{case}");
                    assert!(m.samples.is_none() && m.statistics.is_empty(), "{case}");
                }
                let heap = rows
                    .iter()
                    .filter(|m| m.metric.starts_with("heap_"))
                    .count();
                assert_eq!(
                    heap,
                    if *full == "misc/with_dhat" { 8 } else { 0 },
                    "{case}"
                );
            }
        }
    }

    #[test]
    fn ids_split_into_parts() {
        let rows = parse_summary("x", &summary("first", BENCHMARKS[0].0)).unwrap();
        let id = &rows[0].benchmark;
        assert_eq!(
            (
                id.group.as_deref(),
                id.function.as_deref(),
                id.value.as_deref()
            ),
            (Some("checksum"), Some("fold"), Some("large"))
        );
        let rows = parse_summary("x", &summary("first", "capture/misc/plain_add")).unwrap();
        assert_eq!(rows[0].benchmark.value, None);
    }

    #[test]
    fn committed_capture_spot_checks() {
        // Pinned from the committed capture (regenerating it changes these numbers).
        let rows = parse_summary("x", &summary("first", "capture/checksum/fold.large")).unwrap();
        let ir = rows.iter().find(|m| m.metric == "instructions").unwrap();
        assert_eq!(ir.estimate.point, 23_750.0);
        // The rerun measured the same code again: every count is identical.
        let again = parse_summary("x", &summary("rerun", "capture/checksum/fold.large")).unwrap();
        assert_eq!(rows, again);
    }

    #[test]
    fn read_dir_finds_every_summary_sorted() {
        let rows = read_dir(&testdata().join("first")).unwrap();
        let mut ids: Vec<&str> = rows.iter().map(|m| m.benchmark.full.as_str()).collect();
        ids.dedup();
        let mut expected: Vec<&str> = BENCHMARKS.iter().map(|(_, full)| *full).collect();
        expected.sort_unstable();
        assert_eq!(ids, expected);
        // The JSON-lines output of the same run holds the same rows (in run order).
        let bytes = std::fs::read(testdata().join("first.jsonl")).unwrap();
        let mut lines = parse_lines(&bytes).unwrap();
        lines.sort_by(|a, b| a.benchmark.full.cmp(&b.benchmark.full));
        assert_eq!(lines, rows);
    }

    #[test]
    fn read_dir_errors_name_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let err = read_dir(root).unwrap_err();
        assert!(matches!(err, AdapterError::Empty { .. }), "{err:?}");
        assert!(err.to_string().contains("--save-summary"), "{err}");
        let err = read_dir(&root.join("missing")).unwrap_err();
        assert!(matches!(err, AdapterError::Io { .. }), "{err:?}");
        let file = root.join("f");
        std::fs::write(&file, b"x").unwrap();
        assert!(
            read_dir(&file)
                .unwrap_err()
                .to_string()
                .contains("not a directory")
        );

        // The same benchmark twice.
        let bytes = summary("first", "capture/misc/plain_add");
        for dir in ["a", "b"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
            std::fs::write(root.join(dir).join(SUMMARY_FILE), &bytes).unwrap();
        }
        let err = read_dir(root).unwrap_err().to_string();
        assert!(
            err.contains("misc/plain_add") && err.contains("also found"),
            "{err}"
        );

        // A corrupt summary names its file.
        std::fs::remove_dir_all(root.join("b")).unwrap();
        std::fs::write(root.join("a").join(SUMMARY_FILE), &bytes[..bytes.len() / 2]).unwrap();
        let err = read_dir(root).unwrap_err();
        assert!(matches!(err, AdapterError::Json { .. }), "{err:?}");
        assert!(err.to_string().contains(SUMMARY_FILE), "{err}");

        // Other files and symlink loops are harmless.
        std::fs::write(root.join("a").join(SUMMARY_FILE), &bytes).unwrap();
        std::fs::write(root.join("a").join("callgrind.out"), b"\x00garbage").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(root, root.join("a").join("loop")).unwrap();
        assert_eq!(read_dir(root).unwrap().len(), 6);
    }

    #[test]
    fn truncation_at_every_byte_is_an_error() {
        let bytes = summary("first", "capture/misc/with_dhat");
        for len in 0..bytes.trim_ascii_end().len() {
            assert!(parse_summary("x", &bytes[..len]).is_err(), "length {len}");
        }
        let lines = std::fs::read(testdata().join("first.jsonl")).unwrap();
        let first_line = lines.iter().position(|&b| b == b'\n').unwrap();
        for len in 0..first_line {
            assert!(parse_lines(&lines[..len]).is_err(), "length {len}");
        }
    }

    /// A minimal valid summary with `metrics` as the Callgrind total, edited by the cases below.
    fn doc(metrics: &Value) -> Value {
        serde_json::json!({
            "version": "7",
            "group": "g",
            "function_name": "f",
            "profiles": [{"tool": "Callgrind", "data": {"parts": [], "total": {"metrics": metrics, "regressions": []}}}]
        })
    }

    #[test]
    fn hostile_inputs_are_errors() {
        let ir = |v: Value| doc(&serde_json::json!({"Ir": {"values": {"new": v}}}));
        let mut cases: Vec<(String, &str)> = vec![
            (String::new(), "malformed JSON"),
            ("\u{0}\u{7f}garbage".to_owned(), "malformed JSON"),
            ("[]".to_owned(), "malformed JSON"),
            ("{}".to_owned(), "malformed JSON"),
            (ir(serde_json::json!(-1)).to_string(), "not a non-negative integer"),
            (ir(serde_json::json!(1.5)).to_string(), "not a non-negative integer"),
            (ir(serde_json::json!("12")).to_string(), "not a non-negative integer"),
            (ir(serde_json::json!(u64::MAX)).to_string(), "not exact"),
            (ir(Value::Null).to_string(), "no metric"),
            (
                doc(&serde_json::json!({"Ir": {"values": {"new": 1, "extra": 2}}})).to_string(),
                "malformed JSON",
            ),
            (
                doc(&serde_json::json!({"Ir": {"values": 5}})).to_string(),
                "malformed JSON",
            ),
            (
                doc(&serde_json::json!({"Ir": {"values": {"old": 5}}})).to_string(),
                "no metric",
            ),
            (
                doc(&serde_json::json!({"L1HitRate": {"values": {"new": 99.5}}})).to_string(),
                "no metric",
            ),
            (
                r#"{"version":"7","group":"g","function_name":"f","profiles":[{"tool":"Callgrind","data":{"total":{"metrics":{"Ir":{"values":{"new":1}},"Ir":{"values":{"new":2}}}}}}]}"#.to_owned(),
                "duplicate key",
            ),
        ];
        let mut edit = |f: &dyn Fn(&mut Value), needle: &'static str| {
            let mut d = ir(serde_json::json!(5));
            f(&mut d);
            cases.push((d.to_string(), needle));
        };
        edit(&|d| d["version"] = "6".into(), "schema version \"6\"");
        edit(&|d| d["group"] = " ".into(), "group is empty");
        edit(
            &|d| d["function_name"] = "".into(),
            "function_name is empty",
        );
        edit(&|d| d["id"] = "".into(), "id is empty");
        edit(&|d| d["profiles"] = serde_json::json!([]), "profiles: none");
        edit(
            &|d| d["profiles"][0]["tool"] = "Memcheck".into(),
            "profiles: Memcheck",
        );
        edit(
            &|d| {
                let p = d["profiles"][0].clone();
                d["profiles"].as_array_mut().unwrap().push(p);
            },
            "two Callgrind profiles",
        );
        edit(
            &|d| d["profiles"][0]["data"] = Value::Null,
            "malformed JSON",
        );
        edit(
            &|d| {
                d.as_object_mut().unwrap().remove("function_name");
            },
            "malformed JSON",
        );
        for (i, (text, needle)) in cases.iter().enumerate() {
            let err = parse_summary("x", text.as_bytes()).unwrap_err();
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
        }
    }

    #[test]
    fn exact_counts_and_tool_preference() {
        let d = doc(&serde_json::json!({"Ir": {"values": {"new": MAX_EXACT_COUNT, "old": 1}}}));
        let rows = parse_summary("x", d.to_string().as_bytes()).unwrap();
        assert_eq!(rows[0].estimate.point, 9_007_199_254_740_992.0);
        // Callgrind wins over Cachegrind; a Cachegrind-only benchmark still records its counts.
        let mut d = doc(&serde_json::json!({"Ir": {"values": {"new": 10}}}));
        let mut cachegrind = d["profiles"][0].clone();
        cachegrind["tool"] = "Cachegrind".into();
        cachegrind["data"]["total"]["metrics"]["Ir"]["values"]["new"] = 99.into();
        d["profiles"]
            .as_array_mut()
            .unwrap()
            .insert(0, cachegrind.clone());
        let rows = parse_summary("x", d.to_string().as_bytes()).unwrap();
        assert_eq!((rows.len(), rows[0].estimate.point), (1, 10.0));
        d["profiles"] = serde_json::json!([cachegrind]);
        let rows = parse_summary("x", d.to_string().as_bytes()).unwrap();
        assert_eq!((rows.len(), rows[0].estimate.point), (1, 99.0));
    }

    #[test]
    fn lines_refuse_duplicates_and_empty_input() {
        let one = doc(&serde_json::json!({"Ir": {"values": {"new": 1}}})).to_string();
        assert_eq!(parse_lines(one.as_bytes()).unwrap().len(), 1);
        let twice = format!("{one}\n{one}\n");
        let err = parse_lines(twice.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("document 2") && err.contains("twice"), "{err}");
        for empty in ["", "\n  \n"] {
            let err = parse_lines(empty.as_bytes()).unwrap_err();
            assert!(matches!(err, AdapterError::Empty { .. }), "{err:?}");
        }
        let err = parse_lines(format!("{one}\nnot json").as_bytes()).unwrap_err();
        assert!(err.to_string().contains("document 2"), "{err}");
    }
}
