//! Bencher Metric Format (BMF) JSON.
//!
//! ```text
//! {
//!   "<benchmark name>": {                     <- arbitrary text, kept verbatim
//!     "<measure>": {                          <- e.g. latency, throughput, file-size
//!       "value": f64,
//!       "lower_value": f64,                   <- optional
//!       "upper_value": f64,                   <- optional
//!       "unit": "ms",                         <- optional extension
//!       "direction": "lower_is_better"        <- optional extension (or "higher_is_better")
//!     }, ...
//!   }, ...
//! }
//! ```
//!
//! Each (benchmark, measure) pair becomes one [`Measurement`] whose metric is the measure name,
//! with the value as headline estimate (bounds from `lower_value`/`upper_value`). BMF carries no
//! samples and no statistics.
//!
//! **Unit and direction.** Decided in this order, first match wins:
//!
//! 1. direction only: the caller's `directions` map (e.g. from the command line);
//! 2. the measure's own `unit` / `direction` extension fields;
//! 3. Bencher's well-known measures:
//!
//!    | measure | unit | better |
//!    |---|---|---|
//!    | `latency` | `ns` | lower |
//!    | `throughput` | `ops/s` | higher |
//!    | `file-size` | `bytes` | lower |
//!    | `build-time` | `s` | lower |
//!
//! 4. the measure name, case-insensitively: a rate (`ops/s`, `per_s`, `/s`, `rate`) is higher is
//!    better, with unit `ops/s`, `bytes/s` or `/s`; a size (`bytes`, `size`) is lower is better
//!    in `bytes`. Rates are checked first, so `bytes/s` is a rate;
//! 5. otherwise: lower is better, unit `""` (unknown).
//!
//! Input order is kept. Duplicate keys (the same benchmark or measure twice) are an error rather
//! than a silent "last one wins".

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::{AdapterError, from_json};
use crate::model::{BenchmarkId, Direction, Estimate, Measurement};

/// A JSON object read in order, refusing duplicate keys (also used by [`super::gungraun`]).
pub(super) struct Entries<T>(pub(super) Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Entries<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor<T>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for EntriesVisitor<T> {
            type Value = Entries<T>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut seen = BTreeSet::new();
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    if !seen.insert(key.clone()) {
                        return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
                    }
                    let value = map.next_value::<T>()?;
                    entries.push((key, value));
                }
                Ok(Entries(entries))
            }
        }

        deserializer.deserialize_map(EntriesVisitor(PhantomData))
    }
}

#[derive(Deserialize)]
struct RawMeasure {
    value: f64,
    #[serde(default)]
    lower_value: Option<f64>,
    #[serde(default)]
    upper_value: Option<f64>,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    direction: Option<String>,
}

/// Bencher's well-known measures: (name, unit, direction).
const KNOWN_MEASURES: [(&str, &str, Direction); 4] = [
    ("latency", "ns", Direction::LowerIsBetter),
    ("throughput", "ops/s", Direction::HigherIsBetter),
    ("file-size", "bytes", Direction::LowerIsBetter),
    ("build-time", "s", Direction::LowerIsBetter),
];

/// Unit and direction a measure has by its name alone (steps 3 to 5 of the module docs).
#[must_use]
pub fn infer_measure(measure: &str) -> (&'static str, Direction) {
    if let Some((_, unit, direction)) = KNOWN_MEASURES.iter().find(|(name, _, _)| *name == measure)
    {
        return (unit, *direction);
    }
    let lower = measure.to_lowercase();
    if ["ops/s", "per_s", "/s", "rate"]
        .iter()
        .any(|k| lower.contains(k))
    {
        let unit = if lower.contains("ops") {
            "ops/s"
        } else if lower.contains("bytes") {
            "bytes/s"
        } else {
            "/s"
        };
        return (unit, Direction::HigherIsBetter);
    }
    if lower.contains("bytes") || lower.contains("size") {
        return ("bytes", Direction::LowerIsBetter);
    }
    ("", Direction::LowerIsBetter)
}

