//! Artifacts through the router (issue 46): profiles served with their media type and a policy
//! of their own, listed, shown on the run and compare pages with symbols escaped, and pushed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use axum::http::StatusCode;
use bench_store::Ledger;
use util::{ESCAPED_SCRIPT, RAW_SCRIPT, get, post_json, seeded};
use web::{AppState, app};

/// A small flamegraph as inferno writes them: an SVG with an inline script.
const FLAMEGRAPH: &str = r#"<?xml version="1.0" standalone="no"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"><svg version="1.1" width="1200" height="38" onload="init(evt)" xmlns="http://www.w3.org/2000/svg"><script type="text/ecmascript"><![CDATA[function init(evt) {}]]></script><g><title>main (1 samples, 100.00%)</title><rect x="0" y="0" width="1200" height="15"/></g></svg>
"#;

/// Run 5 of the seeded ledger (`parse/small` stepped up there) with profiles against run 4:
/// both flamegraphs, the differential one, folded stacks, and function counts naming a
/// hostile symbol. Returns the ids: base flamegraph, head flamegraph, diff, folded, counts.
async fn with_profiles(ledger: &Ledger) -> [i64; 5] {
    use bench_model::{ArtifactKind, NewArtifact};
    let counts = serde_json::json!({
        "unit": "samples",
        "rows": [
            {"function": "parse::tokens", "base_share": 0.30, "head_share": 0.25,
             "base": 300, "head": 330, "change": -0.05},
            {"function": RAW_SCRIPT, "base_share": 0.0, "head_share": 0.40,
             "base": 0, "head": 528, "change": 0.40},
        ]
    });
    let artifacts = [
        (
            4,
            ArtifactKind::Flamegraph,
            None,
            FLAMEGRAPH.as_bytes().to_vec(),
        ),
        (
            5,
            ArtifactKind::Flamegraph,
            None,
            FLAMEGRAPH.as_bytes().to_vec(),
        ),
        (
            5,
            ArtifactKind::DiffFlamegraph,
            Some(4),
            FLAMEGRAPH.as_bytes().to_vec(),
        ),
        (
            5,
            ArtifactKind::FoldedStacks,
            None,
            b"main;parse 3\n".to_vec(),
        ),
        (
            5,
            ArtifactKind::FunctionCounts,
            Some(4),
            counts.to_string().into_bytes(),
        ),
    ];
    let mut ids = [0; 5];
    for (i, (run, kind, against, bytes)) in artifacts.into_iter().enumerate() {
        let a = NewArtifact::new(run, "parse/small", kind, "perf", against, bytes);
        ids[i] = ledger.record_artifact(&a).await.unwrap();
    }
    ids
}

#[tokio::test]
async fn artifacts_are_served_with_their_media_type_and_a_policy_of_their_own() {
    let (ledger, _) = seeded().await;
    let [_, svg, _, folded, counts] = with_profiles(&ledger).await;
    let app = app(AppState::new(ledger));

    let r = get(&app, &format!("/artifacts/{svg}")).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.content_type(), "image/svg+xml");
    assert_eq!(r.body, FLAMEGRAPH);
    assert_eq!(r.headers.get("x-content-type-options").unwrap(), "nosniff");
    let csp = r.headers["content-security-policy"].to_str().unwrap();
    assert_eq!(csp, web::artifacts::SVG_CONTENT_SECURITY_POLICY);
    // inferno's script runs, sandboxed in an origin of its own, with nothing to reach.
    for part in [
        "default-src 'none'",
        "script-src 'unsafe-inline'",
        "sandbox allow-scripts;",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(part), "{part} in {csp}");
    }
    assert!(!csp.contains("allow-same-origin"), "{csp}");

    let r = get(&app, &format!("/artifacts/{folded}")).await;
    assert_eq!(r.content_type(), "text/plain; charset=utf-8");
    assert_eq!(r.body, "main;parse 3\n");
    let csp = r.headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("sandbox") && !csp.contains("script-src"),
        "{csp}"
    );
    assert_eq!(r.headers.get("x-content-type-options").unwrap(), "nosniff");

    let r = get(&app, &format!("/artifacts/{counts}")).await;
    assert_eq!(r.content_type(), "application/json");
    assert_eq!(r.json()["rows"][1]["function"], RAW_SCRIPT);

    let r = get(&app, "/artifacts/99999").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(r.body.contains("no artifact with id 99999"), "{}", r.body);
    let r = get(&app, "/artifacts/abc").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    // The pages keep their own policy: no script at all.
    let page = get(&app, "/runs/5").await;
    let csp = page.headers["content-security-policy"].to_str().unwrap();
    assert_eq!(csp, web::CONTENT_SECURITY_POLICY);

    let r = get(&app, "/api/runs/5/artifacts").await;
    assert_eq!(r.status, StatusCode::OK);
    let listed = r.json();
    let kinds: Vec<&str> = listed["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["folded", "flamegraph", "diff-flamegraph", "function-counts"]
    );
    assert_eq!(listed["artifacts"][1]["url"], format!("/artifacts/{svg}"));
    assert_eq!(listed["artifacts"][2]["against"], 4);
}

