//! `cargo criterion --message-format=json` output (cargo-criterion 1.x).
//!
//! One JSON object per line, told apart by `reason`:
//!
//! ```text
//! {"reason":"benchmark-complete","id":"checksum/fold/64","report_directory":"...",
//!  "iteration_count":[72675,145350,...],          <- iterations of sample i
//!  "measured_values":[9092122.0,17793356.0,...],  <- total time of sample i, in `unit`
//!  "unit":"ns",
//!  "throughput":[{"per_iteration":64,"unit":"bytes"}],        <- or "elements"; may be []
//!  "typical":{"estimate":..,"lower_bound":..,"upper_bound":..,"unit":"ns"},
//!  "mean":{..},"median":{..},"median_abs_dev":{..},"slope":{..}|null,
//!  "change":{..}|null}                            <- relative to the previous run (ignored)
//! {"reason":"group-complete","group_name":"checksum","benchmarks":["checksum/fold/64",..],..}
//! ```
//!
//! Each `benchmark-complete` message becomes one [`Measurement`]: metric [`metric::TIME`] in `ns`,
//! lower is better, headline the median, statistics mean, median, median_abs_dev and slope (when
//! present; cargo-criterion reports no standard deviation, no standard errors and no confidence
//! level, and `typical` is just the slope or the mean). The sampling mode is not in the message:
//! it is [`SamplingMode::Linear`] when a slope is reported (criterion fits one only then) and
//! [`SamplingMode::Flat`] otherwise. A `group-complete` message names the group of the
//! benchmarks it lists; other reasons are ignored.
//!
//! Times in `ps`, `ns`, `us`/`µs`, `ms` or `s` are converted to nanoseconds. Any other unit comes
//! from a custom criterion `Measurement` (cycles, bytes allocated, ...) and is refused: it is not
//! a time, and the model's samples are times.
//!
//! Every non-blank line must be a JSON object: cargo's own progress output goes to stderr, so
//! anything else on stdout means the capture is mixed up or cut. A capture cut exactly at a line
//! boundary cannot be told from a shorter run and parses as one.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use super::{AdapterError, MAX_ITERATIONS, check_time_estimate, check_time_ns, from_json};
use crate::model::{
    BenchmarkId, Direction, Estimate, Measurement, Samples, SamplingMode, Statistic, Throughput,
    ThroughputKind, metric,
};

/// Message reason of a finished benchmark.
pub const BENCHMARK_COMPLETE: &str = "benchmark-complete";

/// Message reason of a finished group.
pub const GROUP_COMPLETE: &str = "group-complete";

#[derive(Deserialize)]
struct RawReason {
    reason: String,
}

#[derive(Deserialize)]
struct RawInterval {
    estimate: f64,
    lower_bound: f64,
    upper_bound: f64,
    unit: String,
}

#[derive(Deserialize)]
struct RawThroughput {
    per_iteration: u64,
    unit: String,
}

#[derive(Deserialize)]
struct RawComplete {
    id: String,
    iteration_count: Vec<f64>,
    measured_values: Vec<f64>,
    unit: String,
    #[serde(default)]
    throughput: Vec<RawThroughput>,
    mean: RawInterval,
    median: RawInterval,
    median_abs_dev: RawInterval,
    #[serde(default)]
    slope: Option<RawInterval>,
}

#[derive(Deserialize)]
struct RawGroup {
    group_name: String,
    benchmarks: Vec<String>,
}

/// Nanoseconds per `unit`, for the time units criterion's formatters produce.
fn ns_per(unit: &str) -> Option<f64> {
    match unit {
        "ps" => Some(1e-3),
        "ns" => Some(1.0),
        "us" | "µs" | "μs" => Some(1e3),
        "ms" => Some(1e6),
        "s" => Some(1e9),
        _ => None,
    }
}

fn scale(what: &str, unit: &str) -> Result<f64, AdapterError> {
    ns_per(unit).ok_or_else(|| {
        AdapterError::invalid(
            what,
            format!(
                "unit {unit:?} is not a time unit (custom criterion measurements are not supported)"
            ),
        )
    })
}

