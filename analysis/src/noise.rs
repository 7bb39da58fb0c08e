//! The noise model: how much a benchmark moves between runs when nothing changed (pure).
//!
//! The verdict of [`crate::compare`] needs every benchmark's **noise floor**, the run-to-run
//! change that is still just noise. It is learnt from the benchmark's history, and the history
//! also holds what the floor must *not* learn: real steps (a commit that made the code slower
//! or faster) and outliers (a warm-up run, a run on a busy machine). A floor learnt from all
//! consecutive changes counts a 12% step as noise and then misses every 10% regression. So the
//! floor is estimated from run-to-run changes *within* segments of constant level, after
//! trimming outliers:
//!
//! ```text
//! input     the history of one key, oldest first: points (run id, headline estimate v_i)
//! 0. valid  drop points whose v_i is not finite and > 0 (no logarithm)             [dropped]
//! 1. scale  x_i = ln v_i;  m = median |x_{i+1} - x_i| over consecutive valid points
//!           preliminary floor = 100 (exp(PRELIMINARY_FENCE_PER_MEDIAN m) - 1)      percent
//!           sigma = MAD_SCALE m / sqrt(2)           (robust per-run standard deviation, logs)
//! 2. split  L_i, R_i = medians of x over the HAMPEL_HALF_WINDOW (3) runs before / after i
//!           (one side only at the ends of the history);  y_i = the nearer of L_i, R_i when x_i
//!           is farther than OUTLIER_MADS * max(sigma, MAD_SCALE MIN_MAD) from both, else x_i
//!           change points = changepoint::detect(exp(y), preliminary floor): segments of one level
//! 3. trim   per segment (unless it is bimodal, see below), with med = median(x), MAD =
//!           median |x - med|:  drop x_i if |x_i - med| > OUTLIER_MADS * MAD_SCALE * max(MAD, MIN_MAD),
//!           the farthest first, at most max(1, floor(MAX_TRIMMED_SHARE n)) of a segment's n
//! 4. deltas delta = |v_b / v_a - 1| for consecutive kept points a, b of the same segment
//!           (never across a change point, never to a dropped point)
//! 5. fence  D = the last max_history deltas
//!           floor = 100 (Q3(D) + NOISE_FENCE_IQR_MULTIPLIER IQR(D))   if |D| >= max(min_history, 1)
//!                 = default floor ("too little history")               otherwise
//! ```
//!
//! **Why a preliminary floor.** The change-point detector needs the benchmark's noise to tell
//! a step from noise, and the floor is what is being computed. Step 1 breaks the circle with a
//! scale that a step cannot move: the *median* consecutive change (a step is one large change,
//! an outlier two, so both barely move a median of many). For Gaussian noise the consecutive
//! log-changes are `N(0, 2 sigma^2)` and their absolute values half-normal, whose quartiles and
//! median give `(Q3 + 3 IQR) / median = 3.6455 / 0.6745 = 5.40`: the preliminary floor is
//! what step 5 would give on a clean history of the same noise.
//!
//! **Why despike before splitting.** The detector compares segment *means* with a t statistic,
//! and one 30% outlier inflates the pooled variance so much that a clean 12% step beside it no
//! longer passes `MIN_T`. A Hampel-style filter (each value against the medians of its
//! neighbours, replaced when it is a spike) gives the detector a series without isolated
//! spikes. A value counts as a spike only when it is far from the runs on *both* sides, so the
//! first or last run of a level next to a step is never one (it agrees with its own side), and
//! a side's median of three runs is not moved by one outlier among them. The replaced values
//! serve only the detection: trimming, deltas and the bimodality test read the original values.
//!
//! **Why trim.** One slow warm-up run makes two large deltas; in a short history they are a
//! third of the deltas and set the fence. The modified z-score test of Iglewicz and Hoaglin
//! (`0.6745 |x - med| / MAD > 3.5`, i.e. `|x - med| > 3.5 * 1.4826 * MAD`) drops such runs
//! and keeps nearly every point of Gaussian noise (0.05% of them are beyond 3.5 sigma). The
//! MAD has a lower bound (`MIN_MAD`, 0.1% in log units) so a deterministic series whose
//! values are mostly equal (MAD = 0) does not make every other value an outlier: values within
//! `3.5 * 1.4826 * 0.1% = 0.52%` of the median are always kept.
//!
//! **Flags.** Some benchmarks cannot be gated by a single-run comparison at all; they are
//! flagged so a team can decide to quarantine them (`--quarantine`):
//!
//! - **too noisy to gate**: the history floor exceeds `NOISY_FLOOR_PCT` (10%): the gate could
//!   not see a 10% regression in it.
//! - **bimodal**: the latest segment's values form two separated clusters ([`bimodality`]):
//!   a run lands in either, so a comparison of two runs reports a change of the gap's size
//!   whenever they land in different clusters. A bimodal segment is not trimmed (its minority
//!   cluster is behaviour, not an outlier).
//!
//! Everything is deterministic and never panics: non-finite, zero and negative values are
//! dropped with a reason. Cost: the change-point detector (O(n log n) typical, O(n²) worst)
//! plus a sort per segment; `n` is the number of runs (at most [`history_runs`] for a gate).
//!
//! # Glossary
//!
//! - **segment**: a run of consecutive history points at one level, between change points.
//! - **change point**: the first run at a new level ([`crate::changepoint`]).
//! - **outlier**: a point trimmed from its segment by the MAD test of step 3.
//! - **delta**: the relative change between two consecutive kept points of one segment.
//! - **flag**: a warning that a benchmark cannot be gated reliably ([`NoiseFlag`]).

use crate::changepoint;
use crate::format::{num, pct_str};
use crate::model::{HistoryPoint, RunId};
use crate::stats;
use serde::Serialize;

