//! How one row is judged (pure): [`assess`] finds the best evidence both sides carry (paired
//! rounds, raw samples, intervals or exact values) and the change it gives, [`finish`] applies
//! the corrected p-value and the rule, and writes the sentences behind the verdict.

use super::comparison::{Change, Evidence, Row, Verdict};
use crate::config::{CompareConfig, Correction, MIN_SAMPLES};
use crate::format::{num, pct_str};
use crate::model::{
    Direction, Estimate, History, HistoryPoint, Measurement, MetricKey, Samples, SamplingMode,
};
use crate::noise::{NoiseAnalysis, NoiseExplanation, NoiseFloor, NoiseSource};
use crate::paired;
use crate::stats::{self, MwuMethod};

/// The whole noise model of one key: floor, explanation and flags ([`crate::noise::analyse`]).
#[must_use]
pub fn noise_analysis(history: &[HistoryPoint], config: &CompareConfig) -> NoiseAnalysis {
    crate::noise::analyse(history, &config.noise_settings())
}

/// Base and head measurement of one key, with how many duplicates were dropped.
#[derive(Default)]
pub(super) struct Slot<'a> {
    pub(super) base: Option<&'a Measurement>,
    pub(super) head: Option<&'a Measurement>,
    pub(super) base_duplicates: usize,
    pub(super) head_duplicates: usize,
}

/// How the two sides' results relate.
#[derive(Clone, Copy)]
pub(super) enum Pairing<'a> {
    /// Two runs measured apart.
    None,
    /// Paired rounds, with the layout seed of each round (empty: one layout).
    Rounds(&'a [u64]),
}

/// What a paired row's evidence says before the correction.
pub(super) enum Judgement {
    /// Sample evidence: significance waits for the corrected p-value.
    Samples(stats::MannWhitney),
    /// Paired rounds: significance waits for the corrected sign-test p-value.
    Paired(f64),
    /// Interval or exact evidence: significance is known.
    Decided(bool),
    /// No verdict possible.
    None,
}

/// A row before the correction.
pub(super) struct Draft {
    key: MetricKey,
    unit: String,
    direction: Direction,
    before: Option<f64>,
    after: Option<f64>,
    change: Option<Change>,
    /// |change| in percent, infinite when the base is 0 and the head is not.
    magnitude_pct: f64,
    /// Sign of the change: -1, 0 or 1.
    sign: f64,
    pub(super) judgement: Judgement,
    evidence: Evidence,
    pub(super) p_adjusted: Option<f64>,
    noise: NoiseAnalysis,
    threshold_pct: f64,
    threshold_pattern: Option<String>,
    pub(super) ignored_by: Option<String>,
    quarantined_by: Option<String>,
    /// Evidence sentences gathered while judging.
    notes: Vec<String>,
    /// Paired rows: the rounds' log-ratios, for the calibration.
    log_ratios: Option<Vec<f64>>,
    /// Paired rows under randomized layouts: their spread.
    layout: Option<crate::layout::LayoutSpread>,
}

/// Size of a change for the limit test: the end of its interval nearest zero (0 when the
/// interval straddles zero), or the point when there is no interval.
fn conservative_magnitude(change: &Change) -> f64 {
    match (change.lower_pct, change.upper_pct) {
        (Some(lower), Some(upper)) if lower > 0.0 && upper > 0.0 => lower.min(upper),
        (Some(lower), Some(upper)) if lower < 0.0 && upper < 0.0 => (-lower).min(-upper),
        (Some(_), Some(_)) => 0.0,
        _ => change.point_pct.abs(),
    }
}

/// Per-iteration times of a measurement, logged, if it has enough usable samples.
fn log_times(m: &Measurement) -> Result<Vec<f64>, String> {
    let samples = m.samples.as_ref().ok_or_else(|| "no samples".to_owned())?;
    if samples.len() < MIN_SAMPLES {
        return Err(format!("only {} sample(s)", samples.len()));
    }
    let times = samples.per_iteration_ns();
    if times.iter().any(|t| !(t.is_finite() && *t > 0.0)) {
        return Err("a per-iteration time of 0, whose logarithm is undefined".to_owned());
    }
    Ok(times.iter().map(|t| t.ln()).collect())
}

