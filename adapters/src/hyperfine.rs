//! `hyperfine --export-json` output.
//!
//! ```text
//! {"results": [{"command": "sleep 0.01",       <- benchmark name (--command-name renames it)
//!               "mean": s, "stddev": s|null,   <- stddev is null with --runs 1
//!               "median": s, "user": s, "system": s, "min": s, "max": s,
//!               "times": [s, ...],             <- one wall-clock time per run
//!               "exit_codes": [0, ...],
//!               "parameters": {"n": "1"}}]}    <- only with --parameter-scan/--parameter-list
//! ```
//!
//! All times are seconds; the model stores nanoseconds (`seconds * 1e9`). Each result becomes
//! one [`Measurement`] with metric [`metric::TIME`], lower is better, headline the median, the
//! statistics mean, median and std_dev (point estimates: hyperfine reports no intervals) and one
//! sample per run ([`SamplingMode::Single`], one iteration each).
//!
//! Older hyperfine versions wrote no `median`: it is then computed from `times`. `user`, `system`,
//! `min`, `max` and `exit_codes` are not part of the model and are ignored, as are unknown fields.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::Value;

use super::{AdapterError, MAX_TIME_NS, check_time_ns, from_json};
use crate::model::{
    BenchmarkId, Direction, Estimate, Measurement, Samples, SamplingMode, Statistic, metric,
};

const NS_PER_S: f64 = 1e9;

#[derive(Deserialize)]
struct RawExport {
    results: Vec<RawResult>,
}

#[derive(Deserialize)]
struct RawResult {
    command: String,
    mean: f64,
    #[serde(default)]
    stddev: Option<f64>,
    #[serde(default)]
    median: Option<f64>,
    #[serde(default)]
    times: Option<Vec<f64>>,
    #[serde(default)]
    parameters: Option<BTreeMap<String, Value>>,
}

/// Parses a `hyperfine --export-json` file, keeping the order of its results.
///
/// # Errors
/// [`AdapterError::Json`] when the input is not JSON of hyperfine's shape,
/// [`AdapterError::Empty`] without results, [`AdapterError::Invalid`] for an empty or duplicate
/// command, a non-finite, negative or absurd time, or a result with neither `median` nor `times`.
pub fn parse(bytes: &[u8]) -> Result<Vec<Measurement>, AdapterError> {
    let raw: RawExport = from_json("hyperfine export", bytes)?;
    if raw.results.is_empty() {
        return Err(AdapterError::Empty {
            what: "hyperfine export".to_owned(),
        });
    }
    let mut seen = BTreeSet::new();
    let mut measurements = Vec::with_capacity(raw.results.len());
    for (index, result) in raw.results.into_iter().enumerate() {
        let what = format!("hyperfine result {index} (`{}`)", result.command);
        if result.command.trim().is_empty() {
            return Err(AdapterError::invalid(what, "command is empty"));
        }
        if !seen.insert(result.command.clone()) {
            return Err(AdapterError::invalid(
                what,
                "the same command appears twice; name the runs apart with --command-name",
            ));
        }
        measurements.push(convert(&what, result)?);
    }
    Ok(measurements)
}

fn to_ns(what: &str, name: &str, seconds: f64) -> Result<f64, AdapterError> {
    // Check before scaling so an absurd value is reported in the unit it was written in.
    if seconds.is_finite() && seconds > MAX_TIME_NS / NS_PER_S {
        return Err(AdapterError::invalid(
            what,
            format!("{name} is absurdly large ({seconds} s)"),
        ));
    }
    check_time_ns(what, name, seconds * NS_PER_S)
}