/// The noise floor is `Q3 + NOISE_FENCE_IQR_MULTIPLIER * IQR` of the recent deltas (an upper
/// Tukey fence "far out"; rustc-perf uses the same).
pub const NOISE_FENCE_IQR_MULTIPLIER: f64 = 3.0;
/// The preliminary floor given to the change-point detector is this many times the median
/// absolute consecutive log-change: `(Q3 + 3 IQR) / median` of a half-normal distribution
/// (`(4 * 1.15035 - 3 * 0.31864) / 0.67449 = 5.40`), i.e. what the fence gives on clean
/// Gaussian noise of the same scale.
pub const PRELIMINARY_FENCE_PER_MEDIAN: f64 = 5.4;
/// The spike filter of step 2 compares each value with the median of this many runs before it
/// and the median of this many after it: `changepoint::MIN_SEGMENT` (3), the shortest level
/// the detector reports, so one outlier among them does not move their median.
pub const HAMPEL_HALF_WINDOW: usize = 3;
/// A value is an outlier of its segment when it lies more than this many (scaled) MADs from the
/// segment's median: the modified z-score cut-off of Iglewicz and Hoaglin (1993).
pub const OUTLIER_MADS: f64 = 3.5;
/// Consistency constant: `1.4826 * MAD` estimates the standard deviation of Gaussian data
/// (`1 / Phi^-1(3/4)`).
pub const MAD_SCALE: f64 = 1.4826;
/// Smallest MAD used, in natural-log units (0.1%): a series whose values are mostly identical
/// has a MAD of 0, and without this bound any other value would be an outlier.
pub const MIN_MAD: f64 = 1e-3;
/// Largest share of a segment trimmed as outliers (at least one point): a segment where more
/// points look like outliers is noisy, and its noise belongs in the floor.
pub const MAX_TRIMMED_SHARE: f64 = 0.25;

/// How many points of a segment of `n` may be trimmed.
fn max_trimmed(n: usize) -> usize {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "a small non-negative count"
    )]
    let share = (n as f64 * MAX_TRIMMED_SHARE).floor() as usize;
    share.max(1)
}
/// A benchmark whose history floor exceeds this (percent) is flagged "too noisy to gate": a
/// 10% regression would be inside its noise.
pub const NOISY_FLOOR_PCT: f64 = 10.0;
/// Each cluster of a bimodal segment holds at least this many runs (so a segment needs 8 to be
/// tested): the MAD of three values is too often tiny by chance.
pub const BIMODAL_MIN_RUNS: usize = 4;
/// Each cluster of a bimodal segment holds at least this share of the segment's runs (a rarer
/// cluster is a handful of outliers, which trimming handles).
pub const BIMODAL_MIN_SHARE: f64 = 0.2;
/// The gap between the two clusters must be at least this many times the larger cluster's
/// spread (`MAD_SCALE * max(MAD, MIN_MAD)`). Splitting unimodal Gaussian data at its largest
/// allowed gap gives a median ratio of 0.5 for 30 values (1.1 for 10); in simulation (4,000
/// Gaussian series each) a ratio of 4 was reached by 1.3% of series of 8 values, 0.7% of 12,
/// 0.1% of 16 and none of 30.
pub const BIMODAL_SEPARATION: f64 = 4.0;
/// The gap between the two clusters of a bimodal segment is at least this (percent), the
/// smallest step the change-point detector reports ([`changepoint::MIN_SHIFT_PCT`]).
pub const BIMODAL_MIN_GAP_PCT: f64 = changepoint::MIN_SHIFT_PCT;
/// How many entries of a list (segments, dropped runs) the sentences of [`NoiseAnalysis::reasons`]
/// name; the JSON holds them all.
const LISTED: usize = 6;

/// Runs of history to read for a floor from at most `max_history` deltas: twice as many plus
/// one, so that deltas lost to change points and trimmed outliers are made up from older runs.
#[must_use]
pub const fn history_runs(max_history: usize) -> usize {
    max_history.saturating_mul(2).saturating_add(1)
}

/// The settings of the noise model (from [`crate::compare::CompareConfig`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseSettings {
    /// Floor, in percent, when the history has fewer than `min_history` deltas.
    pub default_floor_pct: f64,
    /// Fewest deltas for a history floor.
    pub min_history: usize,
    /// Most recent deltas used.
    pub max_history: usize,
}

/// Where a noise floor came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NoiseSource {
    /// Learnt from this many recent deltas of the history.
    History {
        /// Deltas used.
        n_deltas: usize,
    },
    /// The default floor, because only `n_deltas` (fewer than the minimum) were available.
    Default {
        /// Deltas available.
        n_deltas: usize,
    },
    /// No floor (0%): a paired A/B row, whose interval comes from rounds that each ran both
    /// sides, already holds the between-process noise.
    Paired,
}

/// How much a benchmark moves between runs when nothing changed, in percent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NoiseFloor {
    /// The floor, in percent.
    pub pct: f64,
    /// Where it came from.
    pub source: NoiseSource,
}

/// A segment of the history: consecutive runs at one level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Segment {
    /// Its first run.
    pub first_run: RunId,
    /// Its last run.
    pub last_run: RunId,
    /// Valid points in it.
    pub runs: usize,
    /// Points kept after trimming outliers.
    pub kept: usize,
    /// Its level: the geometric mean of the kept values.
    pub level: f64,
    /// Whether its values form two separated clusters (then nothing in it is trimmed).
    pub bimodal: bool,
}

/// A change of level between two segments.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LevelChange {
    /// The first run at the new level.
    pub run: RunId,
    /// Index of that run in the history given to [`analyse`].
    #[serde(skip)]
    pub index: usize,
    /// Level before (of the segment before).
    pub before: f64,
    /// Level after (of the segment after).
    pub after: f64,
    /// `after / before - 1`, in percent.
    pub shift_pct: f64,
}