#[tokio::test]
async fn run_and_compare_pages_show_profiles_and_escape_symbols() {
    let (ledger, _) = seeded().await;
    let [base_svg, head_svg, diff, _, counts] = with_profiles(&ledger).await;
    let app = app(AppState::new(ledger));

    let run = get(&app, "/runs/5").await;
    assert_eq!(run.status, StatusCode::OK);
    assert!(
        run.body
            .contains("<h2 id=\"profiles-heading\">Profiles</h2>")
    );
    assert!(run.body.contains("<h3>parse/small</h3>"));
    for id in [head_svg, diff] {
        assert!(
            run.body.contains(&format!("<img src=\"/artifacts/{id}\"")),
            "{id}: {}",
            run.body
        );
    }
    assert!(run.body.contains("differential flamegraph against run #4"));
    assert!(run.body.contains("href=\"/compare?base=4&#38;head=5\""));
    // Embedded as images only: no object, embed or iframe that would run the SVG's script.
    for tag in ["<object", "<embed", "<iframe", "<script"] {
        assert!(!run.body.contains(tag), "{tag}");
    }
    // A run without artifacts has no such section.
    assert!(!get(&app, "/runs/3").await.body.contains("profiles-heading"));

    let compare = get(&app, "/compare?base=4&head=5").await;
    assert_eq!(compare.status, StatusCode::OK);
    let body = &compare.body;
    for (id, caption) in [
        (base_svg, "Before: run #4 (perf)"),
        (head_svg, "After: run #5 (perf)"),
        (diff, "Differential: run #5 against run #4 (perf)"),
    ] {
        assert!(
            body.contains(&format!("<img src=\"/artifacts/{id}\"")),
            "{id}"
        );
        assert!(body.contains(caption), "{caption}");
    }
    // Top functions, the biggest change first, the hostile symbol as text.
    assert!(body.contains("Top 2 of 2 functions by change of their self samples"));
    assert!(!body.contains(RAW_SCRIPT));
    let hostile = body.find(ESCAPED_SCRIPT).expect("escaped symbol");
    let tokens = body.find("parse::tokens").expect("second row");
    assert!(hostile < tokens, "ranked by the size of the change");
    assert!(
        body.contains("+40.00 pp") && body.contains("-5.00 pp"),
        "{body}"
    );
    assert!(body.contains(&format!("href=\"/artifacts/{counts}\"")));
    // The other direction has no diff against it: only the two runs' own flamegraphs.
    let reverse = get(&app, "/compare?base=5&head=4").await;
    assert!(!reverse.body.contains("Differential:"));
    assert!(!reverse.body.contains("Top 2"));
    // Runs without profiles: no section.
    let plain = get(&app, "/compare?base=1&head=2").await;
    assert!(!plain.body.contains("profiles-heading"));
}

/// The push body of an artifact, as `bench-run push` sends it.
fn artifact_push(kind: &str, against: Option<i64>, content: &[u8]) -> serde_json::Value {
    use base64::Engine as _;
    use sha2::Digest as _;
    let sha: String = sha2::Sha256::digest(content)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let media = bench_model::ArtifactKind::from_name(kind)
        .map_or("text/plain", bench_model::ArtifactKind::media_type);
    serde_json::json!({
        "version": 1,
        "benchmark": "parse/small",
        "kind": kind,
        "profiler": "callgrind",
        "against": against,
        "media_type": media,
        "sha256": sha,
        "content_base64": base64::engine::general_purpose::STANDARD.encode(content),
    })
}

