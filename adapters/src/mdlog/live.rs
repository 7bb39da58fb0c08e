//! The live suites' ids for results a log names its own way, so that a log's history and the
//! runs recorded since are one trend series per benchmark.
//!
//! A log names a benchmark as its author wrote it down; the suite that continues its history
//! names it as criterion or the tool prints it. Where the two differ but measure the same thing,
//! the log's result is recorded under the live id, in the live unit:
//!
//! | suite | as logged | live id |
//! |---|---|---|
//! | `mathldbt_transport` | `` `encode_zstd_ws` (level=3) `` | `encode_zstd_ws` (zstd level 3), likewise `decode_zstd_ws` |
//! | `mathldbt_transport` | `` `encode_gzip_ws` (level=6) `` | `encode_gzip_ws` (gzip level 6), likewise `decode_gzip_ws` |
//! | `mathldbt_transport` | `Plain` / `Owned encode` | `encode_plain_ws` (the same call on a `ColumnarBatch`) |
//! | `mathldbt_transport` | `Dict + Delta` / `Owned encode` | `encode_dict_delta_ws` |
//! | `mathldbt_transport` | `Plain` / `Fast-path encode` | `encode_fast_path_plain_ws` |
//! | `mathldbt_transport` | `Dict + Delta` / `Fast-path encode` | `encode_fast_path_dict_delta_ws` |
//! | `transport_pipeline_estimator` | `MATHLDBT` / `zstd (level=3)`, rows = 2,000 | `transport_pipeline/mathldbt_zstd/2000` |
//!
//! The estimator's times (`enc`, `dec`, `t_transfer`, `t_total`, read in ns) become the
//! metrics its `--format bmf` output records, in seconds: `enc_s`, `dec_s`, `t_transfer_s`,
//! `t_total_s`. Its rows are named `transport_pipeline/<payload>_<compression>/<rows>`, the
//! payload in snake case (`JSON` is `json`, `Arrow IPC` is `arrow_ipc`).
//!
//! Only the settings the live suites run with are joined: a result at another level (`(level=19)`)
//! measured something else and keeps the name it was logged under.

use crate::model::{BenchmarkId, Estimate, Measurement};

/// `(suite, name as logged, live name)`: a criterion function of the live suite.
const RENAMED: [(&str, &str, &str); 8] = [
    (
        "mathldbt_transport",
        "encode_zstd_ws (level=3)",
        "encode_zstd_ws",
    ),
    (
        "mathldbt_transport",
        "decode_zstd_ws (level=3)",
        "decode_zstd_ws",
    ),
    (
        "mathldbt_transport",
        "encode_gzip_ws (level=6)",
        "encode_gzip_ws",
    ),
    (
        "mathldbt_transport",
        "decode_gzip_ws (level=6)",
        "decode_gzip_ws",
    ),
    (
        "mathldbt_transport",
        "Plain/Owned encode",
        "encode_plain_ws",
    ),
    (
        "mathldbt_transport",
        "Dict + Delta/Owned encode",
        "encode_dict_delta_ws",
    ),
    (
        "mathldbt_transport",
        "Plain/Fast-path encode",
        "encode_fast_path_plain_ws",
    ),
    (
        "mathldbt_transport",
        "Dict + Delta/Fast-path encode",
        "encode_fast_path_dict_delta_ws",
    ),
];

/// The estimator's suite, as `bench-run import bmf --suite` records it.
const ESTIMATOR: &str = "transport_pipeline_estimator";
/// Prefix of the estimator's benchmark names.
const PIPELINE: &str = "transport_pipeline";

/// Payloads as the log's table writes them and as the estimator names them.
const PAYLOADS: [(&str, &str); 3] = [
    ("MATHLDBT", "mathldbt"),
    ("JSON", "json"),
    ("Arrow IPC", "arrow_ipc"),
];

/// Compressions as logged and as named; the levels are the estimator's (zstd 3, gzip 6).
const COMPRESSIONS: [(&str, &str); 3] = [
    ("none", "none"),
    ("zstd (level=3)", "zstd"),
    ("gzip (level=6)", "gzip"),
];

/// The estimator's time metrics, which it records in seconds as `<metric>_s`.
const SECONDS: [&str; 4] = ["enc", "dec", "t_transfer", "t_total"];