/// Why a point of the history was not used.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DropReason {
    /// The value is zero, negative or not finite: it has no logarithm.
    NotPositive,
    /// The value is an outlier of its segment.
    Outlier {
        /// Its distance from the segment's median, in percent of the median (signed).
        deviation_pct: f64,
        /// The largest distance kept, in percent (`OUTLIER_MADS` scaled MADs).
        limit_pct: f64,
    },
}

/// A point of the history that was not used.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Dropped {
    /// The run.
    pub run: RunId,
    /// Its value.
    pub value: f64,
    /// Why.
    pub reason: DropReason,
}

/// A run-to-run change that went into the floor.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Delta {
    /// The earlier run.
    pub from_run: RunId,
    /// The later run.
    pub to_run: RunId,
    /// `|v_to / v_from - 1|`, in percent.
    pub pct: f64,
}

/// Two separated clusters of values ([`bimodality`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bimodality {
    /// Median of the lower cluster.
    pub low: f64,
    /// Median of the upper cluster.
    pub high: f64,
    /// Values in the lower cluster.
    pub low_runs: usize,
    /// Values in the upper cluster.
    pub high_runs: usize,
    /// The empty gap between the clusters, in percent of the lower cluster's top.
    pub gap_pct: f64,
    /// The gap in units of the larger cluster's spread.
    pub separation: f64,
}

/// A reason why a benchmark cannot be gated reliably.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NoiseFlag {
    /// The history floor exceeds [`NOISY_FLOOR_PCT`].
    TooNoisy {
        /// The floor, in percent.
        floor_pct: f64,
        /// The limit it exceeds, in percent.
        limit_pct: f64,
    },
    /// The latest segment is bimodal.
    Bimodal(Bimodality),
}

impl NoiseFlag {
    /// Stable short name: `too_noisy` or `bimodal`.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        match self {
            Self::TooNoisy { .. } => "too_noisy",
            Self::Bimodal(_) => "bimodal",
        }
    }

    /// The flag in words, e.g. `too noisy to gate (noise floor 23.40% > 10.00%)`.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::TooNoisy {
                floor_pct,
                limit_pct,
            } => format!("too noisy to gate (noise floor {floor_pct:.2}% > {limit_pct:.2}%)"),
            Self::Bimodal(b) => format!(
                "bimodal (the latest runs form two clusters: {} near {} and {} near {}, gap {:.2}% = {:.1}x their spread)",
                b.low_runs,
                num(b.low),
                b.high_runs,
                num(b.high),
                b.gap_pct,
                b.separation
            ),
        }
    }
}

/// How the floor was obtained: the input of `--explain` and of `--format json`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct NoiseExplanation {
    /// Points in the history given (valid or not).
    pub runs: usize,
    /// The runs whose values entered the deltas used, ascending.
    pub runs_used: Vec<RunId>,
    /// The floor given to the change-point detector, in percent.
    pub preliminary_floor_pct: f64,
    /// The segments, oldest first.
    pub segments: Vec<Segment>,
    /// The changes of level between them.
    pub change_points: Vec<LevelChange>,
    /// Points not used, in history order.
    pub dropped: Vec<Dropped>,
    /// The deltas the floor was computed from (the last `max_history`), oldest first.
    pub deltas: Vec<Delta>,
}

/// The noise model's answer for one key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoiseAnalysis {
    /// The floor.
    pub floor: NoiseFloor,
    /// How it was obtained.
    pub explanation: NoiseExplanation,
    /// Why the key cannot be gated reliably, if it cannot.
    pub flags: Vec<NoiseFlag>,
}

/// A valid point: its index in the input, run, value and logarithm.
#[derive(Debug, Clone, Copy)]
struct Valid {
    index: usize,
    run: RunId,
    value: f64,
    log: f64,
}

/// The preliminary floor, in percent, of positive finite `values` (in history order):
/// `100 (exp(PRELIMINARY_FENCE_PER_MEDIAN m) - 1)` with `m` the median absolute change of
/// `ln v` between consecutive values; 0 for fewer than two values. Values that are not
/// positive and finite are skipped.
#[must_use]
pub fn preliminary_floor_pct(values: &[f64]) -> f64 {
    let logs: Vec<f64> = values
        .iter()
        .filter(|v| v.is_finite() && **v > 0.0)
        .map(|v| v.ln())
        .collect();
    preliminary_from_logs(&logs)
}

fn preliminary_from_logs(logs: &[f64]) -> f64 {
    100.0 * (PRELIMINARY_FENCE_PER_MEDIAN * median_abs_change(logs)).exp_m1()
}

/// The spike filter of step 2: `logs` with every spike replaced by the nearer of its two
/// neighbouring medians.
fn despike(logs: &[f64]) -> Vec<f64> {
    let m = median_abs_change(logs);
    let sigma = MAD_SCALE * m / std::f64::consts::SQRT_2;
    let limit = OUTLIER_MADS * sigma.max(MAD_SCALE * MIN_MAD);
    logs.iter()
        .enumerate()
        .map(|(i, &x)| {
            let end = (i + 1 + HAMPEL_HALF_WINDOW).min(logs.len());
            let sides = [
                logs.get(i.saturating_sub(HAMPEL_HALF_WINDOW)..i),
                logs.get(i + 1..end),
            ]
            .map(|side| side.and_then(stats::median));
            let far = sides
                .iter()
                .all(|side| side.is_none_or(|med| (x - med).abs() > limit));
            let nearest = sides
                .iter()
                .flatten()
                .copied()
                .min_by(|a, b| (x - a).abs().total_cmp(&(x - b).abs()));
            match nearest {
                Some(med) if far => med,
                _ => x,
            }
        })
        .collect()
}

