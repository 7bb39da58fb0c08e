//! What keeps the server fast on a large ledger, checked for what it must not change: a trend
//! of many benchmarks comes a page of series at a time and the pages together are the whole
//! trend; kept comparisons and evidence answer exactly as a server that keeps nothing, also
//! after later runs arrive.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use axum::http::StatusCode;
use bench_model::{NewRun, RunSource};
use bench_store::Ledger;
use util::{get, post_json};
use web::{AppState, app};

/// `runs` runs of suite `wide` on one machine, each of `benchmarks` benchmarks; the last run
/// is 30% slower on the first benchmark.
async fn wide(benchmarks: usize, runs: u32) -> (Ledger, Vec<i64>) {
    wide_slow_at(benchmarks, runs, runs).await
}

/// As [`wide`], with run `slow` (from 1) the slower one.
async fn wide_slow_at(benchmarks: usize, runs: u32, slow: u32) -> (Ledger, Vec<i64>) {
    let ledger = Ledger::in_memory().await.unwrap();
    let mut ids = Vec::new();
    for commit in 1..=runs {
        let measurements = (0..benchmarks)
            .map(|b| {
                let slow = commit == slow && b == 0;
                let level = 1000.0 + b as f64 * 10.0;
                util::timed(
                    &format!("wide/b{b:03}"),
                    if slow { level * 1.3 } else { level },
                    commit + u32::try_from(b).unwrap(),
                )
            })
            .collect();
        let run = NewRun {
            source: RunSource::BenchRun,
            provenance: util::provenance("wide", "m1", commit),
            measurements,
        };
        ids.push(ledger.record_run(&run).await.unwrap());
    }
    (ledger, ids)
}