/// The per-round values of a paired A/B result, in round order.
fn per_round_values(m: &Measurement) -> Option<&[f64]> {
    m.samples
        .as_ref()
        .filter(|s| s.mode() == SamplingMode::PerProcess)
        .map(Samples::times_ns)
}

/// Whether every value equals the first (bit for bit: deterministic counts repeat exactly).
fn is_constant(values: &[f64]) -> bool {
    values
        .first()
        .is_some_and(|first| values.iter().all(|v| v.total_cmp(first).is_eq()))
}

/// Fills a draft with the evidence of paired rounds: per-round values `x` (base) and `y` (head).
fn paired_evidence(draft: &mut Draft, x: &[f64], y: &[f64], confidence: f64) -> Result<(), String> {
    let d = paired::log_ratios(x, y)?;
    let c = paired::analyze(&d, confidence)
        .ok_or_else(|| "the rounds' log-ratios cannot be analysed".to_owned())?;
    let pct = |log_ratio: f64| log_ratio.exp_m1() * 100.0;
    // The values are the metric's own, so the change is head over base whichever way is better.
    let change = Change {
        point_pct: pct(c.log_median),
        lower_pct: Some(pct(c.log_lower)),
        upper_pct: Some(pct(c.log_upper)),
    };
    let ties = c.rounds - c.head_higher - c.head_lower;
    draft.notes.push(format!(
        "Evidence: {} paired round(s), one process per side per round in a balanced random order. The head's value was higher in {} round(s) and lower in {}{}: exact two-sided sign test p = {}.",
        c.rounds,
        c.head_higher,
        c.head_lower,
        if ties > 0 {
            format!(" ({ties} tie(s) left out)")
        } else {
            String::new()
        },
        pval(c.p_value)
    ));
    draft.notes.push(format!(
        "Change {}, {}% interval [{}, {}] (achieved coverage {:.1}%): median of the rounds' ln(head / base) = {:.5}, interval from order statistics {} and {} of {}.",
        pct_str(change.point_pct),
        num(100.0 * confidence),
        change.lower_pct.map_or_else(|| "?".to_owned(), pct_str),
        change.upper_pct.map_or_else(|| "?".to_owned(), pct_str),
        100.0 * c.coverage,
        c.log_median,
        c.k,
        c.rounds + 1 - c.k,
        c.rounds
    ));
    if c.coverage + 1e-12 < confidence {
        draft.notes.push(format!(
            "The rounds are too few for a {:.1}% interval; the whole range covers only {:.1}%.",
            100.0 * confidence,
            100.0 * c.coverage
        ));
    }
    // The median of the rounds, not the interval's end: the rounds are the replicates, and
    // significance over them already says the change is real. Requiring the whole interval
    // beyond the threshold missed most 5% slowdowns under load with 10 rounds (interval
    // +-4%; results/accuracy), while the median beyond 3% never alarmed on A/A pairs.
    draft.magnitude_pct = change.point_pct.abs();
    draft.sign = signum(change.point_pct);
    draft.change = Some(change);
    draft.evidence = Evidence::Paired {
        rounds: c.rounds,
        head_higher: c.head_higher,
        head_lower: c.head_lower,
        k: c.k,
        coverage: c.coverage,
    };
    draft.judgement = Judgement::Paired(c.p_value);
    draft.noise = NoiseAnalysis {
        floor: NoiseFloor {
            pct: 0.0,
            source: NoiseSource::Paired,
        },
        explanation: NoiseExplanation::default(),
        flags: Vec::new(),
    };
    draft.log_ratios = Some(d);
    Ok(())
}

/// The finite `[lower, upper]` of an estimate, if it has both.
fn bounds(e: &Estimate) -> Option<(f64, f64)> {
    match (e.lower, e.upper) {
        (Some(lo), Some(hi)) if lo.is_finite() && hi.is_finite() => Some((lo, hi)),
        _ => None,
    }
}

/// Relative change in percent: `(after / before - 1) * 100`; 0 when both are 0; `None` when the
/// base is 0 and the head is not.
fn relative_pct(before: f64, after: f64) -> Option<f64> {
    if before > 0.0 {
        Some((after / before - 1.0) * 100.0)
    } else if after - before == 0.0 {
        Some(0.0)
    } else {
        None
    }
}