fn convert(what: &str, raw: RawResult) -> Result<Measurement, AdapterError> {
    let times_ns = match raw.times {
        Some(times) => Some(
            times
                .iter()
                .enumerate()
                .map(|(i, &t)| to_ns(what, &format!("time of run {i}"), t))
                .collect::<Result<Vec<f64>, _>>()?,
        ),
        None => None,
    };
    let mean = to_ns(what, "mean", raw.mean)?;
    let median = match (raw.median, &times_ns) {
        (Some(median), _) => to_ns(what, "median", median)?,
        (None, Some(times)) => {
            median_of(times).ok_or_else(|| AdapterError::invalid(what, "no median and no times"))?
        }
        (None, None) => return Err(AdapterError::invalid(what, "no median and no times")),
    };
    let mut statistics = BTreeMap::new();
    statistics.insert(Statistic::Mean, Estimate::point(mean));
    statistics.insert(Statistic::Median, Estimate::point(median));
    if let Some(stddev) = raw.stddev {
        statistics.insert(
            Statistic::StdDev,
            Estimate::point(to_ns(what, "stddev", stddev)?),
        );
    }
    let samples = match times_ns {
        Some(times) if !times.is_empty() => {
            let iters = vec![1.0; times.len()];
            Some(
                Samples::new(SamplingMode::Single, iters, times).map_err(|source| {
                    AdapterError::Samples {
                        what: what.to_owned(),
                        source,
                    }
                })?,
            )
        }
        _ => None,
    };
    let value = raw.parameters.filter(|p| !p.is_empty()).map(|parameters| {
        parameters
            .iter()
            .map(|(name, value)| match value {
                Value::String(s) => format!("{name}={s}"),
                other => format!("{name}={other}"),
            })
            .collect::<Vec<_>>()
            .join(",")
    });
    Ok(Measurement {
        benchmark: BenchmarkId {
            full: raw.command,
            group: None,
            function: None,
            value,
        },
        metric: metric::TIME.to_owned(),
        unit: "ns".to_owned(),
        direction: Direction::LowerIsBetter,
        estimate: Estimate::point(median),
        statistics,
        throughput: None,
        samples,
    })
}