#[tokio::test]
async fn artifact_pushes_are_idempotent_and_refuse_corrupt_input_with_a_4xx() {
    let (ledger, _) = seeded().await;
    let app = app(AppState::new(ledger.clone()).with_ingest_token("t0ken"));
    let url = "/api/runs/5/artifacts";
    let good = artifact_push("diff-flamegraph", Some(4), FLAMEGRAPH.as_bytes());

    let first = post_json(&app, url, Some("t0ken"), &good.to_string()).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    let id = first.json()["id"].as_i64().unwrap();
    assert_eq!(first.json()["url"], format!("/artifacts/{id}"));
    let again = post_json(&app, url, Some("t0ken"), &good.to_string()).await;
    assert_eq!(again.status, StatusCode::OK, "a retry records nothing");
    assert_eq!(again.json()["id"], id);
    let stored = ledger.artifact(id).await.unwrap().unwrap();
    assert_eq!(stored.bytes, FLAMEGRAPH.as_bytes());
    assert_eq!(stored.summary.against, Some(4));
    assert_eq!(stored.summary.profiler, "callgrind");

    let with = |field: &str, value: serde_json::Value| {
        let mut body = good.clone();
        body[field] = value;
        body.to_string()
    };
    let mut unknown_field = good.clone();
    unknown_field["extra"] = serde_json::json!(1);
    let too_large = "A".repeat(bench_model::MAX_ARTIFACT_BYTES / 3 * 4 + 8);
    let cases: Vec<(&str, String, Option<&str>, StatusCode, &str)> = vec![
        (
            "no token",
            good.to_string(),
            None,
            StatusCode::UNAUTHORIZED,
            "token",
        ),
        (
            "not JSON",
            "{".to_owned(),
            Some("t0ken"),
            StatusCode::BAD_REQUEST,
            "invalid artifact JSON",
        ),
        (
            "unknown field",
            unknown_field.to_string(),
            Some("t0ken"),
            StatusCode::BAD_REQUEST,
            "unknown field",
        ),
        (
            "version",
            with("version", 2.into()),
            Some("t0ken"),
            StatusCode::BAD_REQUEST,
            "version 2",
        ),
        (
            "kind",
            with("kind", "html".into()),
            Some("t0ken"),
            StatusCode::BAD_REQUEST,
            "invalid artifact JSON",
        ),
        (
            "base64",
            with("content_base64", "not base64!".into()),
            Some("t0ken"),
            StatusCode::BAD_REQUEST,
            "not base64",
        ),
        (
            "digest",
            with("sha256", "0".repeat(64).into()),
            Some("t0ken"),
            StatusCode::BAD_REQUEST,
            "does not match its sha256",
        ),
        (
            "media type",
            with("media_type", "text/html".into()),
            Some("t0ken"),
            StatusCode::BAD_REQUEST,
            "is image/svg+xml",
        ),
        (
            "profiler",
            with("profiler", "".into()),
            Some("t0ken"),
            StatusCode::BAD_REQUEST,
            "profiler",
        ),
        (
            "base",
            with("against", 999.into()),
            Some("t0ken"),
            StatusCode::NOT_FOUND,
            "no run with id 999",
        ),
        (
            "too large",
            with("content_base64", too_large.into()),
            Some("t0ken"),
            StatusCode::PAYLOAD_TOO_LARGE,
            "exceeds",
        ),
        (
            "not an SVG",
            artifact_push("flamegraph", None, b"<html><script>x</script></html>").to_string(),
            Some("t0ken"),
            StatusCode::BAD_REQUEST,
            "not an SVG document",
        ),
        (
            "counts",
            artifact_push(
                "function-counts",
                Some(4),
                b"{\"unit\":\"bytes\",\"rows\":[]}",
            )
            .to_string(),
            Some("t0ken"),
            StatusCode::BAD_REQUEST,
            "not a valid function-counts artifact",
        ),
    ];
    for (what, body, token, status, needle) in cases {
        let r = post_json(&app, url, token, &body).await;
        assert_eq!(r.status, status, "{what}: {}", r.body);
        let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains(needle), "{what}: {message}");
    }
    for (uri, status) in [
        ("/api/runs/999/artifacts", StatusCode::NOT_FOUND),
        ("/api/runs/latest/artifacts", StatusCode::BAD_REQUEST),
    ] {
        let r = post_json(&app, uri, Some("t0ken"), &good.to_string()).await;
        assert_eq!(r.status, status, "{uri}: {}", r.body);
    }
    assert_eq!(
        ledger.artifacts(5).await.unwrap().len(),
        1,
        "nothing else stored"
    );
}
