//! Costs of bench-run itself.
//!
//! - `overhead_100`: everything `bench-run --suite` does beyond `cargo bench` for a suite of 100
//!   benchmarks with 100 raw samples each: read provenance (machine, toolchain, git), parse
//!   criterion's output, record the run in a file-backed ledger, compare it with the previous run
//!   (history included) and render the delta table. Bar: under 1 s.
//! - `ledger_1m`: `compare` and `gate` on a ledger of 1,000,000 results (10,000 runs of 100
//!   benchmarks, 100 raw samples each), through the library and through the `bench-run` binary
//!   (process start, ledger open, ref resolution, comparison, rendering). Bar: under 200 ms.
//!
//! - `ledger_1m_postgres`: the same on PostgreSQL, the 1M ledger copied (`copy_ledger`) into a
//!   database of a server the bench starts (`testkit::postgres`). Bar: under 200 ms too.
//!
//! The 1M ledger is generated once (a few minutes) into the target directory and reused; its
//! PostgreSQL copy is made once per bench process.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use bench_analysis::compare::{self, CompareConfig};
use bench_model::{
    BenchmarkId, BuildConfig, Direction, Estimate, Machine, Measurement, NewRun, RunProvenance,
    RunSource, Samples, SamplingMode, Statistic, Throughput, ThroughputKind, Toolchain, metric,
};
use bench_store::copy::copy_ledger;
use bench_store::{Ledger, Location};
use criterion::{Criterion, criterion_group, criterion_main};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

const BENCHMARKS: usize = 100;
const SAMPLES: usize = 100;
const RUNS_1M: usize = 10_000;

/// A deterministic generator (SplitMix64) for jitter.
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn name(i: usize) -> BenchmarkId {
    BenchmarkId {
        full: format!("group_{}/bench_{}/{}", i / 10, i % 10, 1000 * (i % 3 + 1)),
        group: Some(format!("group_{}", i / 10)),
        function: Some(format!("bench_{}", i % 10)),
        value: Some(format!("{}", 1000 * (i % 3 + 1))),
    }
}

/// Criterion-like results: linear sampling, 2% jitter around a per-benchmark time.
fn measurements(seed: u64) -> Vec<Measurement> {
    let mut rng = Rng(seed);
    (0..BENCHMARKS)
        .map(|i| {
            let per_iter = 1000.0 * (1.0 + i as f64 / 10.0);
            let iters: Vec<f64> = (1..=SAMPLES).map(|k| (k * 10) as f64).collect();
            let times: Vec<f64> = iters
                .iter()
                .map(|n| n * per_iter * (1.0 + 0.02 * (rng.next_f64() - 0.5)))
                .collect();
            let e = |p: f64| Estimate {
                point: p,
                lower: Some(p * 0.99),
                upper: Some(p * 1.01),
                confidence_level: Some(0.95),
                standard_error: Some(p * 0.005),
            };
            let statistics: BTreeMap<Statistic, Estimate> = [
                (Statistic::Mean, e(per_iter)),
                (Statistic::Median, e(per_iter)),
                (Statistic::Slope, e(per_iter)),
                (Statistic::StdDev, e(per_iter * 0.01)),
                (Statistic::MedianAbsDev, e(per_iter * 0.01)),
            ]
            .into_iter()
            .collect();
            Measurement {
                benchmark: name(i),
                metric: metric::TIME.to_owned(),
                unit: "ns".to_owned(),
                direction: Direction::LowerIsBetter,
                estimate: e(per_iter),
                statistics,
                throughput: Some(Throughput {
                    kind: ThroughputKind::Bytes,
                    per_iteration: 4096,
                }),
                samples: Some(Samples::new(SamplingMode::Linear, iters, times).unwrap()),
            }
        })
        .collect()
}

fn provenance() -> RunProvenance {
    RunProvenance {
        suite: "synthetic".to_owned(),
        package: Some("synthetic".to_owned()),
        command: vec![
            "bench-run".to_owned(),
            "--suite".to_owned(),
            "synthetic".to_owned(),
        ],
        machine: Machine {
            fingerprint: "bench-machine".to_owned(),
            cpu_model: "cpu".to_owned(),
            logical_cores: 2,
            ..Machine::default()
        },
        toolchain: Some(Toolchain {
            fingerprint: "bench-toolchain".to_owned(),
            rustc_version: "1.95.0".to_owned(),
            host: "x86_64".to_owned(),
            ..Toolchain::default()
        }),
        build: BuildConfig {
            profile: "bench".to_owned(),
            ..BuildConfig::default()
        },
        ..RunProvenance::default()
    }
}