/// Median absolute change between consecutive `logs`; 0 for fewer than two.
fn median_abs_change(logs: &[f64]) -> f64 {
    let changes: Vec<f64> = logs
        .windows(2)
        .map(|w| match *w {
            [a, b] => (b - a).abs(),
            _ => 0.0,
        })
        .collect();
    stats::median(&changes).unwrap_or(0.0)
}

/// Median and MAD of `x` (`None` when empty or not finite).
fn median_mad(x: &[f64]) -> Option<(f64, f64)> {
    let med = stats::median(x)?;
    let deviations: Vec<f64> = x.iter().map(|v| (v - med).abs()).collect();
    Some((med, stats::median(&deviations)?))
}

/// The spread of a cluster of logs for the bimodality test: `MAD_SCALE * max(MAD, MIN_MAD)`.
fn spread(x: &[f64]) -> Option<f64> {
    median_mad(x).map(|(_, mad)| MAD_SCALE * mad.max(MIN_MAD))
}

/// Whether positive finite `values` form two separated clusters, and which.
///
/// ```text
/// s        = ln(values), sorted;  n = |s|;  c = max(BIMODAL_MIN_RUNS, ceil(BIMODAL_MIN_SHARE n))
/// split    at the largest gap s[i] - s[i-1] with c <= i <= n - c (each cluster >= c values)
/// spread   of a cluster = MAD_SCALE * max(MAD, MIN_MAD)   (robust standard deviation, logs)
/// bimodal  iff gap >= BIMODAL_SEPARATION * max(spread(low), spread(high))
///          and  exp(gap) - 1 >= BIMODAL_MIN_GAP_PCT / 100
/// ```
///
/// The test asks for an *empty* interval between two substantial clusters that is wide
/// compared with the clusters themselves: unimodal noise has its largest central gap well
/// below its spread, a few outliers make no cluster of 20%, and a step in time is a change
/// point, not bimodality (the noise model tests each segment separately). `None` for fewer than
/// `2 c` values or any value that is not positive and finite.
#[must_use]
pub fn bimodality(values: &[f64]) -> Option<Bimodality> {
    if values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let mut s: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    s.sort_unstable_by(f64::total_cmp);
    let n = s.len();
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "run counts are far below 2^52; the product is in [0, n]"
    )]
    let share = (BIMODAL_MIN_SHARE * n as f64).ceil() as usize;
    let c = BIMODAL_MIN_RUNS.max(share);
    if n < 2 * c {
        return None;
    }
    let mut best: Option<(usize, f64)> = None;
    for i in c..=n - c {
        let gap = s.get(i)? - s.get(i - 1)?;
        if best.is_none_or(|(_, g)| gap > g) {
            best = Some((i, gap));
        }
    }
    let (i, gap) = best?;
    let (low, high) = s.split_at(i);
    let width = spread(low)?.max(spread(high)?);
    let separation = gap / width;
    let gap_pct = 100.0 * gap.exp_m1();
    (separation >= BIMODAL_SEPARATION && gap_pct >= BIMODAL_MIN_GAP_PCT).then(|| Bimodality {
        low: stats::median(low).map_or(f64::NAN, f64::exp),
        high: stats::median(high).map_or(f64::NAN, f64::exp),
        low_runs: low.len(),
        high_runs: high.len(),
        gap_pct,
        separation,
    })
}