/// Parses a BMF document, in input order.
///
/// `directions` maps measure names to a direction that overrides everything else (see the
/// module docs).
///
/// # Errors
/// [`AdapterError::Json`] when the input is not JSON, not an object of objects of measures, or
/// repeats a key; [`AdapterError::Empty`] when it holds no benchmark; [`AdapterError::Invalid`]
/// for an empty benchmark or measure name, a benchmark without measures, a non-finite value,
/// bounds that do not enclose the value, or an unknown `direction`.
pub fn parse(
    bytes: &[u8],
    directions: &BTreeMap<String, Direction>,
) -> Result<Vec<Measurement>, AdapterError> {
    let raw: Entries<Entries<RawMeasure>> = from_json("BMF document", bytes)?;
    if raw.0.is_empty() {
        return Err(AdapterError::Empty {
            what: "BMF document".to_owned(),
        });
    }
    let mut measurements = Vec::new();
    for (name, measures) in raw.0 {
        if name.trim().is_empty() {
            return Err(AdapterError::invalid(
                format!("BMF benchmark {name:?}"),
                "benchmark name is empty",
            ));
        }
        if measures.0.is_empty() {
            return Err(AdapterError::invalid(
                format!("BMF benchmark {name:?}"),
                "no measures",
            ));
        }
        for (measure, raw) in measures.0 {
            let what = format!("BMF benchmark {name:?}, measure {measure:?}");
            if measure.trim().is_empty() {
                return Err(AdapterError::invalid(what, "measure name is empty"));
            }
            measurements.push(convert(&what, &name, measure, raw, directions)?);
        }
    }
    Ok(measurements)
}

