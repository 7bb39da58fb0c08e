//! Interleaved trials: our benchmarks and an anchor's, run in alternation by long-lived worker
//! processes, so that both sides meet the same machine from one moment to the next.
//!
//! # Why
//!
//! On a shared host the speed of the same code drifts by tens of percent within seconds. A
//! suite run after another (all of ours, then all of the anchor's) puts that drift into the
//! ratio. Here each round runs one trial of every benchmark, pairs back to back in a random
//! order (asv's rounds; Abedi and Brecht's randomized multiple interleaved trials), so each
//! round gives a paired ratio measured under the same conditions. The result is the median of
//! those ratios with a distribution-free interval.
//!
//! # Worker protocol `bench-run-worker/1`: one JSON object per line
//!
//! ```text
//! worker    -> {"protocol":"bench-run-worker/1","benchmarks":[{"id":"x/ours_write","throughput":{"bytes":1024}}, ...]}
//!              (once, when its setup is done; "throughput" is optional: {"bytes":N} or {"elements":N})
//! bench-run -> {"run":"x/ours_write"}
//! worker    -> {"id":"x/ours_write","iters":1,"ns":123456}      or {"id":"x/ours_write","error":"why"}
//!              (the worker times `iters` iterations itself; setup it does not time is not counted)
//! bench-run closes the worker's stdin at the end; the worker exits.
//! ```
//!
//! This module is pure: planning, scheduling and summarising. The protocol itself (parsing,
//! [`bench_worker::serve`] for Rust workers, [`bench_worker::process::WorkerProcess`] to drive
//! a worker process) is the `bench-worker` crate, which reader crates depend on alone.

use bench_analysis::compare::pattern_matches;
use bench_analysis::ratio::PairRule;
use bench_analysis::ratio::PairedRatio;
use bench_analysis::stats::{self, SplitMix64};
use bench_model::{
    BenchmarkId, Direction, Estimate, Measurement, Samples, SamplingMode, Statistic, Throughput,
    ThroughputKind, metric,
};
use std::collections::{BTreeMap, HashMap};

use bench_worker::{DeclaredThroughput, InterleaveError, Trial, WorkerBenchmark};

/// Confidence level of the intervals of medians.
pub const CONFIDENCE: f64 = 0.95;

/// The model's throughput of a declared one.
fn throughput_of(declared: DeclaredThroughput) -> Throughput {
    match declared {
        DeclaredThroughput::Bytes(n) => Throughput {
            kind: ThroughputKind::Bytes,
            per_iteration: n,
        },
        DeclaredThroughput::Elements(n) => Throughput {
            kind: ThroughputKind::Elements,
            per_iteration: n,
        },
    }
}

/// Where a benchmark lives: its worker (index into the workers) and its announced entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// Index of the worker that runs it.
    pub worker: usize,
    /// The benchmark.
    pub benchmark: WorkerBenchmark,
}

/// Benchmarks that run back to back in each round: benchmarks the rules pair, or one alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unit {
    /// Benchmarks joined by pairs (indices into [`Plan::benchmarks`]): one of ours with every
    /// anchor a rule maps it to, and every other of ours that faces one of those anchors.
    Group {
        /// Every member, in announcement order.
        members: Vec<usize>,
        /// `(ours, anchor)`, in announcement order of ours and then rule order.
        pairs: Vec<(usize, usize)>,
    },
    /// A benchmark without anchors.
    Single(usize),
}

impl Unit {
    fn members(&self) -> Vec<usize> {
        match self {
            Self::Group { members, .. } => members.clone(),
            Self::Single(b) => vec![*b],
        }
    }
}

/// Every benchmark to run and how they group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// All benchmarks of all workers, in announcement order.
    pub benchmarks: Vec<Located>,
    /// Groups run back to back, in announcement order of their first member.
    pub units: Vec<Unit>,
}