/// The noise model of one key: its floor, how it was obtained, and its flags. `points` are the
/// key's history, oldest first. See the module docs for the method.
#[must_use]
pub fn analyse(points: &[HistoryPoint], settings: &NoiseSettings) -> NoiseAnalysis {
    let mut explanation = NoiseExplanation {
        runs: points.len(),
        ..NoiseExplanation::default()
    };
    let mut dropped: Vec<(usize, Dropped)> = Vec::new();
    let mut valid: Vec<Valid> = Vec::with_capacity(points.len());
    for (index, p) in points.iter().enumerate() {
        if p.value.is_finite() && p.value > 0.0 {
            valid.push(Valid {
                index,
                run: p.run,
                value: p.value,
                log: p.value.ln(),
            });
        } else {
            dropped.push((
                index,
                Dropped {
                    run: p.run,
                    value: p.value,
                    reason: DropReason::NotPositive,
                },
            ));
        }
    }

    // 1-2. A preliminary scale, then the segments.
    let logs: Vec<f64> = valid.iter().map(|v| v.log).collect();
    let despiked: Vec<f64> = despike(&logs).iter().map(|y| y.exp()).collect();
    // An infinite preliminary floor (values spanning hundreds of orders of magnitude) would
    // read as "no floor" to the detector: the largest finite one means "no step is large enough".
    explanation.preliminary_floor_pct = preliminary_from_logs(&logs).min(f64::MAX);
    let cuts: Vec<usize> = changepoint::detect(&despiked, explanation.preliminary_floor_pct)
        .iter()
        .map(|c| c.index)
        .collect();
    let mut bounds = Vec::with_capacity(cuts.len() + 2);
    bounds.push(0);
    bounds.extend(cuts);
    bounds.push(valid.len());

    // 3-4. Per segment: trim, then the deltas between consecutive kept points.
    let mut deltas: Vec<Delta> = Vec::new();
    let mut latest_bimodality = None;
    for window in bounds.windows(2) {
        let (a, b) = match *window {
            [a, b] if a < b => (a, b),
            _ => continue,
        };
        let Some(points) = valid.get(a..b) else {
            continue;
        };
        let seg_values: Vec<f64> = points.iter().map(|p| p.value).collect();
        let seg_logs: Vec<f64> = points.iter().map(|p| p.log).collect();
        let bimodal = bimodality(&seg_values);
        let kept: Vec<Valid> = match (bimodal, median_mad(&seg_logs)) {
            (None, Some((med, mad))) => {
                let limit = OUTLIER_MADS * MAD_SCALE * mad.max(MIN_MAD);
                // The most extreme points beyond the limit, at most a quarter of the segment:
                // when more look like outliers, the segment is noisy, not spiked.
                let mut beyond: Vec<&Valid> = points
                    .iter()
                    .filter(|p| (p.log - med).abs() > limit)
                    .collect();
                beyond.sort_by(|x, y| (y.log - med).abs().total_cmp(&(x.log - med).abs()));
                beyond.truncate(max_trimmed(points.len()));
                let mut kept = Vec::with_capacity(points.len());
                for p in points {
                    if beyond.iter().any(|b| b.index == p.index) {
                        dropped.push((
                            p.index,
                            Dropped {
                                run: p.run,
                                value: p.value,
                                reason: DropReason::Outlier {
                                    deviation_pct: 100.0 * (p.log - med).exp_m1(),
                                    limit_pct: 100.0 * limit.exp_m1(),
                                },
                            },
                        ));
                    } else {
                        kept.push(*p);
                    }
                }
                kept
            }
            _ => points.to_vec(),
        };
        for pair in kept.windows(2) {
            if let [x, y] = *pair {
                deltas.push(Delta {
                    from_run: x.run,
                    to_run: y.run,
                    pct: 100.0 * (y.value / x.value - 1.0).abs(),
                });
            }
        }
        #[expect(clippy::cast_precision_loss, reason = "run counts are far below 2^52")]
        let level = (kept.iter().map(|p| p.log).sum::<f64>() / kept.len() as f64).exp();
        explanation.segments.push(Segment {
            first_run: points.first().map_or(0, |p| p.run),
            last_run: points.last().map_or(0, |p| p.run),
            runs: points.len(),
            kept: kept.len(),
            level,
            bimodal: bimodal.is_some(),
        });
        latest_bimodality = bimodal;
    }
    for (i, pair) in explanation.segments.windows(2).enumerate() {
        let (Some(before), Some(after)) = (pair.first(), pair.last()) else {
            continue;
        };
        let index = bounds
            .get(i + 1)
            .and_then(|&k| valid.get(k))
            .map_or(0, |v| v.index);
        explanation.change_points.push(LevelChange {
            run: after.first_run,
            index,
            before: before.level,
            after: after.level,
            shift_pct: 100.0 * (after.level / before.level - 1.0),
        });
    }
    dropped.sort_by_key(|(index, _)| *index);
    explanation.dropped = dropped.into_iter().map(|(_, d)| d).collect();

    // 5. The fence over the most recent deltas.
    let recent = deltas
        .get(deltas.len().saturating_sub(settings.max_history)..)
        .unwrap_or_default()
        .to_vec();
    let pcts: Vec<f64> = recent.iter().map(|d| d.pct).collect();
    let floor = match stats::quartiles(&pcts) {
        Some(q) if pcts.len() >= settings.min_history.max(1) => NoiseFloor {
            pct: q.q3 + NOISE_FENCE_IQR_MULTIPLIER * q.iqr(),
            source: NoiseSource::History {
                n_deltas: pcts.len(),
            },
        },
        _ => NoiseFloor {
            pct: settings.default_floor_pct,
            source: NoiseSource::Default {
                n_deltas: pcts.len(),
            },
        },
    };
    let mut runs_used: Vec<RunId> = recent.iter().flat_map(|d| [d.from_run, d.to_run]).collect();
    runs_used.sort_unstable();
    runs_used.dedup();
    explanation.runs_used = runs_used;
    explanation.deltas = recent;

    let mut flags = Vec::new();
    if matches!(floor.source, NoiseSource::History { .. }) && floor.pct > NOISY_FLOOR_PCT {
        flags.push(NoiseFlag::TooNoisy {
            floor_pct: floor.pct,
            limit_pct: NOISY_FLOOR_PCT,
        });
    }
    if let Some(b) = latest_bimodality {
        flags.push(NoiseFlag::Bimodal(b));
    }
    NoiseAnalysis {
        floor,
        explanation,
        flags,
    }
}