fn convert(
    what: &str,
    name: &str,
    measure: String,
    raw: RawMeasure,
    directions: &BTreeMap<String, Direction>,
) -> Result<Measurement, AdapterError> {
    for (field, value) in [
        ("value", Some(raw.value)),
        ("lower_value", raw.lower_value),
        ("upper_value", raw.upper_value),
    ] {
        if let Some(value) = value
            && !value.is_finite()
        {
            return Err(AdapterError::invalid(
                what,
                format!("{field} is not finite ({value})"),
            ));
        }
    }
    if let Some(lower) = raw.lower_value
        && lower > raw.value
    {
        return Err(AdapterError::invalid(
            what,
            format!("lower_value {lower} is above value {}", raw.value),
        ));
    }
    if let Some(upper) = raw.upper_value
        && upper < raw.value
    {
        return Err(AdapterError::invalid(
            what,
            format!("upper_value {upper} is below value {}", raw.value),
        ));
    }
    let declared = match raw.direction.as_deref() {
        None => None,
        Some("lower_is_better") => Some(Direction::LowerIsBetter),
        Some("higher_is_better") => Some(Direction::HigherIsBetter),
        Some(other) => {
            return Err(AdapterError::invalid(
                what,
                format!(
                    "direction {other:?} is neither \"lower_is_better\" nor \"higher_is_better\""
                ),
            ));
        }
    };
    let (inferred_unit, inferred_direction) = infer_measure(&measure);
    let direction = directions
        .get(&measure)
        .copied()
        .or(declared)
        .unwrap_or(inferred_direction);
    let unit = raw.unit.unwrap_or_else(|| inferred_unit.to_owned());
    Ok(Measurement {
        benchmark: BenchmarkId::named(name),
        metric: measure,
        unit,
        direction,
        estimate: Estimate {
            point: raw.value,
            lower: raw.lower_value,
            upper: raw.upper_value,
            confidence_level: None,
            standard_error: None,
        },
        statistics: BTreeMap::new(),
        throughput: None,
        samples: None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;
    use std::path::Path;

    /// (benchmark, metric, unit, direction, value, lower, upper)
    type Row<'a> = (
        &'a str,
        &'a str,
        &'a str,
        Direction,
        f64,
        Option<f64>,
        Option<f64>,
    );

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("testdata/bmf")
                .join(name),
        )
        .unwrap()
    }

    #[test]
    fn inference_table() {
        let cases: [(&str, &str, Direction); 12] = [
            ("latency", "ns", Direction::LowerIsBetter),
            ("throughput", "ops/s", Direction::HigherIsBetter),
            ("file-size", "bytes", Direction::LowerIsBetter),
            ("build-time", "s", Direction::LowerIsBetter),
            ("peak_bytes", "bytes", Direction::LowerIsBetter),
            ("binary-size", "bytes", Direction::LowerIsBetter),
            ("decode_bytes/s", "bytes/s", Direction::HigherIsBetter),
            ("ops/s", "ops/s", Direction::HigherIsBetter),
            ("rows_per_s", "/s", Direction::HigherIsBetter),
            ("Hit-Rate", "/s", Direction::HigherIsBetter),
            ("instructions", "", Direction::LowerIsBetter),
            ("Latency", "", Direction::LowerIsBetter),
        ];
        for (i, (measure, unit, direction)) in cases.into_iter().enumerate() {
            assert_eq!(
                infer_measure(measure),
                (unit, direction),
                "case {i}: {measure}"
            );
        }
    }

    #[test]
    fn real_style_document() {
        // testdata/bmf/example.json follows Bencher's documented examples.
        let parsed = parse(&fixture("example.json"), &BTreeMap::new()).unwrap();
        let got: Vec<Row<'_>> = parsed
            .iter()
            .map(|m| {
                (
                    m.benchmark.full.as_str(),
                    m.metric.as_str(),
                    m.unit.as_str(),
                    m.direction,
                    m.estimate.point,
                    m.estimate.lower,
                    m.estimate.upper,
                )
            })
            .collect();
        let expected = [
            (
                "bench_fib_10",
                "latency",
                "ns",
                Direction::LowerIsBetter,
                88.0,
                Some(87.4),
                Some(88.6),
            ),
            (
                "bench_fib_20",
                "latency",
                "ns",
                Direction::LowerIsBetter,
                11_098.0,
                Some(10_930.0),
                Some(11_265.0),
            ),
            (
                "bench_fib_20",
                "throughput",
                "ops/s",
                Direction::HigherIsBetter,
                90_106.0,
                None,
                None,
            ),
            (
                "<script>alert(1)</script>",
                "file-size",
                "bytes",
                Direction::LowerIsBetter,
                4_096.0,
                None,
                None,
            ),
            (
                "<script>alert(1)</script>",
                "cache hits",
                "%",
                Direction::HigherIsBetter,
                97.5,
                Some(95.0),
                Some(99.0),
            ),
            (
                "ünïcödé ✓ \"quoted\" \\ back/slash",
                "build-time",
                "s",
                Direction::LowerIsBetter,
                12.5,
                None,
                None,
            ),
        ];
        assert_eq!(got.len(), expected.len());
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(g, e, "case {i}");
        }
        assert!(
            parsed
                .iter()
                .all(|m| m.samples.is_none() && m.statistics.is_empty())
        );
    }

    #[test]
    fn explicit_directions_override() {
        let text = br#"{"b": {"latency": {"value": 1.0}, "score": {"value": 2.0, "direction": "lower_is_better"}, "other": {"value": 3.0}}}"#;
        let directions = BTreeMap::from([
            ("latency".to_owned(), Direction::HigherIsBetter),
            ("score".to_owned(), Direction::HigherIsBetter),
        ]);
        let parsed = parse(text, &directions).unwrap();
        let dirs: Vec<Direction> = parsed.iter().map(|m| m.direction).collect();
        assert_eq!(
            dirs,
            [
                Direction::HigherIsBetter,
                Direction::HigherIsBetter,
                Direction::LowerIsBetter
            ]
        );
        assert_eq!(
            parsed[0].unit, "ns",
            "the override changes the direction, not the unit"
        );
    }

    #[test]
    fn truncation_at_every_byte_is_an_error() {
        let bytes = fixture("example.json");
        for len in 0..bytes.trim_ascii_end().len() {
            assert!(
                parse(&bytes[..len], &BTreeMap::new()).is_err(),
                "length {len}"
            );
        }
    }

    #[test]
    fn hostile_inputs_are_errors() {
        let cases: [(&str, &str); 22] = [
            ("", "malformed JSON"),
            ("\u{0}\u{7f}garbage", "malformed JSON"),
            ("[]", "malformed JSON"),
            ("\"x\"", "malformed JSON"),
            ("{}", "no benchmarks"),
            (r#"{"b": []}"#, "malformed JSON"),
            (r#"{"b": {}}"#, "no measures"),
            (r#"{"b": {"latency": 5}}"#, "malformed JSON"),
            (r#"{"b": {"latency": {}}}"#, "malformed JSON"),
            (r#"{"b": {"latency": {"value": "5"}}}"#, "malformed JSON"),
            (r#"{"b": {"latency": {"value": null}}}"#, "malformed JSON"),
            (r#"{"b": {"latency": {"value": 1e999}}}"#, "malformed JSON"),
            (r#"{"b": {"latency": {"value": NaN}}}"#, "malformed JSON"),
            (
                r#"{"b": {"latency": {"value": 1, "lower_value": 2}}}"#,
                "lower_value 2 is above value 1",
            ),
            (
                r#"{"b": {"latency": {"value": 3, "upper_value": 2}}}"#,
                "upper_value 2 is below value 3",
            ),
            (
                r#"{"b": {"latency": {"value": 3, "lower_value": 4, "upper_value": 2}}}"#,
                "above value",
            ),
            (
                r#"{"": {"latency": {"value": 1}}}"#,
                "benchmark name is empty",
            ),
            (
                r#"{"  ": {"latency": {"value": 1}}}"#,
                "benchmark name is empty",
            ),
            (r#"{"b": {"": {"value": 1}}}"#, "measure name is empty"),
            (
                r#"{"b": {"latency": {"value": 1, "direction": "up"}}}"#,
                "neither",
            ),
            (
                r#"{"b": {"latency": {"value": 1}}, "b": {"latency": {"value": 2}}}"#,
                "duplicate key",
            ),
            (
                r#"{"b": {"latency": {"value": 1}, "latency": {"value": 2}}}"#,
                "duplicate key",
            ),
        ];
        for (i, (text, needle)) in cases.into_iter().enumerate() {
            let err = parse(text.as_bytes(), &BTreeMap::new()).unwrap_err();
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
    fn names_survive_verbatim() {
        let names = [
            "<script>alert(1)</script>",
            "a/b/c",
            "tab\there",
            "nul\u{0}byte",
            "'; DROP TABLE runs; --",
        ];
        for (i, name) in names.into_iter().enumerate() {
            let doc = serde_json::json!({ name: { "latency": { "value": 1.0 } } });
            let parsed = parse(doc.to_string().as_bytes(), &BTreeMap::new()).unwrap();
            assert_eq!(parsed[0].benchmark.full, name, "case {i}");
        }
    }

    #[test]
    fn many_benchmarks_are_bounded_by_the_input() {
        let body: Vec<String> = (0..50_000)
            .map(|i| format!("\"b{i}\":{{\"latency\":{{\"value\":{i}}}}}"))
            .collect();
        let text = format!("{{{}}}", body.join(","));
        let parsed = parse(text.as_bytes(), &BTreeMap::new()).unwrap();
        assert_eq!(parsed.len(), 50_000);
        assert_eq!(parsed[49_999].estimate.point, 49_999.0);
    }
}