/// Judges one key (before the correction). `None` only for an empty slot.
pub(super) fn assess(
    key: MetricKey,
    slot: &Slot<'_>,
    history: &History,
    config: &CompareConfig,
    pairing: Pairing<'_>,
) -> Option<Draft> {
    let reference = slot.head.or(slot.base)?;
    let (threshold_pct, threshold_pattern) = config.threshold_for(&key.benchmark);
    let threshold_pattern = threshold_pattern.map(str::to_owned);
    let ignored_by = config.ignored_by(&key.benchmark).map(str::to_owned);
    // Ignoring takes precedence: an ignored row is not also quarantined.
    let quarantined_by = config
        .quarantined_by(&key.benchmark)
        .filter(|_| ignored_by.is_none())
        .map(str::to_owned);
    let noise = noise_analysis(history.get(&key).map_or(&[][..], Vec::as_slice), config);
    let mut notes = Vec::new();
    if slot.base_duplicates > 0 {
        notes.push(format!(
            "The base run holds this key {} more time(s); the first occurrence was used.",
            slot.base_duplicates
        ));
    }
    if slot.head_duplicates > 0 {
        notes.push(format!(
            "The head run holds this key {} more time(s); the first occurrence was used.",
            slot.head_duplicates
        ));
    }
    let mut draft = Draft {
        key,
        unit: reference.unit.clone(),
        direction: reference.direction,
        before: slot.base.map(|m| m.estimate.point),
        after: slot.head.map(|m| m.estimate.point),
        change: None,
        magnitude_pct: 0.0,
        sign: 0.0,
        judgement: Judgement::None,
        evidence: Evidence::Unpaired,
        p_adjusted: None,
        noise,
        threshold_pct,
        threshold_pattern,
        ignored_by,
        quarantined_by,
        notes,
        log_ratios: None,
        layout: None,
    };
    let (Some(b), Some(h)) = (slot.base, slot.head) else {
        return Some(draft);
    };

    let unusable = if b.unit != h.unit {
        Some(format!(
            "units differ: base `{}`, head `{}`",
            b.unit, h.unit
        ))
    } else if b.direction != h.direction {
        Some(format!(
            "directions differ: base {}, head {}",
            direction_words(b.direction),
            direction_words(h.direction)
        ))
    } else {
        [("base", b.estimate.point), ("head", h.estimate.point)]
            .iter()
            .find(|(_, v)| !(v.is_finite() && *v >= 0.0))
            .map(|(side, v)| format!("the {side} estimate {v} is negative or not finite"))
    };
    if let Some(reason) = unusable {
        draft.notes.push(format!("Input unusable: {reason}."));
        draft.evidence = Evidence::Unusable { reason };
        return Some(draft);
    }

    let (before, after) = (b.estimate.point, h.estimate.point);
    let mut deterministic = false;
    if let (Pairing::Rounds(round_layouts), Some(x), Some(y)) =
        (pairing, per_round_values(b), per_round_values(h))
    {
        if is_constant(x) && is_constant(y) {
            deterministic = true;
            draft.notes.push(format!(
                "Every one of the {} round(s) gave the same value on each side: the metric is deterministic, so the values are compared exactly.",
                x.len().max(y.len())
            ));
        } else {
            match paired_evidence(&mut draft, x, y, config.confidence) {
                Ok(()) => {
                    draft.layout = crate::layout::spread(x, y, round_layouts);
                    if let Some(l) = &draft.layout {
                        draft.notes.push(layout_sentence(l));
                    }
                    return Some(draft);
                }
                Err(why) => draft.notes.push(format!(
                    "No paired evidence: {why}; the rows are compared unpaired."
                )),
            }
        }
    }
    match (log_times(b), log_times(h)) {
        _ if deterministic => {}
        (Ok(x), Ok(y)) => {
            if let (Some(mw), Some(shift)) = (
                stats::mann_whitney_u(&y, &x),
                stats::hodges_lehmann(&x, &y, config.confidence),
            ) {
                let pct = |log_ratio: f64| log_ratio.exp_m1() * 100.0;
                let change = match draft.direction {
                    Direction::LowerIsBetter => Change {
                        point_pct: pct(shift.estimate),
                        lower_pct: Some(pct(shift.lower)),
                        upper_pct: Some(pct(shift.upper)),
                    },
                    Direction::HigherIsBetter => Change {
                        point_pct: pct(-shift.estimate),
                        lower_pct: Some(pct(-shift.upper)),
                        upper_pct: Some(pct(-shift.lower)),
                    },
                };
                draft.notes.push(format!(
                    "Evidence: raw samples ({} base, {} head). Mann-Whitney U on ln(per-iteration time) of head against base: U = {}, z = {:.3}, two-sided p = {} ({}).",
                    x.len(),
                    y.len(),
                    num(mw.u),
                    mw.z,
                    pval(mw.p_value),
                    match mw.method {
                        MwuMethod::Exact => "exact null distribution",
                        MwuMethod::Normal => "normal approximation with tie and continuity correction",
                    }
                ));
                draft.notes.push(format!(
                    "Change {}, {}% interval [{}, {}] (achieved coverage {:.1}%): Hodges-Lehmann shift of ln(time) = {:.5}, Moses interval from the k = {} order statistic of the {} pairwise differences{}.",
                    pct_str(change.point_pct),
                    num(100.0 * config.confidence),
                    change.lower_pct.map_or_else(|| "?".to_owned(), pct_str),
                    change.upper_pct.map_or_else(|| "?".to_owned(), pct_str),
                    100.0 * shift.coverage,
                    shift.estimate,
                    shift.k,
                    x.len() * y.len(),
                    match draft.direction {
                        Direction::LowerIsBetter => "",
                        Direction::HigherIsBetter =>
                            " (higher is better: the metric is taken as proportional to 1/time, so the change is exp(-shift) - 1)",
                    }
                ));
                if shift.thinned {
                    draft.notes.push(format!(
                        "More than {} samples on a side: the change interval uses {} evenly spaced quantiles of each larger sample.",
                        stats::HL_MAX_SAMPLES,
                        stats::HL_MAX_SAMPLES
                    ));
                }
                if shift.coverage + 1e-12 < config.confidence {
                    draft.notes.push(format!(
                        "The samples are too few for a {:.1}% interval; the widest possible interval covers only {:.1}%.",
                        100.0 * config.confidence,
                        100.0 * shift.coverage
                    ));
                }
                // Compared with the limit: the end of the interval nearest zero, so a change
                // counts only when it is confidently beyond the limit (a transient stall that
                // widens the interval cannot carry the verdict on its point estimate alone).
                draft.magnitude_pct = conservative_magnitude(&change);
                draft.sign = signum(change.point_pct);
                draft.change = Some(change);
                draft.evidence = Evidence::Samples {
                    base_n: x.len(),
                    head_n: y.len(),
                    u: mw.u,
                    z: mw.z,
                    method: mw.method,
                    coverage: shift.coverage,
                };
                draft.judgement = Judgement::Samples(mw);
                return Some(draft);
            }
        }
        (base_result, head_result) => {
            // Only worth a sentence when some samples exist but could not be used.
            if b.samples.is_some() || h.samples.is_some() {
                for (side, result) in [("base", base_result), ("head", head_result)] {
                    if let Err(why) = result {
                        draft.notes.push(format!(
                            "No sample evidence: the {side} run has {why}; sample evidence needs at least {MIN_SAMPLES} usable samples on both sides."
                        ));
                    }
                }
            }
        }
    }

    // No sample evidence: intervals or exact values.
    let point = relative_pct(before, after);
    draft.sign = signum(after - before);
    draft.magnitude_pct = match point {
        Some(p) => p.abs(),
        None if draft.sign == 0.0 => 0.0,
        None => f64::INFINITY,
    };
    let (b_bounds, h_bounds) = if deterministic {
        (None, None)
    } else {
        (bounds(&b.estimate), bounds(&h.estimate))
    };
    if b_bounds.is_some() || h_bounds.is_some() {
        let (bl, bh) = b_bounds.unwrap_or((before, before));
        let (hl, hh) = h_bounds.unwrap_or((after, after));
        let overlap = hl <= bh && bl <= hh;
        draft.change = point.map(|p| Change {
            point_pct: p,
            lower_pct: relative_pct(bh, hl),
            upper_pct: relative_pct(bl, hh),
        });
        let side = |has: bool| {
            if has {
                "reported bounds"
            } else {
                "no bounds: the exact value"
            }
        };
        draft.notes.push(format!(
            "Evidence: confidence intervals, no p-value (raw samples missing on at least one side). Base [{}, {}] ({}), head [{}, {}] ({}): {}.",
            human(bl, &draft.unit),
            human(bh, &draft.unit),
            side(b_bounds.is_some()),
            human(hl, &draft.unit),
            human(hh, &draft.unit),
            side(h_bounds.is_some()),
            if overlap {
                "the intervals overlap, so the change is not significant"
            } else {
                "the intervals do not overlap, so the change is significant"
            }
        ));
        draft.evidence = Evidence::Intervals { overlap };
        draft.judgement = Judgement::Decided(!overlap);
    } else {
        let differs = draft.sign != 0.0;
        draft.change = point.map(|p| Change {
            point_pct: p,
            lower_pct: Some(p),
            upper_pct: Some(p),
        });
        draft.notes.push(format!(
            "Evidence: exact values (no samples, no bounds): {}.",
            if differs {
                "they differ, so the change is significant"
            } else {
                "they are equal, so there is no change"
            }
        ));
        draft.evidence = Evidence::Exact;
        draft.judgement = Judgement::Decided(differs);
        if draft.threshold_pattern.is_none() {
            draft.threshold_pct = config.deterministic_threshold_pct;
        }
        // A deterministic metric has no run-to-run noise to assume: without history its
        // floor is 0 and the deterministic threshold alone sets the limit.
        if matches!(draft.noise.floor.source, NoiseSource::Default { .. }) {
            draft.noise.floor.pct = 0.0;
        }
    }
    if point.is_none() && draft.sign != 0.0 {
        draft.notes.push(
            "The base value is 0: the relative change is undefined and counts as infinitely large."
                .to_owned(),
        );
    } else if let Some(c) = draft.change {
        draft.notes.push(format!(
            "Change {} = after / before - 1 of the headline estimates{}.",
            pct_str(c.point_pct),
            match (c.lower_pct, c.upper_pct, &draft.evidence) {
                (Some(lo), Some(hi), Evidence::Intervals { .. }) => format!(
                    ", interval [{}, {}] from the bounds",
                    pct_str(lo),
                    pct_str(hi)
                ),
                _ => String::new(),
            }
        ));
    }
    Some(draft)
}