/// Writes `measurements` in criterion's on-disk layout (`<id>/new/{benchmark,estimates,sample}.json`).
fn write_criterion_dir(dir: &Path, results: &[Measurement]) {
    for m in results {
        let new = dir.join(m.benchmark.full.replace('/', "_")).join("new");
        std::fs::create_dir_all(&new).unwrap();
        let id = &m.benchmark;
        std::fs::write(
            new.join("benchmark.json"),
            serde_json::json!({
                "group_id": id.group, "function_id": id.function, "value_str": id.value,
                "throughput": {"Bytes": 4096}, "full_id": id.full, "directory_name": id.full, "title": id.full
            })
            .to_string(),
        )
        .unwrap();
        let est = |s: Statistic| {
            let e = m.statistics[&s];
            serde_json::json!({"confidence_interval": {"confidence_level": 0.95, "lower_bound": e.lower, "upper_bound": e.upper},
                               "point_estimate": e.point, "standard_error": e.standard_error})
        };
        std::fs::write(
            new.join("estimates.json"),
            serde_json::json!({
                "mean": est(Statistic::Mean), "median": est(Statistic::Median), "median_abs_dev": est(Statistic::MedianAbsDev),
                "slope": est(Statistic::Slope), "std_dev": est(Statistic::StdDev)
            })
            .to_string(),
        )
        .unwrap();
        let s = m.samples.as_ref().unwrap();
        std::fs::write(
            new.join("sample.json"),
            serde_json::json!({"sampling_mode": "Linear", "iters": s.iters(), "times": s.times_ns()}).to_string(),
        )
        .unwrap();
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn overhead(c: &mut Criterion) {
    let rt = runtime();
    let scratch = tempfile::tempdir().unwrap();
    let criterion_dir = scratch.path().join("criterion");
    write_criterion_dir(&criterion_dir, &measurements(1));
    let ledger = rt
        .block_on(Ledger::open(&scratch.path().join("ledger.sqlite")))
        .unwrap();
    let config = CompareConfig::default();
    let root = workspace_root();

    let mut group = c.benchmark_group("overhead_100");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("provenance", |b| {
        b.iter(|| {
            let machine = bench_runner::provenance::machine();
            let toolchain = bench_runner::provenance::toolchain(&root).unwrap();
            let git = bench_runner::provenance::git(&root).unwrap();
            (machine, toolchain, git)
        });
    });
    group.bench_function("parse_criterion_output", |b| {
        b.iter(|| bench_adapters::criterion::read_dir(&criterion_dir).unwrap());
    });
    group.bench_function("record_run", |b| {
        let run = NewRun {
            source: RunSource::BenchRun,
            provenance: provenance(),
            measurements: measurements(2),
        };
        b.iter(|| rt.block_on(ledger.record_run(&run)).unwrap());
    });
    group.bench_function("compare_and_report", |b| {
        b.iter(|| rt.block_on(compare_latest(&ledger, &config, false)));
    });
    group.bench_function("total", |b| {
        b.iter(|| {
            let machine = bench_runner::provenance::machine();
            let toolchain = bench_runner::provenance::toolchain(&root).unwrap();
            let git = bench_runner::provenance::git(&root).unwrap();
            let results = bench_adapters::criterion::read_dir(&criterion_dir).unwrap();
            let mut provenance = provenance();
            provenance.git = git;
            provenance.toolchain = Some(Toolchain {
                fingerprint: "bench-toolchain".to_owned(),
                ..toolchain
            });
            provenance.machine = Machine {
                fingerprint: "bench-machine".to_owned(),
                ..machine
            };
            rt.block_on(async {
                ledger
                    .record_run(&NewRun {
                        source: RunSource::BenchRun,
                        provenance,
                        measurements: results,
                    })
                    .await
                    .unwrap();
                compare_latest(&ledger, &config, false).await
            })
        });
    });
    group.finish();
}

/// What `bench-run compare previous latest` (or `gate`) does after opening the ledger.
async fn compare_latest(ledger: &Ledger, config: &CompareConfig, gate: bool) -> usize {
    let head_id = ledger.latest_run(Some("synthetic")).await.unwrap().unwrap();
    let base_id = ledger.previous_run(head_id).await.unwrap().unwrap();
    let head = ledger.require_run(head_id).await.unwrap();
    let base = ledger.require_run(base_id).await.unwrap();
    let base_results = ledger.measurements(base_id).await.unwrap();
    let head_results = ledger.measurements(head_id).await.unwrap();
    let history = ledger
        .history("synthetic", head.machine_id, head_id, config.history_runs())
        .await
        .unwrap();
    let comparison = compare::compare(&base_results, &head_results, &history, config);
    let text = bench_report::comparison_terminal(&comparison, &base, &head);
    if gate {
        let mismatches = compare::check_comparable(&base.provenance, &head.provenance);
        let _ = compare::gate_outcome(&comparison, &mismatches, false);
    }
    text.len()
}

/// The 1M-result ledger, generated on first use.
fn ledger_1m(rt: &tokio::runtime::Runtime) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace_root().join("target"), PathBuf::from);
    let dir = target.join("bench-data");
    let path = dir.join(format!("ledger-{}x{}.sqlite", RUNS_1M, BENCHMARKS));
    let done = path.with_extension("complete");
    if done.exists() {
        return path;
    }
    std::fs::create_dir_all(&dir).unwrap();
    for stale in [
        path.clone(),
        path.with_extension("sqlite-wal"),
        path.with_extension("sqlite-shm"),
    ] {
        let _ = std::fs::remove_file(stale);
    }
    eprintln!(
        "generating {} ({} results; once)",
        path.display(),
        RUNS_1M * BENCHMARKS
    );
    rt.block_on(async {
        let ledger = Ledger::open(&path).await.unwrap();
        for run in 0..RUNS_1M {
            let run = NewRun {
                source: RunSource::BenchRun,
                provenance: provenance(),
                measurements: measurements(run as u64),
            };
            ledger.record_run(&run).await.unwrap();
        }
        ledger.close().await;
    });
    std::fs::write(&done, b"").unwrap();
    path
}

