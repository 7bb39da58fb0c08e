//! Layout sensitivity of a paired A/B row (pure): how far a benchmark moves between links of
//! the *same* code that differ only in function order and environment size.
//!
//! `bench-run ab --layouts K` links each side K times with a different function order
//! (`bench_runner::relink`) and runs round `r` of both sides under layout `r mod K`. Each side's
//! values fall into K groups, one per layout, and so do the rounds' paired log-ratios
//! `d_r = ln(head_r / base_r)`:
//!
//! ```text
//! m_k      = median of the side's values in the rounds of layout k           (per side, shown)
//! c_k      = median of d_r over the rounds of layout k                       (per layout)
//! spread   = max_k c_k - min_k c_k, as a percentage: exp(spread) - 1         (the row's)
//! ```
//!
//! `c_k` is the change the comparison shows under layout k. With no code change and no layout
//! effect, every `c_k` is about 0; with a code change alone, every `c_k` is about that change;
//! with layout effects, the `c_k` scatter, because each layout puts each side's hot code
//! elsewhere. The row's **layout spread** is their range: how far the layouts moved the
//! comparison. A significant change no larger than it could be the layouts' alone (some
//! layout showed little of it, or the opposite, or the layouts disagree by more than the change
//! itself), so the row is
//! **layout-sensitive**: "unchanged", with the figure, rather than a regression or an
//! improvement the code is not shown to carry (`CompareConfig::layout_strict` keeps the
//! verdict). Being made of paired ratios, `c_k` is free of drift between rounds (a load that
//! comes and goes hits both sides of a round alike); each side's `m_k` is not, and is shown
//! only to describe the layouts (their `max / min - 1` is the side's spread).

use serde::Serialize;

/// Fewest layouts with which a spread is reported.
pub const MIN_LAYOUTS: usize = 2;

/// One side's layouts: the median of each layout's rounds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideLayouts {
    /// Per layout seed (in first-round order), the median of its rounds' values.
    pub medians: Vec<(u64, f64)>,
    /// `max / min - 1` of the medians, in percent.
    pub spread_pct: f64,
}

/// The layout sensitivity of a paired row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayoutSpread {
    /// The base side's layouts.
    pub base: SideLayouts,
    /// The head side's layouts.
    pub head: SideLayouts,
    /// Per layout seed (in first-round order), the change the rounds of that layout show, in
    /// percent (`exp(c_k) - 1`).
    pub changes: Vec<(u64, f64)>,
}

impl LayoutSpread {
    /// The row's layout spread, in percent: the range of the per-layout changes, taken on the
    /// log scale (`exp(max c_k - min c_k) - 1`).
    #[must_use]
    pub fn spread_pct(&self) -> f64 {
        let logs = self.changes.iter().map(|(_, c)| (1.0 + c / 100.0).ln());
        let (min, max) = logs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), l| {
            (lo.min(l), hi.max(l))
        });
        if min.is_finite() && max.is_finite() {
            (max - min).exp_m1() * 100.0
        } else {
            0.0
        }
    }

    /// The smallest and the largest per-layout change, in percent.
    #[must_use]
    pub fn change_range(&self) -> (f64, f64) {
        self.changes
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, c)| {
                (lo.min(*c), hi.max(*c))
            })
    }

    /// Number of layouts measured.
    #[must_use]
    pub fn layouts(&self) -> usize {
        self.changes.len()
    }
}

/// The values of the rounds of layout `seed`.
fn of_layout(values: &[f64], round_layouts: &[u64], seed: u64) -> Vec<f64> {
    values
        .iter()
        .zip(round_layouts)
        .filter(|(_, s)| **s == seed)
        .map(|(v, _)| *v)
        .collect()
}

/// The per-layout medians of `values` (one per round) under `round_layouts` (the layout seed
/// of each round). `None` when the lengths differ, fewer than [`MIN_LAYOUTS`] layouts ran, or a
/// value is not positive and finite.
#[must_use]
pub fn side_layouts(values: &[f64], round_layouts: &[u64]) -> Option<SideLayouts> {
    if values.len() != round_layouts.len() || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let mut seeds: Vec<u64> = Vec::new();
    for seed in round_layouts {
        if !seeds.contains(seed) {
            seeds.push(*seed);
        }
    }
    if seeds.len() < MIN_LAYOUTS {
        return None;
    }
    let medians: Vec<(u64, f64)> = seeds
        .iter()
        .filter_map(|&seed| {
            crate::stats::median(&of_layout(values, round_layouts, seed)).map(|m| (seed, m))
        })
        .collect();
    let min = medians.iter().map(|m| m.1).fold(f64::INFINITY, f64::min);
    let max = medians.iter().map(|m| m.1).fold(0.0, f64::max);
    Some(SideLayouts {
        spread_pct: (max / min - 1.0) * 100.0,
        medians,
    })
}