/// Applies the corrected p-value and the rule; writes the reasons.
pub(super) fn finish(d: Draft, config: &CompareConfig, family_size: usize) -> Row {
    let mut reasons = Vec::with_capacity(d.notes.len() + 6);
    reasons.push(format!(
        "`{}` metric `{}` in {}: {} is better.",
        d.key.benchmark,
        d.key.metric,
        d.unit,
        direction_words(d.direction)
    ));
    reasons.push(match (d.before, d.after) {
        (Some(b), Some(a)) => format!(
            "Before {}, after {} (headline estimates).",
            human(b, &d.unit),
            human(a, &d.unit)
        ),
        (None, Some(a)) => format!("Only in head ({}): new.", human(a, &d.unit)),
        (Some(b), None) => format!("Only in base ({}): missing from head.", human(b, &d.unit)),
        (None, None) => "In neither run.".to_owned(),
    });
    reasons.extend(d.notes);

    let p_value = match &d.judgement {
        Judgement::Samples(mw) => Some(mw.p_value),
        Judgement::Paired(p) => Some(*p),
        _ => None,
    };
    let significant = match (&d.judgement, d.p_adjusted) {
        (Judgement::Samples(_) | Judgement::Paired(_), Some(p)) => p <= config.alpha,
        (Judgement::Decided(s), _) => *s,
        _ => false,
    };
    if let (Some(raw), Some(p)) = (p_value, d.p_adjusted) {
        let adjusted = match config.correction {
            Correction::None => "no correction".to_owned(),
            c => format!(
                "{} over {family_size} test(s) gives {}",
                match c {
                    Correction::Holm => "Holm's step-down correction",
                    _ => "Benjamini-Hochberg correction",
                },
                pval(p)
            ),
        };
        reasons.push(format!(
            "Significance: p = {}, {adjusted}; {} alpha = {}, so the change is {}significant.",
            pval(raw),
            if significant { "<=" } else { ">" },
            config.alpha,
            if significant { "" } else { "not " }
        ));
    }

    let limit = d.threshold_pct.max(d.noise.floor.pct);
    let paired = matches!(
        d.evidence,
        Evidence::Samples { .. }
            | Evidence::Paired { .. }
            | Evidence::Intervals { .. }
            | Evidence::Exact
    );
    if paired || d.ignored_by.is_some() {
        reasons.push(match &d.threshold_pattern {
            Some(p) => format!(
                "Threshold {:.2}% (per-benchmark pattern `{p}`).",
                d.threshold_pct
            ),
            None if matches!(d.evidence, Evidence::Exact) => format!(
                "Threshold {:.2}% (deterministic metrics: exact values).",
                d.threshold_pct
            ),
            None => format!("Threshold {:.2}% (global).", d.threshold_pct),
        });
        reasons.extend(d.noise.reasons(config.min_history));
    }

    let worse = match d.direction {
        Direction::LowerIsBetter => d.sign > 0.0,
        Direction::HigherIsBetter => d.sign < 0.0,
    };
    let better = d.sign != 0.0 && !worse;
    let exceeds = d.magnitude_pct > limit;
    let mut layout_sensitive = false;

    let verdict = if let Some(pattern) = &d.ignored_by {
        reasons.push(format!(
            "Verdict: ignored (matches ignore pattern `{pattern}`); never fails the gate."
        ));
        Verdict::Ignored
    } else {
        match (&d.evidence, d.before, d.after) {
            (Evidence::Unpaired, None, Some(_)) => {
                reasons.push("Verdict: new.".to_owned());
                Verdict::New
            }
            (Evidence::Unpaired, _, _) => {
                reasons.push("Verdict: missing.".to_owned());
                Verdict::Missing
            }
            (Evidence::Unusable { .. }, _, _) => {
                reasons.push("Verdict: unchanged (input unusable; the gate exits 2).".to_owned());
                Verdict::Unchanged
            }
            _ => {
                let size = if d.magnitude_pct.is_finite() {
                    format!("{:.2}%", d.magnitude_pct)
                } else {
                    "infinite".to_owned()
                };
                let measure = match d.evidence {
                    Evidence::Samples { .. } => "|change| at the interval end nearest 0",
                    Evidence::Paired { .. } => "|median change of the rounds|",
                    _ => "|change|",
                };
                let comparison = format!(
                    "{measure} {size} {} max(threshold {:.2}%, noise floor {:.2}%) = {:.2}%",
                    if exceeds { ">" } else { "<=" },
                    d.threshold_pct,
                    d.noise.floor.pct,
                    limit
                );
                let verdict = if significant && exceeds && worse {
                    Verdict::Regression
                } else if significant && exceeds && better {
                    Verdict::Improvement
                } else {
                    Verdict::Unchanged
                };
                let why = match verdict {
                    Verdict::Regression => format!(
                        "significant, {comparison}, and {} is worse for this metric",
                        if d.sign > 0.0 { "up" } else { "down" }
                    ),
                    Verdict::Improvement => format!(
                        "significant, {comparison}, and {} is better for this metric",
                        if d.sign > 0.0 { "up" } else { "down" }
                    ),
                    _ if !significant => "not significant".to_owned(),
                    _ if !exceeds => format!("significant but {comparison}"),
                    _ => "no change".to_owned(),
                };
                let within_layouts = d
                    .layout
                    .as_ref()
                    .map(crate::layout::LayoutSpread::spread_pct)
                    .filter(|spread| {
                        matches!(verdict, Verdict::Regression | Verdict::Improvement)
                            && d.magnitude_pct <= *spread
                    });
                match within_layouts {
                    Some(spread) if !config.layout_strict => {
                        layout_sensitive = true;
                        reasons.push(format!(
                            "Verdict: unchanged, layout-sensitive: a {verdict} by the rounds ({why}), but {size} is within the layout spread of {spread:.2}%, (under some layout the comparison showed much less of it, or the opposite), so it is not attributable to the code (--layout-strict keeps it)."
                        ));
                    }
                    Some(spread) => reasons.push(format!(
                        "The change ({size}) is within the layout spread of {spread:.2}%; --layout-strict keeps its verdict."
                    )),
                    None => {}
                }
                if layout_sensitive {
                    Verdict::Unchanged
                } else {
                    reasons.push(format!("Verdict: {verdict} ({why})."));
                    verdict
                }
            }
        }
    };
    if let Some(pattern) = &d.quarantined_by {
        reasons.push(format!(
            "Quarantined (matches quarantine pattern `{pattern}`): the verdict is shown but never fails the gate."
        ));
    }

    let calibration = d.log_ratios.as_deref().and_then(|rounds| {
        // Holm's first step is the strictest level any row of the family faces.
        #[expect(clippy::cast_precision_loss, reason = "family sizes are small")]
        let alpha = match config.correction {
            Correction::None => config.alpha,
            _ => config.alpha / family_size.max(1) as f64,
        };
        paired::calibrate(rounds, config.confidence, alpha, limit)
    });
    if let Some(c) = &calibration {
        reasons.push(format!(
            "Calibration at these settings ({} resamples of the rounds with their change taken out, judged at the strictest level alpha = {}): false alarms {:.1}% of the time with no change; {}.",
            c.resamples,
            pval(c.alpha),
            100.0 * c.false_alarm_rate,
            c.detectable_pct.map_or_else(
                || "no change up to 1000% would be caught 9 times in 10 (too few rounds for this suite)".to_owned(),
                |p| format!("a change of {p:.1}% or more is caught 9 times in 10")
            )
        ));
    }
    Row {
        benchmark: d.key.benchmark,
        metric: d.key.metric,
        unit: d.unit,
        direction: d.direction,
        before: d.before,
        after: d.after,
        change: d.change,
        p_value,
        p_adjusted: d.p_adjusted,
        significant: significant && d.ignored_by.is_none(),
        noise_floor: d.noise.floor,
        noise: d.noise.explanation,
        flags: d.noise.flags,
        quarantined_by: d.quarantined_by,
        threshold_pct: d.threshold_pct,
        threshold_pattern: d.threshold_pattern,
        verdict,
        evidence: d.evidence,
        reasons,
        calibration,
        layout: d.layout,
        layout_sensitive,
    }
}

