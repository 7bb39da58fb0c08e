//! The store's tests, written once against [`bench_store::LedgerStore`] and run on every engine
//! (`on_both_engines!` in store.rs). Each takes a fresh, empty ledger.

use crate::engines::Fixture;
use bench_model::*;
use bench_store::{
    DatedRun, IngestKey, Ingested, LedgerError, PairIngested, PairingPlan, RunFilter, TrendRuns,
};
use std::collections::{BTreeMap, BTreeSet};

mod artifacts;
mod ingest;
mod projects;
mod stamp;
mod summaries;
mod trends;

pub use artifacts::*;
pub use ingest::*;
pub use projects::*;
pub use stamp::*;
pub use summaries::*;
pub use trends::*;

/// A run with every field the ledger stores filled in: provenance, toolchain, statistics,
/// samples, throughput, executable and conditions.
pub fn full_run(suite: &str, machine: &str) -> NewRun {
    let samples = Samples::new(
        SamplingMode::Linear,
        vec![1.0, 2.0, 3.0],
        vec![10.0, 21.0, 29.0],
    )
    .expect("samples");
    let mut statistics = BTreeMap::new();
    statistics.insert(Statistic::Mean, Estimate::point(10.0));
    statistics.insert(
        Statistic::Median,
        Estimate {
            point: 9.5,
            lower: Some(9.0),
            upper: None,
            confidence_level: Some(0.95),
            standard_error: Some(0.25),
        },
    );
    let mut env = BTreeMap::new();
    env.insert("RUSTFLAGS".to_owned(), "-C target-cpu=native".to_owned());
    NewRun {
        source: RunSource::BenchRun,
        provenance: RunProvenance {
            suite: suite.into(),
            package: Some("pkg".into()),
            command: vec!["bench-run".into(), "--suite".into(), suite.into()],
            cargo_command: Some(vec!["cargo".into(), "bench".into()]),
            cwd: "/work".into(),
            machine: Machine {
                fingerprint: machine.into(),
                hostname: "host".into(),
                cpu_model: format!("cpu of {machine}"),
                physical_cores: Some(2),
                logical_cores: 4,
                memory_bytes: Some(24 << 30),
                os: "Debian".into(),
                kernel: "6.1".into(),
                arch: "x86_64".into(),
                testbed: Some(format!("class of {machine}")),
            },
            toolchain: Some(Toolchain {
                fingerprint: "tc".into(),
                rustc_version: "1.95.0".into(),
                rustc_commit: Some("abc".into()),
                host: "x86_64-unknown-linux-gnu".into(),
                llvm_version: Some("20".into()),
                rustc_verbose: "rustc 1.95.0".into(),
                cargo_version: "cargo 1.95.0".into(),
            }),
            build: BuildConfig {
                profile: "bench".into(),
                features: vec!["simd".into()],
                feature_flags: vec!["-F".into(), "simd".into()],
                rustflags: Some("-C target-cpu=native".into()),
            },
            env,
            git: GitInfo {
                commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
                branch: Some("main".into()),
                dirty: true,
                commit_time: Some(1_700_000_000),
                summary: Some("a commit".into()),
            },
            cpu_governor: Some("performance".into()),
            turbo: Some("off".into()),
            quick: false,
            duration_ms: Some(5300),
            bench_exe: Some(BenchExe {
                sha256: "0123456789abcdef".repeat(4),
                bytes: 3_581_016,
            }),
            conditions: Some(RunConditions {
                cpus: 2,
                wall_ms: 5300,
                load_start: Some(LoadAverage {
                    one: 5.09,
                    five: 2.5,
                    fifteen: 1.25,
                }),
                load_end: None,
                own_cpus: 0.58,
                others_cpus: 1.42,
                steal_pct: 0.1,
                per_benchmark: vec![BenchmarkConditions {
                    benchmark: "g/f/1".into(),
                    wall_ms: 1700,
                    others_cpus: 1.49,
                    steal_pct: 0.0,
                }],
            }),
        },
        measurements: vec![
            Measurement {
                benchmark: BenchmarkId {
                    full: "g/f/1".into(),
                    group: Some("g".into()),
                    function: Some("f".into()),
                    value: Some("1".into()),
                },
                metric: metric::TIME.into(),
                unit: "ns".into(),
                direction: Direction::LowerIsBetter,
                estimate: Estimate {
                    point: 10.0,
                    lower: Some(9.0),
                    upper: Some(11.0),
                    confidence_level: Some(0.95),
                    standard_error: None,
                },
                statistics,
                throughput: Some(Throughput {
                    kind: ThroughputKind::Bytes,
                    per_iteration: 64,
                }),
                samples: Some(samples),
            },
            Measurement {
                direction: Direction::HigherIsBetter,
                metric: "ratio".into(),
                unit: "x".into(),
                ..Measurement::time_ns("A/b", 1.5)
            },
        ],
    }
}