fn names(trend: &serde_json::Value) -> Vec<String> {
    trend["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["benchmark"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_wide_trend_comes_in_pages_that_together_are_the_whole_trend() {
    let (ledger, _) = wide(120, 4).await;
    let app = app(AppState::new(ledger));

    let everything = get(&app, "/api/suites/wide/trend?per_page=1000")
        .await
        .json();
    assert_eq!(everything["series_total"], 120);
    assert_eq!(everything["next_page"], serde_json::Value::Null);
    let all_names = names(&everything);
    assert_eq!(all_names.len(), 120);

    let mut paged = Vec::new();
    let mut page = Some(1);
    while let Some(n) = page {
        let reply = get(&app, &format!("/api/suites/wide/trend?page={n}")).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let trend = reply.json();
        assert_eq!(trend["per_page"], web::trend::SERIES_PER_PAGE);
        assert_eq!(trend["page"], n);
        assert_eq!(
            trend["runs"], everything["runs"],
            "every page names every run"
        );
        paged.extend(names(&trend));
        page = trend["next_page"].as_u64();
    }
    assert_eq!(paged, all_names, "50 + 50 + 20, in order, none twice");

    for (uri, status) in [
        ("/api/suites/wide/trend?page=4", StatusCode::NOT_FOUND),
        ("/api/suites/wide/trend?page=0", StatusCode::BAD_REQUEST),
        ("/api/suites/wide/trend?per_page=0", StatusCode::BAD_REQUEST),
        (
            "/api/suites/wide/trend?per_page=1001",
            StatusCode::BAD_REQUEST,
        ),
        (
            "/api/suites/wide/trend?page=99999999999999999999",
            StatusCode::BAD_REQUEST,
        ),
        ("/suites/wide?page=4", StatusCode::NOT_FOUND),
    ] {
        assert_eq!(get(&app, uri).await.status, status, "{uri}");
    }

    let first = get(&app, "/suites/wide").await;
    assert_eq!(first.status, StatusCode::OK);
    assert!(
        first.body.contains("Benchmarks 1–50 of 120"),
        "{}",
        first.body
    );
    assert!(first.body.contains("wide/b049") && !first.body.contains("wide/b050"));
    assert!(first.body.contains("rel=\"next\"") && !first.body.contains("rel=\"prev\""));
    assert_eq!(first.content_type(), "text/html; charset=utf-8");
    assert_eq!(
        get(&app, "/suites/wide").await.body,
        first.body,
        "kept, the same page"
    );
    let last = get(&app, "/suites/wide?page=3&scale=log").await;
    assert!(
        last.body.contains("Benchmarks 101–120 of 120"),
        "{}",
        last.body
    );
    assert!(last.body.contains("wide/b119") && !last.body.contains("wide/b099"));
    assert!(last.body.contains("rel=\"prev\"") && !last.body.contains("rel=\"next\""));
    assert!(
        last.body.contains("page=2&#38;scale=log"),
        "the pager keeps the scale: {}",
        last.body
            .lines()
            .find(|l| l.contains("pager"))
            .unwrap_or_default()
    );
}

#[tokio::test]
async fn a_kept_trend_page_is_drawn_again_for_a_new_run_or_note() {
    let (ledger, ids) = wide(3, 4).await;
    let app = app(AppState::new(ledger.clone()));
    let before = get(&app, "/suites/wide").await.body;
    assert!(before.contains("4 run(s)"), "{before}");
    ledger.annotate(ids[1], "compiler upgraded").await.unwrap();
    let noted = get(&app, "/suites/wide").await.body;
    assert!(
        noted.contains("compiler upgraded"),
        "a note on an old run is drawn"
    );
    let run = NewRun {
        source: RunSource::BenchRun,
        provenance: util::provenance("wide", "m1", 5),
        measurements: vec![util::timed("wide/b000", 1000.0, 5)],
    };
    ledger.record_run(&run).await.unwrap();
    let newer = get(&app, "/suites/wide").await.body;
    assert!(newer.contains("5 run(s)"), "a new run is drawn");
    // A run on another machine changes the machine list of every machine's page.
    let elsewhere = NewRun {
        source: RunSource::BenchRun,
        provenance: util::provenance("wide", "m2", 6),
        measurements: vec![util::timed("wide/b000", 1000.0, 6)],
    };
    let listed = get(&app, "/suites/wide?machine=m1").await.body;
    ledger.record_run(&elsewhere).await.unwrap();
    let relisted = get(&app, "/suites/wide?machine=m1").await.body;
    assert_ne!(listed, relisted, "the other machine's run is counted");
}

#[tokio::test]
async fn kept_answers_are_the_answers_of_a_server_that_keeps_nothing() {
    let (ledger, ids) = wide(60, 6).await;
    let (base, head) = (ids[4], ids[5]);
    let keeping = app(AppState::new(ledger.clone()));
    let compare = format!("/api/compare?base={base}&head={head}");
    let evidence = format!("/api/evidence?base={base}&head={head}");
    let page = format!("/compare?base={base}&head={head}");

    let first = [
        get(&keeping, &compare).await,
        get(&keeping, &evidence).await,
        get(&keeping, &page).await,
    ];
    for reply in &first {
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    }
    assert_eq!(
        first[0].json()["counts"]["regressions"],
        1,
        "{}",
        first[0].body
    );
    assert_eq!(first[1].content_type(), "application/json");
    assert_eq!(first[1].json()["head"]["id"], head);

    // Later runs of the same line change neither answer: the history of a run is the runs
    // before it.
    let later = NewRun {
        source: RunSource::BenchRun,
        provenance: util::provenance("wide", "m1", 7),
        measurements: vec![util::timed("wide/b000", 5000.0, 7)],
    };
    ledger.record_run(&later).await.unwrap();

    let fresh = app(AppState::new(ledger));
    for uri in [&compare, &evidence, &page] {
        let kept = get(&keeping, uri).await;
        let computed = get(&fresh, uri).await;
        assert_eq!(kept.status, StatusCode::OK);
        assert_eq!(kept.body, computed.body, "{uri}: kept and computed differ");
    }
    assert_eq!(get(&keeping, &compare).await.body, first[0].body);
    assert_eq!(get(&keeping, &evidence).await.body, first[1].body);

    // Other settings are other answers.
    let strict = get(&keeping, &format!("{compare}&threshold=50"))
        .await
        .json();
    assert_eq!(strict["threshold_pct"], 50.0);
    assert_eq!(
        strict["counts"]["regressions"], 0,
        "a 30% step under a 50% threshold"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_extends_the_kept_trend_of_its_line_and_prepares_its_verdict() {
    let (source, ids) = wide(60, 6).await;
    let (target, _) = wide_slow_at(60, 5, 0).await;
    let state = AppState::new(target.clone()).with_ingest_token("t0ken");
    let app = app(state.clone());
    // A viewer reads the line once: from then on pushes extend it in the background.
    assert_eq!(
        get(&app, "/api/suites/wide/trend").await.status,
        StatusCode::OK
    );
    let body = bench_client::push::push_body(&source, ids[5])
        .await
        .unwrap();
    let pushed = post_json(&app, "/api/runs", Some("t0ken"), &body.to_string()).await;
    assert_eq!(pushed.status, StatusCode::CREATED, "{}", pushed.body);
    let run = pushed.json()["id"].as_i64().unwrap();
    let machine = target.machines(Some("wide")).await.unwrap()[0].id;
    let line = (
        "default".to_owned(),
        "wide".to_owned(),
        Some(machine),
        bench_store::TrendRuns::Line,
    );
    let base = target.previous_run(run).await.unwrap().unwrap();
    let mut waited = 0;
    while state.trend_cache().get(&line, (run, 6)).is_none()
        || state
            .verdict_cache()
            .get(&("default".to_owned(), base, run))
            .is_none()
    {
        assert!(waited < 200, "nothing was prepared in 20 s");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        waited += 1;
    }
    let history = state.trend_cache().get(&line, (run, 6)).unwrap();
    assert_eq!(
        history.runs.len(),
        6,
        "the pushed run is on the prepared line"
    );
    let verdict = state
        .verdict_cache()
        .get(&("default".to_owned(), base, run))
        .unwrap();
    assert_eq!(
        verdict.counts.regressions, 1,
        "the slow benchmark of the pushed run"
    );
}

#[tokio::test]
async fn a_trend_extended_by_new_runs_is_the_trend_read_whole() {
    let (ledger, _) = wide(60, 6).await;
    let keeping = app(AppState::new(ledger.clone()));
    let uri = "/api/suites/wide/trend?per_page=1000";
    let before = get(&keeping, uri).await;
    assert_eq!(before.status, StatusCode::OK);
    let record = |commit: u32, names: &[&str]| {
        let run = NewRun {
            source: RunSource::BenchRun,
            provenance: util::provenance("wide", "m1", commit),
            measurements: names
                .iter()
                .map(|n| util::timed(n, 2000.0, commit))
                .collect(),
        };
        let ledger = ledger.clone();
        async move { ledger.record_run(&run).await.unwrap() }
    };
    // A later commit, with a benchmark the line has not seen.
    record(7, &["wide/b000", "wide/b999_new"]).await;
    let fresh = app(AppState::new(ledger.clone()));
    let extended = get(&keeping, uri).await;
    assert_eq!(extended.json()["series_total"], 61);
    assert_eq!(extended.body, get(&fresh, uri).await.body);
    // An older commit recorded late goes between points.
    record(2, &["wide/b001"]).await;
    let fresh = app(AppState::new(ledger.clone()));
    assert_eq!(get(&keeping, uri).await.body, get(&fresh, uri).await.body);
}