/// What the rounds say about the layouts of one row, for `--explain`.
fn layout_sentence(l: &crate::layout::LayoutSpread) -> String {
    let side = |s: &crate::layout::SideLayouts| {
        s.medians
            .iter()
            .map(|(_, m)| num(*m))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let changes = l
        .changes
        .iter()
        .map(|(_, c)| pct_str(*c))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "Layouts: {} links per side in different function orders, the rounds rotating through them; the change under each layout [{changes}], so the layout spread (their range) is {:.2}%. Per-layout medians: base [{}] (spread {:.2}%), head [{}] (spread {:.2}%).",
        l.layouts(),
        l.spread_pct(),
        side(&l.base),
        l.base.spread_pct,
        side(&l.head),
        l.head.spread_pct
    )
}

fn signum(v: f64) -> f64 {
    if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        0.0
    }
}

fn direction_words(direction: Direction) -> &'static str {
    match direction {
        Direction::LowerIsBetter => "lower",
        Direction::HigherIsBetter => "higher",
    }
}

/// A value in its unit for reading (`14.99 µs`, `4.387 MiB`), scaled the way the report tables
/// scale it.
fn human(v: f64, unit: &str) -> String {
    bench_model::format::value(v, unit)
}

/// A p-value: four decimals, or scientific notation below 1e-4.
fn pval(p: f64) -> String {
    if p > 0.0 && p < 1e-4 {
        format!("{p:.2e}")
    } else {
        format!("{p:.4}")
    }
}