/// Groups the workers' benchmarks: a benchmark whose name a rule maps to another announced
/// benchmark is paired with it; `only` (patterns with `*`) keeps the units with a member that
/// matches.
///
/// # Errors
///
/// A name announced twice, or nothing left to run.
pub fn plan(
    workers: &[Vec<WorkerBenchmark>],
    rules: &[PairRule],
    only: &[String],
) -> Result<Plan, InterleaveError> {
    let benchmarks: Vec<Located> = workers
        .iter()
        .enumerate()
        .flat_map(|(worker, list)| {
            list.iter().map(move |b| Located {
                worker,
                benchmark: b.clone(),
            })
        })
        .collect();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, b) in benchmarks.iter().enumerate() {
        if index.insert(b.benchmark.id.as_str(), i).is_some() {
            return Err(InterleaveError::Duplicate(b.benchmark.id.clone()));
        }
    }
    // Every pair the rules make, then the groups they join (one anchor may face several of
    // ours, say one write into a `Vec` and one into a file): each group is the benchmarks
    // connected by pairs, so an anchor runs once a round, back to back with all it faces.
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (i, b) in benchmarks.iter().enumerate() {
        for name in rules.iter().filter_map(|r| r.anchor_for(&b.benchmark.id)) {
            if let Some(&a) = index.get(name.as_str())
                && a != i
                && !pairs.contains(&(i, a))
            {
                pairs.push((i, a));
            }
        }
    }
    let mut group_of: Vec<usize> = (0..benchmarks.len()).collect();
    for &(o, a) in &pairs {
        let (go, ga) = (root(&group_of, o), root(&group_of, a));
        group_of[go.max(ga)] = go.min(ga);
    }
    let roots: Vec<usize> = (0..benchmarks.len()).map(|i| root(&group_of, i)).collect();
    let mut units = Vec::new();
    for (i, &g) in roots.iter().enumerate().filter(|&(i, &g)| g == i) {
        let members: Vec<usize> = (i..roots.len()).filter(|&m| roots[m] == g).collect();
        if members.len() == 1 {
            units.push(Unit::Single(i));
        } else {
            let pairs = pairs
                .iter()
                .copied()
                .filter(|&(o, _)| roots[o] == g)
                .collect();
            units.push(Unit::Group { members, pairs });
        }
    }
    if !only.is_empty() {
        units.retain(|u| {
            u.members().iter().any(|&m| {
                let id = &benchmarks[m].benchmark.id;
                only.iter().any(|p| pattern_matches(p, id))
            })
        });
    }
    if units.is_empty() {
        return Err(InterleaveError::NothingToRun(if only.is_empty() {
            ""
        } else {
            " (no benchmark matches --only)"
        }));
    }
    Ok(Plan { benchmarks, units })
}

/// The representative of `i`'s group: the smallest index in it (links always point to a
/// smaller index, so this ends).
fn root(group_of: &[usize], mut i: usize) -> usize {
    while group_of[i] != i {
        i = group_of[i];
    }
    i
}

/// One step of a schedule: run benchmark `benchmark` (index into [`Plan::benchmarks`]) in
/// round `round` (warm-up rounds come first and are not counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Round number, from 0.
    pub round: usize,
    /// Whether the round is a warm-up round.
    pub warmup: bool,
    /// Which benchmark.
    pub benchmark: usize,
}

/// The order of every trial: `warmup + rounds` rounds; in each, the units in a random order and
/// the members of a group back to back in a random order (SplitMix64 from `seed`, so a schedule is a pure
/// function of its arguments and can be replayed).
#[must_use]
pub fn schedule(plan: &Plan, warmup: usize, rounds: usize, seed: u64) -> Vec<Step> {
    let mut rng = SplitMix64(seed);
    let mut steps = Vec::new();
    for round in 0..warmup + rounds {
        let mut order: Vec<&Unit> = plan.units.iter().collect();
        // Fisher-Yates.
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        for unit in order {
            let mut members = unit.members();
            for i in (1..members.len()).rev() {
                members.swap(i, rng.below(i + 1));
            }
            steps.extend(members.into_iter().map(|benchmark| Step {
                round,
                warmup: round < warmup,
                benchmark,
            }));
        }
    }
    steps
}

/// The counted trials of each benchmark, by round.
pub type Observations = BTreeMap<usize, BTreeMap<usize, Trial>>;

