//! One server for many projects, on a real PostgreSQL server: two projects pushing the same
//! suite, benchmark and commit names never see each other's runs (pages, API, baselines,
//! trends); a token of one project can neither push to nor read the other; the URLs without a
//! project are the default project's, as before projects existed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use axum::http::StatusCode;
use bench_store::Ledger;
use util::{get, post_json, seeded};
use web::access::{Access, parse_spec};
use web::{AppState, app};

const PUSH_A: &str = "push-alpha-0123456789";
const PUSH_B: &str = "push-beta-0123456789";
const READ_A: &str = "read-alpha-0123456789";

async fn get_as(app: &axum::Router, uri: &str, token: &str) -> util::Reply {
    let request = axum::http::Request::get(uri)
        .header("authorization", format!("Bearer {token}"))
        .body(axum::body::Body::empty())
        .unwrap();
    util::send(app, request).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_projects_never_mix_and_their_tokens_stay_in_them() {
    let Some(pg) = testkit::postgres::server("two projects on one server") else {
        return;
    };
    let ledger = Ledger::open(bench_store::Location::parse(&pg.create_database()).unwrap())
        .await
        .unwrap();
    let mut access = Access::open().private(true);
    for spec in [
        format!("push:alpha:{PUSH_A}"),
        format!("push:beta:{PUSH_B}"),
        format!("read:alpha:{READ_A}"),
    ] {
        access = access.with_spec(&parse_spec(&spec).unwrap());
    }
    let app = app(AppState::new(ledger.clone()).with_access(access));

    // Both projects push the same seeded runs (suite `demo`, the same commits and names).
    let (source, _) = seeded().await;
    let mut ids = std::collections::BTreeMap::new();
    for (project, token, runs) in [("alpha", PUSH_A, 1..=8), ("beta", PUSH_B, 1..=3)] {
        for run in runs {
            let body = bench_client::push::push_body(&source, run).await.unwrap();
            let r = post_json(
                &app,
                &format!("/p/{project}/api/runs"),
                Some(token),
                &body.to_string(),
            )
            .await;
            assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
            assert!(
                r.json()["url"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("/p/{project}/runs/"))
            );
            ids.entry(project)
                .or_insert_with(Vec::new)
                .push(r.json()["id"].as_i64().unwrap());
        }
    }
    let (alpha, beta) = (&ids["alpha"], &ids["beta"]);

    // A token pushes only to its project; reads need the project's read token.
    let body = bench_client::push::push_body(&source, 1)
        .await
        .unwrap()
        .to_string();
    let r = post_json(&app, "/p/beta/api/runs", Some(PUSH_A), &body).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert!(r.body.contains("project beta"), "{}", r.body);
    assert_eq!(
        get_as(&app, "/p/beta/runs", READ_A).await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        get_as(&app, "/p/alpha/runs", PUSH_A).await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        get(&app, "/p/alpha/runs").await.status,
        StatusCode::UNAUTHORIZED
    );

    // Every read through alpha sees alpha's runs only.
    let listed = get_as(&app, "/p/alpha/api/runs?suite=demo", READ_A)
        .await
        .json();
    let listed: Vec<i64> = listed["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    let mut expected = alpha.clone();
    expected.reverse();
    assert_eq!(listed, expected, "alpha's runs, newest first, and no other");
    for id in beta {
        let r = get_as(&app, &format!("/p/alpha/api/runs/{id}"), READ_A).await;
        assert_eq!(
            r.status,
            StatusCode::NOT_FOUND,
            "beta's run {id} through alpha"
        );
    }
    let r = get_as(
        &app,
        &format!("/p/alpha/api/compare?base={}&head={}", beta[0], alpha[1]),
        READ_A,
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    // alpha's baseline is alpha's previous run, whatever beta pushed in between.
    let r = get_as(
        &app,
        &format!("/p/alpha/api/compare?base=previous&head={}", alpha[7]),
        READ_A,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["base"]["id"], alpha[6]);
    // What `gate --server` reads: alpha's evidence, alpha's history.
    let evidence = get_as(
        &app,
        &format!("/p/alpha/api/evidence?base=previous&head={}", alpha[7]),
        READ_A,
    )
    .await;
    assert_eq!(evidence.status, StatusCode::OK, "{}", evidence.body);
    let evidence = evidence.json();
    assert_eq!(evidence["base"]["id"], alpha[6], "{evidence:#}");
    let history_runs: Vec<i64> = evidence["history"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|series| series["points"].as_array().into_iter().flatten())
        .filter_map(|p| p["run"].as_i64())
        .collect();
    assert!(
        !history_runs.is_empty() && history_runs.iter().all(|id| alpha.contains(id)),
        "{history_runs:?}"
    );
    let trend = get_as(&app, "/p/alpha/api/suites/demo/trend?machine=all", READ_A)
        .await
        .json();
    let drawn: Vec<i64> = trend["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert!(
        !drawn.is_empty() && drawn.iter().all(|id| alpha.contains(id)),
        "{drawn:?}"
    );
    let page = get_as(&app, "/p/alpha/", READ_A).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body
            .contains(&format!("href=\"/p/alpha/runs/{}\"", alpha[7])),
        "links stay in the project"
    );
    assert!(
        page.body.contains("href=\"/p/beta/\""),
        "the dashboard lists the projects"
    );

    // The default project (the URLs without /p/) holds none of them.
    let (status, default_runs) = {
        let r = get_as(&app, "/api/runs", READ_A).await;
        (r.status, r)
    };
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "alpha's read token does not read the default project: {}",
        default_runs.body
    );
    let projects = ledger.projects().await.unwrap();
    let names: Vec<(&str, i64)> = projects.iter().map(|p| (p.name.as_str(), p.runs)).collect();
    assert_eq!(names, [("alpha", 8), ("beta", 3)]);
}

#[tokio::test]
async fn the_urls_without_a_project_are_the_default_projects() {
    let (ledger, ids) = seeded().await;
    let app = app(AppState::new(ledger));
    let old = get(&app, &format!("/runs/{}", ids[0])).await;
    let new = get(&app, &format!("/p/default/runs/{}", ids[0])).await;
    assert_eq!((old.status, new.status), (StatusCode::OK, StatusCode::OK));
    assert_eq!(old.body, new.body, "one page, two addresses");
    assert!(
        old.body.contains("href=\"/compare\""),
        "default links keep their old form"
    );
    let empty = get(&app, "/p/other/api/runs").await.json();
    assert!(empty["runs"].as_array().unwrap().is_empty());
    let bad = get(&app, "/p/.hidden/runs").await;
    assert_eq!(bad.status, StatusCode::NOT_FOUND);
    assert!(bad.body.contains("project name"), "{}", bad.body);
}

/// Runs the `bench-run` binary in `dir` with `env` (and no project or token of the caller's).
fn bench_run(args: &[&str], env: &[(&str, &str)], dir: &std::path::Path) -> std::process::Output {
    let mut command = std::process::Command::new(util::bench_run_binary());
    command
        .args(args)
        .current_dir(dir)
        .env_remove("BENCH_PROJECT")
        .env_remove("BENCH_PUSH_TOKEN")
        .env_remove("BENCH_DB");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_run_pushes_to_the_project_it_names_or_its_repository_is() {
    // A server with a push token for every project, on a socket.
    let dir = tempfile::tempdir().unwrap();
    let server_db = dir.path().join("server.sqlite");
    let server = Ledger::open(&server_db).await.unwrap();
    let state = AppState::new(server.clone())
        .with_access(Access::open().with_spec(&parse_spec(&format!("push:*:{PUSH_A}")).unwrap()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(web::serve::serve(
        listener,
        app(state),
        web::serve::ServeOptions::default(),
        std::future::pending(),
    ));
    // A local ledger with the seeded runs.
    let db = dir.path().join("local.sqlite");
    let local = Ledger::open(&db).await.unwrap();
    let (seeded, _) = seeded().await;
    bench_store::copy::copy_ledger(&*seeded, &*local, |_| {})
        .await
        .unwrap();
    local.close().await;
    let db = db.to_str().unwrap().to_owned();

    // Named on the command line.
    let named = tokio::task::spawn_blocking({
        let (db, url, dir) = (db.clone(), url.clone(), dir.path().to_owned());
        move || {
            bench_run(
                &["--db", &db, "push", "1", "--to", &url, "--project", "alpha"],
                &[("BENCH_PUSH_TOKEN", PUSH_A)],
                &dir,
            )
        }
    })
    .await
    .unwrap();
    assert!(
        named.status.success(),
        "{}",
        String::from_utf8_lossy(&named.stderr)
    );
    // Named by the repository's origin.
    let repo = dir.path().join("quick-xml");
    std::fs::create_dir(&repo).unwrap();
    for args in [
        &["init", "-q"][..],
        &[
            "remote",
            "add",
            "origin",
            "https://github.com/tafia/quick-xml.git",
        ][..],
    ] {
        assert!(
            std::process::Command::new("git")
                .args(args)
                .current_dir(&repo)
                .status()
                .unwrap()
                .success()
        );
    }
    let derived = tokio::task::spawn_blocking({
        let (db, url) = (db.clone(), url.clone());
        move || {
            bench_run(
                &["--db", &db, "push", "2", "--to", &url],
                &[("BENCH_PUSH_TOKEN", PUSH_A)],
                &repo,
            )
        }
    })
    .await
    .unwrap();
    let err = String::from_utf8_lossy(&derived.stderr);
    assert!(derived.status.success(), "{err}");
    assert!(err.contains("/p/quick-xml"), "{err}");

    let projects = server.projects().await.unwrap();
    let names: Vec<(&str, i64)> = projects.iter().map(|p| (p.name.as_str(), p.runs)).collect();
    assert_eq!(names, [("alpha", 1), ("quick-xml", 1)]);

    // `ledger copy --project` copies one project of the server.
    let one = dir.path().join("alpha.sqlite");
    let copied = tokio::task::spawn_blocking({
        let (from, to, cwd) = (server_db.clone(), one.clone(), dir.path().to_owned());
        move || {
            bench_run(
                &[
                    "ledger",
                    "copy",
                    "--from",
                    from.to_str().unwrap(),
                    "--to",
                    to.to_str().unwrap(),
                    "--project",
                    "alpha",
                ],
                &[],
                &cwd,
            )
        }
    })
    .await
    .unwrap();
    assert!(
        copied.status.success(),
        "{}",
        String::from_utf8_lossy(&copied.stderr)
    );
    let one = Ledger::open(&one).await.unwrap();
    let projects = one.projects().await.unwrap();
    let names: Vec<(&str, i64)> = projects.iter().map(|p| (p.name.as_str(), p.runs)).collect();
    assert_eq!(names, [("alpha", 1)]);
}
