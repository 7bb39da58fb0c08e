//! The verdict rules of `judge.rs` and the quarantine, end to end through [`compare`]. They sit
//! here rather than in judge.rs and comparison.rs because they call [`compare`], which imports
//! those files.

#![allow(clippy::unwrap_used, clippy::float_cmp)]

use super::fixtures::*;
use super::tests::{row, run};
use super::*;
use crate::compare::{DEFAULT_DETERMINISTIC_THRESHOLD_PCT, GateOutcome, compare, gate_outcome};
use crate::model::Estimate;
use crate::model::metric;

#[test]
fn small_shift_is_significant_but_below_threshold() {
    // 3% slower with 0.5% jitter: clearly significant, but within the 5% threshold.
    let base = [timed("x", &jittered(7, 50, 100.0, 0.5))];
    let head = [timed("x", &jittered(8, 50, 103.0, 0.5))];
    let c = run(&base, &head);
    let r = row(&c, "x");
    assert!(r.significant);
    assert_eq!(r.verdict, Verdict::Unchanged);
    assert!(
        r.reasons
            .last()
            .unwrap()
            .contains("significant but |change| at the interval end nearest 0 ")
    );
    // With a 1% threshold it becomes a regression (the default floor is 2%).
    let config = CompareConfig {
        threshold_pct: 1.0,
        ..CompareConfig::default()
    };
    let c = compare(&base, &head, &History::new(), &config);
    assert_eq!(row(&c, "x").verdict, Verdict::Regression);
}

#[test]
fn higher_is_better_metrics() {
    let ops = |v: f64| exact("rows", "ops", "ops/s", Direction::HigherIsBetter, v);
    let c = run(&[ops(1000.0)], &[ops(700.0)]);
    let r = row(&c, "rows");
    assert_eq!(r.verdict, Verdict::Regression);
    assert!((r.change.unwrap().point_pct + 30.0).abs() < 1e-9);
    assert_eq!(
        row(&run(&[ops(1000.0)], &[ops(1300.0)]), "rows").verdict,
        Verdict::Improvement
    );

    // With time samples, a higher-is-better metric is taken as 1/time.
    let mut base = timed("tp", &jittered(3, 100, 1000.0, 2.0));
    let mut head = timed("tp", &jittered(4, 100, 1300.0, 2.0));
    for m in [&mut base, &mut head] {
        m.metric = "throughput".to_owned();
        m.unit = "bytes/s".to_owned();
        m.direction = Direction::HigherIsBetter;
        m.estimate = Estimate::point(1e9 / m.estimate.point);
    }
    let c = run(&[base], &[head]);
    let r = row(&c, "tp");
    assert_eq!(r.verdict, Verdict::Regression, "{:#?}", r.reasons);
    let change = r.change.unwrap();
    assert!((change.point_pct + 23.1).abs() < 1.5, "{change:?}");
    assert!(change.lower_pct.unwrap() < change.point_pct);
    assert!(change.upper_pct.unwrap() > change.point_pct);
    // The geomean orients the ratio: >1 is worse.
    assert!(c.geomean.unwrap().change_pct > 25.0);
}

#[test]
fn exact_metrics() {
    let bytes = |v: f64| exact("enc", "bytes", "bytes", Direction::LowerIsBetter, v);
    let r = run(&[bytes(1000.0)], &[bytes(1100.0)]);
    assert_eq!(row(&r, "enc").verdict, Verdict::Regression);
    assert_eq!(row(&r, "enc").evidence, Evidence::Exact);
    assert!(row(&r, "enc").p_value.is_none());
    assert_eq!(r.family_size, 0);
    // Deterministic: 1% is beyond the deterministic threshold; 0.3% is within it.
    let r = run(&[bytes(1000.0)], &[bytes(1010.0)]);
    assert_eq!(row(&r, "enc").verdict, Verdict::Regression);
    assert_eq!(
        row(&r, "enc").threshold_pct,
        DEFAULT_DETERMINISTIC_THRESHOLD_PCT
    );
    let r = run(&[bytes(1000.0)], &[bytes(1003.0)]);
    assert!(row(&r, "enc").significant);
    assert_eq!(row(&r, "enc").verdict, Verdict::Unchanged);
    let r = run(&[bytes(1000.0)], &[bytes(1000.0)]);
    assert!(!row(&r, "enc").significant);
    assert_eq!(row(&r, "enc").change.unwrap().point_pct, 0.0);
    // From zero: the relative change is undefined and counts as infinite.
    let r = run(&[bytes(0.0)], &[bytes(8.0)]);
    let z = row(&r, "enc");
    assert_eq!((z.verdict, z.change), (Verdict::Regression, None));
    assert!(z.reasons.iter().any(|s| s.contains("base value is 0")));
    assert_eq!(
        row(&run(&[bytes(0.0)], &[bytes(0.0)]), "enc").verdict,
        Verdict::Unchanged
    );
}

#[test]
fn explanations_scale_values_like_the_tables() {
    let r = run(
        &[bounded("b", 14_990.0, 14_000.0, 15_500.0)],
        &[bounded("b", 5_050_700.0, 5_000_000.0, 5_100_000.0)],
    );
    let reasons = &row(&r, "b").reasons;
    assert!(
        reasons
            .iter()
            .any(|s| s == "Before 14.99 µs, after 5.051 ms (headline estimates)."),
        "{reasons:#?}"
    );
    assert!(
        reasons
            .iter()
            .any(|s| s.contains("Base [14.00 µs, 15.50 µs]")),
        "{reasons:#?}"
    );
    assert!(!reasons.iter().any(|s| s.contains("14990")), "{reasons:#?}");
}