/// Records `trial` of `step` (warm-up trials are dropped).
pub fn observe(observations: &mut Observations, step: Step, trial: Trial) {
    if !step.warmup {
        observations
            .entry(step.benchmark)
            .or_default()
            .insert(step.round, trial);
    }
}

/// A median with its interval, from unsorted values.
fn median_with_interval(values: &[f64]) -> Option<Estimate> {
    let mut sorted = values.to_vec();
    if sorted.iter().any(|v| !v.is_finite()) {
        return None;
    }
    sorted.sort_unstable_by(f64::total_cmp);
    let point = stats::quantile_sorted(&sorted, 0.5)?;
    let (lower, upper) = stats::median_interval_sorted(&sorted, CONFIDENCE)?;
    Some(Estimate {
        point,
        lower: Some(lower),
        upper: Some(upper),
        confidence_level: Some(CONFIDENCE),
        standard_error: None,
    })
}

/// One measurement per benchmark with counted trials: the median time per iteration with its
/// interval, the mean, the declared throughput, and every trial as a raw sample.
#[must_use]
pub fn measurements(plan: &Plan, observations: &Observations) -> Vec<Measurement> {
    observations
        .iter()
        .filter_map(|(&b, trials)| {
            let located = plan.benchmarks.get(b)?;
            let per_iter: Vec<f64> = trials.values().map(|t| t.per_iteration_ns()).collect();
            let estimate = median_with_interval(&per_iter)?;
            let mean = per_iter.iter().sum::<f64>() / per_iter.len() as f64;
            let iters: Vec<f64> = trials.values().map(|t| t.iters).collect();
            let mode = if iters.iter().all(|&n| n <= 1.0) {
                SamplingMode::Single
            } else {
                SamplingMode::Flat
            };
            let samples = Samples::new(mode, iters, trials.values().map(|t| t.ns).collect()).ok();
            Some(Measurement {
                benchmark: BenchmarkId::named(located.benchmark.id.clone()),
                metric: metric::TIME.to_owned(),
                unit: "ns".to_owned(),
                direction: Direction::LowerIsBetter,
                estimate,
                statistics: BTreeMap::from([
                    (Statistic::Median, estimate),
                    (Statistic::Mean, Estimate::point(mean)),
                ]),
                throughput: located.benchmark.throughput.map(throughput_of),
                samples,
            })
        })
        .collect()
}

/// Name of the recorded benchmark that holds the speedup of `ours` over `anchor`.
#[must_use]
pub fn speedup_benchmark(ours: &str, anchor: &str) -> String {
    format!("{ours} vs {anchor}")
}

/// One [`metric::SPEEDUP`] measurement per pair (benchmark [`speedup_benchmark`]): the median
/// paired ratio with its interval. Recorded beside the times, they keep a run's ratios in the
/// ledger, so `show`, `log`, `compare`, `gate` and the web app read them like any result.
#[must_use]
pub fn speedup_measurements(ratios: &[PairedRatio]) -> Vec<Measurement> {
    ratios
        .iter()
        .map(|r| {
            let estimate = Estimate {
                point: r.median,
                lower: Some(r.lower),
                upper: Some(r.upper),
                confidence_level: Some(CONFIDENCE),
                standard_error: None,
            };
            Measurement {
                benchmark: BenchmarkId::named(speedup_benchmark(&r.benchmark, &r.anchor)),
                metric: metric::SPEEDUP.to_owned(),
                unit: "x".to_owned(),
                direction: Direction::HigherIsBetter,
                estimate,
                statistics: BTreeMap::from([(Statistic::Median, estimate)]),
                throughput: None,
                samples: None,
            }
        })
        .collect()
}

/// Per-unit-of-work time of a trial: per declared throughput unit when `per_work` is set.
fn work_time(trial: Trial, per_work: Option<u64>) -> f64 {
    trial.per_iteration_ns() / per_work.map_or(1.0, |n| n as f64)
}