/// A run of one benchmark `b` with one value, on `machine`.
pub fn small_run(suite: &str, machine: &str, value: f64) -> NewRun {
    NewRun {
        source: RunSource::ImportBmf,
        provenance: RunProvenance {
            suite: suite.into(),
            machine: Machine {
                fingerprint: machine.into(),
                cpu_model: format!("cpu {machine}"),
                logical_cores: 2,
                ..Machine::default()
            },
            ..RunProvenance::default()
        },
        measurements: vec![Measurement::time_ns("b", value)],
    }
}

/// An idempotency key whose content digest is `digest` 64 times (the ingest tests' keys).
pub(super) fn key(key: &str, digest: char) -> IngestKey {
    IngestKey {
        key: key.to_owned(),
        content_sha256: digest.to_string().repeat(64),
    }
}

fn ids(runs: &[bench_model::RunSummary]) -> Vec<RunId> {
    runs.iter().map(|r| r.id).collect()
}

pub async fn a_run_reads_back_as_recorded(f: &Fixture) {
    let l = &f.ledger;
    let run = full_run("s", "m1");
    let id = l.record_run(&run).await.expect("record");
    let stored = l.require_run(id).await.expect("read");
    assert_eq!(stored.provenance, run.provenance);
    assert_eq!(stored.source, RunSource::BenchRun);
    // Sorted by benchmark, byte order ("A/b" before "g/f/1") on every engine.
    let mut want = run.measurements.clone();
    want.sort_by(|a, b| (&a.benchmark.full, &a.metric).cmp(&(&b.benchmark.full, &b.metric)));
    assert_eq!(l.measurements(id).await.expect("measurements"), want);
    assert!(l.run(id + 100).await.expect("missing").is_none());
    assert!(matches!(
        l.require_run(id + 100).await,
        Err(LedgerError::NoSuchRun(_))
    ));

    // Executable and conditions are optional, alone or together.
    let mut bare = full_run("s", "m1");
    bare.provenance.bench_exe = None;
    bare.provenance.conditions = None;
    let mut hash_only = full_run("s", "m1");
    hash_only.provenance.conditions = None;
    for run in [&bare, &hash_only] {
        let id = l.record_run(run).await.expect("record");
        let stored = l.require_run(id).await.expect("read").provenance;
        assert_eq!(stored.bench_exe, run.provenance.bench_exe);
        assert_eq!(stored.conditions, run.provenance.conditions);
    }
    let listed = l.runs(&RunFilter::default()).await.expect("runs");
    let conditions: Vec<bool> = listed.iter().map(|r| r.conditions.is_some()).collect();
    assert_eq!(conditions, [false, false, true]);
}

pub async fn bad_runs_store_nothing(f: &Fixture) {
    let l = &f.ledger;
    let mut empty = small_run("s", "m", 1.0);
    empty.measurements.clear();
    let err = l.record_run(&empty).await.expect_err("empty").to_string();
    assert!(err.contains("no results"), "{err}");

    let mut twice = full_run("s", "m");
    let first = twice.measurements[0].clone();
    twice.measurements.push(first);
    let err = l
        .record_run(&twice)
        .await
        .expect_err("duplicate")
        .to_string();
    assert!(err.contains("duplicate result"), "{err}");

    let mut bad = full_run("s", "m");
    if let Some(c) = bad.provenance.conditions.as_mut() {
        c.others_cpus = f64::NAN;
    }
    let err = l.record_run(&bad).await.expect_err("nan").to_string();
    assert!(err.contains("others_cpus"), "{err}");
    let mut bad = full_run("s", "m");
    if let Some(e) = bad.provenance.bench_exe.as_mut() {
        e.sha256 = "not a hash".into();
    }
    let err = l.record_run(&bad).await.expect_err("hash").to_string();
    assert!(err.contains("64 lowercase hex digits"), "{err}");

    assert!(
        l.runs(&RunFilter::default())
            .await
            .expect("runs")
            .is_empty()
    );
    for table in ["runs", "results", "statistics", "samples", "run_conditions"] {
        assert_eq!(
            f.count(table).await,
            0,
            "{table} kept a row of a refused run"
        );
    }
}

