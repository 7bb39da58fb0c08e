//! Human formatting of values: times scaled to ns/µs/ms/s, rates to K/M/G, percentages.
//!
//! It lives in the model so the analysis's verdict explanations and the reports scale values the
//! same way.

use crate::{Measurement, ThroughputKind};

/// Formats `value` in `unit` for reading, with four significant digits.
#[must_use]
pub fn value(value: f64, unit: &str) -> String {
    match unit {
        "ns" => time_ns(value),
        "s" => time_ns(value * 1e9),
        "bytes" => scaled(value, &["B", "KiB", "MiB", "GiB", "TiB"], 1024.0),
        "bytes/s" => scaled(value, &["B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"], 1024.0),
        _ if unit.ends_with("/s") => {
            let base = unit.trim_end_matches("/s");
            scaled(
                value,
                &[
                    &format!("{base}/s"),
                    &format!("K{base}/s"),
                    &format!("M{base}/s"),
                    &format!("G{base}/s"),
                ],
                1000.0,
            )
        }
        "" => sig4(value),
        "x" => format!("{}x", sig4(value)),
        // Exact counts (instructions, cache hits) read best in full: `5 count`, not `5.000 count`.
        "count" if value.fract() == 0.0 && value.abs() < 1e15 => format!("{value:.0} count"),
        _ => format!("{} {unit}", sig4(value)),
    }
}

/// Formats nanoseconds like criterion: `14.99 µs`, `5.051 ms`.
#[must_use]
pub fn time_ns(ns: f64) -> String {
    let (scaled, unit) = if ns.abs() < 1e3 {
        (ns, "ns")
    } else if ns.abs() < 1e6 {
        (ns / 1e3, "µs")
    } else if ns.abs() < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{} {unit}", sig4(scaled))
}

fn scaled(mut value: f64, units: &[&str], step: f64) -> String {
    let mut index = 0;
    while value.abs() >= step && index + 1 < units.len() {
        value /= step;
        index += 1;
    }
    format!(
        "{} {}",
        sig4(value),
        units.get(index).copied().unwrap_or("")
    )
}

/// Four significant digits, no exponent for ordinary magnitudes.
#[must_use]
pub fn sig4(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    if value == 0.0 {
        return "0".to_owned();
    }
    let magnitude = value.abs().log10().floor();
    if !(-6.0..15.0).contains(&magnitude) {
        return format!("{value:.3e}");
    }
    // magnitude is within -6..15 here, so the cast is exact.
    #[expect(clippy::cast_possible_truncation, reason = "bounded above")]
    let decimals = (3 - magnitude as i32).max(0);
    format!(
        "{value:.prec$}",
        prec = usize::try_from(decimals).unwrap_or(0)
    )
}

/// A signed percentage: `+3.70%`, `-16.58%`.
#[must_use]
pub fn pct(value: f64) -> String {
    format!("{value:+.2}%")
}

/// A p-value for a table: four decimals, `<0.0001` below that, empty when there is none.
#[must_use]
pub fn p_value(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 1e-4 => "<0.0001".to_owned(),
        Some(p) => format!("{p:.4}"),
        None => String::new(),
    }
}

/// Throughput of a measurement as a rate (`1.234 GiB/s`, `12.3 Melem/s`), when declared.
#[must_use]
pub fn throughput(m: &Measurement) -> Option<String> {
    let t = m.throughput?;
    if m.unit != "ns" || m.estimate.point <= 0.0 {
        return None;
    }
    #[expect(clippy::cast_precision_loss, reason = "display only")]
    let per_second = t.per_iteration as f64 / (m.estimate.point * 1e-9);
    Some(match t.kind {
        ThroughputKind::Bytes => value(per_second, "bytes/s"),
        ThroughputKind::BytesDecimal => {
            scaled(per_second, &["B/s", "KB/s", "MB/s", "GB/s", "TB/s"], 1000.0)
        }
        ThroughputKind::Elements => scaled(
            per_second,
            &["elem/s", "Kelem/s", "Melem/s", "Gelem/s"],
            1000.0,
        ),
        ThroughputKind::Bits => scaled(per_second, &["b/s", "Kb/s", "Mb/s", "Gb/s"], 1000.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_scale_like_criterion() {
        let cases = [
            (14_990.0, "14.99 µs"),
            (5_050_700.0, "5.051 ms"),
            (807.76, "807.8 ns"),
            (1.5e9, "1.500 s"),
            (0.5, "0.5000 ns"),
        ];
        for (i, (ns, want)) in cases.iter().enumerate() {
            assert_eq!(time_ns(*ns), *want, "case {i}");
        }
    }

    #[test]
    fn other_units() {
        assert_eq!(value(4_600_263.0, "bytes"), "4.387 MiB");
        assert_eq!(value(1500.0, "ops/s"), "1.500 Kops/s");
        assert_eq!(value(2.5, "ratio"), "2.500 ratio");
        assert_eq!(value(16.234, "x"), "16.23x");
        assert_eq!(value(0.030879, "s"), "30.88 ms");
        assert_eq!(pct(-16.5812), "-16.58%");
        assert_eq!(pct(3.7), "+3.70%");
        assert_eq!(sig4(1.0e20), "1.000e20");
        assert_eq!(value(5.0, "count"), "5 count");
        assert_eq!(value(190_040.0, "count"), "190040 count");
        assert_eq!(value(2.5, "count"), "2.500 count");
    }
}