/// The paired ratio of every pair with at least one round where both ran.
#[must_use]
pub fn paired_ratios(plan: &Plan, observations: &Observations) -> Vec<PairedRatio> {
    let mut out = Vec::new();
    let pairs = plan.units.iter().flat_map(|u| match u {
        Unit::Group { pairs, .. } => pairs.clone(),
        Unit::Single(_) => Vec::new(),
    });
    for (ours, anchor) in pairs {
        let (Some(o), Some(a)) = (plan.benchmarks.get(ours), plan.benchmarks.get(anchor)) else {
            continue;
        };
        // Normalise by the declared work only when both sides count the same thing.
        let (ow, aw) = match (o.benchmark.throughput, a.benchmark.throughput) {
            (Some(DeclaredThroughput::Bytes(x)), Some(DeclaredThroughput::Bytes(y)))
            | (Some(DeclaredThroughput::Elements(x)), Some(DeclaredThroughput::Elements(y))) => {
                (Some(x), Some(y))
            }
            _ => (None, None),
        };
        let (Some(ot), Some(at)) = (observations.get(&ours), observations.get(&anchor)) else {
            continue;
        };
        let ratios: Vec<f64> = ot
            .iter()
            .filter_map(|(round, &t)| {
                let theirs = at.get(round)?;
                Some(work_time(*theirs, aw) / work_time(t, ow))
            })
            .collect();
        let Some(m) = median_with_interval(&ratios) else {
            continue;
        };
        out.push(PairedRatio {
            benchmark: o.benchmark.id.clone(),
            anchor: a.benchmark.id.clone(),
            ratios,
            median: m.point,
            lower: m.lower.unwrap_or(m.point),
            upper: m.upper.unwrap_or(m.point),
        });
    }
    out
}

#[cfg(test)]
#[allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::float_cmp,
    reason = "tests fail loudly"
)]
mod tests {
    use super::*;
    use bench_worker::{parse_hello, parse_reply, request};

    fn bench(id: &str, bytes: Option<u64>) -> WorkerBenchmark {
        WorkerBenchmark {
            id: id.to_owned(),
            throughput: bytes.map(DeclaredThroughput::Bytes),
        }
    }

    fn rule(text: &str) -> PairRule {
        PairRule::parse(text).expect("rule")
    }

    #[test]
    fn a_chain_of_pairs_is_one_group() {
        // Three builds, each paired with the one before: fold against base, inline against fold.
        let workers = [
            vec![bench("base/x", None)],
            vec![bench("fold/x", None)],
            vec![bench("inline/x", None)],
        ];
        let rules = [rule("fold/*=base/*"), rule("inline/*=fold/*")];
        let p = plan(&workers, &rules, &["inline/*".to_owned()]).expect("plan");
        assert_eq!(
            p.units,
            vec![Unit::Group {
                members: vec![0, 1, 2],
                pairs: vec![(1, 0), (2, 1)]
            }]
        );
    }