pub async fn runs_are_found_by_filter_commit_tag_and_order(f: &Fixture) {
    let l = &f.ledger;
    let a = l.record_run(&full_run("s", "m1")).await.expect("a");
    let mut on_branch = full_run("s", "m2");
    on_branch.provenance.git.branch = Some("feature".into());
    on_branch.provenance.git.commit = Some("fedcba9876543210fedcba9876543210fedcba98".into());
    let b = l.record_run(&on_branch).await.expect("b");
    let c = l.record_run(&small_run("t", "m1", 1.0)).await.expect("c");

    let all = l.runs(&RunFilter::default()).await.expect("all");
    assert_eq!(ids(&all), [c, b, a], "newest first");
    assert_eq!(all[2].results, 2);
    let filter = |f: RunFilter| async move { ids(&l.runs(&f).await.expect("filter")) };
    assert_eq!(
        filter(RunFilter {
            suite: Some("s".into()),
            ..RunFilter::default()
        })
        .await,
        [b, a]
    );
    assert_eq!(
        filter(RunFilter {
            machine: Some("m2".into()),
            ..RunFilter::default()
        })
        .await,
        [b]
    );
    assert_eq!(
        filter(RunFilter {
            branch: Some("feature".into()),
            ..RunFilter::default()
        })
        .await,
        [b]
    );
    assert_eq!(
        filter(RunFilter {
            commit: Some("fedcba98".into()),
            ..RunFilter::default()
        })
        .await,
        [b]
    );
    assert_eq!(
        filter(RunFilter {
            limit: Some(1),
            offset: 1,
            ..RunFilter::default()
        })
        .await,
        [b]
    );
    // `_` and `%` in a prefix are characters, not patterns.
    assert!(
        filter(RunFilter {
            commit: Some("%".into()),
            ..RunFilter::default()
        })
        .await
        .is_empty()
    );

    let suites = l.suites().await.expect("suites");
    let names: Vec<(&str, i64, RunId)> = suites
        .iter()
        .map(|s| (s.suite.as_str(), s.runs, s.latest_run))
        .collect();
    assert_eq!(names, [("s", 2, b), ("t", 1, c)]);
    assert_eq!(l.latest_run(None).await.expect("latest"), Some(c));
    assert_eq!(l.latest_run(Some("s")).await.expect("latest s"), Some(b));
    assert_eq!(l.latest_run(Some("u")).await.expect("latest u"), None);
    assert!(l.has_suite("t").await.expect("has t"));
    assert!(!l.has_suite("u").await.expect("has u"));

    assert_eq!(l.run_at_commit("0123456", None).await.expect("at"), Some(a));
    assert_eq!(
        l.run_at_commit("fedcba", Some("s")).await.expect("at"),
        Some(b)
    );
    assert_eq!(
        l.run_at_commit("fedcba", Some("t")).await.expect("at"),
        None
    );
    assert_eq!(l.run_at_commit("", None).await.expect("at"), None);
    assert_eq!(l.run_at_commit("_", None).await.expect("at"), None);

    // Tags: the newest row of a name wins; a moved name is no longer listed on the old run.
    l.tag(a, "base").await.expect("tag");
    l.tag(a, "keep").await.expect("tag");
    assert_eq!(l.run_by_tag("base").await.expect("by tag"), Some(a));
    l.tag(b, " base ").await.expect("move");
    assert_eq!(l.run_by_tag("base").await.expect("by tag"), Some(b));
    assert_eq!(l.require_run(a).await.expect("a").tags, ["keep"]);
    assert_eq!(l.require_run(b).await.expect("b").tags, ["base"]);
    let listed = l.runs(&RunFilter::default()).await.expect("runs");
    let tags: Vec<&[String]> = listed.iter().map(|r| r.tags.as_slice()).collect();
    assert_eq!(
        tags,
        [&[][..], &["base".to_owned()][..], &["keep".to_owned()][..]]
    );
    l.tag(c, "z").await.expect("tag");
    l.tag(c, "a").await.expect("tag");
    assert_eq!(l.require_run(c).await.expect("c").tags, ["a", "z"]);
    assert_eq!(
        l.tag_history().await.expect("tag history"),
        [
            (a, "base".to_owned()),
            (a, "keep".to_owned()),
            (b, "base".to_owned()),
            (c, "z".to_owned()),
            (c, "a".to_owned())
        ]
    );
    for bad in ["", "  ", "42"] {
        assert!(
            matches!(l.tag(a, bad).await, Err(LedgerError::Invalid(_))),
            "{bad:?}"
        );
    }
    assert!(matches!(
        l.tag(999, "x").await,
        Err(LedgerError::NoSuchRun(999))
    ));
    assert_eq!(l.run_by_tag("nope").await.expect("none"), None);

    // Annotations, oldest first; empty text and missing runs refused.
    l.annotate(a, "first").await.expect("note");
    l.annotate(a, "second").await.expect("note");
    let notes: Vec<String> = l
        .require_run(a)
        .await
        .expect("a")
        .annotations
        .into_iter()
        .map(|n| n.text)
        .collect();
    assert_eq!(notes, ["first", "second"]);
    assert!(matches!(
        l.annotate(a, " ").await,
        Err(LedgerError::Invalid(_))
    ));
    assert!(matches!(
        l.annotate(999, "x").await,
        Err(LedgerError::NoSuchRun(999))
    ));
}

