//! Where a logarithmic y axis gets its labelled ticks, and how a tick value reads.
//!
//! A log axis labelled by plotters' own rule shows one or two labels over a range narrower
//! than a few decades, which is where benchmark trends live. [`log_ticks`] picks readable
//! values instead, as matplotlib's `LogLocator` does, coarsest first:
//!
//! ```text
//! span of the axis       ticks (decimal units)             e.g.
//! ≥ 2 decades            powers of ten, every k-th decade   1 ns 10 ns 100 ns 1 µs
//!                        (k = 1, 2, 5, 10... to stay ≤ 10)
//! < 2 decades            1x, 2x and 5x each decade          5 µs 10 µs 20 µs 50 µs
//! too narrow for those   evenly spaced (3 to 9), step 1,   1 µs 1.2 µs 1.4 µs 1.6 µs
//!   (fewer than 3)       2 or 5 times a power of ten
//! ```
//!
//! Sizes in bytes scale by 1024 (`KiB`, `MiB`), so their ticks are powers of two (every k-th
//! octave, k = 1, 2, 5, 10...: 10 octaves is one `KiB` step) and, too narrow for three of
//! those, evenly spaced with a power-of-two step (`3 KiB`, `3.25 KiB`, `3.5 KiB`).
//!
//! Every valid range (positive, finite) gets at least one tick and at most [`MAX_TICKS`]; any
//! range wider than a millionth of its value gets at least two.

use bench_model::format;

/// The most labelled ticks an axis gets.
pub const MAX_TICKS: usize = 10;

/// Fewer ticks than this from a rule means trying the next, finer one.
const MIN_TICKS: usize = 3;

/// Below this many decades, decimal axes are labelled at 1x, 2x and 5x each decade.
const SUBDIVIDE_BELOW_DECADES: f64 = 2.0;

/// How values of a unit scale for reading: by 1000 or by 1024.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// Times, rates, counts: powers of ten.
    Decimal,
    /// Bytes and bytes per second, shown in KiB, MiB...: powers of two.
    Binary,
}

impl Base {
    /// The base [`format::value`] scales `unit` by.
    #[must_use]
    pub fn of_unit(unit: &str) -> Self {
        if matches!(unit, "bytes" | "bytes/s") {
            Self::Binary
        } else {
            Self::Decimal
        }
    }
}

/// The labelled ticks of a logarithmic axis from `lo` to `hi` (in either order), ascending,
/// each within the range: between 1 and [`MAX_TICKS`] of them, chosen as the module docs
/// say. Empty only when the range is not positive and finite.
#[must_use]
pub fn log_ticks(lo: f64, hi: f64, base: Base) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) {
        return Vec::new();
    }
    let (lo, hi) = (lo.min(hi), lo.max(hi));
    if lo <= 0.0 {
        return Vec::new();
    }
    if hi <= lo * (1.0 + 1e-6) {
        return vec![lo];
    }
    let powers = power_ticks(lo, hi, base);
    let decades = (hi / lo).log10();
    match base {
        Base::Decimal if decades >= SUBDIVIDE_BELOW_DECADES && powers.len() >= MIN_TICKS => {
            return powers;
        }
        Base::Decimal => {
            let one_two_five = one_two_five_ticks(lo, hi);
            if (MIN_TICKS..=MAX_TICKS).contains(&one_two_five.len()) {
                return one_two_five;
            }
            if powers.len() >= MIN_TICKS {
                return powers;
            }
        }
        Base::Binary if powers.len() >= MIN_TICKS => return powers,
        Base::Binary => {}
    }
    linear_ticks(lo, hi, base)
}

/// `base^e` for integer `e`, exact (a decimal power parsed from text is the nearest double).
fn power(base: Base, e: i32) -> f64 {
    match base {
        Base::Decimal => format!("1e{e}").parse().unwrap_or(f64::NAN),
        Base::Binary => f64::from(e).exp2(),
    }
}

/// The exponents whose powers may lie in `lo..=hi` (a margin of one each side for rounding;
/// the callers compare the values themselves).
fn exponents(lo: f64, hi: f64, base: Base) -> std::ops::RangeInclusive<i32> {
    let log = |v: f64| match base {
        Base::Decimal => v.log10(),
        Base::Binary => v.log2(),
    };
    #[expect(
        clippy::cast_possible_truncation,
        reason = "logarithms of finite doubles lie within ±1100"
    )]
    let (first, last) = (log(lo).floor() as i32 - 1, log(hi).ceil() as i32 + 1);
    first..=last
}

/// Powers of the base within the range, every k-th one with the smallest k of 1, 2, 5, 10,
/// 20, 50... that leaves at most [`MAX_TICKS`].
fn power_ticks(lo: f64, hi: f64, base: Base) -> Vec<f64> {
    let all: Vec<(i32, f64)> = exponents(lo, hi, base)
        .map(|e| (e, power(base, e)))
        .filter(|&(_, v)| lo <= v && v <= hi)
        .collect();
    let mut step = 1;
    loop {
        let kept: Vec<f64> = all
            .iter()
            .filter(|(e, _)| e.rem_euclid(step) == 0)
            .map(|&(_, v)| v)
            .collect();
        // Every power kept once the step passes the widest exponent span (about 2200).
        if kept.len() <= MAX_TICKS || step > 10_000 {
            return kept;
        }
        step = next_step(step);
    }
}

