//! Server time of the trend page for a ledger of 50 benchmarks x 1,000 runs (the bar: under
//! 150 ms), measured through the router from request to rendered body: with the trend cache
//! warm (the steady state) and without it (the first request after a new run), plus the JSON
//! trend and the dashboard over the same ledger.
//!
//! The ledger is generated once into the target directory (`web-bench/` under cargo's
//! `CARGO_TARGET_TMPDIR`) and reused by later runs. Run with
//! `bench-run --suite trend -p web` or `cargo bench -p web --bench trend`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use axum::body::Body;
use axum::http::{Request, StatusCode};
use criterion::{Criterion, criterion_group, criterion_main};
use harness::ledger::Ledger;
use harness::model::{
    BenchmarkId, Direction, Estimate, GitInfo, Machine, Measurement, NewRun, RunProvenance,
    RunSource,
};
use http_body_util::BodyExt;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tower::ServiceExt;

const BENCHMARKS: usize = 50;
const RUNS: usize = 1_000;

fn machine() -> Machine {
    Machine {
        fingerprint: "bench-machine".to_owned(),
        hostname: "bench".to_owned(),
        cpu_model: "Bench CPU".to_owned(),
        physical_cores: Some(2),
        logical_cores: 2,
        memory_bytes: Some(24 << 30),
        os: "Debian GNU/Linux 12".to_owned(),
        kernel: "6.1".to_owned(),
        arch: "x86_64".to_owned(),
    }
}

/// Deterministic noise in [-1, 1].
fn noise(a: usize, b: usize) -> f64 {
    let mut x = (a as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (b as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 32;
    (x % 2001) as f64 / 1000.0 - 1.0
}

fn run(i: usize) -> NewRun {
    let measurements = (0..BENCHMARKS)
        .map(|b| {
            // Every benchmark has its own level; a third of them step by 15% at run 600.
            let level =
                1_000.0 * (1.0 + b as f64) * if b % 3 == 0 && i >= 600 { 1.15 } else { 1.0 };
            let v = level * (1.0 + 0.01 * noise(i, b));
            Measurement {
                benchmark: BenchmarkId::named(format!("group_{}/bench_{b:02}", b / 10)),
                metric: "time".to_owned(),
                unit: "ns".to_owned(),
                direction: Direction::LowerIsBetter,
                estimate: Estimate {
                    point: v,
                    lower: Some(v * 0.99),
                    upper: Some(v * 1.01),
                    confidence_level: Some(0.95),
                    standard_error: None,
                },
                statistics: BTreeMap::new(),
                throughput: None,
                samples: None,
            }
        })
        .collect();
    NewRun {
        source: RunSource::BenchRun,
        provenance: RunProvenance {
            suite: "big".to_owned(),
            command: vec!["bench-run".to_owned()],
            cwd: "/bench".to_owned(),
            machine: machine(),
            git: GitInfo {
                commit: Some(format!("{i:040x}")),
                branch: Some("main".to_owned()),
                dirty: false,
                commit_time: Some(1_700_000_000 + i as i64 * 3_600),
                summary: Some(format!("commit {i}")),
            },
            ..RunProvenance::default()
        },
        measurements,
    }
}

/// The ledger, generated on first use and kept in the target directory.
fn ledger_path(rt: &tokio::runtime::Runtime) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-bench");
    let path = dir.join(format!("trend-{BENCHMARKS}x{RUNS}.sqlite"));
    if path.exists() {
        return path;
    }
    std::fs::create_dir_all(&dir).unwrap();
    let partial = dir.join(format!(
        "trend-{BENCHMARKS}x{RUNS}.partial-{}.sqlite",
        std::process::id()
    ));
    rt.block_on(async {
        let ledger = Ledger::open(&partial).await.unwrap();
        for i in 0..RUNS {
            ledger.record_run(&run(i)).await.unwrap();
        }
        ledger.annotate(600, "compiler upgrade").await.unwrap();
        // Closing the last connection checkpoints the WAL into the main file.
        ledger.pool().close().await;
    });
    let _ = std::fs::remove_file(format!("{}.migrate-lock", partial.display()));
    for suffix in ["", "-wal", "-shm"] {
        let from = PathBuf::from(format!("{}{suffix}", partial.display()));
        let to = PathBuf::from(format!("{}{suffix}", path.display()));
        if from.exists() {
            std::fs::rename(from, to).unwrap();
        }
    }
    path
}

async fn fetch(app: &axum::Router, uri: &str) -> usize {
    let response = app
        .clone()
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{uri}");
    response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .len()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let path = ledger_path(&rt);
    let (app, uncached) = rt.block_on(async {
        let ledger = Ledger::open_read_only(&path).await.unwrap();
        (
            web::app(web::AppState::new(ledger.clone())),
            web::app(web::AppState::new(ledger).with_trend_cache(0)),
        )
    });
    let size = rt.block_on(fetch(&app, "/suites/big"));
    eprintln!("trend page: {size} bytes for {BENCHMARKS} charts of {RUNS} runs");

    let mut group = c.benchmark_group(format!("web_{BENCHMARKS}x{RUNS}"));
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    // The server's steady state: the analysed history comes from the trend cache (checked
    // against the ledger on every request), the charts are drawn anew.
    group.bench_function("trend_page", |b| {
        b.iter(|| rt.block_on(fetch(&app, "/suites/big")))
    });
    // The first request after a run was added: the history is read and analysed too.
    group.bench_function("trend_page_uncached", |b| {
        b.iter(|| rt.block_on(fetch(&uncached, "/suites/big")))
    });
    group.bench_function("trend_json", |b| {
        b.iter(|| rt.block_on(fetch(&app, "/api/suites/big/trend")));
    });
    group.bench_function("dashboard", |b| b.iter(|| rt.block_on(fetch(&app, "/"))));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