impl NoiseAnalysis {
    /// The floor, its source and how it was obtained, as sentences for `--explain`: the floor,
    /// the history's segments and change points, the dropped runs, and the flags. `min_history`
    /// is the number of deltas a history floor needs.
    #[must_use]
    pub fn reasons(&self, min_history: usize) -> Vec<String> {
        let e = &self.explanation;
        let mut out = Vec::new();
        let span = match (e.runs_used.first(), e.runs_used.last()) {
            (Some(first), Some(last)) => format!(" (runs #{first} to #{last})"),
            _ => String::new(),
        };
        out.push(match self.floor.source {
            NoiseSource::History { n_deltas } => format!(
                "Noise floor {:.2}% = Q3 + {NOISE_FENCE_IQR_MULTIPLIER} IQR of the last {n_deltas} run-to-run changes within segments of the history{span}.",
                self.floor.pct
            ),
            NoiseSource::Default { n_deltas } => format!(
                "Noise floor {:.2}% (default: too little history, {n_deltas} usable run-to-run change(s), {} needed).",
                self.floor.pct,
                min_history.max(1)
            ),
            NoiseSource::Paired => "No noise floor: the rounds ran both sides, so their interval already holds the between-process noise.".to_owned(),
        });
        if e.runs == 0 {
            return out;
        }
        let segments = e
            .segments
            .iter()
            .rev()
            .take(LISTED)
            .rev()
            .map(|s| {
                format!(
                    "#{}-#{} at {} ({} run(s){}{})",
                    s.first_run,
                    s.last_run,
                    num(s.level),
                    s.runs,
                    if s.kept < s.runs {
                        format!(", {} kept", s.kept)
                    } else {
                        String::new()
                    },
                    if s.bimodal { ", bimodal" } else { "" }
                )
            })
            .collect::<Vec<_>>();
        let earlier = e.segments.len().saturating_sub(LISTED);
        let mut history = format!(
            "History: {} run(s), {} segment(s): {}{}",
            e.runs,
            e.segments.len(),
            if earlier > 0 {
                format!("{earlier} earlier, then ")
            } else {
                String::new()
            },
            segments.join("; ")
        );
        if e.change_points.is_empty() {
            history.push_str(&format!(
                "; no change point (preliminary floor {:.2}%).",
                e.preliminary_floor_pct
            ));
        } else {
            let changes: Vec<String> = e
                .change_points
                .iter()
                .rev()
                .take(LISTED)
                .rev()
                .map(|c| format!("#{} ({})", c.run, pct_str(c.shift_pct)))
                .collect();
            history.push_str(&format!(
                "; change point(s) at {} (found with a preliminary floor of {:.2}%); no change across a change point counts as noise.",
                changes.join(", "),
                e.preliminary_floor_pct
            ));
        }
        out.push(history);
        if !e.dropped.is_empty() {
            let listed: Vec<String> = e
                .dropped
                .iter()
                .rev()
                .take(LISTED)
                .rev()
                .map(|d| match d.reason {
                    DropReason::NotPositive => {
                        format!(
                            "#{} = {} (not a positive finite value)",
                            d.run,
                            num(d.value)
                        )
                    }
                    DropReason::Outlier {
                        deviation_pct,
                        limit_pct,
                    } => format!(
                        "#{} = {} (outlier: {} from its segment's median, more than {:.2}%)",
                        d.run,
                        num(d.value),
                        pct_str(deviation_pct),
                        limit_pct
                    ),
                })
                .collect();
            let earlier = e.dropped.len().saturating_sub(LISTED);
            out.push(format!(
                "Dropped {} run(s): {}{}.",
                e.dropped.len(),
                if earlier > 0 {
                    format!("{earlier} earlier, then ")
                } else {
                    String::new()
                },
                listed.join("; ")
            ));
        }
        for flag in &self.flags {
            out.push(format!("Flag: {}.", flag.describe()));
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]
mod tests {
    use super::*;

    const SETTINGS: NoiseSettings = NoiseSettings {
        default_floor_pct: 2.0,
        min_history: 5,
        max_history: 30,
    };

    /// Deterministic pseudo-Gaussian noise: SplitMix64 uniforms, summed in fours (Irwin-Hall,
    /// variance 4/12), scaled to a standard deviation of `sd` (relative).
    struct Noise(u64);

    impl Noise {
        fn uniform(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64
        }

        fn gauss(&mut self) -> f64 {
            let sum: f64 = (0..4).map(|_| self.uniform()).sum();
            (sum - 2.0) / (4.0f64 / 12.0).sqrt()
        }

        fn series(&mut self, level: f64, n: usize, sd: f64) -> Vec<f64> {
            (0..n).map(|_| level * (1.0 + sd * self.gauss())).collect()
        }
    }

    /// Points with run ids 1, 2, ...
    fn points(values: &[f64]) -> Vec<HistoryPoint> {
        values
            .iter()
            .zip(1..)
            .map(|(&v, run)| HistoryPoint::new(run, v))
            .collect()
    }

    fn analyse_values(values: &[f64]) -> NoiseAnalysis {
        analyse(&points(values), &SETTINGS)
    }

    fn history_floor(a: &NoiseAnalysis) -> f64 {
        assert!(
            matches!(a.floor.source, NoiseSource::History { .. }),
            "{a:#?}"
        );
        a.floor.pct
    }

    /// About 1% run-to-run noise: a standard deviation of 0.4%, so values stay within about
    /// +-1% and the fence of Gaussian noise is `5.155 * 0.4% = 2.1%`.
    const SD: f64 = 0.004;

    #[test]
    fn quiet_series() {
        let v = Noise(1).series(100.0, 40, SD);
        let a = analyse_values(&v);
        let floor = history_floor(&a);
        assert!((1.0..4.0).contains(&floor), "{floor}");
        assert_eq!(a.explanation.segments.len(), 1, "{a:#?}");
        assert!(a.explanation.change_points.is_empty());
        assert!(a.flags.is_empty(), "{:?}", a.flags);
        assert_eq!(
            a.explanation.deltas.len(),
            30,
            "the last max_history deltas"
        );
        assert_eq!(a.explanation.runs, 40);
        // The runs behind the last 30 deltas: #10 to #40 (none dropped).
        assert_eq!(a.explanation.runs_used.first(), Some(&10));
        assert_eq!(a.explanation.runs_used.last(), Some(&40));
    }

    #[test]
    fn a_real_step_is_not_noise() {
        let mut noise = Noise(2);
        let quiet = history_floor(&analyse_values(&noise.series(100.0, 40, SD)));
        let mut v = noise.series(100.0, 20, SD);
        v.extend(noise.series(112.0, 20, SD));
        let a = analyse_values(&v);
        let floor = history_floor(&a);
        assert!(
            floor < 3.0,
            "floor {floor} with a 12% step (quiet: {quiet})"
        );
        assert!((floor - quiet).abs() < 1.0, "{floor} vs {quiet}");
        let cps = &a.explanation.change_points;
        assert_eq!(cps.len(), 1, "{a:#?}");
        assert_eq!(cps[0].run, 21);
        assert_eq!(cps[0].index, 20);
        assert!((cps[0].shift_pct - 12.0).abs() < 1.0, "{cps:?}");
        assert!(
            a.explanation
                .deltas
                .iter()
                .all(|d| !(d.from_run == 20 && d.to_run == 21)),
            "no delta across the change point"
        );
        assert_eq!(a.explanation.segments[1].first_run, 21);
        assert_eq!(a.explanation.segments[1].last_run, 40);
    }

    #[test]
    fn a_step_beside_an_outlier_in_a_short_history() {
        // A warm-up-like outlier (#4) and a real 12% step (#7) in ten runs. Every consecutive
        // change gives a fence of 47%; the outlier alone hides the step from the detector's t
        // test, unless it is despiked first.
        let v: [f64; 10] = [
            100.0, 100.3, 99.8, 130.0, 100.2, 99.9, 112.0, 112.4, 111.8, 112.2,
        ];
        let naive: Vec<f64> = v
            .windows(2)
            .map(|w| 100.0 * (w[1] / w[0] - 1.0).abs())
            .collect();
        let q = stats::quartiles(&naive).unwrap();
        assert!(q.q3 + 3.0 * q.iqr() > 40.0);
        assert!(changepoint::detect(&v, preliminary_floor_pct(&v)).is_empty());

        let a = analyse_values(&v);
        let runs: Vec<RunId> = a.explanation.change_points.iter().map(|c| c.run).collect();
        assert_eq!(runs, [7], "{a:#?}");
        let dropped: Vec<RunId> = a.explanation.dropped.iter().map(|d| d.run).collect();
        assert_eq!(dropped, [4]);
        // 4 deltas in the first segment (#1-#3, #5, #6), 3 in the second.
        assert_eq!(a.floor.source, NoiseSource::History { n_deltas: 7 });
        assert!(a.floor.pct < 1.5, "{a:#?}");
    }

    #[test]
    fn a_warm_up_outlier_is_trimmed() {
        let mut v = Noise(3).series(100.0, 30, SD);
        v[2] *= 1.3;
        let a = analyse_values(&v);
        let floor = history_floor(&a);
        assert!(floor < 3.0, "{floor}");
        assert_eq!(a.explanation.dropped.len(), 1, "{a:#?}");
        let d = a.explanation.dropped[0];
        assert_eq!(d.run, 3);
        assert!(
            matches!(d.reason, DropReason::Outlier { deviation_pct, .. } if deviation_pct > 25.0),
            "{d:?}"
        );
        // The deltas skip the outlier: #2 -> #4.
        assert!(
            a.explanation
                .deltas
                .iter()
                .any(|d| d.from_run == 2 && d.to_run == 4)
        );
        assert!(
            a.explanation
                .deltas
                .iter()
                .all(|d| d.to_run != 3 && d.from_run != 3)
        );

        // The same outlier in a short history (5 runs): still trimmed, and too little history
        // is said plainly.
        let short = analyse_values(&v[..5]);
        assert_eq!(short.floor.source, NoiseSource::Default { n_deltas: 3 });
        assert!((short.floor.pct - 2.0).abs() < 1e-12);
        assert_eq!(short.explanation.dropped.len(), 1);
    }

    #[test]
    fn two_steps() {
        let mut noise = Noise(4);
        let mut v = noise.series(100.0, 15, SD);
        v.extend(noise.series(115.0, 15, SD));
        v.extend(noise.series(95.0, 15, SD));
        let a = analyse_values(&v);
        let floor = history_floor(&a);
        assert!(floor < 3.0, "{floor}");
        let runs: Vec<RunId> = a.explanation.change_points.iter().map(|c| c.run).collect();
        assert_eq!(runs, [16, 31], "{a:#?}");
        assert_eq!(a.explanation.segments.len(), 3);
        assert!(a.flags.is_empty(), "{:?}", a.flags);
    }

    #[test]
    fn a_deterministic_series() {
        let a = analyse_values(&[1000.0; 20]);
        assert_eq!(a.floor.pct, 0.0);
        assert_eq!(a.floor.source, NoiseSource::History { n_deltas: 19 });
        assert!(a.explanation.dropped.is_empty());
        // Rare tiny wiggles (0.1%) are kept; a 1% blip is an outlier; a 2% step is a change point.
        let mut v = vec![1000.0; 12];
        v[3] = 1001.0;
        v[7] = 1010.0;
        v.extend([1020.0; 12]);
        let a = analyse_values(&v);
        assert_eq!(a.explanation.change_points.len(), 1, "{a:#?}");
        assert_eq!(a.explanation.change_points[0].run, 13);
        assert_eq!(a.explanation.dropped.len(), 1);
        assert_eq!(a.explanation.dropped[0].run, 8);
        let floor = history_floor(&a);
        assert!(floor.is_finite() && floor < 0.2, "{floor}");
    }

    #[test]
    fn too_little_history_says_so() {
        let a = analyse_values(&[100.0, 101.0, 99.0]);
        assert_eq!(a.floor.source, NoiseSource::Default { n_deltas: 2 });
        assert_eq!(a.floor.pct, 2.0);
        let reasons = a.reasons(5);
        assert!(
            reasons[0].contains("too little history") && reasons[0].contains("5 needed"),
            "{reasons:?}"
        );
        let empty = analyse(&[], &SETTINGS);
        assert_eq!(empty.floor.source, NoiseSource::Default { n_deltas: 0 });
        assert_eq!(empty.reasons(5).len(), 1);
    }

    #[test]
    fn unusable_values_never_panic() {
        let v = [
            0.0,
            -5.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            100.0,
            101.0,
            f64::MIN_POSITIVE,
            99.0,
            f64::MAX,
            100.0,
            100.5,
            99.5,
            100.2,
        ];
        let a = analyse_values(&v);
        assert!(a.floor.pct.is_finite(), "{a:#?}");
        let not_positive = a
            .explanation
            .dropped
            .iter()
            .filter(|d| d.reason == DropReason::NotPositive)
            .count();
        assert_eq!(not_positive, 5);
        // The extreme (but valid) values are outliers of their segment.
        assert!(a.explanation.dropped.iter().any(|d| d.run == 8));
        assert!(a.explanation.dropped.iter().any(|d| d.run == 10));
        assert!(!a.reasons(5).is_empty());
        for v in [&[f64::NAN; 8][..], &[0.0; 8], &[-1.0; 3], &[f64::MAX; 10]] {
            let a = analyse_values(v);
            assert!(a.floor.pct.is_finite(), "{v:?}: {a:#?}");
        }
        assert_eq!(preliminary_floor_pct(&[f64::NAN, 0.0]), 0.0);
        assert!(bimodality(&[f64::NAN; 10]).is_none());
    }

    #[test]
    fn flags_a_noisy_benchmark() {
        let v = Noise(5).series(100.0, 40, 0.05);
        let a = analyse_values(&v);
        assert!(history_floor(&a) > NOISY_FLOOR_PCT);
        assert!(
            matches!(a.flags.as_slice(), [NoiseFlag::TooNoisy { .. }]),
            "{:?}",
            a.flags
        );
        assert!(a.reasons(5).iter().any(|r| r.contains("too noisy to gate")));
    }

    #[test]
    fn flags_a_bimodal_benchmark_and_keeps_its_clusters() {
        // 30% of the runs land 15% higher, in no particular order.
        let mut noise = Noise(6);
        let v: Vec<f64> = (0..30)
            .map(|i| {
                let level = if i % 10 == 1 || i % 10 == 4 || i % 10 == 8 {
                    115.0
                } else {
                    100.0
                };
                level * (1.0 + 0.005 * noise.gauss())
            })
            .collect();
        let b = bimodality(&v).expect("bimodal");
        assert_eq!((b.low_runs, b.high_runs), (21, 9));
        assert!((b.high / b.low - 1.15).abs() < 0.02, "{b:?}");
        let a = analyse_values(&v);
        assert!(
            a.flags.iter().any(|f| matches!(f, NoiseFlag::Bimodal(_))),
            "{a:#?}"
        );
        assert!(
            a.explanation.dropped.is_empty(),
            "clusters are not outliers"
        );
        assert!(a.explanation.segments.iter().all(|s| s.bimodal));
        assert!(a.floor.pct > 15.0, "the floor sees both clusters");

        // Unimodal noise, uniform noise, a few outliers, and a deterministic series are not.
        let mut noise = Noise(7);
        for seed in 0..20 {
            let v = Noise(seed).series(100.0, 30, 0.02);
            assert!(bimodality(&v).is_none(), "Gaussian, seed {seed}");
        }
        let uniform: Vec<f64> = (0..30).map(|_| 100.0 + 4.0 * noise.uniform()).collect();
        assert!(bimodality(&uniform).is_none());
        let mut outliers = noise.series(100.0, 30, SD);
        outliers[3] = 140.0;
        outliers[17] = 135.0;
        assert!(bimodality(&outliers).is_none());
        assert!(bimodality(&[1000.0; 30]).is_none());
        assert!(bimodality(&[1.0, 2.0, 1.0, 2.0, 1.0]).is_none(), "too few");
    }

    #[test]
    fn only_the_latest_segment_counts_for_the_bimodal_flag() {
        let mut noise = Noise(8);
        let mut v: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 100.0 } else { 104.0 } * (1.0 + 0.0005 * noise.gauss()))
            .collect();
        v.extend(noise.series(60.0, 20, SD));
        let a = analyse_values(&v);
        assert_eq!(a.explanation.segments.len(), 2, "{a:#?}");
        assert!(a.explanation.segments[0].bimodal);
        assert!(!a.explanation.segments[1].bimodal);
        assert!(!a.flags.iter().any(|f| matches!(f, NoiseFlag::Bimodal(_))));
    }

