//! Layout sensitivity of a paired A/B row (pure): how far a benchmark moves between links of
//! the *same* code that differ only in function order and environment size.
//!
//! `bench-run ab --layouts K` links each side K times with a different function order
//! (`harness::relink`) and runs round `r` of both sides under layout `r mod K`. A side's
//! values then fall into K groups, one per layout; the median of each group is that layout's
//! value, and the side's **spread** is how far apart its layouts are:
//!
//! ```text
//! m_k      = median of the side's values in the rounds of layout k          (k = 1..K)
//! spread   = max_k m_k / min_k m_k - 1                                      (per side, in %)
//! layout spread of the row = max(spread of base, spread of head)
//! ```
//!
//! A change no larger than the layout spread could come from the layout alone: two links of
//! one code were that far apart. Such a row is **layout-sensitive**: its verdict is
//! "unchanged", with the figure, rather than a regression or an improvement the code is not
//! shown to carry (`CompareConfig::layout_strict` keeps the verdict instead). The spread holds
//! process noise too (each layout's median is of `rounds / K` processes), so it errs on the
//! side of not blaming the code.

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
}

impl LayoutSpread {
    /// The row's layout spread: the larger of the two sides', in percent.
    #[must_use]
    pub fn spread_pct(&self) -> f64 {
        self.base.spread_pct.max(self.head.spread_pct)
    }

    /// Number of layouts measured.
    #[must_use]
    pub fn layouts(&self) -> usize {
        self.base.medians.len()
    }
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
            let group: Vec<f64> = values
                .iter()
                .zip(round_layouts)
                .filter(|(_, s)| **s == seed)
                .map(|(v, _)| *v)
                .collect();
            crate::stats::median(&group).map(|m| (seed, m))
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
            let group: Vec<f64> = values
                .iter()
                .zip(round_layouts)
                .filter(|(_, s)| **s == seed)
                .map(|(v, _)| *v)
                .collect();
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
    Some(LayoutSpread {
        base: side_layouts(x, round_layouts)?,
        head: side_layouts(y, round_layouts)?,
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
    fn the_rows_spread_is_the_larger_sides() {
        let s = spread(&[10.0, 11.0], &[10.0, 13.0], &[1, 2]).unwrap();
        assert!((s.base.spread_pct - 10.0).abs() < 1e-9);
        assert!((s.spread_pct() - 30.0).abs() < 1e-9);
        assert_eq!(s.layouts(), 2);
    }
}