pub async fn baselines_leave_out_quick_confirmation_and_ab_runs_and_history_quick_and_ab(
    f: &Fixture,
) {
    let l = &f.ledger;
    let first = l
        .record_run(&small_run("s", "m", 10.0))
        .await
        .expect("first");
    let mut quick = small_run("s", "m", 11.0);
    quick.provenance.quick = true;
    let quick = l.record_run(&quick).await.expect("quick");
    let mut confirmation = small_run("s", "m", 12.0);
    confirmation.source = RunSource::Confirmation;
    let confirmation = l.record_run(&confirmation).await.expect("confirmation");
    let (b, h) = record_pair(f, 3).await;
    let other_machine = l
        .record_run(&small_run("s", "elsewhere", 13.0))
        .await
        .expect("other");
    let last = l
        .record_run(&small_run("s", "m", 14.0))
        .await
        .expect("last");

    assert_eq!(l.previous_run(last).await.expect("previous"), Some(first));
    assert_eq!(l.previous_run(quick).await.expect("previous"), Some(first));
    assert_eq!(l.previous_run(first).await.expect("previous"), None);
    assert_eq!(l.previous_run(other_machine).await.expect("previous"), None);
    let history = l
        .history("s", machine_of(f, last).await, last, 10)
        .await
        .expect("history");
    let runs: Vec<RunId> = history.values().flatten().map(|p| p.run).collect();
    assert_eq!(
        runs,
        [first, confirmation],
        "history leaves out quick runs and the sides of an ab (a confirmation re-run is a full \
         measurement of what it ran)"
    );
    let history = l
        .history("s", machine_of(f, last).await, first, 10)
        .await
        .expect("history");
    assert!(history.is_empty());
    // A revision names the ordinary run, never a side of an ab.
    assert_eq!(l.run_at_commit("0123", None).await.expect("at"), None);
    assert!(b != h);
}

async fn machine_of(f: &Fixture, run: RunId) -> i64 {
    f.ledger.require_run(run).await.expect("run").machine_id
}

fn side(source: RunSource, values: &[f64]) -> NewRun {
    let mut run = small_run("s", "m", values.first().copied().unwrap_or(1.0));
    run.source = source;
    run.provenance.git.commit = Some("0123456789abcdef0123456789abcdef01234567".into());
    run.measurements[0].samples = Some(
        Samples::new(
            SamplingMode::PerProcess,
            vec![1.0; values.len()],
            values.to_vec(),
        )
        .expect("samples"),
    );
    run
}

fn plan(rounds: usize) -> PairingPlan {
    PairingPlan {
        seed: u64::MAX - 7,
        base_first: (0..rounds).map(|r| r % 3 == 0).collect(),
        base_rev: "main".into(),
        head_rev: None,
        // Two layouts in turn, as `bench-run ab --layouts 2` runs them.
        round_layouts: (0..rounds).map(|r| r as u64 % 2 + 1).collect(),
    }
}

async fn record_pair(f: &Fixture, rounds: usize) -> (RunId, RunId) {
    let values: Vec<f64> = (0..rounds).map(|r| 12.0 + r as f64 / 10.0).collect();
    f.ledger
        .record_pair(
            &side(RunSource::AbBase, &values),
            &side(RunSource::AbHead, &values),
            &plan(rounds),
        )
        .await
        .expect("pair")
}