/// How far one layout's own processes were apart, per layout (`max / min - 1` of its rounds, in
/// percent), as the median over the layouts: the process noise that the layout spread also
/// holds. `None` as for [`side_layouts`], or when no layout ran twice.
#[must_use]
pub fn within_layout_pct(values: &[f64], round_layouts: &[u64]) -> Option<f64> {
    side_layouts(values, round_layouts)?;
    let mut seeds: Vec<u64> = round_layouts.to_vec();
    seeds.sort_unstable();
    seeds.dedup();
    let spreads: Vec<f64> = seeds
        .iter()
        .filter_map(|&seed| {
            let group = of_layout(values, round_layouts, seed);
            let min = group.iter().copied().fold(f64::INFINITY, f64::min);
            let max = group.iter().copied().fold(0.0, f64::max);
            (group.len() >= 2).then(|| (max / min - 1.0) * 100.0)
        })
        .collect();
    crate::stats::median(&spreads)
}

/// The layout spread of a paired row: base values `x` and head values `y`, one per round,
/// under `round_layouts`.
#[must_use]
pub fn spread(x: &[f64], y: &[f64], round_layouts: &[u64]) -> Option<LayoutSpread> {
    let base = side_layouts(x, round_layouts)?;
    let head = side_layouts(y, round_layouts)?;
    if x.len() != y.len() {
        return None;
    }
    let changes = base
        .medians
        .iter()
        .filter_map(|&(seed, _)| {
            let d: Vec<f64> = x.iter().zip(y).map(|(b, h)| (h / b).ln()).collect();
            crate::stats::median(&of_layout(&d, round_layouts, seed))
                .map(|c| (seed, c.exp_m1() * 100.0))
        })
        .collect();
    Some(LayoutSpread {
        base,
        head,
        changes,
    })
}

/// One benchmark's layout sensitivity, as `bench-run calibrate --layouts` measures it: one
/// code, K links, several processes per link.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sensitivity {
    /// Benchmark full id.
    pub benchmark: String,
    /// Metric name.
    pub metric: String,
    /// Unit of the medians.
    pub unit: String,
    /// Each layout's median and their spread.
    pub layouts: SideLayouts,
    /// The process noise within one layout ([`within_layout_pct`]).
    pub within_pct: Option<f64>,
}

impl Sensitivity {
    /// Whether a change of `threshold_pct` could be the layout's alone: the spread exceeds it.
    #[must_use]
    pub fn exceeds(&self, threshold_pct: f64) -> bool {
        self.layouts.spread_pct > threshold_pct
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;

    #[test]
    fn each_layout_is_the_median_of_its_rounds() {
        // Layout 5 is 50% slower than layout 9 on this side.
        let values = [100.0, 150.0, 102.0, 148.0, 98.0, 152.0];
        let layouts = [9, 5, 9, 5, 9, 5];
        let side = side_layouts(&values, &layouts).unwrap();
        assert_eq!(side.medians, vec![(9, 100.0), (5, 150.0)]);
        assert!((side.spread_pct - 50.0).abs() < 1e-9);
    }

    #[test]
    fn one_layout_or_bad_input_has_no_spread() {
        assert!(side_layouts(&[1.0, 2.0], &[3, 3]).is_none());
        assert!(side_layouts(&[1.0, 2.0], &[3]).is_none());
        assert!(side_layouts(&[1.0, f64::NAN], &[1, 2]).is_none());
        assert!(side_layouts(&[0.0, 1.0], &[1, 2]).is_none());
    }

    #[test]
    fn the_process_noise_within_layouts_is_their_median_spread() {
        let values = [100.0, 150.0, 102.0, 153.0, 101.0, 150.0];
        let layouts = [9, 5, 9, 5, 9, 5];
        // Layout 9: 102 / 100 - 1 = 2%; layout 5: 153 / 150 - 1 = 2%.
        let within = within_layout_pct(&values, &layouts).unwrap();
        assert!((within - 2.0).abs() < 1e-9, "{within}");
        assert!(within_layout_pct(&[1.0, 2.0], &[1, 2]).is_none());
    }

    #[test]
    fn the_rows_spread_is_the_range_of_the_per_layout_changes() {
        // Layout 1: head 0% over base; layout 2: +21%; a drift that doubles both sides of the
        // third round changes nothing.
        let s = spread(&[10.0, 11.0, 20.0], &[10.0, 13.31, 40.0 * 0.5], &[1, 2, 1]).unwrap();
        // The side's own spread holds the drift: layout 1's median is (10 + 20) / 2.
        assert!(
            (s.base.spread_pct - (15.0 / 11.0 - 1.0) * 100.0).abs() < 1e-9,
            "{s:?}"
        );
        let changes: Vec<f64> = s.changes.iter().map(|c| c.1).collect();
        assert!(
            changes[0].abs() < 1e-9 && (changes[1] - 21.0).abs() < 1e-9,
            "{changes:?}"
        );
        // exp(ln(1.21) - ln(1)) - 1 = 21%.
        assert!((s.spread_pct() - 21.0).abs() < 1e-9, "{}", s.spread_pct());
        assert_eq!(s.change_range(), (changes[0], changes[1]));
        assert_eq!(s.layouts(), 2);
    }
}