/// Parses the JSON-lines output of `cargo criterion --message-format=json`, in message order.
///
/// # Errors
/// [`AdapterError::Json`] naming the line when a non-blank line is not a JSON object or a
/// `benchmark-complete` message lacks a field; [`AdapterError::Empty`] without any
/// `benchmark-complete` message; [`AdapterError::Invalid`] for an empty or repeated id, a unit
/// that is not a time, a non-finite, negative or absurd value, or inverted bounds;
/// [`AdapterError::Samples`] when the samples break their invariants.
pub fn parse_messages(text: &str) -> Result<Vec<Measurement>, AdapterError> {
    let mut measurements: Vec<Measurement> = Vec::new();
    let mut line_of: HashMap<String, usize> = HashMap::new();
    let mut groups: Vec<RawGroup> = Vec::new();
    for (index, line) in text.split('\n').enumerate() {
        let number = index + 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            continue;
        }
        let what = format!("cargo-criterion message on line {number}");
        let RawReason { reason } = from_json(&what, line.as_bytes())?;
        match reason.as_str() {
            BENCHMARK_COMPLETE => {
                let raw: RawComplete = from_json(&what, line.as_bytes())?;
                let what = format!("{what} (benchmark `{}`)", raw.id);
                if raw.id.trim().is_empty() {
                    return Err(AdapterError::invalid(what, "id is empty"));
                }
                if let Some(first) = line_of.insert(raw.id.clone(), number) {
                    return Err(AdapterError::invalid(
                        what,
                        format!("benchmark already reported on line {first}"),
                    ));
                }
                measurements.push(convert(&what, raw)?);
            }
            GROUP_COMPLETE => groups.push(from_json(&what, line.as_bytes())?),
            _ => {}
        }
    }
    if measurements.is_empty() {
        return Err(AdapterError::Empty {
            what: "cargo-criterion output".to_owned(),
        });
    }
    let group_of: HashMap<&str, &str> = groups
        .iter()
        .flat_map(|g| {
            g.benchmarks
                .iter()
                .map(|b| (b.as_str(), g.group_name.as_str()))
        })
        .collect();
    for m in &mut measurements {
        m.benchmark.group = group_of
            .get(m.benchmark.full.as_str())
            .map(|g| (*g).to_owned());
    }
    Ok(measurements)
}