#[test]
fn interval_evidence() {
    let r = run(
        &[bounded("b", 100.0, 50.0, 150.0)],
        &[bounded("b", 130.0, 80.0, 180.0)],
    );
    let row_b = row(&r, "b");
    assert_eq!(row_b.evidence, Evidence::Intervals { overlap: true });
    assert_eq!(row_b.verdict, Verdict::Unchanged);
    assert!(row_b.reasons.iter().any(|s| s.contains("no p-value")));
    let r = run(
        &[bounded("b", 100.0, 95.0, 105.0)],
        &[bounded("b", 130.0, 125.0, 135.0)],
    );
    let row_b = row(&r, "b");
    assert_eq!(row_b.evidence, Evidence::Intervals { overlap: false });
    assert_eq!(row_b.verdict, Verdict::Regression);
    let change = row_b.change.unwrap();
    assert!((change.point_pct - 30.0).abs() < 1e-9);
    assert!((change.lower_pct.unwrap() - (125.0 / 105.0 - 1.0) * 100.0).abs() < 1e-9);
    assert!((change.upper_pct.unwrap() - (135.0 / 95.0 - 1.0) * 100.0).abs() < 1e-9);
    // One side without bounds counts as an exact interval.
    let plain = exact("b", metric::TIME, "ns", Direction::LowerIsBetter, 104.0);
    let r = run(&[bounded("b", 100.0, 95.0, 105.0)], &[plain]);
    assert_eq!(row(&r, "b").evidence, Evidence::Intervals { overlap: true });
    // Samples on one side only: bounds decide.
    let mut with_samples = timed("b", &jittered(1, 10, 100.0, 1.0));
    with_samples.estimate.lower = Some(99.0);
    with_samples.estimate.upper = Some(101.0);
    let r = run(&[with_samples], &[bounded("b", 200.0, 190.0, 210.0)]);
    assert_eq!(
        row(&r, "b").evidence,
        Evidence::Intervals { overlap: false }
    );
    assert_eq!(row(&r, "b").verdict, Verdict::Regression);
}

#[test]
fn unusable_input_and_duplicates() {
    let a = exact("x", "time", "ns", Direction::LowerIsBetter, 10.0);
    let b = exact("x", "time", "us", Direction::LowerIsBetter, 10.0);
    let c = run(std::slice::from_ref(&a), &[b]);
    let r = row(&c, "x");
    assert!(
        matches!(&r.evidence, Evidence::Unusable { reason } if reason.contains("units differ"))
    );
    assert_eq!(r.verdict, Verdict::Unchanged);
    assert_eq!(c.unusable().count(), 1);
    assert_eq!(gate_outcome(&c, &[], false), GateOutcome::Unusable);
    let nan = exact("x", "time", "ns", Direction::LowerIsBetter, f64::NAN);
    assert_eq!(run(std::slice::from_ref(&a), &[nan]).counts.unusable, 1);
    let dup = exact("x", "time", "ns", Direction::LowerIsBetter, 99.0);
    let c = run(&[a.clone(), dup], &[a]);
    assert_eq!(row(&c, "x").verdict, Verdict::Unchanged);
    assert!(
        row(&c, "x")
            .reasons
            .iter()
            .any(|s| s.contains("first occurrence"))
    );
}

#[test]
fn quarantined_rows_are_shown_but_never_fail_the_gate() {
    let base = [
        timed("flaky/io", &jittered(1, 100, 1000.0, 2.0)),
        timed("stable", &jittered(5, 100, 1000.0, 2.0)),
        exact("odd", "time", "ns", Direction::LowerIsBetter, 100.0),
    ];
    let head = [
        timed("flaky/io", &jittered(2, 100, 1300.0, 2.0)),
        timed("stable", &jittered(6, 100, 1000.0, 2.0)),
        exact("odd", "time", "ns", Direction::LowerIsBetter, f64::NAN),
    ];
    let plain = compare(&base, &head, &History::new(), &CompareConfig::default());
    assert_eq!(gate_outcome(&plain, &[], false), GateOutcome::Unusable);

    let config = CompareConfig {
        quarantine: vec!["flaky/*".to_owned(), "odd".to_owned()],
        ..CompareConfig::default()
    };
    let c = compare(&base, &head, &History::new(), &config);
    let r = row(&c, "flaky/io");
    assert_eq!(
        r.verdict,
        Verdict::Regression,
        "the verdict is still computed"
    );
    assert_eq!(r.quarantined_by.as_deref(), Some("flaky/*"));
    assert!(r.p_adjusted.is_some(), "still in the family");
    assert!(r.reasons.last().unwrap().starts_with("Quarantined"));
    assert_eq!(c.family_size, 2);
    assert_eq!(c.counts.regressions, 1);
    assert_eq!(c.counts.quarantined, 2);
    assert_eq!(c.counts.unusable, 1);
    assert!(!c.has_regression());
    assert_eq!(c.gating_regressions().count(), 0);
    assert_eq!(c.quarantined().count(), 2);
    assert_eq!(gate_outcome(&c, &[], false), GateOutcome::Pass);
    assert_eq!(row(&c, "stable").quarantined_by, None);

    // Ignoring wins over quarantine: the row is ignored, not quarantined.
    let both = CompareConfig {
        ignore: vec!["flaky/*".to_owned()],
        ..config
    };
    let c = compare(&base, &head, &History::new(), &both);
    let r = row(&c, "flaky/io");
    assert_eq!(r.verdict, Verdict::Ignored);
    assert_eq!(r.quarantined_by, None);
    assert_eq!(c.counts.quarantined, 1);
}
