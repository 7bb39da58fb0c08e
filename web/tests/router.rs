//! Handler tests through the router, without a socket: status codes, content, escaping and
//! the JSON API of the pages (ingest: `ingest.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use axum::http::StatusCode;
use bench_store::Ledger;
use util::{ESCAPED_SCRIPT, RAW_SCRIPT, busy_conditions, get, seeded};
use web::{AppState, app};

async fn seeded_app() -> (axum::Router, Vec<i64>) {
    let (ledger, ids) = seeded().await;
    (app(AppState::new(ledger)), ids)
}

#[tokio::test]
async fn dashboard_lists_suites_latest_runs_and_regressions() {
    let (app, _) = seeded_app().await;
    let r = get(&app, "/").await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.content_type().starts_with("text/html"));
    assert!(r.body.contains("<h1>Dashboard</h1>"));
    assert!(r.body.contains("href=\"/suites/demo\""));
    assert!(r.body.contains("href=\"/suites/bmf\""));
    // Latest of demo on m1 is run 8, whose baseline is run 7: no change between them.
    assert!(
        r.body.contains("href=\"/compare?base=7&#38;head=8\""),
        "{}",
        r.body
    );
    // The bmf suite's latest run moved every value by +50%: regressions against run 10.
    assert!(r.body.contains("href=\"/compare?base=10&#38;head=11\""));
    assert!(r.body.contains("Open regressions"));
    assert!(r.body.contains("bench_fib_10"));
    assert!(r.body.contains("+50.00%"));
    // Security headers on every response.
    let csp = r
        .headers
        .get("content-security-policy")
        .unwrap()
        .to_str()
        .unwrap();
    assert!(csp.contains("default-src 'none'"));
    assert_eq!(r.headers.get("x-content-type-options").unwrap(), "nosniff");
}

#[tokio::test]
async fn runs_filter_and_paginate() {
    let (app, _) = seeded_app().await;
    let all = get(&app, "/runs").await;
    assert_eq!(all.status, StatusCode::OK);
    assert!(
        all.body
            .contains("<caption>Runs, newest first (page 1)</caption>")
    );
    assert_eq!(
        all.body.matches("<th scope=\"row\" class=\"num\">").count(),
        11
    );

    let demo = get(&app, "/runs?suite=demo&machine=m2").await;
    assert_eq!(
        demo.body
            .matches("<th scope=\"row\" class=\"num\">")
            .count(),
        1
    );
    assert!(demo.body.contains("href=\"/runs/9\""));
    let by_commit = get(&app, "/runs?commit=00000003").await;
    assert_eq!(
        by_commit
            .body
            .matches("<th scope=\"row\" class=\"num\">")
            .count(),
        1
    );
    let by_branch = get(&app, "/runs?branch=nope").await;
    assert!(by_branch.body.contains("No run matches."));

    let page1 = get(&app, "/runs?suite=demo&per_page=3").await;
    assert_eq!(
        page1
            .body
            .matches("<th scope=\"row\" class=\"num\">")
            .count(),
        3
    );
    assert!(
        page1
            .body
            .contains("href=\"/runs?suite=demo&#38;per_page=3&#38;page=2\"")
    );
    assert!(!page1.body.contains("rel=\"prev\""));
    let page3 = get(&app, "/runs?suite=demo&per_page=3&page=3").await;
    assert_eq!(
        page3
            .body
            .matches("<th scope=\"row\" class=\"num\">")
            .count(),
        3
    );
    assert!(page3.body.contains("rel=\"prev\""));
    assert!(!page3.body.contains("rel=\"next\""), "9 demo runs, 3 pages");

    for (uri, needle) in [
        (
            "/runs?page=abc",
            "parameter page must be a positive integer, got &#34;abc&#34;",
        ),
        (
            "/runs?page=0",
            "parameter page must be a positive integer, got 0",
        ),
        (
            "/runs?per_page=100000",
            "parameter per_page must be an integer from 1 to 500",
        ),
    ] {
        let r = get(&app, uri).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{uri}");
        assert!(r.body.contains(needle), "{uri}: {}", r.body);
        assert!(r.body.contains("<h1>400 Bad Request</h1>"));
    }
}

