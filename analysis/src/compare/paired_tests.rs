//! [`compare_paired`] on per-round results (moved here from paired.rs, which the comparison
//! imports).

#![allow(clippy::unwrap_used, clippy::float_cmp)]

use crate::compare::{CompareConfig, Evidence, NoiseSource, Verdict, compare_paired};
use crate::model::{BenchmarkId, Direction, Estimate, Measurement, Samples, SamplingMode};
use std::collections::BTreeMap;

fn rounds(benchmark: &str, metric: &str, direction: Direction, values: &[f64]) -> Measurement {
    Measurement {
        benchmark: BenchmarkId::named(benchmark),
        metric: metric.to_owned(),
        unit: "ns".to_owned(),
        direction,
        estimate: Estimate::point(crate::stats::median(values).unwrap_or(1.0)),
        statistics: BTreeMap::new(),
        throughput: None,
        samples: Samples::new(
            SamplingMode::PerProcess,
            vec![1.0; values.len()],
            values.to_vec(),
        )
        .ok(),
    }
}

/// 12 rounds around `level` with a deterministic +-0.6% wobble.
fn wobble(level: f64, phase: f64) -> Vec<f64> {
    (0..12)
        .map(|i| level * (1.0 + 0.006 * (f64::from(i) * 1.7 + phase).sin()))
        .collect()
}

#[test]
fn a_paired_slowdown_is_a_regression_and_aa_is_not() {
    let base = vec![
        rounds(
            "slow",
            "time",
            Direction::LowerIsBetter,
            &wobble(100.0, 0.0),
        ),
        rounds("same", "time", Direction::LowerIsBetter, &wobble(50.0, 0.0)),
    ];
    let head = vec![
        rounds(
            "slow",
            "time",
            Direction::LowerIsBetter,
            &wobble(106.0, 0.3),
        ),
        rounds("same", "time", Direction::LowerIsBetter, &wobble(50.0, 0.3)),
    ];
    let c = compare_paired(&base, &head, &CompareConfig::default());
    let slow = c.rows.iter().find(|r| r.benchmark == "slow").unwrap();
    assert_eq!(slow.verdict, Verdict::Regression, "{:#?}", slow.reasons);
    assert!(matches!(slow.evidence, Evidence::Paired { rounds: 12, .. }));
    assert_eq!(slow.noise_floor.source, NoiseSource::Paired);
    let change = slow.change.unwrap();
    assert!((change.point_pct - 6.0).abs() < 1.5, "{change:?}");
    let calibration = slow.calibration.unwrap();
    assert!(calibration.false_alarm_rate < 0.01);
    assert!(calibration.detectable_pct.unwrap() < 6.0);
    assert!(slow.reasons.iter().any(|r| r.contains("sign test")));
    let same = c.rows.iter().find(|r| r.benchmark == "same").unwrap();
    assert_eq!(same.verdict, Verdict::Unchanged, "{:#?}", same.reasons);
    assert_eq!(c.family_size, 2);
}

#[test]
fn higher_is_better_rounds_regress_downwards() {
    let base = vec![rounds(
        "ops",
        "rate",
        Direction::HigherIsBetter,
        &wobble(100.0, 0.0),
    )];
    let head = vec![rounds(
        "ops",
        "rate",
        Direction::HigherIsBetter,
        &wobble(90.0, 1.0),
    )];
    let c = compare_paired(&base, &head, &CompareConfig::default());
    assert_eq!(c.rows[0].verdict, Verdict::Regression);
    assert!(c.rows[0].change.unwrap().point_pct < -8.0);
}

#[test]
fn deterministic_rounds_are_exact_with_their_own_threshold() {
    let base = vec![
        rounds("ir", "instructions", Direction::LowerIsBetter, &[1000.0; 3]),
        rounds(
            "ir_same",
            "instructions",
            Direction::LowerIsBetter,
            &[500.0; 3],
        ),
    ];
    let head = vec![
        rounds("ir", "instructions", Direction::LowerIsBetter, &[1010.0; 3]),
        rounds(
            "ir_same",
            "instructions",
            Direction::LowerIsBetter,
            &[500.0; 3],
        ),
    ];
    let c = compare_paired(&base, &head, &CompareConfig::default());
    let ir = &c.rows[0];
    assert_eq!(ir.evidence, Evidence::Exact);
    assert_eq!(ir.verdict, Verdict::Regression, "{:#?}", ir.reasons);
    assert!((ir.threshold_pct - crate::compare::DEFAULT_DETERMINISTIC_THRESHOLD_PCT).abs() < 1e-12);
    assert_eq!(c.rows[1].verdict, Verdict::Unchanged);
}