/// Median of finite values; `None` when empty.
fn median_of(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted.get(mid).copied()
    } else {
        Some((sorted.get(mid.checked_sub(1)?)? + sorted.get(mid)?) / 2.0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;
    use std::path::Path;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("testdata/hyperfine")
                .join(name),
        )
        .unwrap()
    }

    /// (benchmark name, parameters, runs, has a standard deviation)
    type Expected<'a> = (&'a str, Option<&'a str>, usize, bool);

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
    }

    #[test]
    fn real_captures() {
        // (file, [(name, parameters, runs, has stddev)])
        let cases: [(&str, &[Expected<'_>]); 3] = [
            (
                "basic.json",
                &[("sleep <10ms>", None, 5, true), ("true", None, 5, true)],
            ),
            (
                "params.json",
                &[
                    ("sleep 0.001", Some("n=1"), 3, true),
                    ("sleep 0.002", Some("n=2"), 3, true),
                ],
            ),
            ("single.json", &[("sleep 0.001", None, 1, false)]),
        ];
        for (i, (file, expected)) in cases.into_iter().enumerate() {
            let bytes = fixture(file);
            let parsed = parse(&bytes).unwrap_or_else(|e| panic!("case {i} ({file}): {e}"));
            let json: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(parsed.len(), expected.len(), "case {i} ({file})");
            for (j, (m, (name, params, runs, has_stddev))) in
                parsed.iter().zip(expected).enumerate()
            {
                let ctx = format!("case {i} ({file}), result {j}");
                let raw = &json["results"][j];
                assert_eq!(m.benchmark.full, *name, "{ctx}");
                assert_eq!(m.benchmark.value.as_deref(), *params, "{ctx}");
                assert_eq!(m.metric, "time", "{ctx}");
                assert_eq!(m.unit, "ns", "{ctx}");
                assert_eq!(m.direction, Direction::LowerIsBetter, "{ctx}");
                assert!(
                    close(m.estimate.point, raw["median"].as_f64().unwrap() * 1e9),
                    "{ctx}"
                );
                assert_eq!(m.estimate, m.statistics[&Statistic::Median], "{ctx}");
                assert!(
                    close(
                        m.statistics[&Statistic::Mean].point,
                        raw["mean"].as_f64().unwrap() * 1e9
                    ),
                    "{ctx}"
                );
                assert_eq!(
                    m.statistics.contains_key(&Statistic::StdDev),
                    *has_stddev,
                    "{ctx}"
                );
                let samples = m.samples.as_ref().unwrap();
                assert_eq!(samples.len(), *runs, "{ctx}");
                assert_eq!(samples.mode(), SamplingMode::Single, "{ctx}");
                assert!(samples.iters().iter().all(|&n| n == 1.0), "{ctx}");
                for (k, (t, raw_t)) in samples
                    .times_ns()
                    .iter()
                    .zip(raw["times"].as_array().unwrap())
                    .enumerate()
                {
                    assert!(close(*t, raw_t.as_f64().unwrap() * 1e9), "{ctx}, run {k}");
                }
                assert!(m.throughput.is_none(), "{ctx}");
            }
        }
    }

    /// Spot values of the committed capture (update after regenerating with make.sh).
    #[test]
    fn pinned_values_of_the_committed_capture() {
        let m = parse(&fixture("basic.json")).unwrap();
        assert!(
            close(m[0].estimate.point, 19_620_992.0),
            "{:?}",
            m[0].estimate
        );
        assert!(close(m[0].statistics[&Statistic::Mean].point, 21_505_567.4));
        assert!(close(
            m[0].samples.as_ref().unwrap().times_ns()[0],
            28_118_346.0
        ));
    }

    #[test]
    fn truncation_at_every_byte_is_an_error() {
        for file in ["basic.json", "params.json", "single.json"] {
            let bytes = fixture(file);
            // Dropping only the trailing newline leaves the whole document.
            for len in 0..bytes.trim_ascii_end().len() {
                assert!(parse(&bytes[..len]).is_err(), "{file}: length {len}");
            }
        }
    }

    #[test]
    fn hostile_inputs_are_errors() {
        let one = |fields: &str| format!("{{\"results\":[{{\"command\":\"c\",{fields}}}]}}");
        let cases: Vec<(String, &str)> = vec![
            (String::new(), "malformed JSON"),
            ("\u{fffd}\u{0}garbage".into(), "malformed JSON"),
            ("[]".into(), "malformed JSON"),
            ("{}".into(), "malformed JSON"),
            ("{\"results\":{}}".into(), "malformed JSON"),
            ("{\"results\":[]}".into(), "no benchmarks"),
            (one("\"mean\":\"1\",\"median\":1.0"), "malformed JSON"),
            (one("\"mean\":-1.0,\"median\":1.0"), "mean is negative"),
            (one("\"mean\":1e12,\"median\":1.0"), "absurdly large"),
            (one("\"mean\":1.0,\"median\":1e999"), "malformed JSON"),
            (one("\"mean\":1.0,\"median\":1.0,\"stddev\":-0.5"), "stddev is negative"),
            (one("\"mean\":1.0,\"median\":1.0,\"times\":[1.0,-1.0]"), "time of run 1 is negative"),
            (one("\"mean\":1.0,\"median\":1.0,\"times\":[1.0,\"x\"]"), "malformed JSON"),
            (one("\"mean\":1.0"), "no median and no times"),
            (one("\"mean\":1.0,\"times\":[]"), "no median and no times"),
            ("{\"results\":[{\"command\":\"\",\"mean\":1.0,\"median\":1.0}]}".into(), "command is empty"),
            ("{\"results\":[{\"command\":7,\"mean\":1.0,\"median\":1.0}]}".into(), "malformed JSON"),
            (
                "{\"results\":[{\"command\":\"a\",\"mean\":1.0,\"median\":1.0},{\"command\":\"a\",\"mean\":1.0,\"median\":1.0}]}".into(),
                "appears twice",
            ),
        ];
        for (i, (text, needle)) in cases.into_iter().enumerate() {
            let err = parse(text.as_bytes()).unwrap_err();
            assert!(
                err.to_string().contains(needle),
                "case {i}: expected {needle:?} in {err:?}"
            );
        }
    }

    #[test]
    fn tolerated_variations() {
        // No median (old hyperfine): computed from times. Unknown fields ignored. Non-string
        // parameters rendered as JSON. Null exit codes (killed by a signal) ignored.
        let text = r#"{"results":[{"command":"x","mean":2.0,"times":[3.0,1.0,2.0,10.0],
            "exit_codes":[0,null,0,0],"parameters":{"n":1,"s":"a"},"memory_usage_byte":[1]}],
            "hyperfine_version":"9.9"}"#;
        let m = parse(text.as_bytes()).unwrap();
        assert_eq!(m[0].estimate.point, 2.5e9);
        assert_eq!(m[0].benchmark.value.as_deref(), Some("n=1,s=a"));
        assert_eq!(median_of(&[]), None);
        assert_eq!(median_of(&[4.0]), Some(4.0));
        assert_eq!(median_of(&[4.0, 1.0, 2.0]), Some(2.0));
    }

    #[test]
    fn huge_arrays_are_bounded_by_the_input() {
        let times = vec!["0.001"; 200_000].join(",");
        let text = format!(
            "{{\"results\":[{{\"command\":\"c\",\"mean\":0.001,\"median\":0.001,\"times\":[{times}]}}]}}"
        );
        let m = parse(text.as_bytes()).unwrap();
        assert_eq!(m[0].samples.as_ref().unwrap().len(), 200_000);
    }
}