#[tokio::test]
async fn run_page_shows_provenance_results_tags_and_annotations() {
    let (app, ids) = seeded_app().await;
    let r = get(&app, "/runs/3").await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.body
            .contains("Run #3 of <a href=\"/suites/demo\">demo</a>")
    );
    assert!(r.body.contains("Test CPU m1"));
    assert!(r.body.contains("m1-fingerprint"));
    assert!(r.body.contains("commit number 3"));
    assert!(r.body.contains("<code>BENCH_MACHINE</code>"));
    assert!(r.body.contains("<th scope=\"row\">parse/small</th>"));
    assert!(r.body.contains("1.000 µs"), "scaled estimate");
    assert!(r.body.contains("<td class=\"num\">20</td>"), "sample count");
    // Annotation text is escaped, never interpreted.
    assert!(
        r.body
            .contains("kernel upgraded &#60;b&#62;between&#60;/b&#62; runs")
    );
    assert!(r.body.contains("href=\"/compare?base=2&#38;head=3\""));

    // Runs are named as in bench-run: tags, latest.
    let tagged = get(&app, "/runs/baseline").await;
    assert_eq!(tagged.status, StatusCode::OK);
    assert!(tagged.body.contains("Run #1 of"));
    assert!(tagged.body.contains("<span class=\"tag\">baseline</span>"));
    let latest = get(&app, "/runs/latest").await;
    assert!(
        latest
            .body
            .contains(&format!("Run #{} of", ids.last().unwrap()))
    );

    for uri in ["/runs/999", "/runs/no-such-tag"] {
        let r = get(&app, uri).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{uri}");
        assert!(r.body.contains("<h1>404 Not Found</h1>"));
        assert!(r.body.contains("no run matches"), "{}", r.body);
    }
}

#[tokio::test]
async fn compare_page_warns_when_a_quick_run_meets_a_full_one() {
    let (ledger, ids) = seeded().await;
    let mut provenance = util::provenance("demo", "m1", 12);
    provenance.quick = true;
    let quick = ledger
        .record_run(&bench_model::NewRun {
            source: bench_model::RunSource::BenchRun,
            provenance,
            measurements: vec![
                util::timed("parse/small", 1300.0, 2),
                util::timed("parse/large", 50_000.0, 5),
            ],
        })
        .await
        .unwrap();
    let app = app(AppState::new(ledger));
    let last_full = ids[7];
    let mixed = get(&app, &format!("/compare?base={last_full}&head={quick}")).await;
    assert_eq!(mixed.status, StatusCode::OK, "{}", mixed.body);
    assert!(
        mixed.body.contains("A quick run meets a full one"),
        "{}",
        mixed.body
    );
    assert!(mixed.body.contains(&format!(
        "the head run #{quick} is a --quick run and the base run #{last_full} is a full run"
    )));
    let alike = get(&app, &format!("/compare?base={}&head={last_full}", ids[6])).await;
    assert!(!alike.body.contains("A quick run meets a full one"));
    let api = get(&app, &format!("/api/compare?base={last_full}&head={quick}")).await;
    assert_eq!(api.json()["warnings"].as_array().unwrap().len(), 1);
    let api = get(
        &app,
        &format!("/api/compare?base={}&head={last_full}", ids[6]),
    )
    .await;
    assert_eq!(api.json()["warnings"], serde_json::json!([]));
    // `previous` skips the quick run: the newest full run before it.
    let previous = get(&app, "/compare?base=previous&head=latest").await;
    assert!(
        previous.body.contains(&format!("run #{last_full}</a>")),
        "{}",
        previous.body
    );
}