    #[test]
    fn reasons_name_segments_change_points_and_dropped_runs() {
        let mut noise = Noise(9);
        let mut v = noise.series(100.0, 15, SD);
        v[4] = 140.0;
        v.extend(noise.series(112.0, 15, SD));
        let a = analyse_values(&v);
        let text = a.reasons(5).join("\n");
        assert!(text.contains("Noise floor"), "{text}");
        assert!(text.contains("2 segment(s): #1-#15"), "{text}");
        assert!(text.contains("change point(s) at #16 (+1"), "{text}");
        assert!(
            text.contains("Dropped 1 run(s): #5 = 140 (outlier"),
            "{text}"
        );
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["explanation"]["dropped"][0]["run"], 5);
        assert_eq!(
            json["explanation"]["dropped"][0]["reason"]["kind"],
            "outlier"
        );
        assert_eq!(json["explanation"]["change_points"][0]["run"], 16);
        assert_eq!(json["floor"]["source"]["kind"], "history");
    }

    #[test]
    fn history_runs_leave_room() {
        assert_eq!(history_runs(30), 61);
        assert_eq!(history_runs(usize::MAX), usize::MAX);
    }

    #[test]
    fn preliminary_floor_matches_the_fence_on_gaussian_noise() {
        // On long Gaussian noise the preliminary floor and the fence agree within sampling error.
        let v = Noise(10).series(100.0, 2000, 0.01);
        let pre = preliminary_floor_pct(&v);
        let settings = NoiseSettings {
            max_history: 5000,
            ..SETTINGS
        };
        let fence = analyse(&points(&v), &settings).floor.pct;
        assert!((pre / fence - 1.0).abs() < 0.15, "{pre} vs {fence}");
    }
}