/// 1, 2, 5, 10, 20, 50, 100...
fn next_step(step: i32) -> i32 {
    let mut decade = 1;
    while step >= 10 * decade {
        decade *= 10;
    }
    match step / decade {
        1 => 2 * decade,
        2 => 5 * decade,
        _ => 10 * decade,
    }
}

/// 1x, 2x and 5x each power of ten, within the range.
fn one_two_five_ticks(lo: f64, hi: f64) -> Vec<f64> {
    exponents(lo, hi, Base::Decimal)
        .flat_map(|e| [1, 2, 5].map(|m| format!("{m}e{e}").parse().unwrap_or(f64::NAN)))
        .filter(|&v| lo <= v && v <= hi)
        .collect()
}

/// Evenly spaced ticks: the smallest step of 1, 2 or 5 times a power of ten (a power of two
/// for binary units) that is at least an eighth of the range, so 3 to 9 ticks.
fn linear_ticks(lo: f64, hi: f64, base: Base) -> Vec<f64> {
    let wanted = (hi - lo) / 8.0;
    let (mantissa, exponent) = match base {
        Base::Decimal => {
            let e = exponents(wanted, wanted, Base::Decimal)
                .find(|&e| power(Base::Decimal, e + 1) > wanted)
                .unwrap_or(0);
            let m = [1, 2, 5, 10]
                .into_iter()
                .find(|&m| f64::from(m) * power(Base::Decimal, e) >= wanted)
                .unwrap_or(10);
            (m, e)
        }
        Base::Binary => {
            let e = exponents(wanted, wanted, Base::Binary)
                .find(|&e| power(Base::Binary, e) >= wanted)
                .unwrap_or(0);
            (1, e)
        }
    };
    let step = f64::from(mantissa) * power(base, exponent);
    #[expect(
        clippy::cast_possible_truncation,
        reason = "lo / step is below 2^53: the range is wider than a millionth of lo"
    )]
    let first = (lo / step).ceil() as i64 - 1;
    // At most 8 steps fit in the range, so 9 ticks from `first + 1` on.
    (first..first + 11)
        .map(|i| tick_at(i, mantissa, exponent, base))
        .filter(|&v| lo <= v && v <= hi)
        .collect()
}

/// `i` steps of `mantissa * base^exponent`, rounded once: `i * mantissa` is exact, and a
/// negative decimal exponent divides (`3 / 10` is the double nearest 0.3; `3 * 0.1` is not).
fn tick_at(i: i64, mantissa: i32, exponent: i32, base: Base) -> f64 {
    #[expect(
        clippy::cast_precision_loss,
        reason = "tick indices are far below 2^52"
    )]
    let count = i as f64 * f64::from(mantissa);
    match base {
        Base::Decimal if exponent < 0 => count / power(Base::Decimal, -exponent),
        _ => count * power(base, exponent),
    }
}