#[tokio::test]
async fn runs_of_different_suites_are_refused_as_bench_run_compare_refuses_them() {
    let (app, ids) = seeded_app().await;
    // Run 8 is of suite `demo`, run 10 of suite `bmf` (util::seeded).
    let (demo, bmf) = (ids[7], ids[9]);
    for uri in [
        format!("/compare?base={demo}&head={bmf}"),
        format!("/api/compare?base={demo}&head={bmf}"),
    ] {
        let r = get(&app, &uri).await;
        assert_eq!(r.status, StatusCode::CONFLICT, "{uri}: {}", r.body);
        // The CLI's sentence (quotes escaped as HTML or JSON).
        assert!(
            r.body.contains("refusing to compare suite")
                && (r
                    .body
                    .contains(&format!("demo&#34; (run #{demo}) with suite"))
                    || r.body
                        .contains(&format!("demo\\\" (run #{demo}) with suite"))),
            "{uri}: {}",
            r.body
        );
        assert!(r.body.contains("allow_mismatch=1"), "{uri}: {}", r.body);
    }
    // Allowed, as with --allow-mismatch: compared, and the difference is said first.
    let page = get(
        &app,
        &format!("/compare?base={demo}&head={bmf}&allow_mismatch=1"),
    )
    .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("suite differs"), "{}", page.body);
    let api = get(
        &app,
        &format!("/api/compare?base={demo}&head={bmf}&allow_mismatch=true"),
    )
    .await;
    assert_eq!(api.status, StatusCode::OK, "{}", api.body);
    let warnings = api.json()["warnings"].clone();
    assert!(
        warnings[0]
            .as_str()
            .unwrap()
            .starts_with("runs differ: suite differs"),
        "{warnings:#}"
    );
    let bad = get(
        &app,
        &format!("/compare?base={demo}&head={bmf}&allow_mismatch=yes"),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn compare_page_shows_the_layout_spread_of_an_ab_pair() {
    use bench_model::{RunSource, Samples, SamplingMode};
    let ledger = Ledger::in_memory().await.unwrap();
    // 12 rounds under four layouts: `hot` is 40% slower under two layouts and unchanged under
    // the others (layout-sensitive), `flat` 8% slower under all four (the code's).
    let changes = |name: &str| -> [f64; 4] {
        if name == "hot" {
            [1.40, 1.01, 1.02, 1.40]
        } else {
            [1.08; 4]
        }
    };
    let side = |source: RunSource, head: bool| {
        let mut measurements = Vec::new();
        for name in ["hot", "flat"] {
            let mut m = util::timed(name, 100.0, 1);
            let values: Vec<f64> = (0..12)
                .map(|r| {
                    let wobble = 100.0 * (1.0 + 0.001 * (r % 3) as f64);
                    if head {
                        wobble * changes(name)[r % 4]
                    } else {
                        wobble
                    }
                })
                .collect();
            m.samples =
                Some(Samples::new(SamplingMode::PerProcess, vec![1.0; 12], values).unwrap());
            measurements.push(m);
        }
        bench_model::NewRun {
            source,
            provenance: util::provenance("demo", "m1", if head { 2 } else { 1 }),
            measurements,
        }
    };
    let plan = bench_store::PairingPlan {
        seed: 1,
        base_first: (0..12).map(|r| r % 2 == 0).collect(),
        base_rev: "main".to_owned(),
        head_rev: None,
        round_layouts: (0..12).map(|r| [7, 8, 9, 10][r % 4]).collect(),
    };
    let (base, head) = ledger
        .record_pair(
            &side(RunSource::AbBase, false),
            &side(RunSource::AbHead, true),
            &plan,
        )
        .await
        .unwrap();
    let app = app(AppState::new(ledger));
    let page = get(&app, &format!("/compare?base={base}&head={head}")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("Layout spread</th>"), "{}", page.body);
    assert!(page.body.contains("(layout-sensitive)"), "{}", page.body);
    assert!(
        page.body.contains("4 layouts; the change under each"),
        "{}",
        page.body
    );
    let api = get(&app, &format!("/api/compare?base={base}&head={head}")).await;
    let rows = api.json()["rows"].clone();
    let row = |name: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["benchmark"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(row("hot")["verdict"], "unchanged", "{rows:#}");
    assert_eq!(row("hot")["layout_sensitive"], true, "{rows:#}");
    assert_eq!(row("flat")["verdict"], "regression", "{rows:#}");
}

#[tokio::test]
async fn compare_page_has_the_before_after_table() {
    let (app, _) = seeded_app().await;
    let r = get(&app, "/compare?base=baseline&head=8").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let b = &r.body;
    assert!(b.contains("<th scope=\"col\">Benchmark</th><th scope=\"col\" class=\"num\">Before</th><th scope=\"col\" class=\"num\">After</th><th scope=\"col\" class=\"num\">Change</th>"));
    assert!(
        b.contains("<tr class=\"regression\">\n<th scope=\"row\">parse/small</th>"),
        "{b}"
    );
    assert!(b.contains("<td class=\"num\">1.000 µs</td>\n<td class=\"num\">1.300 µs</td>"));
    assert!(b.contains("+30.00%"));
    assert!(b.contains("<tr class=\"unchanged\">\n<th scope=\"row\">parse/large</th>"));
    assert!(b.contains("Geometric mean (2 rows; + is worse)"));
    assert!(b.contains("1 regression(s), 0 improvement(s), 1 unchanged"));
    // The noise floor column, the CI, the verdict with its reasons.
    assert!(b.contains("Noise floor"));
    assert!(b.contains("<ul class=\"reasons\">"));
    // The markdown to copy, escaped inside a textarea.
    assert!(b.contains("<textarea id=\"markdown\" readonly"));
    assert!(b.contains("### `demo`: ❌ regression"));
    // The no-JS toggle: a link that hides insignificant rows.
    assert!(b.contains("href=\"/compare?base=baseline&#38;head=8&#38;hide=insignificant\""));

    let hidden = get(&app, "/compare?base=baseline&head=8&hide=insignificant").await;
    assert_eq!(hidden.status, StatusCode::OK);
    assert!(hidden.body.contains("parse/small"));
    assert!(!hidden.body.contains("<th scope=\"row\">parse/large</th>"));
    assert!(hidden.body.contains("Show all rows</a> (1 hidden)"));

    // A higher threshold turns the regression into unchanged.
    let lenient = get(&app, "/compare?base=1&head=8&threshold=40").await;
    assert!(lenient.body.contains("0 regression(s)"), "{}", lenient.body);

    // Runs on different machines: compared, with a warning.
    let cross = get(&app, "/compare?base=1&head=9").await;
    assert_eq!(cross.status, StatusCode::OK);
    assert!(cross.body.contains("These runs were not measured alike"));
    assert!(cross.body.contains("machine differs"));

    // No parameters: a form.
    let form = get(&app, "/compare").await;
    assert_eq!(form.status, StatusCode::OK);
    assert!(form.body.contains("<h1>Compare two runs</h1>"));

    for (uri, status, needle) in [
        (
            "/compare?base=1",
            StatusCode::BAD_REQUEST,
            "parameter head is required",
        ),
        (
            "/compare?head=1",
            StatusCode::BAD_REQUEST,
            "parameter base is required",
        ),
        (
            "/compare?base=1&head=2&hide=maybe",
            StatusCode::BAD_REQUEST,
            "parameter hide",
        ),
        (
            "/compare?base=1&head=2&threshold=x",
            StatusCode::BAD_REQUEST,
            "parameter threshold",
        ),
        (
            "/compare?base=1&head=2&threshold=-5",
            StatusCode::BAD_REQUEST,
            "parameter threshold",
        ),
        (
            "/compare?base=1&head=777",
            StatusCode::NOT_FOUND,
            "no run matches",
        ),
        (
            "/compare?base=nope&head=2",
            StatusCode::NOT_FOUND,
            "no run matches",
        ),
    ] {
        let r = get(&app, uri).await;
        assert_eq!(r.status, status, "{uri}: {}", r.body);
        assert!(r.body.contains(needle), "{uri}: {}", r.body);
    }
}

/// Issue 24: an annotation did not appear on the compare page. The page lists the notes on
/// both runs and on the runs between them (same suite, the after run's machine, commit
/// order), escaped, and the JSON carries them too.
#[tokio::test]
async fn compare_page_shows_the_annotations_it_spans() {
    let (ledger, ids) = seeded().await;
    ledger
        .annotate(ids[0], "base: laptop on battery")
        .await
        .unwrap();
    ledger
        .annotate(ids[7], "head: new allocator")
        .await
        .unwrap();
    ledger.annotate(ids[8], "m2 only").await.unwrap();
    let app = app(AppState::new(ledger));

    let r = get(&app, "/compare?base=baseline&head=8").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let b = &r.body;
    assert!(
        b.contains("<h2 id=\"annotations-heading\">Annotations</h2>"),
        "{b}"
    );
    let listed: Vec<&str> = b
        .split("<li><a href=\"/runs/")
        .skip(1)
        .filter_map(|item| item.split("</li>").next())
        .collect();
    assert_eq!(listed.len(), 3, "{listed:?}");
    assert!(listed[0].starts_with("1\">run #1</a> <span class=\"tag\">before</span> <time>"));
    assert!(
        listed[0].ends_with(" base: laptop on battery"),
        "{listed:?}"
    );
    assert!(listed[1].starts_with("3\">run #3</a> <span class=\"tag\">between</span>"));
    assert!(
        listed[1].ends_with(" kernel upgraded &#60;b&#62;between&#60;/b&#62; runs"),
        "escaped: {listed:?}"
    );
    assert!(listed[2].starts_with("8\">run #8</a> <span class=\"tag\">after</span>"));
    assert!(!b.contains("m2 only"), "another machine's note");
    // Reversed, the same span.
    let reversed = get(&app, "/compare?base=8&head=1").await;
    assert_eq!(
        reversed
            .body
            .matches("<span class=\"tag\">between</span>")
            .count(),
        1
    );

    // A span without notes has no section.
    let quiet = get(&app, "/compare?base=4&head=5").await;
    assert_eq!(quiet.status, StatusCode::OK);
    assert!(
        !quiet.body.contains("annotations-heading"),
        "{}",
        quiet.body
    );

    // Across machines: the base's own notes and the head machine's notes.
    let cross = get(&app, "/compare?base=1&head=9").await;
    assert!(cross.body.contains("base: laptop on battery"));
    assert!(cross.body.contains("m2 only"));
    assert!(!cross.body.contains("kernel upgraded"));

    let json = get(&app, "/api/compare?base=baseline&head=8").await.json();
    let notes = json["annotations"].as_array().unwrap();
    assert_eq!(
        notes
            .iter()
            .map(|n| n["run_id"].as_i64().unwrap())
            .collect::<Vec<_>>(),
        [1, 3, 8]
    );
    assert_eq!(notes[1]["text"], "kernel upgraded <b>between</b> runs");
}

#[tokio::test]
async fn trend_page_draws_one_chart_per_benchmark() {
    let (app, _) = seeded_app().await;
    let r = get(&app, "/suites/demo").await;
    assert_eq!(r.status, StatusCode::OK);
    let b = &r.body;
    assert_eq!(
        b.matches("<svg id=\"chart-").count(),
        1,
        "m2 ran parse/small only"
    );
    assert!(b.contains("width=\"1100\" height=\"300\""));
    // The newest run is on m2, so the default machine is m2 with a single run.
    assert!(b.contains("Machine: m2-finge"), "{b}");
    let m1 = get(&app, "/suites/demo?machine=m1").await;
    assert_eq!(m1.status, StatusCode::OK);
    let b = &m1.body;
    assert!(b.contains("Machine: m1-finge"));
    // 8 runs, one change point on parse/small at run 5, marked and listed.
    assert_eq!(b.matches("<circle ").count(), 16);
    assert_eq!(b.matches("class=\"change-point\"").count(), 1);
    assert!(b.contains("Change point at run #5"));
    assert!(b.contains("<span class=\"badge\">1 change point(s)</span>"));
    assert!(b.contains("<td class=\"num\">+30.00%</td>"));
    assert!(b.contains("href=\"/compare?base=4&#38;head=5\""));
    // The annotation of run 3 is marked on the charts and listed, escaped.
    assert_eq!(b.matches("class=\"annotation\"").count(), 2);
    assert!(b.contains("Note on run #3: kernel upgraded &#60;b&#62;between&#60;/b&#62; runs"));
    // Hover titles: run, commit and its date, when the run was recorded, scaled value.
    let hovers: Vec<&str> = b
        .split("<title>run #1 · ")
        .skip(1)
        .filter_map(|t| t.split("</title>").next())
        .collect();
    assert!(
        hovers
            .iter()
            .all(|h| h.starts_with("00000001ab committed 2026-01-02 · recorded 20")),
        "{hovers:?}"
    );
    assert!(
        hovers.iter().any(|h| h.ends_with(" · 1.000 µs")),
        "{hovers:?}"
    );
    // The x axis names runs and says so; units scaled on the y axis.
    assert!(b.contains("\n#1 · "), "{b}");
    assert!(b.contains(&format!("\n{}\n</text>", web::chart::X_AXIS_TITLE)));
    assert!(b.contains("µs\n</text>"));

    let log = get(&app, "/suites/demo?machine=m1&scale=log").await;
    assert_eq!(log.status, StatusCode::OK);
    assert!(log.body.contains("Linear scale</a>"));
    // parse/small spans 1 µs to 1.3 µs: a fifth of a decade, labelled every 0.1 µs.
    for tick in ["1 µs", "1.1 µs", "1.2 µs", "1.3 µs"] {
        assert!(
            log.body.contains(&format!("\n{tick}\n</text>")),
            "{tick}: {}",
            log.body
        );
    }
    let all = get(&app, "/suites/demo?machine=all").await;
    assert_eq!(all.body.matches("<svg id=\"chart-").count(), 2);
    assert!(all.body.contains("Machine: all machines"));

    // Non-time metrics chart too: bytes, ops/s, percentages.
    let bmf = get(&app, "/suites/bmf").await;
    assert_eq!(bmf.status, StatusCode::OK);
    assert_eq!(bmf.body.matches("<svg id=\"chart-").count(), 6);
    assert!(bmf.body.contains("KiB"), "file-size scaled to KiB");
    assert!(bmf.body.contains("Kops/s"), "throughput scaled");

    for (uri, status) in [
        ("/suites/nope", StatusCode::NOT_FOUND),
        ("/suites/demo?machine=zzz", StatusCode::NOT_FOUND),
        ("/suites/demo?scale=cubic", StatusCode::BAD_REQUEST),
    ] {
        assert_eq!(get(&app, uri).await.status, status, "{uri}");
    }
}

#[tokio::test]
async fn hostile_benchmark_names_are_text_on_every_page() {
    let (app, ids) = seeded_app().await;
    let bmf_run = ids[9];
    let pages = [
        "/".to_owned(),
        "/runs".to_owned(),
        "/runs?suite=bmf".to_owned(),
        format!("/runs/{bmf_run}"),
        format!("/compare?base={bmf_run}&head={}", bmf_run + 1),
        format!(
            "/compare?base={bmf_run}&head={}&hide=insignificant",
            bmf_run + 1
        ),
        "/suites/bmf".to_owned(),
        "/suites/bmf?scale=log".to_owned(),
    ];
    for page in &pages {
        let r = get(&app, page).await;
        assert_eq!(r.status, StatusCode::OK, "{page}");
        assert!(!r.body.contains(RAW_SCRIPT), "{page} contains the raw tag");
        assert!(
            !r.body.contains("<script"),
            "{page} contains a script element"
        );
        if page != "/runs" && !page.starts_with("/runs?") {
            assert!(
                r.body.contains(ESCAPED_SCRIPT),
                "{page} lacks the escaped name"
            );
        }
    }
    // In error messages too.
    let r = get(&app, "/suites/%3Cscript%3Ealert(1)%3C%2Fscript%3E").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(!r.body.contains(RAW_SCRIPT));
    assert!(r.body.contains(ESCAPED_SCRIPT));
}

#[tokio::test]
async fn json_api_mirrors_the_pages() {
    let (app, ids) = seeded_app().await;
    let runs = get(&app, "/api/runs?suite=demo&per_page=5").await;
    assert_eq!(runs.status, StatusCode::OK);
    assert!(runs.content_type().starts_with("application/json"));
    let v = runs.json();
    assert_eq!(v["runs"].as_array().unwrap().len(), 5);
    assert_eq!(v["runs"][0]["id"], 9);
    assert_eq!(v["next_page"], 2);

    let run = get(&app, "/api/runs/baseline").await.json();
    assert_eq!(run["run"]["id"], 1);
    assert_eq!(run["run"]["tags"][0], "baseline");
    assert_eq!(run["results"][0]["benchmark"], "parse/large");
    assert_eq!(run["results"][0]["samples"], 20);

    let cmp = get(&app, "/api/compare?base=1&head=8").await;
    assert_eq!(cmp.status, StatusCode::OK);
    let c = cmp.json();
    assert_eq!(c["counts"]["regressions"], 1);
    assert_eq!(c["rows"][1]["benchmark"], "parse/small");
    assert_eq!(c["rows"][1]["verdict"], "regression");
    assert!(c["mismatches"].as_array().unwrap().is_empty());
    assert!(c["geomean"]["change_pct"].as_f64().unwrap() > 10.0);

    let trend = get(&app, "/api/suites/demo/trend?machine=m1").await.json();
    assert_eq!(trend["suite"], "demo");
    assert_eq!(trend["machine"]["fingerprint"], "m1-fingerprint");
    assert_eq!(trend["runs"].as_array().unwrap().len(), 8);
    assert_eq!(trend["runs"][0]["git_commit_time"], 1_767_312_000);
    let small = &trend["series"][1];
    assert_eq!(small["benchmark"], "parse/small");
    assert_eq!(small["points"].as_array().unwrap().len(), 8);
    assert_eq!(small["points"][7]["run_id"], 8);
    assert_eq!(small["points"][7]["estimate"], 1300.0);
    assert_eq!(small["change_points"][0]["index"], 4);
    assert_eq!(trend["annotations"][0]["run_id"], ids[2]);

    // Errors are JSON with the same status codes.
    for (uri, status) in [
        ("/api/runs/999", StatusCode::NOT_FOUND),
        ("/api/runs?page=x", StatusCode::BAD_REQUEST),
        ("/api/compare?base=1", StatusCode::BAD_REQUEST),
        ("/api/suites/nope/trend", StatusCode::NOT_FOUND),
        ("/api/nothing-here", StatusCode::NOT_FOUND),
    ] {
        let r = get(&app, uri).await;
        assert_eq!(r.status, status, "{uri}");
        assert!(r.content_type().starts_with("application/json"), "{uri}");
        assert_eq!(r.json()["error"]["status"], status.as_u16(), "{uri}");
        assert!(!r.json()["error"]["message"].as_str().unwrap().is_empty());
    }
}

#[tokio::test]
async fn unknown_pages_and_the_stylesheet() {
    let (app, _) = seeded_app().await;
    let r = get(&app, "/nope").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(r.body.contains("no page at /nope"));
    let css = get(&app, "/static/style.css").await;
    assert_eq!(css.status, StatusCode::OK);
    assert!(css.content_type().starts_with("text/css"));
    assert!(css.body.contains("svg.chart"));
}

#[tokio::test]
async fn an_empty_ledger_renders() {
    let app = app(AppState::new(Ledger::in_memory().await.unwrap()));
    let r = get(&app, "/").await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.body.contains("No runs recorded yet"));
    assert_eq!(get(&app, "/runs").await.status, StatusCode::OK);
    assert_eq!(get(&app, "/compare").await.status, StatusCode::OK);
}

#[tokio::test]
async fn the_trend_cache_sees_new_runs() {
    let (ledger, _) = seeded().await;
    let app = app(AppState::new(ledger.clone()));
    let before = get(&app, "/suites/demo?machine=m1").await;
    assert_eq!(before.body.matches("<circle ").count(), 16);
    // Served from the cache: the same page.
    assert_eq!(get(&app, "/suites/demo?machine=m1").await.body, before.body);
    let run = bench_model::NewRun {
        source: bench_model::RunSource::BenchRun,
        provenance: util::provenance("demo", "m1", 20),
        measurements: vec![util::timed("parse/small", 1300.0, 2)],
    };
    ledger.record_run(&run).await.unwrap();
    ledger.annotate(3, "a second note").await.unwrap();
    let after = get(&app, "/suites/demo?machine=m1").await;
    assert_eq!(
        after.body.matches("<circle ").count(),
        17,
        "the new run is drawn"
    );
    assert!(
        after.body.contains("a second note"),
        "annotations are never cached"
    );
}

#[tokio::test]
async fn many_charts_are_drawn_in_order() {
    let ledger = Ledger::in_memory().await.unwrap();
    for i in 1..=3u32 {
        let run = bench_model::NewRun {
            source: bench_model::RunSource::BenchRun,
            provenance: util::provenance("wide", "m1", i),
            measurements: (0..12)
                .map(|b| util::timed(&format!("b{b:02}"), 100.0 * f64::from(b + 1), i))
                .collect(),
        };
        ledger.record_run(&run).await.unwrap();
    }
    let app = app(AppState::new(ledger));
    let r = get(&app, "/suites/wide").await;
    assert_eq!(r.status, StatusCode::OK);
    let mut at = 0;
    for i in 0..12 {
        let chart = r.body[at..]
            .find(&format!("<svg id=\"chart-{i}\""))
            .unwrap_or_else(|| panic!("chart {i} missing or out of order"));
        at += chart;
        let heading = r.body[..at].rfind("-heading\">").unwrap();
        assert!(
            r.body[heading..at].contains(&format!("b{i:02}")),
            "chart {i} under its heading"
        );
    }
}

#[tokio::test]
async fn busy_runs_carry_a_badge_and_the_compare_page_warns() {
    use bench_model::{BenchExe, NewRun, RunSource};
    let ledger = Ledger::in_memory().await.unwrap();
    let exe = |digit: &str| BenchExe {
        sha256: digit.repeat(64),
        bytes: 1000,
    };
    let mut ids = Vec::new();
    // Run 1 quiet, run 2 busy (another executable), run 3 busy (run 2's executable).
    for (i, (busy, sha)) in [(false, "a"), (true, "b"), (true, "b")].iter().enumerate() {
        let mut provenance = util::provenance("demo", "m1", u32::try_from(i).unwrap() + 1);
        provenance.bench_exe = Some(exe(sha));
        let mut conditions = busy_conditions();
        if !busy {
            conditions.others_cpus = 0.02;
            conditions.per_benchmark[0].others_cpus = 0.01;
        }
        provenance.conditions = Some(conditions);
        let run = NewRun {
            source: RunSource::BenchRun,
            provenance,
            measurements: vec![util::timed("parse/small", 1000.0, 1)],
        };
        ids.push(ledger.record_run(&run).await.unwrap());
    }
    let app = app(AppState::new(ledger));

    let list = get(&app, "/runs").await;
    assert_eq!(list.status, StatusCode::OK);
    assert_eq!(
        list.body.matches("<span class=\"badge\"").count(),
        2,
        "{}",
        list.body
    );
    assert!(
        list.body.contains("#2</a> <span class=\"badge\""),
        "{}",
        list.body
    );

    let busy = get(&app, "/runs/2").await;
    assert!(
        busy.body.contains("<span class=\"badge\">busy</span>"),
        "{}",
        busy.body
    );
    assert!(busy.body.contains("Measured on a busy machine"));
    assert!(
        busy.body
            .contains("other processes kept 1.42 CPUs busy on average over the run (limit 0.25)"),
        "{}",
        busy.body
    );
    assert!(busy.body.contains(&format!("sha256 {}", "b".repeat(64))));
    let quiet = get(&app, "/runs/1").await;
    assert!(!quiet.body.contains("Measured on a busy machine"));
    assert!(quiet.body.contains("others 0.02 CPUs") && quiet.body.contains("(quiet)"));

    let busy_head = get(&app, "/compare?base=1&head=2").await;
    assert_eq!(busy_head.status, StatusCode::OK, "{}", busy_head.body);
    assert!(
        busy_head
            .body
            .contains("Busy machine: the head run #2 ran on a busy machine"),
        "{}",
        busy_head.body
    );
    assert!(!busy_head.body.contains("Same executable"));

    let same = get(&app, "/compare?base=2&head=3").await;
    assert!(
        same.body.contains(&format!(
            "Same executable: base and head ran the same executable (sha256 {})",
            "b".repeat(12)
        )),
        "{}",
        same.body
    );
    let api = get(&app, "/api/compare?base=2&head=3").await.json();
    assert_eq!(api["same_binary"], "b".repeat(64));
    assert_eq!(api["head"]["busy"], true);
}

// ---------------------------------------------------------------------------------------------
// Issue 46 item 4: a change point names its commit range and the bisect that finds its commit
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_change_point_shows_its_commit_range_and_the_bisect_command() {
    let (app, _) = seeded_app().await;
    let b = get(&app, "/suites/demo?machine=m1").await.body;
    // parse/small steps at run 5 (commit 5); run 4 (commit 4) is the last at the old level.
    let (good, bad) = (
        format!("00000004{}", "ab".repeat(16)),
        format!("00000005{}", "ab".repeat(16)),
    );
    assert!(
        b.contains("<code>00000004ab</code> → <code>00000005ab</code>"),
        "{b}"
    );
    assert!(
        b.contains(&format!(
            "<code class=\"command\">bench-run bisect --suite demo --good {good} --bad {bad} \
             --benchmark &#39;^(?:parse/small)$&#39;</code>"
        )),
        "{b}"
    );
}

#[tokio::test]
async fn a_hostile_benchmark_id_is_quoted_for_the_shell_and_escaped_for_the_page() {
    use bench_model::{NewRun, RunSource};
    let ledger = Ledger::in_memory().await.unwrap();
    let hostile = format!("it's {RAW_SCRIPT} $(rm -rf ~)");
    for commit in 1..=8u32 {
        let level = if commit >= 5 { 1300.0 } else { 1000.0 };
        let run = NewRun {
            source: RunSource::BenchRun,
            provenance: util::provenance("odd suite", "m1", commit),
            measurements: vec![util::timed(&hostile, level, commit)],
        };
        ledger.record_run(&run).await.unwrap();
    }
    let app = app(AppState::new(ledger));
    let r = get(&app, "/suites/odd%20suite").await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(!r.body.contains(RAW_SCRIPT));
    // As a shell reads it: one word, the id escaped and anchored as a regex (criterion's
    // filter); as the page writes it: every quote and angle bracket escaped.
    let shell = format!(
        "bench-run bisect --suite 'odd suite' --good 00000004{ab} --bad 00000005{ab} \
         --benchmark '^(?:it'\\''s <script>alert\\(1\\)</script> \\$\\(rm \\-rf \\~\\))$'",
        ab = "ab".repeat(16)
    );
    let escaped = shell
        .replace('&', "&#38;")
        .replace('\'', "&#39;")
        .replace('<', "&#60;")
        .replace('>', "&#62;");
    assert!(r.body.contains(&escaped), "{escaped}\n{}", r.body);
}