/// Nanoseconds per second.
const NS_PER_S: f64 = 1e9;

/// `m`, a result of suite `suite` as the log names it, under the live suite's id and unit; `m`
/// unchanged when the live suites have no other name for it.
pub(super) fn joined(suite: &str, m: Measurement) -> Measurement {
    if suite == ESTIMATOR {
        return estimator(m);
    }
    let Some(function) = m.benchmark.function.as_deref() else {
        return m;
    };
    let Some(&(_, _, live)) = RENAMED
        .iter()
        .find(|(s, logged, _)| *s == suite && *logged == function)
    else {
        return m;
    };
    let value = m.benchmark.value.clone();
    let full = match &value {
        Some(value) => format!("{suite}/{live}/{value}"),
        None => format!("{suite}/{live}"),
    };
    Measurement {
        benchmark: BenchmarkId {
            full,
            group: Some(suite.to_owned()),
            function: Some(live.to_owned()),
            value,
        },
        ..m
    }
}

/// An estimator row under the name and in the units of the estimator's BMF output, which names
/// its benchmarks whole (no group, function or value, as `bench-run import bmf` records them).
fn estimator(m: Measurement) -> Measurement {
    let Some((payload, compression)) = m
        .benchmark
        .function
        .as_deref()
        .and_then(|f| f.split_once('/'))
    else {
        return m;
    };
    let named = |table: &[(&str, &'static str)], logged: &str| {
        table
            .iter()
            .find(|(as_logged, _)| *as_logged == logged)
            .map(|(_, name)| *name)
    };
    let (Some(payload), Some(compression), Some(rows)) = (
        named(&PAYLOADS, payload),
        named(&COMPRESSIONS, compression),
        m.benchmark.value.as_deref(),
    ) else {
        return m;
    };
    let benchmark = BenchmarkId::named(format!("{PIPELINE}/{payload}_{compression}/{rows}"));
    if m.unit == "ns" && SECONDS.contains(&m.metric.as_str()) {
        let scale = |e: &Estimate| Estimate {
            point: e.point / NS_PER_S,
            lower: e.lower.map(|v| v / NS_PER_S),
            upper: e.upper.map(|v| v / NS_PER_S),
            confidence_level: e.confidence_level,
            standard_error: e.standard_error.map(|v| v / NS_PER_S),
        };
        return Measurement {
            benchmark,
            metric: format!("{}_s", m.metric),
            unit: "s".to_owned(),
            estimate: scale(&m.estimate),
            statistics: m.statistics.iter().map(|(k, e)| (*k, scale(e))).collect(),
            ..m
        };
    }
    Measurement { benchmark, ..m }
}

/// The live ids the log's names are joined to, by suite: what the live suites must still
/// record for the join to hold (checked against their output by the tests).
#[must_use]
pub fn live_functions(suite: &str) -> Vec<&'static str> {
    RENAMED
        .iter()
        .filter(|(s, _, _)| *s == suite)
        .map(|(_, _, live)| *live)
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::model::{Direction, Statistic};
    use std::collections::BTreeMap;

    fn logged(suite: &str, function: &str, value: &str, metric: &str, unit: &str) -> Measurement {
        Measurement {
            benchmark: BenchmarkId {
                full: format!("{suite}/{function}/{value}"),
                group: Some(suite.to_owned()),
                function: Some(function.to_owned()),
                value: Some(value.to_owned()),
            },
            metric: metric.to_owned(),
            unit: unit.to_owned(),
            direction: Direction::LowerIsBetter,
            estimate: Estimate::point(37_381_000.0),
            statistics: BTreeMap::from([(Statistic::Median, Estimate::point(37_381_000.0))]),
            throughput: None,
            samples: None,
        }
    }

    #[test]
    fn logged_names_become_live_ids() {
        // (suite, function, metric, unit) -> (full id, metric, unit, value)
        let cases = [
            (
                (
                    "mathldbt_transport",
                    "encode_zstd_ws (level=3)",
                    "time",
                    "ns",
                ),
                (
                    "mathldbt_transport/encode_zstd_ws/2000",
                    "time",
                    "ns",
                    37_381_000.0,
                ),
            ),
            (
                (
                    "mathldbt_transport",
                    "decode_gzip_ws (level=6)",
                    "time",
                    "ns",
                ),
                (
                    "mathldbt_transport/decode_gzip_ws/2000",
                    "time",
                    "ns",
                    37_381_000.0,
                ),
            ),
            (
                (
                    "mathldbt_transport",
                    "Dict + Delta/Owned encode",
                    "time",
                    "ns",
                ),
                (
                    "mathldbt_transport/encode_dict_delta_ws/2000",
                    "time",
                    "ns",
                    37_381_000.0,
                ),
            ),
            (
                ("mathldbt_transport", "Plain/Fast-path encode", "time", "ns"),
                (
                    "mathldbt_transport/encode_fast_path_plain_ws/2000",
                    "time",
                    "ns",
                    37_381_000.0,
                ),
            ),
            // Another level measured something else: kept as logged.
            (
                (
                    "mathldbt_transport",
                    "encode_zstd_ws (level=19)",
                    "time",
                    "ns",
                ),
                (
                    "mathldbt_transport/encode_zstd_ws (level=19)/2000",
                    "time",
                    "ns",
                    37_381_000.0,
                ),
            ),
            // Already the live name.
            (
                ("mathldbt_transport", "encode_plain_ws", "time", "ns"),
                (
                    "mathldbt_transport/encode_plain_ws/2000",
                    "time",
                    "ns",
                    37_381_000.0,
                ),
            ),
            (
                (
                    "transport_pipeline_estimator",
                    "MATHLDBT/none",
                    "t_transfer",
                    "ns",
                ),
                (
                    "transport_pipeline/mathldbt_none/2000",
                    "t_transfer_s",
                    "s",
                    0.037_381,
                ),
            ),
            (
                (
                    "transport_pipeline_estimator",
                    "JSON/zstd (level=3)",
                    "bytes",
                    "bytes",
                ),
                (
                    "transport_pipeline/json_zstd/2000",
                    "bytes",
                    "bytes",
                    37_381_000.0,
                ),
            ),
            (
                (
                    "transport_pipeline_estimator",
                    "MATHLDBT/gzip (level=6)",
                    "enc",
                    "ns",
                ),
                (
                    "transport_pipeline/mathldbt_gzip/2000",
                    "enc_s",
                    "s",
                    0.037_381,
                ),
            ),
            (
                (
                    "transport_pipeline_estimator",
                    "MATHLDBT/gzip (level=9)",
                    "enc",
                    "ns",
                ),
                (
                    "transport_pipeline_estimator/MATHLDBT/gzip (level=9)/2000",
                    "enc",
                    "ns",
                    37_381_000.0,
                ),
            ),
        ];
        for (i, ((suite, function, metric, unit), want)) in cases.into_iter().enumerate() {
            let m = joined(suite, logged(suite, function, "2000", metric, unit));
            let got = (
                m.benchmark.full.as_str(),
                m.metric.as_str(),
                m.unit.as_str(),
                m.estimate.point,
            );
            assert_eq!(got, want, "case {i}: {suite} {function}");
            let median = m.statistics.get(&Statistic::Median).unwrap().point;
            assert_eq!(
                median, m.estimate.point,
                "case {i}: statistics scaled alike"
            );
        }
    }

    #[test]
    fn estimator_ids_are_whole_names_as_bmf_records_them() {
        let m = joined(
            ESTIMATOR,
            logged(ESTIMATOR, "Arrow IPC/none", "100000", "bytes", "bytes"),
        );
        assert_eq!(
            m.benchmark,
            BenchmarkId::named("transport_pipeline/arrow_ipc_none/100000")
        );
        let m = joined(
            "mathldbt_transport",
            logged(
                "mathldbt_transport",
                "Plain/Owned encode",
                "100000",
                "time",
                "ns",
            ),
        );
        assert_eq!(m.benchmark.group.as_deref(), Some("mathldbt_transport"));
        assert_eq!(m.benchmark.function.as_deref(), Some("encode_plain_ws"));
        assert_eq!(m.benchmark.value.as_deref(), Some("100000"));
        assert!(live_functions("mathldbt_transport").contains(&"encode_zstd_ws"));
        assert!(live_functions("json_vs_mathldbt").is_empty());
    }
}