fn convert(what: &str, raw: RawComplete) -> Result<Measurement, AdapterError> {
    let factor = scale(what, &raw.unit)?;
    let mut times = Vec::with_capacity(raw.measured_values.len());
    for (i, &value) in raw.measured_values.iter().enumerate() {
        if value.is_finite() {
            times.push(check_time_ns(
                what,
                &format!("time of sample {i}"),
                value * factor,
            )?);
        } else {
            times.push(value); // Samples::new reports it with its index
        }
    }
    if let Some((i, n)) = raw
        .iteration_count
        .iter()
        .enumerate()
        .find(|(_, n)| **n > MAX_ITERATIONS)
    {
        return Err(AdapterError::invalid(
            what,
            format!("sample {i} has an absurd iteration count ({n})"),
        ));
    }

    let interval = |name: &str, raw: &RawInterval| -> Result<Estimate, AdapterError> {
        let factor = scale(what, &raw.unit)?;
        let estimate = Estimate {
            point: raw.estimate * factor,
            lower: Some(raw.lower_bound * factor),
            upper: Some(raw.upper_bound * factor),
            confidence_level: None,
            standard_error: None,
        };
        check_time_estimate(what, name, estimate)
    };
    let estimate = interval("median", &raw.median)?;
    let mut statistics = BTreeMap::new();
    statistics.insert(Statistic::Mean, interval("mean", &raw.mean)?);
    statistics.insert(Statistic::Median, estimate);
    statistics.insert(
        Statistic::MedianAbsDev,
        interval("median_abs_dev", &raw.median_abs_dev)?,
    );
    let mode = if let Some(slope) = &raw.slope {
        statistics.insert(Statistic::Slope, interval("slope", slope)?);
        SamplingMode::Linear
    } else {
        SamplingMode::Flat
    };

    let throughput = raw.throughput.iter().find_map(|t| {
        let kind = match t.unit.as_str() {
            "bytes" => ThroughputKind::Bytes,
            "elements" => ThroughputKind::Elements,
            _ => return None,
        };
        Some(Throughput {
            kind,
            per_iteration: t.per_iteration,
        })
    });
    let samples =
        Samples::new(mode, raw.iteration_count, times).map_err(|source| AdapterError::Samples {
            what: what.to_owned(),
            source,
        })?;
    Ok(Measurement {
        benchmark: BenchmarkId::named(raw.id),
        metric: metric::TIME.to_owned(),
        unit: "ns".to_owned(),
        direction: Direction::LowerIsBetter,
        estimate,
        statistics,
        throughput,
        samples: Some(samples),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::path::Path;

    const CAPTURES: [&str; 2] = ["criterion-0.5.jsonl", "criterion-0.8-rerun.jsonl"];

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("testdata/cargo-criterion")
                .join(name),
        )
        .unwrap()
    }

    #[test]
    fn real_captures() {
        let bytes = |n| {
            Some(Throughput {
                kind: ThroughputKind::Bytes,
                per_iteration: n,
            })
        };
        let expected: [(&str, &str, Option<Throughput>, SamplingMode); 4] = [
            (
                "checksum/fold/64",
                "checksum",
                bytes(64),
                SamplingMode::Linear,
            ),
            (
                "checksum/fold/1024",
                "checksum",
                bytes(1024),
                SamplingMode::Linear,
            ),
            (
                "elements/sum",
                "elements",
                Some(Throughput {
                    kind: ThroughputKind::Elements,
                    per_iteration: 100,
                }),
                SamplingMode::Flat,
            ),
            ("plain add", "plain add", None, SamplingMode::Linear),
        ];
        for (c, capture) in CAPTURES.into_iter().enumerate() {
            let text = fixture(capture);
            let parsed = parse_messages(&text).unwrap_or_else(|e| panic!("capture {c}: {e}"));
            let messages: Vec<Value> = text
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .filter(|v| v["reason"] == BENCHMARK_COMPLETE)
                .collect();
            assert_eq!(parsed.len(), expected.len(), "capture {c}");
            for (i, ((m, raw), (id, group, throughput, mode))) in
                parsed.iter().zip(&messages).zip(&expected).enumerate()
            {
                let ctx = format!("capture {c} ({capture}), case {i}");
                assert_eq!(m.benchmark.full, *id, "{ctx}");
                assert_eq!(m.benchmark.group.as_deref(), Some(*group), "{ctx}");
                assert_eq!(m.throughput, *throughput, "{ctx}");
                assert_eq!(
                    (m.metric.as_str(), m.unit.as_str()),
                    ("time", "ns"),
                    "{ctx}"
                );
                let samples = m.samples.as_ref().unwrap();
                assert_eq!(samples.len(), 10, "{ctx}: --sample-size 10");
                assert_eq!(samples.mode(), *mode, "{ctx}");
                let iters: Vec<f64> = raw["iteration_count"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap())
                    .collect();
                let times: Vec<f64> = raw["measured_values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap())
                    .collect();
                assert_eq!(samples.iters(), iters.as_slice(), "{ctx}");
                assert_eq!(samples.times_ns(), times.as_slice(), "{ctx}");
                for (statistic, key) in [
                    (Statistic::Mean, "mean"),
                    (Statistic::Median, "median"),
                    (Statistic::MedianAbsDev, "median_abs_dev"),
                    (Statistic::Slope, "slope"),
                ] {
                    match m.statistics.get(&statistic) {
                        Some(e) => {
                            assert_eq!(
                                e.point,
                                raw[key]["estimate"].as_f64().unwrap(),
                                "{ctx} {key}"
                            );
                            assert_eq!(e.lower, raw[key]["lower_bound"].as_f64(), "{ctx} {key}");
                            assert_eq!(e.upper, raw[key]["upper_bound"].as_f64(), "{ctx} {key}");
                        }
                        None => assert!(raw[key].is_null(), "{ctx}: {key} missing"),
                    }
                }
                assert!(!m.statistics.contains_key(&Statistic::StdDev), "{ctx}");
                assert_eq!(m.estimate, m.statistics[&Statistic::Median], "{ctx}");
            }
        }
        // The rerun capture carries `change` objects, which are ignored.
        assert!(fixture(CAPTURES[1]).contains("\"change\":{"));
    }

    /// Spot values of the committed capture (update after regenerating with make.sh).
    #[test]
    fn pinned_values_of_the_committed_capture() {
        let m = parse_messages(&fixture(CAPTURES[1])).unwrap();
        assert_eq!(m[0].estimate.point, 121.581_046_998_166_12);
        let samples = m[0].samples.as_ref().unwrap();
        assert_eq!(samples.iters()[..3], [76_159.0, 152_318.0, 228_477.0]);
        assert_eq!(samples.times_ns()[0], 13_020_624.0);
    }

    /// A cut mid-line is an error; a cut at a line boundary is a shorter, valid run.
    #[test]
    fn truncation_at_every_byte() {
        for capture in CAPTURES {
            let text = fixture(capture);
            let full: Vec<String> = parse_messages(&text)
                .unwrap()
                .into_iter()
                .map(|m| m.benchmark.full)
                .collect();
            for len in (0..text.len()).filter(|&l| text.is_char_boundary(l)) {
                let prefix = &text[..len];
                let at_boundary = prefix.ends_with('\n') || text[len..].starts_with('\n');
                match parse_messages(prefix) {
                    Ok(parsed) => {
                        assert!(
                            at_boundary,
                            "{capture}: length {len} parsed though cut mid-line"
                        );
                        let ids: Vec<&str> =
                            parsed.iter().map(|m| m.benchmark.full.as_str()).collect();
                        assert_eq!(ids, full[..ids.len()], "{capture}: length {len}");
                    }
                    Err(_) => {
                        if at_boundary {
                            // Only a prefix without any benchmark-complete message fails there.
                            assert!(
                                !prefix.contains(BENCHMARK_COMPLETE),
                                "{capture}: length {len}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn hostile_inputs_are_errors() {
        let good = fixture(CAPTURES[0]);
        let first = good.lines().next().unwrap().to_owned();
        let cases: Vec<(String, &str)> = vec![
            (String::new(), "no benchmarks"),
            ("\n\n  \n".into(), "no benchmarks"),
            ("   Compiling foo v0.1.0\n".into(), "line 1"),
            ("\u{0}\u{7f}garbage".into(), "malformed JSON"),
            ("[1,2]".into(), "malformed JSON"),
            (
                "{\"reason\":\"group-complete\",\"group_name\":\"g\",\"benchmarks\":[]}".into(),
                "no benchmarks",
            ),
            (
                "{\"reason\":\"benchmark-complete\"}".into(),
                "malformed JSON",
            ),
            ("{\"reason\":5}".into(), "malformed JSON"),
            (format!("{first}\n{first}\n"), "already reported on line 1"),
            (format!("{first}\nnot json\n"), "line 2"),
            (
                first.replace("\"id\":\"checksum/fold/64\"", "\"id\":\"\""),
                "id is empty",
            ),
            (
                first.replace(
                    "\"unit\":\"ns\",\"throughput\"",
                    "\"unit\":\"cycles\",\"throughput\"",
                ),
                "not a time unit",
            ),
            (
                first.replace("\"unit\":\"ns\"}", "\"unit\":\"furlongs\"}"),
                "not a time unit",
            ),
            (
                first.replace("\"iteration_count\":[", "\"iteration_count\":[1,"),
                "invalid samples",
            ),
            (
                first.replace("\"iteration_count\":[", "\"iteration_count\":[1e30,"),
                "absurd iteration count",
            ),
            (
                first.replace("\"measured_values\":[", "\"measured_values\":[-1.0,"),
                "negative",
            ),
            (
                first.replace("\"measured_values\":[", "\"measured_values\":[1e300,"),
                "absurdly large",
            ),
            (
                first.replace("\"measured_values\":[", "\"measured_values\":[1e999,"),
                "malformed JSON",
            ),
            (
                first.replace("\"measured_values\":[", "\"measured_values\":[\"1\","),
                "malformed JSON",
            ),
            (
                first.replace("\"median\":{\"estimate\":", "\"median\":{\"estimate\":-"),
                "median point estimate is negative",
            ),
            (
                first.replace(
                    "\"throughput\":[{\"per_iteration\":64",
                    "\"throughput\":[{\"per_iteration\":-64",
                ),
                "malformed JSON",
            ),
        ];
        for (i, (text, needle)) in cases.into_iter().enumerate() {
            let err = parse_messages(&text).unwrap_err();
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
    fn tolerated_variations() {
        let good = fixture(CAPTURES[0]);
        let first = good.lines().next().unwrap().to_owned();
        let cases: [(String, f64); 4] = [
            // CRLF line ends, unknown reasons and fields, blank lines.
            (
                format!("{{\"reason\":\"something-new\",\"x\":1}}\r\n\r\n{first}\r\n"),
                1.0,
            ),
            (
                first.replace(
                    "\"reason\":\"benchmark-complete\",",
                    "\"reason\":\"benchmark-complete\",\"future\":[{}],",
                ),
                1.0,
            ),
            // Estimates in another time unit are scaled to ns.
            (first.replace("\"unit\":\"ns\"}", "\"unit\":\"us\"}"), 1e3),
            (first.replace("\"unit\":\"ns\"}", "\"unit\":\"ps\"}"), 1e-3),
        ];
        let reference = parse_messages(&first).unwrap().remove(0);
        for (i, (text, factor)) in cases.into_iter().enumerate() {
            let m = parse_messages(&text)
                .unwrap_or_else(|e| panic!("case {i}: {e}"))
                .remove(0);
            let expected = reference.estimate.point * factor;
            assert!(
                (m.estimate.point - expected).abs() <= 1e-9 * expected,
                "case {i}"
            );
            assert_eq!(m.samples, reference.samples, "case {i}");
        }
        // Measured values in microseconds.
        let text = first.replace(
            "\"unit\":\"ns\",\"throughput\"",
            "\"unit\":\"us\",\"throughput\"",
        );
        let m = parse_messages(&text).unwrap().remove(0);
        let (a, b) = (
            m.samples.unwrap().times_ns()[0],
            reference.samples.unwrap().times_ns()[0],
        );
        assert!((a - b * 1e3).abs() <= 1e-9 * a, "{a} vs {b}");
        // Without throughput entries, or with an unknown throughput unit: none.
        let text = first.replace(
            "[{\"per_iteration\":64,\"unit\":\"bytes\"}]",
            "[{\"per_iteration\":64,\"unit\":\"bits\"}]",
        );
        assert_eq!(parse_messages(&text).unwrap()[0].throughput, None);
    }

    #[test]
    fn huge_arrays_are_bounded_by_the_input() {
        let good = fixture(CAPTURES[0]);
        let first = good.lines().next().unwrap().to_owned();
        let n = 100_000;
        let iters = vec!["1"; n].join(",");
        let times = vec!["5.0"; n].join(",");
        let start = first.find("\"iteration_count\"").unwrap();
        let end = first.find("\"unit\"").unwrap();
        let text = format!(
            "{}\"iteration_count\":[{iters}],\"measured_values\":[{times}],{}",
            &first[..start],
            &first[end..]
        );
        let m = parse_messages(&text).unwrap();
        assert_eq!(m[0].samples.as_ref().unwrap().len(), n);
    }
}
