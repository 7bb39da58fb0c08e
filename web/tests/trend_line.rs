//! The trend is a line's history: on a ledger where every pull request's `ab` pair was pushed
//! between the main line's runs (as the CI recipe does), the trend page, its change points and
//! noise floor and the dashboard follow the main line; `?runs=all` draws every run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use axum::http::StatusCode;
use bench_model::{NewRun, RunSource};
use bench_store::{Ledger, PairingPlan};
use util::get;
use web::{AppState, app};

/// 12 main-line runs of `collatz` at 1 µs, and after each a pull request's pair whose head is
/// 30% slower (the pull request that never merged), pushed as `bench-run ab --push` does.
async fn interleaved() -> (Ledger, Vec<i64>) {
    let ledger = Ledger::in_memory().await.unwrap();
    let mut line = Vec::new();
    for commit in 1..=12 {
        let run = NewRun {
            source: RunSource::BenchRun,
            provenance: util::provenance("collatz", "m1", commit),
            measurements: vec![util::timed("collatz/27", 1000.0, commit)],
        };
        line.push(ledger.record_run(&run).await.unwrap());
        let side = |source, level: f64| {
            let mut measurement = util::timed("collatz/27", level, commit);
            measurement.samples = None;
            NewRun {
                source,
                provenance: util::provenance("collatz", "m1", 100 + commit),
                measurements: vec![measurement],
            }
        };
        let plan = PairingPlan {
            seed: 1,
            base_first: vec![true, false, true],
            base_rev: "main".to_owned(),
            head_rev: None,
            round_layouts: Vec::new(),
        };
        ledger
            .record_pair(
                &side(RunSource::AbBase, 1000.0),
                &side(RunSource::AbHead, 1300.0),
                &plan,
            )
            .await
            .unwrap();
    }
    (ledger, line)
}

#[tokio::test]
async fn the_trend_draws_the_main_line_and_every_run_only_when_asked() {
    let (ledger, line) = interleaved().await;
    let app = app(AppState::new(ledger));

    let trend = get(&app, "/api/suites/collatz/trend").await.json();
    assert_eq!(trend["drawn"], "line");
    let runs: Vec<i64> = trend["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(runs, line, "the main line only");
    let series = &trend["series"][0];
    assert!(
        series["change_points"].as_array().unwrap().is_empty(),
        "no change point follows a pull request: {series:#}"
    );
    let floor = series["noise_floor"]["pct"].as_f64().unwrap();
    assert!(floor < 3.0, "the line's noise floor, {floor}%");

    let all = get(&app, "/api/suites/collatz/trend?runs=all").await.json();
    assert_eq!(all["drawn"], "all");
    assert_eq!(all["runs"].as_array().unwrap().len(), 36);
    let mixed = all["series"][0]["noise_floor"]["pct"].as_f64().unwrap();
    assert!(mixed > floor, "mixing the pairs in inflates the floor");

    let page = get(&app, "/suites/collatz").await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(
        page.body.matches("<circle ").count(),
        12,
        "one point per line run"
    );
    assert!(page.body.contains("the suite&#39;s line") || page.body.contains("the suite's line"));
    let every = get(&app, "/suites/collatz?runs=all").await;
    assert_eq!(every.body.matches("<circle ").count(), 36);
    assert!(
        every
            .body
            .contains("<option value=\"all\" selected>every run")
    );

    let bad = get(&app, "/api/suites/collatz/trend?runs=some").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(
        bad.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("line or all")
    );
}

#[tokio::test]
async fn the_dashboard_shows_the_lines_newest_run_not_the_last_push() {
    let (ledger, line) = interleaved().await;
    let app = app(AppState::new(ledger.clone()));
    let dashboard = get(&app, "/").await;
    assert_eq!(dashboard.status, StatusCode::OK);
    let newest = line[11];
    let previous = line[10];
    assert!(
        dashboard.body.contains(&format!(
            "href=\"/compare?base={previous}&#38;head={newest}\""
        )),
        "{}",
        dashboard.body
    );
    assert!(
        dashboard
            .body
            .contains("No regression: the newest run of every suite"),
        "{}",
        dashboard.body
    );

    // Its verdicts are kept between views; a new run is a new verdict.
    assert_eq!(get(&app, "/").await.body, dashboard.body);
    let slower = NewRun {
        source: RunSource::BenchRun,
        provenance: util::provenance("collatz", "m1", 13),
        measurements: vec![util::timed("collatz/27", 2000.0, 13)],
    };
    let newest = ledger.record_run(&slower).await.unwrap();
    let after = get(&app, "/").await;
    assert!(
        after.body.contains(&format!(
            "href=\"/compare?base={}&#38;head={newest}\"",
            line[11]
        )),
        "{}",
        after.body
    );
    assert!(
        !after.body.contains("No regression: the newest run"),
        "{}",
        after.body
    );
}