pub async fn a_pair_round_trips_and_a_bad_pair_stores_nothing(f: &Fixture) {
    let l = &f.ledger;
    let (b, h) = record_pair(f, 3).await;
    let pairing = l.pairing_of(h).await.expect("pairing").expect("some");
    assert_eq!((pairing.base_run, pairing.head_run), (b, h));
    assert_eq!(pairing.plan, plan(3));
    assert_eq!(pairing.rounds(), 3);
    assert_eq!(
        l.pairing_of(b).await.expect("pairing"),
        Some(pairing.clone())
    );
    assert_eq!(
        l.pairing_between(b, h).await.expect("between"),
        Some(pairing)
    );
    assert_eq!(l.pairing_between(h, b).await.expect("between"), None);
    let samples = l.measurements(h).await.expect("m")[0]
        .samples
        .clone()
        .expect("samples");
    assert_eq!(samples.mode(), SamplingMode::PerProcess);
    assert_eq!(samples.times_ns(), &[12.0, 12.1, 12.2]);

    let runs_before = f.count("runs").await;
    let base = side(RunSource::AbBase, &[1.0, 2.0]);
    let short = side(RunSource::AbHead, &[1.0]);
    let err = l
        .record_pair(&base, &short, &plan(2))
        .await
        .expect_err("short");
    assert!(err.to_string().contains("per-round values"), "{err}");
    let mut empty = side(RunSource::AbHead, &[1.0]);
    empty.measurements.clear();
    assert!(l.record_pair(&base, &empty, &plan(2)).await.is_err());
    assert!(l.record_pair(&base, &base, &plan(0)).await.is_err());
    let mut mislaid = plan(2);
    mislaid.round_layouts = vec![5];
    let err = l
        .record_pair(&base, &side(RunSource::AbHead, &[1.0, 2.0]), &mislaid)
        .await
        .expect_err("layouts of another length");
    assert!(err.to_string().contains("names the layouts of 1"), "{err}");
    assert_eq!(
        f.count("runs").await,
        runs_before,
        "a failed pair leaves no run behind"
    );
    assert_eq!(f.count("pairings").await, 1);

    // A pair measured under layouts keeps each round's layout seed, full u64s included.
    let mut laid_out = plan(2);
    laid_out.round_layouts = vec![u64::MAX, 17];
    let (_, h) = l
        .record_pair(&base, &side(RunSource::AbHead, &[1.5, 2.5]), &laid_out)
        .await
        .expect("pair with layouts");
    let pairing = l.pairing_of(h).await.expect("pairing").expect("some");
    assert_eq!(pairing.plan, laid_out);
    assert_eq!(f.count("pairing_layouts").await, 2);
    assert_eq!(l.pairings().await.expect("pairings")[1].plan, laid_out);
}