#[test]
fn rounds_that_do_not_pair_up_are_compared_unpaired() {
    let base = vec![rounds(
        "b",
        "time",
        Direction::LowerIsBetter,
        &wobble(100.0, 0.0),
    )];
    let head = vec![rounds(
        "b",
        "time",
        Direction::LowerIsBetter,
        &[100.0, 101.0, 99.0],
    )];
    let c = compare_paired(&base, &head, &CompareConfig::default());
    assert!(matches!(c.rows[0].evidence, Evidence::Samples { .. }));
    assert!(
        c.rows[0]
            .reasons
            .iter()
            .any(|r| r.contains("No paired evidence"))
    );
}

/// 12 rounds under four layouts in turn (three each): the base at `level` with the
/// wobble, the head `changes[k]` percent away from it under layout k.
fn four_layouts(level: f64, changes: [f64; 4]) -> (Vec<f64>, Vec<f64>) {
    let base = wobble(level, 0.0);
    let head = base
        .iter()
        .enumerate()
        .map(|(i, b)| b * (1.0 + changes[i % 4] / 100.0) * (1.0 + 0.002 * (i % 3) as f64))
        .collect();
    (base, head)
}

#[test]
fn a_change_within_the_layout_spread_is_layout_sensitive_unless_strict() {
    use crate::compare::compare_paired_layouts;
    let layouts: Vec<u64> = (0..12).map(|i| [11, 22, 33, 44][i % 4]).collect();
    // Every round is slower, but layouts 2 and 3 show almost nothing: the layouts moved
    // the comparison by 39%, more than the change.
    let (hot_base, hot_head) = four_layouts(100.0, [40.0, 2.0, 1.0, 28.0]);
    // The same +8% under every layout: the code's.
    let (flat_base, flat_head) = four_layouts(100.0, [8.0, 8.0, 8.0, 8.0]);
    let base = vec![
        rounds("hot", "time", Direction::LowerIsBetter, &hot_base),
        rounds("flat", "time", Direction::LowerIsBetter, &flat_base),
    ];
    let head = vec![
        rounds("hot", "time", Direction::LowerIsBetter, &hot_head),
        rounds("flat", "time", Direction::LowerIsBetter, &flat_head),
    ];
    let c = compare_paired_layouts(&base, &head, &layouts, &CompareConfig::default());
    let hot = c.rows.iter().find(|r| r.benchmark == "hot").unwrap();
    assert_eq!(hot.verdict, Verdict::Unchanged, "{:#?}", hot.reasons);
    assert!(hot.layout_sensitive);
    assert!(hot.significant, "the rounds do say it changed");
    let spread = hot.layout.as_ref().unwrap();
    assert_eq!(spread.layouts(), 4);
    // The range of ln(1.40) .. ln(1.01), as a percentage.
    let want = (1.40_f64.ln() - 1.01_f64.ln()).exp_m1() * 100.0;
    assert!((spread.spread_pct() - want).abs() < 0.5, "{spread:?}");
    assert!(hot.reasons.iter().any(|r| r.contains("layout-sensitive")));
    assert!(
        hot.reasons
            .iter()
            .any(|r| r.starts_with("Layouts: 4 links"))
    );
    // A benchmark the layouts leave alone is still caught.
    let flat = c.rows.iter().find(|r| r.benchmark == "flat").unwrap();
    assert_eq!(flat.verdict, Verdict::Regression, "{:#?}", flat.reasons);
    assert!(!flat.layout_sensitive);
    assert!(flat.layout.as_ref().unwrap().spread_pct() < 0.5);
    assert_eq!(c.counts.layout_sensitive, 1);
    // --layout-strict keeps the verdict.
    let strict = CompareConfig {
        layout_strict: true,
        ..CompareConfig::default()
    };
    let c = compare_paired_layouts(&base, &head, &layouts, &strict);
    let hot = c.rows.iter().find(|r| r.benchmark == "hot").unwrap();
    assert_eq!(hot.verdict, Verdict::Regression, "{:#?}", hot.reasons);
    assert!(!hot.layout_sensitive);
    // Without layouts there is no spread.
    let c = compare_paired(&base, &head, &CompareConfig::default());
    assert!(c.rows.iter().all(|r| r.layout.is_none()));
}

#[test]
fn a_paired_geomean_of_one_row_is_that_row() {
    let base = vec![rounds(
        "a",
        "time",
        Direction::LowerIsBetter,
        &wobble(100.0, 0.0),
    )];
    let head = vec![rounds(
        "a",
        "time",
        Direction::LowerIsBetter,
        &wobble(103.0, 2.0),
    )];
    let c = compare_paired(&base, &head, &CompareConfig::default());
    let row = c.rows[0].change.unwrap().point_pct;
    let geomean = c.geomean.unwrap().change_pct;
    assert!((geomean - row).abs() < 1e-9, "{geomean} against {row}");
}
