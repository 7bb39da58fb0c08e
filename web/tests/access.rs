//! Who may push and read, through the router: scoped tokens on a private and an open server,
//! and pushes retried with one idempotency key.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use bench_store::Ledger;
use util::{Reply, get, post_json, seeded, send};
use web::access::{Access, Scope};
use web::{AppState, app};

const PUSH: &str = "runner-push-token-0123";
const READ: &str = "dashboard-read-token-0123";

async fn get_with(app: &axum::Router, uri: &str, token: Option<&str>) -> Reply {
    let mut request = Request::get(uri);
    if let Some(t) = token {
        request = request.header("authorization", format!("Bearer {t}"));
    }
    send(app, request.body(Body::empty()).unwrap()).await
}

async fn push_with_key(app: &axum::Router, key: &str, body: &str) -> Reply {
    let request = Request::post("/api/runs")
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {PUSH}"))
        .header("idempotency-key", key)
        .body(Body::from(body.to_owned()))
        .unwrap();
    send(app, request).await
}

async fn private_app() -> (axum::Router, Ledger, String) {
    let (ledger, _) = seeded().await;
    let body = bench_client::push::push_body(&ledger, 5)
        .await
        .unwrap()
        .to_string();
    let access = Access::open()
        .with_token(Scope::Push, PUSH)
        .with_token(Scope::Read, READ)
        .private(true);
    let app = app(AppState::new(ledger.clone()).with_access(access));
    (app, ledger, body)
}

#[tokio::test]
async fn on_a_private_server_each_token_does_only_what_its_scope_allows() {
    let (app, ledger, body) = private_app().await;
    let runs_before = ledger.runs(&Default::default()).await.unwrap().len();

    // No token: nothing, neither pages nor the API nor a push.
    for uri in [
        "/",
        "/runs",
        "/runs/1",
        "/api/runs",
        "/api/runs/1",
        "/suites/demo",
    ] {
        let r = get_with(&app, uri, None).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{uri}");
        assert!(!r.body.contains("demo-fingerprint"), "{uri} leaked data");
    }
    let r = get_with(&app, "/", None).await;
    let challenges: Vec<_> = r.headers.get_all("www-authenticate").iter().collect();
    assert_eq!(
        challenges.len(),
        2,
        "Bearer for scripts, Basic for browsers"
    );
    assert_eq!(
        post_json(&app, "/api/runs", None, &body).await.status,
        StatusCode::UNAUTHORIZED
    );
    // The stylesheet is not data.
    assert_eq!(
        get_with(&app, "/static/style.css", None).await.status,
        StatusCode::OK
    );

    // A read token reads everything and pushes nothing.
    for uri in [
        "/",
        "/runs/1",
        "/api/runs",
        "/api/compare?base=1&head=2",
        "/suites/demo",
    ] {
        assert_eq!(
            get_with(&app, uri, Some(READ)).await.status,
            StatusCode::OK,
            "{uri}"
        );
    }
    let r = post_json(&app, "/api/runs", Some(READ), &body).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("may not push")
    );

    // A (leaked) push token pushes and reads nothing.
    for uri in ["/", "/api/runs", "/api/runs/1"] {
        let r = get_with(&app, uri, Some(PUSH)).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{uri}");
        assert!(!r.body.contains("demo-fingerprint"), "{uri} leaked data");
    }
    let r = post_json(&app, "/api/runs", Some(PUSH), &body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(
        ledger.runs(&Default::default()).await.unwrap().len(),
        runs_before + 1,
        "only the push token's push was stored"
    );
}

#[tokio::test]
async fn an_open_server_reads_freely_but_pushes_only_with_a_push_token() {
    let (ledger, _) = seeded().await;
    let body = bench_client::push::push_body(&ledger, 5)
        .await
        .unwrap()
        .to_string();
    let access = Access::open()
        .with_token(Scope::Push, PUSH)
        .with_token(Scope::Read, READ);
    let app = app(AppState::new(ledger).with_access(access));
    assert_eq!(get(&app, "/api/runs").await.status, StatusCode::OK);
    assert_eq!(
        post_json(&app, "/api/runs", Some(READ), &body).await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        post_json(&app, "/api/runs", None, &body).await.status,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn a_retried_push_is_stored_once_and_a_reused_key_is_refused() {
    let (app, ledger, body) = private_app().await;
    let before = ledger.runs(&Default::default()).await.unwrap().len();

    let first = push_with_key(&app, "ledger-a/5", &body).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    let id = first.json()["id"].as_i64().unwrap();
    for _ in 0..3 {
        let retry = push_with_key(&app, "ledger-a/5", &body).await;
        assert_eq!(retry.status, StatusCode::OK, "{}", retry.body);
        assert_eq!(retry.json()["id"].as_i64(), Some(id));
    }
    // The same key with other content: refused, nothing stored.
    let mut other: serde_json::Value = serde_json::from_str(&body).unwrap();
    other["provenance"]["suite"] = serde_json::json!("another");
    let reused = push_with_key(&app, "ledger-a/5", &other.to_string()).await;
    assert_eq!(reused.status, StatusCode::CONFLICT, "{}", reused.body);
    // A malformed key is refused before anything is read.
    let bad = push_with_key(&app, "has space", &body).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
    assert_eq!(
        ledger.runs(&Default::default()).await.unwrap().len(),
        before + 1
    );
}