/// Every table holds a row; every way of changing or removing one is refused by the database
/// itself, and the stored run reads back unchanged.
pub async fn every_table_refuses_update_and_delete(f: &Fixture) {
    let l = &f.ledger;
    let run = full_run("s", "m");
    let id = l.record_run(&run).await.expect("record");
    l.tag(id, "baseline").await.expect("tag");
    l.annotate(id, "a note").await.expect("note");
    record_pair(f, 2).await;
    l.record_run_once(&small_run("s", "m", 1.0), &key("k", 'a'))
        .await
        .expect("push");
    let statements = [
        ("machines", "UPDATE machines SET cpu_model = 'x'"),
        ("toolchains", "UPDATE toolchains SET host = 'x'"),
        ("runs", "UPDATE runs SET suite = 'x'"),
        ("results", "UPDATE results SET estimate = 0"),
        ("statistics", "UPDATE statistics SET point = 0"),
        ("samples", "UPDATE samples SET sampling_mode = 2"),
        ("tags", "UPDATE tags SET name = 'x'"),
        ("annotations", "UPDATE annotations SET text = 'x'"),
        (
            "run_conditions",
            "UPDATE run_conditions SET others_cpus = 0",
        ),
        ("pairings", "UPDATE pairings SET base_rev = 'x'"),
        (
            "pairing_layouts",
            "UPDATE pairing_layouts SET round_seeds = '1,1'",
        ),
        ("ingest_keys", "UPDATE ingest_keys SET content_sha256 = 'x'"),
        (
            "ledger_identity",
            "UPDATE ledger_identity SET ledger_id = 'x'",
        ),
    ];
    for (table, update) in statements {
        let count = f.count(table).await;
        assert!(count > 0, "{table} should hold a row for this test");
        let delete = format!("DELETE FROM {table}");
        let mut refused = vec![update.to_owned(), delete];
        if f.is_postgres() {
            refused.push(format!("TRUNCATE {table} CASCADE"));
        }
        for sql in &refused {
            let err = f.execute(sql).await.expect_err(sql);
            assert!(err.is_append_only_refusal(), "{sql}: {err}");
        }
        assert_eq!(f.count(table).await, count, "{table} changed");
    }
    let replacing: &[&str] = if f.is_postgres() {
        &[
            "INSERT INTO machines (fingerprint, cpu_model, logical_cores, os, arch)
             VALUES ('m', 'x', 1, 'x', 'x')
             ON CONFLICT (fingerprint) DO UPDATE SET cpu_model = 'x'",
            "INSERT INTO results (run_id, benchmark, metric, unit, direction, estimate, sample_count)
             SELECT run_id, benchmark, metric, unit, direction, 0, 0 FROM results",
        ]
    } else {
        // A replacing insert deletes without firing DELETE triggers: refused too.
        &[
            "INSERT OR REPLACE INTO runs SELECT * FROM runs WHERE id = 1",
            "INSERT OR REPLACE INTO run_conditions (run_id, others_cpus) VALUES (1, 0)",
            "REPLACE INTO tags (id, run_id, name, created_at) SELECT id, run_id, 'y', created_at FROM tags",
            "INSERT OR REPLACE INTO ingest_keys SELECT idempotency_key, run_id, 'x' FROM ingest_keys",
            "INSERT OR REPLACE INTO pairing_layouts SELECT pairing_id, '2,2' FROM pairing_layouts",
        ]
    };
    for sql in replacing {
        let err = f.execute(sql).await.expect_err(sql);
        assert!(err.is_append_only_refusal(), "{sql}: {err}");
    }
    let mut want = run.measurements.clone();
    want.sort_by(|a, b| (&a.benchmark.full, &a.metric).cmp(&(&b.benchmark.full, &b.metric)));
    assert_eq!(l.measurements(id).await.expect("measurements"), want);
    assert_eq!(
        l.require_run(id).await.expect("run").provenance,
        run.provenance
    );
}

/// 16 writers at once, half of them on machines the ledger has not seen: every run lands,
/// whole, with its own id.
pub async fn concurrent_writers_lose_nothing(f: &Fixture) {
    let writers: Vec<_> = (0..16)
        .map(|i| {
            let ledger = f.ledger.clone();
            tokio::spawn(async move {
                let machine = if i % 2 == 0 { "shared" } else { "new" };
                let mut run = full_run(&format!("s{}", i % 4), &format!("{machine}-{}", i % 3));
                run.measurements[0].estimate = Estimate::point(f64::from(i));
                ledger.record_run(&run).await.map(|id| (i, id))
            })
        })
        .collect();
    let mut ids = Vec::new();
    for w in writers {
        ids.push(w.await.expect("join").expect("record"));
    }
    let mut distinct: Vec<RunId> = ids.iter().map(|(_, id)| *id).collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 16);
    for (i, id) in ids {
        let m = f.ledger.measurements(id).await.expect("measurements");
        assert_eq!(m.len(), 2, "run {id}");
        let time = m
            .iter()
            .find(|m| m.benchmark.full == "g/f/1")
            .expect("time");
        assert_eq!(
            time.estimate.point.to_bits(),
            f64::from(i).to_bits(),
            "run {id}"
        );
    }
    assert_eq!(f.count("runs").await, 16);
    assert_eq!(f.count("results").await, 32);
    assert_eq!(f.count("machines").await, 6);
}

/// A ledger migrated by a newer build is refused, on open and read-only open, and left as it
/// was.
pub async fn a_newer_schema_is_refused(f: &Fixture) {
    f.ledger
        .record_run(&small_run("s", "m", 1.0))
        .await
        .expect("record");
    f.execute(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
         VALUES (99991231000000, 'from the future', TRUE, x'00', 0)"
            .replace(
                "x'00'",
                if f.is_postgres() {
                    "'\\x00'::bytea"
                } else {
                    "x'00'"
                },
            )
            .as_str(),
    )
    .await
    .expect("fake migration");
    for read_only in [false, true] {
        let opened = if read_only {
            bench_store::Ledger::open_read_only(&f.location).await
        } else {
            bench_store::Ledger::open(&f.location).await
        };
        match opened {
            Err(LedgerError::NewerSchema { found, .. }) => assert_eq!(found, 99_991_231_000_000),
            other => panic!("read_only={read_only}: {other:?}"),
        }
    }
    assert_eq!(f.count("runs").await, 1);
}