/// A tick value as a label: [`format::value`] without the trailing zeros its four
/// significant digits add (`2 µs`, `1.5 KiB`, `10x`), which only clutter a round tick.
#[must_use]
pub fn label(value: f64, unit: &str) -> String {
    let text = format::value(value, unit);
    let number_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(text.len());
    let (number, rest) = text.split_at(number_end);
    if !number.contains('.') || rest.starts_with('e') {
        return text;
    }
    let trimmed = number.trim_end_matches('0').trim_end_matches('.');
    format!("{trimmed}{rest}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks the invariants every tick list keeps, with `case` in the message.
    fn check(ticks: &[f64], lo: f64, hi: f64, case: &str) {
        assert!(
            (1..=MAX_TICKS).contains(&ticks.len()),
            "{case}: {} ticks {ticks:?}",
            ticks.len()
        );
        assert!(
            ticks.windows(2).all(|w| w[0] < w[1]),
            "{case}: not ascending {ticks:?}"
        );
        assert!(
            ticks.iter().all(|&t| lo <= t && t <= hi),
            "{case}: outside {lo}..{hi}: {ticks:?}"
        );
    }

    fn labels(ticks: &[f64], unit: &str) -> Vec<String> {
        ticks.iter().map(|&t| label(t, unit)).collect()
    }

    #[test]
    fn a_third_of_a_decade_is_labelled_evenly() {
        // 1 µs to 2 µs: 0.3 decades, where 1x-2x-5x gives only the ends.
        let ticks = log_ticks(1000.0, 1995.0, Base::Decimal);
        check(&ticks, 1000.0, 1995.0, "0.3 decades");
        assert_eq!(
            labels(&ticks, "ns"),
            ["1 µs", "1.2 µs", "1.4 µs", "1.6 µs", "1.8 µs"]
        );
        // The same span elsewhere in a decade, and a small one.
        let ticks = log_ticks(0.0031, 0.0062, Base::Decimal);
        check(&ticks, 0.0031, 0.0062, "0.3 decades, small");
        assert_eq!(ticks, [0.0035, 0.004, 0.0045, 0.005, 0.0055, 0.006]);
    }

    #[test]
    fn a_decade_is_labelled_at_one_two_and_five() {
        assert_eq!(log_ticks(1.0, 10.0, Base::Decimal), [1.0, 2.0, 5.0, 10.0]);
        let ticks = log_ticks(3000.0, 30_000.0, Base::Decimal);
        assert_eq!(labels(&ticks, "ns"), ["5 µs", "10 µs", "20 µs"]);
        // Just under two decades: still 1x, 2x, 5x.
        assert_eq!(
            log_ticks(1.1, 105.0, Base::Decimal),
            [2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        );
    }

    #[test]
    fn six_decades_are_labelled_at_each_decade() {
        let ticks = log_ticks(0.8, 1.2e6, Base::Decimal);
        check(&ticks, 0.8, 1.2e6, "6 decades");
        assert_eq!(ticks, [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]);
        assert_eq!(
            labels(&ticks, "ns"),
            ["1 ns", "10 ns", "100 ns", "1 µs", "10 µs", "100 µs", "1 ms"]
        );
        // Past ten decades, every second one; far past, every fifth, tenth...
        let wide = log_ticks(1e-3, 1e12, Base::Decimal);
        assert_eq!(wide, [1e-2, 1.0, 1e2, 1e4, 1e6, 1e8, 1e10, 1e12]);
        let widest = log_ticks(f64::MIN_POSITIVE, f64::MAX, Base::Decimal);
        check(&widest, f64::MIN_POSITIVE, f64::MAX, "every double");
        assert!(widest.len() >= 6, "{widest:?}");
    }

    #[test]
    fn bytes_get_powers_of_two() {
        // 1 KiB to 1 MiB: 10 octaves, every second one.
        let ticks = log_ticks(1000.0, 1.1e6, Base::Binary);
        assert_eq!(
            labels(&ticks, "bytes"),
            ["1 KiB", "4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB"]
        );
        // Within one octave: a power-of-two step.
        let ticks = log_ticks(3000.0, 4500.0, Base::Binary);
        assert_eq!(
            labels(&ticks, "bytes"),
            [
                "3 KiB", "3.25 KiB", "3.5 KiB", "3.75 KiB", "4 KiB", "4.25 KiB"
            ]
        );
        assert_eq!(Base::of_unit("bytes/s"), Base::Binary);
        assert_eq!(Base::of_unit("ns"), Base::Decimal);
        assert_eq!(Base::of_unit("elem/s"), Base::Decimal);
    }

    #[test]
    fn every_range_gets_one_to_ten_ticks() {
        for base in [Base::Decimal, Base::Binary] {
            for lo_exp in -40..=40 {
                let lo = 1.37_f64 * 10_f64.powf(f64::from(lo_exp) * 0.37);
                // Spans from 0.0001 to about 30 decades.
                for span_exp in -40..=15 {
                    let decades = 10_f64.powf(f64::from(span_exp) / 10.0);
                    let hi = lo * 10_f64.powf(decades);
                    if !hi.is_finite() {
                        continue;
                    }
                    let case = format!("{base:?} {lo:e}..{hi:e}");
                    let ticks = log_ticks(lo, hi, base);
                    check(&ticks, lo, hi, &case);
                    assert!(ticks.len() >= 2, "{case}: {ticks:?}");
                }
            }
        }
    }

    #[test]
    fn degenerate_ranges() {
        assert_eq!(log_ticks(5.0, 5.0, Base::Decimal), [5.0]);
        assert_eq!(
            log_ticks(10.0, 1.0, Base::Decimal),
            [1.0, 2.0, 5.0, 10.0],
            "reversed"
        );
        for (lo, hi) in [
            (0.0, 1.0),
            (-1.0, 1.0),
            (f64::NAN, 1.0),
            (1.0, f64::NAN),
            (1.0, f64::INFINITY),
        ] {
            assert!(log_ticks(lo, hi, Base::Decimal).is_empty(), "{lo}..{hi}");
        }
    }

    #[test]
    fn labels_drop_trailing_zeros_only() {
        assert_eq!(label(2000.0, "ns"), "2 µs");
        assert_eq!(label(1500.0, "ns"), "1.5 µs");
        assert_eq!(label(1234.0, "ns"), "1.234 µs");
        assert_eq!(label(100.0, "ns"), "100 ns");
        assert_eq!(label(10.0, "x"), "10x");
        assert_eq!(label(20_000.0, "elem/s"), "20 Kelem/s");
        assert_eq!(label(5.0, "count"), "5 count");
        assert_eq!(label(1e-9, ""), "1.000e-9");
        assert_eq!(label(-0.5, "%"), "-0.5 %");
    }
}
