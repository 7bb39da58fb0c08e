//! Testbeds: the machine class a run names with `BENCH_MACHINE`, listed by the server, filtering
//! the dashboard and the trend pages, and never compared with another.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use axum::http::StatusCode;
use bench_model::{NewRun, RunSource};
use bench_store::Ledger;
use util::{get, provenance, timed};
use web::{AppState, app};

async fn on_testbed(ledger: &Ledger, testbed: Option<&str>, commit: u32, level: f64) -> i64 {
    let mut p = provenance("codec", "m", commit);
    if let Some(name) = testbed {
        p.machine.testbed = Some(name.to_owned());
        p.machine.fingerprint = format!("pinned-{name}");
    }
    let run = NewRun {
        source: RunSource::BenchRun,
        provenance: p,
        measurements: vec![timed("decode", level, commit)],
    };
    ledger.record_run(&run).await.unwrap()
}

#[tokio::test]
async fn testbeds_are_listed_filter_the_pages_and_are_never_compared() {
    let ledger = Ledger::in_memory().await.unwrap();
    let small_1 = on_testbed(&ledger, Some("ci-small"), 1, 1000.0).await;
    let small_2 = on_testbed(&ledger, Some("ci-small"), 2, 1000.0).await;
    let large = on_testbed(&ledger, Some("ci-large"), 3, 400.0).await;
    let _bare = on_testbed(&ledger, None, 4, 700.0).await;
    let app = app(AppState::new(ledger.clone()));

    let r = get(&app, "/api/testbeds").await;
    assert_eq!(r.status, StatusCode::OK);
    let names: Vec<String> = r.json()["testbeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["ci-small", "ci-large", "m-fingerprint"]);

    // The dashboard lists them and keeps one when asked.
    let all = get(&app, "/").await;
    assert!(
        all.body.contains("href=\"/?testbed=ci-large\""),
        "{}",
        all.body
    );
    let small = get(&app, "/?testbed=ci-small").await;
    assert_eq!(small.status, StatusCode::OK);
    assert!(small.body.contains(&format!("href=\"/runs/{small_2}\"")));
    assert!(!small.body.contains(&format!("href=\"/runs/{large}\"")));
    assert!(small.body.contains("of testbed <code>ci-small</code>"));

    // The trend page and its API take the name.
    let trend = get(&app, "/api/suites/codec/trend?machine=ci-small").await;
    assert_eq!(trend.status, StatusCode::OK, "{}", trend.body);
    let runs = trend.json()["runs"].as_array().unwrap().len();
    assert_eq!(runs, 2, "{}", trend.body);
    let page = get(&app, "/suites/codec?machine=ci-large").await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(
        get(&app, "/api/suites/codec/trend?machine=ci-none")
            .await
            .status,
        StatusCode::NOT_FOUND
    );

    // Two testbeds are two machines: the gate refuses to compare them.
    let base = ledger.require_run(small_1).await.unwrap();
    let head = ledger.require_run(large).await.unwrap();
    let gated = bench_verdicts::gate::gate(
        &ledger,
        &base,
        &head,
        &bench_analysis::compare::CompareConfig::default(),
        bench_verdicts::gate::Allow::default(),
    )
    .await
    .unwrap();
    match gated {
        bench_verdicts::gate::GateVerdict::Refused(refusal) => {
            assert!(refusal.to_string().contains("machine"), "{refusal}");
        }
        bench_verdicts::gate::GateVerdict::Judged(_) => panic!("two testbeds were compared"),
    }
}