    #[test]
    fn hello_is_validated() {
        let ok = r#"{"protocol":"bench-run-worker/1","benchmarks":[{"id":"a/ours","throughput":{"bytes":10}},{"id":"b"}]}"#;
        assert_eq!(
            parse_hello(ok).expect("valid"),
            vec![bench("a/ours", Some(10)), bench("b", None)]
        );
        let other = r#"{"protocol":"bench-run-worker/9","benchmarks":[]}"#;
        assert_eq!(
            parse_hello(other),
            Err(InterleaveError::Protocol("bench-run-worker/9".to_owned()))
        );
        let twice = r#"{"protocol":"bench-run-worker/1","benchmarks":[{"id":"a"},{"id":"a"}]}"#;
        assert_eq!(
            parse_hello(twice),
            Err(InterleaveError::Duplicate("a".to_owned()))
        );
        for bad in [
            "",
            "not json",
            r#"{"protocol":"bench-run-worker/1","benchmarks":[{"id":" "}]}"#,
            r#"{"protocol":"bench-run-worker/1","benchmarks":[{"id":"a","throughput":{"bytes":0}}]}"#,
            r#"{"protocol":"bench-run-worker/1","benchmarks":[{"id":"a","throughput":{"bits":3}}]}"#,
        ] {
            assert!(
                matches!(parse_hello(bad), Err(InterleaveError::Malformed { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn replies_are_validated() {
        assert_eq!(
            parse_reply(r#"{"id":"a","iters":4,"ns":100}"#, "a"),
            Ok(Trial {
                iters: 4.0,
                ns: 100.0
            })
        );
        assert_eq!(
            parse_reply(r#"{"id":"a","error":"disk full"}"#, "a"),
            Err(InterleaveError::TrialFailed {
                id: "a".to_owned(),
                reason: "disk full".to_owned()
            })
        );
        for bad in [
            r#"{"id":"b","iters":1,"ns":1}"#,
            r#"{"id":"a","iters":0,"ns":1}"#,
            r#"{"id":"a","iters":1,"ns":0}"#,
            r#"{"id":"a","iters":1}"#,
            r#"{"id":"a","iters":1,"ns":1,"extra":true}"#,
            "[1,2]",
        ] {
            assert!(
                matches!(
                    parse_reply(bad, "a"),
                    Err(InterleaveError::Malformed { .. })
                ),
                "{bad}"
            );
        }
        assert_eq!(request("x/y"), r#"{"run":"x/y"}"#);
    }

    #[test]
    fn plan_pairs_across_workers_and_filters() {
        let ours = vec![
            bench("c1/ours", None),
            bench("c2/ours", None),
            bench("lone", None),
        ];
        // The anchor worker announces in another order: pairing goes by name.
        let anchor = vec![bench("c2/cpp", None), bench("c1/cpp", None)];
        let p = plan(&[ours, anchor], &[rule("*/ours=*/cpp")], &[]).expect("plan");
        assert_eq!(
            p.units,
            vec![
                Unit::Group {
                    members: vec![0, 4],
                    pairs: vec![(0, 4)]
                },
                Unit::Group {
                    members: vec![1, 3],
                    pairs: vec![(1, 3)]
                },
                Unit::Single(2)
            ]
        );
        assert_eq!(p.benchmarks[3].worker, 1);
        // An anchor announced first is still paired, not run alone too.
        let p = plan(
            &[vec![bench("c1/cpp", None)], vec![bench("c1/ours", None)]],
            &[rule("*/ours=*/cpp")],
            &[],
        )
        .expect("plan");
        assert_eq!(
            p.units,
            vec![Unit::Group {
                members: vec![0, 1],
                pairs: vec![(1, 0)]
            }]
        );
        // One of ours against two anchors, and one anchor against two of ours (two rules each):
        // one group of three, so every benchmark runs once a round.
        for (ours, rules, pairs) in [
            (
                ["c/ours", "c/crate"],
                [rule("*/ours=*/cpp"), rule("*/ours=*/crate")],
                vec![(0, 2), (0, 1)],
            ),
            (
                ["c/ours_vec", "c/ours_file"],
                [rule("*/ours_vec=*/cpp"), rule("*/ours_file=*/cpp")],
                vec![(0, 2), (1, 2)],
            ),
        ] {
            let workers = [
                ours.map(|id| bench(id, None)).to_vec(),
                vec![bench("c/cpp", None)],
            ];
            let p = plan(&workers, &rules, &[]).expect("plan");
            let members = vec![0, 1, 2];
            assert_eq!(p.units, vec![Unit::Group { members, pairs }], "{ours:?}");
        }
        let only = plan(
            &[
                vec![bench("c1/ours", None), bench("c2/ours", None)],
                vec![bench("c1/cpp", None)],
            ],
            &[rule("*/ours=*/cpp")],
            &["c1/*".to_owned()],
        )
        .expect("plan");
        assert_eq!(
            only.units,
            vec![Unit::Group {
                members: vec![0, 2],
                pairs: vec![(0, 2)]
            }]
        );
        assert_eq!(
            plan(&[vec![bench("a", None)], vec![bench("a", None)]], &[], &[]),
            Err(InterleaveError::Duplicate("a".to_owned()))
        );
        assert!(matches!(
            plan(&[vec![bench("a", None)]], &[], &["zzz".to_owned()]),
            Err(InterleaveError::NothingToRun(_))
        ));
    }

    #[test]
    fn schedule_runs_pairs_back_to_back_in_both_orders() {
        let p = plan(
            &[
                vec![
                    bench("c1/ours", None),
                    bench("c2/ours", None),
                    bench("lone", None),
                ],
                vec![bench("c1/cpp", None), bench("c2/cpp", None)],
            ],
            &[rule("*/ours=*/cpp")],
            &[],
        )
        .expect("plan");
        let steps = schedule(&p, 1, 40, 7);
        assert_eq!(steps.len(), 41 * 5);
        assert!(steps.iter().take(5).all(|s| s.warmup && s.round == 0));
        assert!(steps.iter().skip(5).all(|s| !s.warmup));
        let mut ours_first = 0;
        for round in steps.chunks(5) {
            let mut seen: Vec<usize> = round.iter().map(|s| s.benchmark).collect();
            // The two members of each pair are adjacent.
            let at = |b: usize| seen.iter().position(|&x| x == b).expect("present");
            assert_eq!(at(0).abs_diff(at(3)), 1);
            assert_eq!(at(1).abs_diff(at(4)), 1);
            if at(0) < at(3) {
                ours_first += 1;
            }
            seen.sort_unstable();
            assert_eq!(seen, vec![0, 1, 2, 3, 4]);
        }
        // Both orders occur (a fixed order would let a warm or cold side always go first).
        assert!(ours_first > 5 && ours_first < 36, "{ours_first}");
        // Replayable.
        assert_eq!(steps, schedule(&p, 1, 40, 7));
        assert_ne!(steps, schedule(&p, 1, 40, 8));
    }

    #[test]
    fn summaries_pair_rounds_and_skip_warmup() {
        let p = plan(
            &[
                vec![bench("c/ours", Some(1000))],
                vec![bench("c/cpp", Some(1000))],
            ],
            &[rule("*/ours=*/cpp")],
            &[],
        )
        .expect("plan");
        let mut obs = Observations::new();
        let warm = Step {
            round: 0,
            warmup: true,
            benchmark: 0,
        };
        observe(
            &mut obs,
            warm,
            Trial {
                iters: 1.0,
                ns: 1.0,
            },
        );
        assert!(obs.is_empty());
        // The machine slows down 3x over the rounds; ours is always 2x faster than the anchor.
        for round in 1..=9 {
            let slow = f64::from(round as u32);
            let step = |benchmark| Step {
                round,
                warmup: false,
                benchmark,
            };
            observe(
                &mut obs,
                step(0),
                Trial {
                    iters: 2.0,
                    ns: 200.0 * slow,
                },
            );
            observe(
                &mut obs,
                step(1),
                Trial {
                    iters: 1.0,
                    ns: 200.0 * slow,
                },
            );
        }
        let pr = paired_ratios(&p, &obs);
        assert_eq!(pr.len(), 1);
        assert_eq!(pr[0].ratios.len(), 9);
        assert!(pr[0].ratios.iter().all(|r| (r - 2.0).abs() < 1e-12));
        assert!((pr[0].median - 2.0).abs() < 1e-12);
        let ms = measurements(&p, &obs);
        assert_eq!(ms.len(), 2);
        let ours = &ms[0];
        assert_eq!(ours.benchmark.full, "c/ours");
        assert_eq!(ours.unit, "ns");
        assert!(
            (ours.estimate.point - 500.0).abs() < 1e-9,
            "{:?}",
            ours.estimate
        );
        assert!(ours.estimate.lower.is_some_and(|l| l <= 500.0));
        assert_eq!(
            ours.throughput.map(|t| t.per_iteration),
            Some(1000),
            "declared throughput is kept"
        );
        let samples = ours.samples.as_ref().expect("samples");
        assert_eq!(samples.len(), 9);
        assert_eq!(samples.mode(), SamplingMode::Flat);
        assert_eq!(
            ms[1].samples.as_ref().map(Samples::mode),
            Some(SamplingMode::Single)
        );
    }
}
