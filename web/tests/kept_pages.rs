//! Kept pages and answers never outlive what they show: on both engines, every page the server
//! keeps (run, compare, trend, dashboard, run lists and the trend API) is asked once, then the
//! ledger gains a run, a tag or a note from outside the server (as `bench-run` writes to the
//! database beside it), and the next view shows it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use axum::Router;
use bench_model::{NewRun, RunId, RunSource};
use bench_store::{Ledger, Location};
use util::get;
use web::{AppState, app};

fn run(commit: u32) -> NewRun {
    NewRun {
        source: RunSource::BenchRun,
        provenance: util::provenance("demo", "m1", commit),
        measurements: vec![
            util::timed("parse/small", 1000.0, commit),
            util::timed("parse/large", 50_000.0, commit + 3),
        ],
    }
}

/// The body of `uri`, which must answer 200.
async fn body(app: &Router, uri: &str) -> String {
    let reply = get(app, uri).await;
    assert_eq!(reply.status, 200, "{uri}: {}", reply.body);
    reply.body
}

/// The pages as a viewer sees them, each asked twice (the second from what was kept).
async fn views(app: &Router, base: RunId, head: RunId) -> Vec<(String, String)> {
    let uris = [
        format!("/runs/{head}"),
        format!("/compare?base={base}&head={head}"),
        "/suites/demo".to_owned(),
        "/".to_owned(),
        "/runs".to_owned(),
        "/api/runs".to_owned(),
        "/api/suites/demo/trend".to_owned(),
    ];
    let mut out = Vec::new();
    for uri in uris {
        let first = body(app, &uri).await;
        assert_eq!(
            body(app, &uri).await,
            first,
            "{uri} changed with nothing recorded"
        );
        out.push((uri, first));
    }
    out
}

async fn every_kept_page_shows_what_is_recorded_after_it(ledger: Ledger) {
    let ids: Vec<RunId> = {
        let mut ids = Vec::new();
        for commit in 1..=3 {
            ids.push(ledger.record_run(&run(commit)).await.unwrap());
        }
        ids
    };
    let app = app(AppState::new(ledger.clone()));
    let (base, head) = (ids[1], ids[2]);
    let before = views(&app, base, head).await;

    ledger.tag(head, "release-7").await.unwrap();
    ledger.annotate(head, "kernel upgraded").await.unwrap();
    let newer = ledger.record_run(&run(4)).await.unwrap();
    let after = views(&app, base, head).await;
    let page = |views: &[(String, String)], uri: &str| -> String {
        views.iter().find(|(u, _)| u == uri).unwrap().1.clone()
    };

    let run_page = page(&after, &format!("/runs/{head}"));
    assert!(run_page.contains("release-7") && run_page.contains("kernel upgraded"));
    assert!(!page(&before, &format!("/runs/{head}")).contains("release-7"));
    let compare = page(&after, &format!("/compare?base={base}&head={head}"));
    assert!(compare.contains("kernel upgraded"), "the head's note");
    let newer_link = format!("/runs/{newer}\"");
    for uri in ["/", "/runs"] {
        assert!(
            page(&after, uri).contains(&newer_link),
            "{uri} lists run {newer}"
        );
        assert!(!page(&before, uri).contains(&newer_link));
    }
    let listed: serde_json::Value = serde_json::from_str(&page(&after, "/api/runs")).unwrap();
    assert_eq!(listed["runs"][0]["id"], newer);
    let trend: serde_json::Value =
        serde_json::from_str(&page(&after, "/api/suites/demo/trend")).unwrap();
    assert_eq!(trend["runs"].as_array().unwrap().len(), 4);
    assert!(page(&after, "/suites/demo").contains("(4 runs)"));
    assert!(page(&before, "/suites/demo").contains("(3 runs)"));
}

#[tokio::test]
async fn on_sqlite_every_kept_page_shows_what_is_recorded_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(&dir.path().join("ledger.sqlite"))
        .await
        .unwrap();
    every_kept_page_shows_what_is_recorded_after_it(ledger).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_every_kept_page_shows_what_is_recorded_after_it() {
    let Some(pg) = testkit::postgres::server("kept pages on postgres") else {
        return;
    };
    let location = Location::parse(&pg.create_database()).unwrap();
    let ledger = Ledger::open(&location).await.unwrap();
    every_kept_page_shows_what_is_recorded_after_it(ledger).await;
}
