//! Ingest through the router, without a socket: `POST /api/runs` with the body `bench-run
//! --push` sends: refused without a token or with a wrong one, recorded once with a valid one,
//! old and new payloads accepted, hostile fields refused with the field named.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use axum::http::StatusCode;
use bench_store::Ledger;
use util::{busy_conditions, get, post_json, seeded};
use web::{AppState, app};

/// The body `bench-run --push` sends for a stored run.
async fn push_body(ledger: &Ledger, id: i64) -> serde_json::Value {
    bench_client::push::push_body(ledger, id).await.unwrap()
}

#[tokio::test]
async fn ingest_is_disabled_without_a_token() {
    let (ledger, _) = seeded().await;
    let body = push_body(&ledger, 1).await.to_string();
    let app = app(AppState::new(ledger));
    let r = post_json(&app, "/api/runs", Some("anything"), &body).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ingest is disabled")
    );
}

#[tokio::test]
async fn ingest_records_an_authenticated_valid_run() {
    let (source, _) = seeded().await;
    let pushed = push_body(&source, 5).await;
    let target = Ledger::in_memory().await.unwrap();
    let app = app(AppState::new(target.clone()).with_ingest_token("t0ken"));

    for token in [None, Some("wrong"), Some("t0ke"), Some("t0ken ")] {
        let r = post_json(&app, "/api/runs", token, &pushed.to_string()).await;
        if token == Some("t0ken ") {
            // Surrounding whitespace in the header is not part of the token.
            assert_eq!(r.status, StatusCode::CREATED);
            continue;
        }
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{token:?}");
        assert_eq!(
            r.headers.get("www-authenticate").unwrap(),
            "Bearer realm=\"bench-web\""
        );
    }

    let r = post_json(&app, "/api/runs", Some("t0ken"), &pushed.to_string()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let id = r.json()["id"].as_i64().unwrap();
    assert_eq!(
        r.headers.get("location").unwrap().to_str().unwrap(),
        format!("/runs/{id}")
    );
    // Stored exactly: provenance and measurements with raw samples.
    let stored = target.require_run(id).await.unwrap();
    let original = source.require_run(5).await.unwrap();
    assert_eq!(stored.provenance, original.provenance);
    assert_eq!(
        target.measurements(id).await.unwrap(),
        source.measurements(5).await.unwrap()
    );
    let page = get(&app, &format!("/runs/{id}")).await;
    assert_eq!(page.status, StatusCode::OK);

    let mut invalid = Vec::new();
    let mut v = pushed.clone();
    v["version"] = serde_json::json!(2);
    invalid.push((v, "unsupported push format version 2"));
    let mut v = pushed.clone();
    v["measurements"] = serde_json::json!([]);
    invalid.push((v, "no measurements"));
    let mut v = pushed.clone();
    v["provenance"]["suite"] = serde_json::json!(" ");
    invalid.push((v, "provenance.suite is empty"));
    let mut v = pushed.clone();
    v["measurements"][0]["samples"]["times_ns"] = serde_json::json!([1.0]);
    invalid.push((v, "sample arrays differ in length"));
    let mut v = pushed.clone();
    v["measurements"][1] = v["measurements"][0].clone();
    invalid.push((v, "duplicate result"));
    let mut v = pushed.clone();
    v["unexpected"] = serde_json::json!(true);
    invalid.push((v, "unknown field"));
    let mut v = pushed.clone();
    v["measurements"][0]["estimate"]["point"] = serde_json::json!("fast");
    invalid.push((v, "invalid run JSON"));
    for (i, (body, needle)) in invalid.iter().enumerate() {
        let r = post_json(&app, "/api/runs", Some("t0ken"), &body.to_string()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "case {i}: {}", r.body);
        let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains(needle), "case {i}: {message}");
    }
    let r = post_json(&app, "/api/runs", Some("t0ken"), "{not json").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);

    let huge = format!(
        "{{\"pad\": \"{}\"}}",
        "x".repeat(web::ingest::MAX_BODY_BYTES)
    );
    let r = post_json(&app, "/api/runs", Some("t0ken"), &huge).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.body);

    // Nothing invalid was recorded: the two valid pushes only.
    assert_eq!(target.suites().await.unwrap()[0].runs, 2);
}

#[tokio::test]
async fn ingest_accepts_conditions_and_payloads_without_them() {
    let (source, _) = seeded().await;
    let target = Ledger::in_memory().await.unwrap();
    let app = app(AppState::new(target.clone()).with_ingest_token("t0ken"));
    let mut old = push_body(&source, 5).await;
    // A client from before executables and conditions were recorded sends neither key.
    let provenance = old["provenance"].as_object_mut().unwrap();
    provenance.remove("bench_exe");
    provenance.remove("conditions");
    let r = post_json(&app, "/api/runs", Some("t0ken"), &old.to_string()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let id = r.json()["id"].as_i64().unwrap();
    let stored = target.require_run(id).await.unwrap().provenance;
    assert_eq!((stored.bench_exe, stored.conditions), (None, None));

    let mut new = push_body(&source, 5).await;
    new["provenance"]["bench_exe"] = serde_json::json!({"sha256": "c".repeat(64), "bytes": 42});
    new["provenance"]["conditions"] = serde_json::to_value(busy_conditions()).unwrap();
    let r = post_json(&app, "/api/runs", Some("t0ken"), &new.to_string()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let id = r.json()["id"].as_i64().unwrap();
    let stored = target.require_run(id).await.unwrap().provenance;
    assert_eq!(stored.conditions, Some(busy_conditions()));
    assert_eq!(stored.bench_exe.unwrap().bytes, 42);
    assert!(
        get(&app, "/runs")
            .await
            .body
            .contains(&format!("#{id}</a> <span class=\"badge\""))
    );

    let mut invalid = Vec::new();
    let mut v = new.clone();
    v["provenance"]["bench_exe"]["sha256"] = serde_json::json!("XYZ");
    invalid.push((v, "provenance.bench_exe.sha256"));
    let mut v = new.clone();
    v["provenance"]["conditions"]["others_cpus"] = serde_json::json!(-1.0);
    invalid.push((v, "provenance.conditions.others_cpus"));
    let mut v = new.clone();
    v["provenance"]["conditions"]["per_benchmark"][0]["benchmark"] = serde_json::json!("");
    invalid.push((v, "per_benchmark[0].benchmark is empty"));
    let mut v = new.clone();
    v["provenance"]["conditions"]["cpus"] = serde_json::json!("two");
    invalid.push((v, "invalid run JSON"));
    for (i, (body, needle)) in invalid.iter().enumerate() {
        let r = post_json(&app, "/api/runs", Some("t0ken"), &body.to_string()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "case {i}: {}", r.body);
        let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains(needle), "case {i}: {message}");
    }
}
