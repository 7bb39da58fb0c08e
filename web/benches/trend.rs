//! Server time of the trend page for a ledger of 50 benchmarks x 1,000 runs (the bar: under
//! 150 ms), measured through the router from request to rendered body: with the trend cache
//! warm (the steady state) and without it (the first request after a new run), plus the JSON
//! trend and the dashboard over the same ledger.
//!
//! The ledger is generated once into the target directory (`web-bench/` under cargo's
//! `CARGO_TARGET_TMPDIR`) and reused by later runs. The `_postgres` group serves the same
//! ledger copied into a database of a PostgreSQL server the bench starts (`testkit::postgres`;
//! skipped with a note where PostgreSQL is missing outside CI). Run with
//! `bench-run --suite trend -p web` or `cargo bench -p web --bench trend`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use axum::body::Body;
use axum::http::{Request, StatusCode};
use bench_store::copy::copy_ledger;
use bench_store::{Ledger, Location};
use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::BodyExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use testkit::synthetic::SyntheticSuite;
use tower::ServiceExt;

const BENCHMARKS: usize = 50;
const RUNS: usize = 1_000;

fn suite() -> SyntheticSuite {
    SyntheticSuite {
        suite: "big".to_owned(),
        benchmarks: BENCHMARKS,
        runs: RUNS,
    }
}

/// The ledger, generated on first use and kept in the target directory.
fn ledger_path(rt: &tokio::runtime::Runtime) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-bench");
    let path = dir.join(format!("trend-v2-{BENCHMARKS}x{RUNS}.sqlite"));
    if path.exists() {
        return path;
    }
    std::fs::create_dir_all(&dir).unwrap();
    let partial = dir.join(format!(
        "trend-v2-{BENCHMARKS}x{RUNS}.partial-{}.sqlite",
        std::process::id()
    ));
    rt.block_on(async {
        let ledger = Ledger::open(&partial).await.unwrap();
        suite().record(&ledger).await.unwrap();
        // Closing the last connection checkpoints the WAL into the main file.
        ledger.close().await;
    });
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

    pages(c, &rt, &format!("web_{BENCHMARKS}x{RUNS}"), &app, &uncached);

    let Some(server) = testkit::postgres::server("web trend bench on postgres") else {
        return;
    };
    let url = server.create_database();
    let (app, uncached) = rt.block_on(async {
        let from = Ledger::open_read_only(&path).await.unwrap();
        let to = Ledger::open(Location::parse(&url).unwrap()).await.unwrap();
        copy_ledger(&*from, &*to, |_| {}).await.unwrap();
        (
            web::app(web::AppState::new(to.clone())),
            web::app(web::AppState::new(to).with_trend_cache(0)),
        )
    });
    pages(
        c,
        &rt,
        &format!("web_{BENCHMARKS}x{RUNS}_postgres"),
        &app,
        &uncached,
    );
}

fn pages(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    name: &str,
    app: &axum::Router,
    uncached: &axum::Router,
) {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    // The server's steady state: the analysed history comes from the trend cache (checked
    // against the ledger on every request), the charts are drawn anew.
    group.bench_function("trend_page", |b| {
        b.iter(|| rt.block_on(fetch(app, "/suites/big")))
    });
    // The first request after a run was added: the history is read and analysed too.
    group.bench_function("trend_page_uncached", |b| {
        b.iter(|| rt.block_on(fetch(uncached, "/suites/big")))
    });
    group.bench_function("trend_json", |b| {
        b.iter(|| rt.block_on(fetch(app, "/api/suites/big/trend")));
    });
    group.bench_function("dashboard", |b| b.iter(|| rt.block_on(fetch(app, "/"))));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