/// The 1M-result ledger copied into a fresh database of the test PostgreSQL server
/// (`testkit::postgres`; every process starts its own, so the copy is made once per bench
/// process, a few minutes); `None` when PostgreSQL is missing outside CI.
fn ledger_1m_postgres(rt: &tokio::runtime::Runtime) -> Option<String> {
    let server = testkit::postgres::server("ledger_1m_postgres")?;
    let source = ledger_1m(rt);
    let url = server.create_database();
    eprintln!(
        "copying {} into PostgreSQL (once per process)",
        source.display()
    );
    rt.block_on(async {
        let from = Ledger::open_read_only(&source).await.unwrap();
        let to = Ledger::open(Location::parse(&url).unwrap()).await.unwrap();
        let report = copy_ledger(&*from, &*to, |p| {
            if p.done % 1000 == 0 {
                eprintln!("  {}/{} runs", p.done, p.total);
            }
        })
        .await
        .unwrap();
        assert_eq!(report.runs_copied, RUNS_1M);
        to.close().await;
    });
    Some(url)
}

fn big_ledger(c: &mut Criterion) {
    let rt = runtime();
    // Generated lazily, inside the first benchmark, so `--list` and filtered runs skip it.
    let sqlite: std::cell::OnceCell<(String, Ledger)> = std::cell::OnceCell::new();
    let open_sqlite = || {
        sqlite.get_or_init(|| {
            let path = ledger_1m(&rt);
            let ledger = rt.block_on(Ledger::open(&path)).unwrap();
            let runs = rt
                .block_on(ledger.runs(&bench_store::RunFilter::default()))
                .unwrap();
            let count: i64 = runs.iter().map(|r| r.results).sum();
            assert!(count >= 1_000_000, "the ledger holds {count} results");
            (path.to_string_lossy().into_owned(), ledger)
        })
    };
    ledger_group(c, &rt, "ledger_1m", &open_sqlite);

    let postgres: std::cell::OnceCell<Option<(String, Ledger)>> = std::cell::OnceCell::new();
    let open_postgres = || {
        postgres
            .get_or_init(|| {
                let url = ledger_1m_postgres(&rt)?;
                let ledger = rt
                    .block_on(Ledger::open(Location::parse(&url).unwrap()))
                    .unwrap();
                Some((url, ledger))
            })
            .as_ref()
    };
    // Skipped (with a note from testkit) where PostgreSQL is missing.
    if testkit::postgres::server("ledger_1m_postgres").is_some() {
        ledger_group(c, &rt, "ledger_1m_postgres", &|| {
            open_postgres().expect("the PostgreSQL ledger")
        });
    }
}

/// `compare` and `gate` on the 1M ledger `open` gives (its `--db` value and the open ledger),
/// through the library and through the `bench-run` binary.
fn ledger_group<'a>(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    name: &str,
    open: &dyn Fn() -> &'a (String, Ledger),
) {
    let config = CompareConfig::default();
    let exe = env!("CARGO_BIN_EXE_bench-run");
    let cli = |db: &str, args: &[&str]| {
        let output = std::process::Command::new(exe)
            .arg("--db")
            .arg(db)
            .args(args)
            .output()
            .unwrap();
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };

    let mut group = c.benchmark_group(name);
    group.sample_size(20);
    group.bench_function("compare", |b| {
        let (_, ledger) = open();
        b.iter(|| rt.block_on(compare_latest(ledger, &config, false)));
    });
    group.bench_function("gate", |b| {
        let (_, ledger) = open();
        b.iter(|| rt.block_on(compare_latest(ledger, &config, true)));
    });
    group.bench_function("gate_cli", |b| {
        let (db, _) = open();
        b.iter(|| {
            cli(
                db,
                &[
                    "gate",
                    "--base",
                    "previous",
                    "--head",
                    "latest",
                    "--suite",
                    "synthetic",
                ],
            )
        });
    });
    group.bench_function("compare_cli", |b| {
        let (db, _) = open();
        b.iter(|| cli(db, &["compare", "previous", "latest"]));
    });
    group.finish();
}

criterion_group!(benches, overhead, big_ledger);
criterion_main!(benches);
