//! Seed 002's log imported with `bench-run import markdown-log`, a live `mathldbt_transport`
//! run recorded on top and annotated with the fixture change: the trend page of
//! `mathldbt_transport/encode_zstd_ws/100000` draws the seed's three points and the live one as
//! one chart, and shows the annotation beside it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use axum::http::StatusCode;
use bench_store::{Ledger, Location};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use util::{bench_run_binary, get, testdata};
use web::{AppState, app};

const BENCHMARK: &str = "mathldbt_transport/encode_zstd_ws/100000";
const FIXTURE_NOTE: &str = "bars fixture rebuilt to the data of seed 002 (pair, tf, e_ms, OHLCV)";

fn bench_run(db: &Path, dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(bench_run_binary())
        .arg("--db")
        .arg(db)
        .args(args)
        .current_dir(dir)
        .env_remove("BENCH_DB")
        .env_remove("BENCH_MACHINE")
        .env_remove("BENCH_PUSH_TOKEN")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bench-run {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The live suite's ids, as its `--list` printed them.
fn live_ids() -> Vec<String> {
    testkit::cargo_criterion::listed_ids(&testdata("mdlog/seed-002-live/mathldbt_transport.list"))
}

#[tokio::test]
async fn the_trend_page_shows_the_seed_history_and_the_live_run_as_one_series() {
    let work = tempfile::tempdir().unwrap();
    let db: PathBuf = work.path().join("ledger.sqlite");
    let seed = testdata("mdlog/seed-002.md");
    bench_run(
        &db,
        work.path(),
        &["import", "markdown-log", seed.to_str().unwrap()],
    );
    let messages: String = live_ids()
        .iter()
        .map(|id| testkit::cargo_criterion::benchmark_complete(id, 14_000_000.0) + "\n")
        .collect();
    let file = work.path().join("live.jsonl");
    std::fs::write(&file, messages).unwrap();
    let out = bench_run(
        &db,
        work.path(),
        &[
            "import",
            "cargo-criterion",
            file.to_str().unwrap(),
            "--suite",
            "mathldbt_transport",
        ],
    );
    let live: i64 = String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    bench_run(
        &db,
        work.path(),
        &["annotate", &live.to_string(), FIXTURE_NOTE],
    );

    let ledger = Ledger::open(Location::Sqlite(db)).await.unwrap();
    let app = app(AppState::new(ledger));

    // The API: one series, the seed's entries of 2026-02-14 and 2026-02-15 and the live run.
    let trend = util::get(
        &app,
        "/api/suites/mathldbt_transport/trend?machine=all&per_page=1000",
    )
    .await
    .json();
    let series: Vec<&serde_json::Value> = trend["series"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["benchmark"] == BENCHMARK)
        .collect();
    assert_eq!(series.len(), 1, "{trend:#}");
    let points = series[0]["points"].as_array().unwrap();
    let runs: Vec<i64> = points
        .iter()
        .map(|p| p["run_id"].as_i64().unwrap())
        .collect();
    assert_eq!(runs, [2, 8, 9, live], "{:#}", series[0]);
    assert!(
        trend["series"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| !s["benchmark"].as_str().unwrap().contains("(level=")),
        "no series under the log's own names"
    );

    // The page: the chart of the benchmark with its four runs and the fixture note.
    let page = get(&app, "/suites/mathldbt_transport?machine=all&per_page=1000").await;
    assert_eq!(page.status, StatusCode::OK);
    // Times are the default metric: the heading names the benchmark alone.
    let heading = format!("{BENCHMARK}</h2>");
    let at = page
        .body
        .find(&heading)
        .unwrap_or_else(|| panic!("no chart of {BENCHMARK}"));
    let section = &page.body[at..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains("4 run(s)"), "{section}");
    assert!(section.contains("unit ns"), "{section}");
    assert!(section.contains(FIXTURE_NOTE), "{section}");
    assert!(
        section.contains(&format!("run #{live}</a>: {FIXTURE_NOTE}")),
        "{section}"
    );
}
