//! The team server: `bench-web` on PostgreSQL taking pushes from many runners at once, and
//! keeping every acknowledged run when it is killed or its database crashes mid-ingest.
//!
//! Each runner is a local ledger of its own (as on an ephemeral CI machine) whose runs are sent
//! with `bench_client::push`, the client `bench-run --push` uses: the push format, an idempotency
//! key per run, and retries with backoff. The server is the real `bench-web` binary, started on
//! a fixed port so that a restarted server answers the same URL.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use bench_client::push::{RetryPolicy, push_run};
use bench_model::{Machine, Measurement, NewRun, RunProvenance, RunSource, Samples, SamplingMode};
use bench_store::{Ledger, Location, RunFilter};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "team-server-push-token";
const BENCHMARKS: usize = 100;
const SAMPLES: usize = 100;

/// A running `bench-web`, killed on drop.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    /// `bench-web` on `db`, listening on `port`, taking pushes with [`TOKEN`].
    fn start(db: &str, port: u16) -> Self {
        Self::start_with(db, port, &["--token", &format!("push:{TOKEN}")])
    }

    /// `bench-web` on `db`, listening on `port`, with `args` (its tokens).
    fn start_with(db: &str, port: u16, args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bench-web"))
            .args(["--db", db, "--addr", &format!("127.0.0.1:{port}")])
            .args(args)
            .env_remove("BENCH_TOKENS")
            .env_remove("BENCH_INGEST_TOKEN")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(
            line.starts_with("bench-web: listening on http://"),
            "unexpected first line from bench-web: {line:?}"
        );
        Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }

    /// SIGKILL: no shutdown, requests in flight cut off.
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Run `n` of runner `runner`: [`BENCHMARKS`] benchmarks of [`SAMPLES`] samples each, whose
/// values name the runner and the run (so a stored run can be matched to what was pushed).
fn run(runner: usize, n: usize) -> NewRun {
    let level = (runner * 1000 + n) as f64;
    let measurements = (0..BENCHMARKS)
        .map(|b| {
            let times: Vec<f64> = (0..SAMPLES)
                .map(|s| level + b as f64 + s as f64 * 1e-3)
                .collect();
            Measurement {
                samples: Some(Samples::new(SamplingMode::Flat, vec![1.0; SAMPLES], times).unwrap()),
                ..Measurement::time_ns(&format!("group/bench_{b:03}"), level + b as f64)
            }
        })
        .collect();
    NewRun {
        source: RunSource::BenchRun,
        provenance: RunProvenance {
            suite: "team".to_owned(),
            machine: Machine {
                fingerprint: format!("runner-{}", runner % 4),
                cpu_model: "ci runner".to_owned(),
                logical_cores: 2,
                ..Machine::default()
            },
            ..RunProvenance::default()
        },
        measurements,
    }
}

/// A runner: records `runs` runs in a ledger of its own, pushes each to `url`, and returns
/// (its run's level, the id the server acknowledged, the attempts it took) per run.
async fn runner(
    runner: usize,
    runs: usize,
    url: String,
    policy: RetryPolicy,
) -> Vec<(f64, i64, u32)> {
    let ledger = Ledger::in_memory().await.unwrap();
    let mut acknowledged = Vec::new();
    for n in 0..runs {
        let new = run(runner, n);
        let level = new.measurements[0].estimate.point;
        let id = ledger.record_run(&new).await.unwrap();
        let pushed = push_run(&ledger, id, &url, TOKEN, policy)
            .await
            .unwrap_or_else(|e| panic!("runner {runner}, run {n}: {e}"));
        acknowledged.push((level, pushed.remote_id, pushed.attempts));
    }
    acknowledged
}

/// Every acknowledged run is on the server exactly once and whole: `expected` runs in all,
/// each with all its results and samples, and each acknowledged id holds the run pushed.
async fn assert_all_present(db: &str, acknowledged: &[(f64, i64, u32)], expected: usize) {
    let ledger = Ledger::open(Location::parse(db).unwrap()).await.unwrap();
    let runs = ledger.runs(&RunFilter::default()).await.unwrap();
    assert_eq!(runs.len(), expected, "runs on the server");
    assert!(
        runs.iter().all(|r| r.results == BENCHMARKS as i64),
        "a partial run: {:?}",
        runs.iter().find(|r| r.results != BENCHMARKS as i64)
    );
    let ids: BTreeMap<i64, f64> = acknowledged.iter().map(|&(l, id, _)| (id, l)).collect();
    assert_eq!(
        ids.len(),
        acknowledged.len(),
        "two pushes acknowledged one id"
    );
    // Each acknowledged id holds what was pushed; check every tenth in full (samples too).
    for (i, (&id, &level)) in ids.iter().enumerate() {
        let run = ledger.require_run(id).await.unwrap();
        assert_eq!(run.provenance.suite, "team");
        if i % 10 == 0 {
            let m = ledger.measurements(id).await.unwrap();
            assert_eq!(m.len(), BENCHMARKS);
            assert_eq!(m[0].estimate.point.to_bits(), level.to_bits(), "run {id}");
            let samples = m[0].samples.as_ref().unwrap();
            assert_eq!(samples.times_ns().len(), SAMPLES, "run {id}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_runners_push_fifty_runs_each_and_every_acknowledged_run_lands_once() {
    let Some(pg) = testkit::postgres::server("16 pushers through bench-web on postgres") else {
        return;
    };
    let db = pg.create_database();
    let server = Server::start(&db, free_port());
    let started = Instant::now();
    let runners: Vec<_> = (0..16)
        .map(|r| tokio::spawn(runner(r, 50, server.url.clone(), RetryPolicy::default())))
        .collect();
    let mut acknowledged = Vec::new();
    for r in runners {
        acknowledged.extend(r.await.unwrap());
    }
    eprintln!(
        "800 runs of {BENCHMARKS} benchmarks x {SAMPLES} samples pushed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_all_present(&db, &acknowledged, 16 * 50).await;
    // Every page and the API read the same PostgreSQL ledger.
    let newest = acknowledged.iter().map(|a| a.1).max().unwrap();
    for path in [
        "/".to_owned(),
        "/runs?suite=team".to_owned(),
        format!("/runs/{newest}"),
        format!("/compare?base=previous&head={newest}"),
        "/suites/team".to_owned(),
        "/api/runs?suite=team".to_owned(),
        "/api/suites/team/trend".to_owned(),
        "/api/testbeds".to_owned(),
    ] {
        let (status, body) = util::http_get(server.url.trim_start_matches("http://"), &path);
        assert_eq!(status, 200, "{path}: {body}");
    }
}

/// Retries patient enough to outlast a restart.
const PATIENT: RetryPolicy = RetryPolicy {
    attempts: 40,
    first_delay: Duration::from_millis(100),
    max_delay: Duration::from_millis(500),
};

/// Waits until the server holds at least `n` runs.
async fn wait_for_runs(db: &str, n: usize) {
    let ledger = Ledger::open_read_only(Location::parse(db).unwrap())
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while ledger.runs(&RunFilter::default()).await.unwrap().len() < n {
        assert!(Instant::now() < deadline, "the server never got {n} runs");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_server_loses_no_acknowledged_run_and_stores_no_retry_twice() {
    let Some(pg) = testkit::postgres::server("bench-web killed mid-ingest") else {
        return;
    };
    let db = pg.create_database();
    let port = free_port();
    let server = Server::start(&db, port);
    let url = server.url.clone();
    let runners: Vec<_> = (0..4)
        .map(|r| tokio::spawn(runner(r, 30, url.clone(), PATIENT)))
        .collect();
    // Kill it twice while runs are arriving, each time starting it again on the same port.
    let mut server = Some(server);
    for at in [10, 60] {
        wait_for_runs(&db, at).await;
        server.take().unwrap().kill();
        tokio::time::sleep(Duration::from_millis(300)).await;
        server = Some(Server::start(&db, port));
    }
    let mut acknowledged = Vec::new();
    for r in runners {
        acknowledged.extend(r.await.unwrap());
    }
    assert_all_present(&db, &acknowledged, 4 * 30).await;
    let retried = acknowledged.iter().filter(|a| a.2 > 1).count();
    assert!(
        retried > 0,
        "no push was cut off: the test did not test the outage"
    );
    eprintln!("{retried} of 120 pushes needed more than one attempt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_crash_loses_no_acknowledged_run_and_stores_no_retry_twice() {
    let Some(pg) = testkit::postgres::private_server("postgres stopped mid-ingest") else {
        return;
    };
    let db = pg.create_database();
    let server = Server::start(&db, free_port());
    let runners: Vec<_> = (0..4)
        .map(|r| tokio::spawn(runner(r, 30, server.url.clone(), PATIENT)))
        .collect();
    for at in [10, 60] {
        wait_for_runs(&db, at).await;
        pg.stop_immediately();
        tokio::time::sleep(Duration::from_millis(500)).await;
        pg.start_again();
    }
    let mut acknowledged = Vec::new();
    for r in runners {
        acknowledged.extend(r.await.unwrap());
    }
    assert_all_present(&db, &acknowledged, 4 * 30).await;
    let retried = acknowledged.iter().filter(|a| a.2 > 1).count();
    assert!(
        retried > 0,
        "no push was cut off: the test did not test the outage"
    );
    eprintln!("{retried} of 120 pushes needed more than one attempt");
}

/// One run of the verdict test: three benchmarks at `levels`, 30 samples each within ±1.5%,
/// built by executable `exe`.
fn verdict_run(levels: [f64; 3], exe: &str, seed: usize) -> NewRun {
    let measurements = levels
        .iter()
        .enumerate()
        .map(|(b, &level)| {
            let times: Vec<f64> = (0..30)
                .map(|s| level * (1.0 + (((s * 7 + seed * 13 + b) % 31) as f64 - 15.0) * 0.001))
                .collect();
            Measurement {
                samples: Some(Samples::new(SamplingMode::Flat, vec![1.0; 30], times).unwrap()),
                ..Measurement::time_ns(&format!("codec/b{b}"), level)
            }
        })
        .collect();
    NewRun {
        source: RunSource::BenchRun,
        provenance: RunProvenance {
            suite: "codec".to_owned(),
            machine: Machine {
                fingerprint: "ci-runner-class".to_owned(),
                cpu_model: "ci runner".to_owned(),
                logical_cores: 2,
                ..Machine::default()
            },
            bench_exe: Some(bench_model::BenchExe {
                sha256: exe.repeat(64),
                bytes: 1,
            }),
            ..RunProvenance::default()
        },
        measurements,
    }
}

fn bench_run(args: &[&str], env: &[(&str, &str)], dir: &std::path::Path) -> (i32, String, String) {
    let mut command = Command::new(util::bench_run_binary());
    command
        .args(args)
        .current_dir(dir)
        .env_remove("BENCH_DB")
        .env_remove("BENCH_PROJECT")
        .env_remove("BENCH_SERVER")
        .env_remove("BENCH_READ_TOKEN");
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gate_and_compare_through_the_server_agree_with_a_local_copy() {
    let Some(pg) = testkit::postgres::server("gate --server on postgres") else {
        return;
    };
    // A local history: twelve runs of unchanged code, then a base and a head in which b0 is
    // 10% slower, b1 unchanged and b2 8% faster.
    let dir = tempfile::tempdir().unwrap();
    let local_db = dir.path().join("local.sqlite");
    let local = Ledger::open(&local_db).await.unwrap();
    for seed in 0..12 {
        let id = local
            .record_run(&verdict_run(
                [100.0, 200.0, 300.0],
                &format!("{}", seed % 10),
                seed,
            ))
            .await
            .unwrap();
        assert!(id > 0);
    }
    let base = local
        .record_run(&verdict_run([100.0, 200.0, 300.0], "a", 40))
        .await
        .unwrap();
    let head = local
        .record_run(&verdict_run([110.0, 200.0, 276.0], "b", 41))
        .await
        .unwrap();
    local.tag(base, "base").await.unwrap();
    local.tag(head, "head").await.unwrap();

    // The team's server holds a copy.
    let db = pg.create_database();
    let server_ledger = Ledger::open(Location::parse(&db).unwrap()).await.unwrap();
    bench_store::copy::copy_ledger(&*local, &*server_ledger, |_| {})
        .await
        .unwrap();
    const READ: &str = "verdict-read-token-0123";
    let port = free_port();
    let server = Server::start_with(
        &db,
        port,
        &["--token", &format!("read:{READ}"), "--private"],
    );
    let url = server.url.clone();
    let local_db = local_db.to_str().unwrap();

    for command in [
        vec![
            "gate", "--base", "base", "--head", "head", "--format", "json",
        ],
        vec!["compare", "base", "head", "--format", "json"],
    ] {
        let mut on_local = vec!["--db", local_db];
        on_local.extend(&command);
        let local_answer = bench_run(&on_local, &[], dir.path());
        let mut on_server = command.clone();
        on_server.extend(["--server", url.as_str()]);
        let server_answer = bench_run(&on_server, &[("BENCH_READ_TOKEN", READ)], dir.path());
        assert_eq!(
            local_answer.0, server_answer.0,
            "exit codes of {command:?}:\n{server_answer:?}"
        );
        let local_json: serde_json::Value = serde_json::from_str(&local_answer.1).unwrap();
        let server_json: serde_json::Value = serde_json::from_str(&server_answer.1).unwrap();
        assert_eq!(local_json, server_json, "{command:?}");
        // Not a vacuous agreement: the slowdown is found, the speed-up too.
        let verdicts: Vec<&str> = local_json["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["verdict"].as_str().unwrap())
            .collect();
        assert_eq!(
            verdicts,
            ["regression", "unchanged", "improvement"],
            "{command:?}"
        );
        // Without the read token the private server answers nothing.
        let refused = bench_run(&on_server, &[], dir.path());
        assert_ne!(refused.0, 0);
        assert!(refused.2.contains("401"), "{}", refused.2);
    }
    let (code, _, stderr) = bench_run(
        &["gate", "--base", "base", "--head", "head", "--server", &url],
        &[("BENCH_READ_TOKEN", READ)],
        dir.path(),
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("gate: FAIL"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ab_pair_pushed_to_the_server_is_judged_there_on_its_rounds() {
    let Some(pg) = testkit::postgres::server("ab pair pushed to postgres") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let local_db = dir.path().join("runner.sqlite");
    let local = Ledger::open(&local_db).await.unwrap();
    // Ten rounds in which the head is 10% slower every time.
    let side = |source: RunSource, scale: f64, exe: &str| {
        let mut run = verdict_run([100.0 * scale, 200.0, 300.0], exe, 0);
        run.source = source;
        for (b, m) in run.measurements.iter_mut().enumerate() {
            let level = m.estimate.point;
            let rounds: Vec<f64> = (0..10)
                .map(|r| level * (1.0 + ((r * 3 + b) % 5) as f64 * 0.002))
                .collect();
            m.samples =
                Some(Samples::new(SamplingMode::PerProcess, vec![1.0; 10], rounds).unwrap());
        }
        run
    };
    // Rounds alternate between two layouts (`ab --layouts 2`).
    let plan = bench_store::PairingPlan {
        seed: 7,
        base_first: (0..10).map(|r| r % 2 == 0).collect(),
        base_rev: "main".to_owned(),
        head_rev: None,
        round_layouts: (0..10).map(|r| if r % 2 == 0 { 11 } else { 22 }).collect(),
    };
    let (base, head) = local
        .record_pair(
            &side(RunSource::AbBase, 1.0, "c"),
            &side(RunSource::AbHead, 1.1, "d"),
            &plan,
        )
        .await
        .unwrap();

    let db = pg.create_database();
    let server = Server::start(&db, free_port());
    let pushed = bench_client::push::push_pair(&local, base, head, &server.url, TOKEN, PATIENT)
        .await
        .unwrap();
    assert!(pushed.created);
    assert_eq!(
        pushed.url,
        format!("/compare?base={}&head={}", pushed.base, pushed.head)
    );
    // Pushing it again (here through the CLI, naming one side) stores nothing new.
    let (code, _, stderr) = bench_run(
        &[
            "--db",
            local_db.to_str().unwrap(),
            "push",
            &head.to_string(),
            "--to",
            &server.url,
        ],
        &[("BENCH_PUSH_TOKEN", TOKEN)],
        dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("there already"), "{stderr}");
    let remote = Ledger::open(Location::parse(&db).unwrap()).await.unwrap();
    assert_eq!(remote.runs(&RunFilter::default()).await.unwrap().len(), 2);
    let stored = remote
        .pairing_between(pushed.base, pushed.head)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.plan.round_layouts, plan.round_layouts,
        "layouts survive the push"
    );

    // The gate on the server judges the pair on its rounds: b0 is 10% slower in all ten.
    let (code, stdout, stderr) = bench_run(
        &[
            "gate",
            "--base",
            &pushed.base.to_string(),
            "--head",
            &pushed.head.to_string(),
            "--server",
            &server.url,
            "--format",
            "json",
        ],
        &[],
        dir.path(),
    );
    assert_eq!(code, 1, "{stderr}\n{stdout}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["rows"][0]["verdict"], "regression", "{stdout}");
    // The server recomputed each side's per-layout medians from the stored layouts.
    let layout = &json["rows"][0]["layout"];
    assert_eq!(
        layout["base"]["medians"].as_array().unwrap().len(),
        2,
        "{stdout}"
    );
    assert_eq!(json["rows"][0]["layout_sensitive"], false, "{stdout}");
}

/// Issue 46: a run's profiles follow it to the server, the base of a diff mapped to the
/// server's id of the base run (pushed alone or as a side of an ab pair, before or not), and
/// pushing again adds nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn artifacts_follow_their_runs_to_the_server_once() {
    use bench_model::{ArtifactKind, NewArtifact};
    let Some(pg) = testkit::postgres::server("artifacts pushed to postgres") else {
        return;
    };
    let local = Ledger::in_memory().await.unwrap();
    let svg = |name: &str| {
        format!(
            "<?xml version=\"1.0\"?><svg xmlns=\"http://www.w3.org/2000/svg\"><title>{name}</title></svg>"
        )
        .into_bytes()
    };
    let (older, newer) = (
        local.record_run(&run(1, 0)).await.unwrap(),
        local.record_run(&run(1, 1)).await.unwrap(),
    );
    let mut base = run(2, 0);
    base.source = RunSource::AbBase;
    let mut head = run(2, 1);
    head.source = RunSource::AbHead;
    let plan = bench_store::PairingPlan {
        seed: 1,
        base_first: (0..SAMPLES).map(|r| r % 2 == 0).collect(),
        base_rev: "main".to_owned(),
        head_rev: None,
        round_layouts: Vec::new(),
    };
    let (base, head) = local.record_pair(&base, &head, &plan).await.unwrap();
    let counts = br#"{"unit":"instructions","rows":[{"function":"f","base_share":0.5,"head_share":0.6,"base":50,"head":60,"change":10}]}"#;
    let bench = "group/bench_000";
    for (run, kind, against, bytes) in [
        (older, ArtifactKind::Flamegraph, None, svg("older")),
        (newer, ArtifactKind::Flamegraph, None, svg("newer")),
        (
            newer,
            ArtifactKind::DiffFlamegraph,
            Some(older),
            svg("diff"),
        ),
        (
            newer,
            ArtifactKind::FoldedStacks,
            None,
            b"main;f 1\n".to_vec(),
        ),
        (
            head,
            ArtifactKind::DiffFlamegraph,
            Some(base),
            svg("ab diff"),
        ),
        (
            head,
            ArtifactKind::FunctionCounts,
            Some(base),
            counts.to_vec(),
        ),
    ] {
        let kind_profiler = if kind == ArtifactKind::FunctionCounts {
            "callgrind"
        } else {
            "perf"
        };
        let a = NewArtifact::new(run, bench, kind, kind_profiler, against, bytes);
        local.record_artifact(&a).await.unwrap();
    }

    let db = pg.create_database();
    let server = Server::start(&db, free_port());
    // The newer run first: its diff's base is pushed with it, to learn its id there.
    let pushed_newer = push_run(&local, newer, &server.url, TOKEN, PATIENT)
        .await
        .unwrap();
    assert_eq!((pushed_newer.created, pushed_newer.artifacts), (true, 3));
    let pushed_older = push_run(&local, older, &server.url, TOKEN, PATIENT)
        .await
        .unwrap();
    assert!(!pushed_older.created, "pushed with the diff that names it");
    assert_eq!(pushed_older.artifacts, 1);
    let pair = bench_client::push::push_pair(&local, base, head, &server.url, TOKEN, PATIENT)
        .await
        .unwrap();
    assert_eq!((pair.created, pair.artifacts), (true, 2));

    let remote = Ledger::open(Location::parse(&db).unwrap()).await.unwrap();
    assert_eq!(remote.runs(&RunFilter::default()).await.unwrap().len(), 4);
    let mapping = [
        (older, pushed_older.remote_id),
        (newer, pushed_newer.remote_id),
        (base, pair.base),
        (head, pair.head),
    ];
    same_artifacts(&local, &remote, &mapping).await;

    // Everything again: nothing is added.
    push_run(&local, newer, &server.url, TOKEN, PATIENT)
        .await
        .unwrap();
    bench_client::push::push_pair(&local, base, head, &server.url, TOKEN, PATIENT)
        .await
        .unwrap();
    assert_eq!(remote.runs(&RunFilter::default()).await.unwrap().len(), 4);
    let mut stored = 0;
    for (_, remote_run) in mapping {
        stored += remote.artifacts(remote_run).await.unwrap().len();
    }
    assert_eq!(stored, 6);
    same_artifacts(&local, &remote, &mapping).await;

    // Served by the server, and shown on its compare page.
    let addr = server.url.trim_start_matches("http://").to_owned();
    let diff = &remote
        .artifacts_against(pair.base, pair.head)
        .await
        .unwrap()[0];
    let (status, body) = util::http_get(&addr, &format!("/artifacts/{}", diff.id));
    assert_eq!(status, 200);
    assert!(body.contains("<title>ab diff</title>"), "{body}");
    let (status, page) = util::http_get(
        &addr,
        &format!("/compare?base={}&head={}", pair.base, pair.head),
    );
    assert_eq!(status, 200);
    assert!(
        page.contains(&format!("<img src=\"/artifacts/{}\"", diff.id)),
        "{page}"
    );
    assert!(page.contains("Change (instructions)"), "{page}");
}

/// Each local run's artifacts are its remote copy's: kind, digest, bytes, and the base mapped.
async fn same_artifacts(local: &Ledger, remote: &Ledger, mapping: &[(i64, i64)]) {
    let remote_of: BTreeMap<i64, i64> = mapping.iter().copied().collect();
    for &(local_run, remote_run) in mapping {
        let (ours, theirs) = (
            local.artifacts(local_run).await.unwrap(),
            remote.artifacts(remote_run).await.unwrap(),
        );
        assert_eq!(ours.len(), theirs.len(), "run {local_run}");
        for (a, b) in ours.iter().zip(&theirs) {
            assert_eq!(
                (&a.benchmark, a.kind, &a.sha256),
                (&b.benchmark, b.kind, &b.sha256)
            );
            assert_eq!(
                b.against,
                a.against.map(|r| remote_of[&r]),
                "run {local_run}"
            );
            let bytes = remote.artifact(b.id).await.unwrap().unwrap().bytes;
            assert_eq!(bytes, local.artifact(a.id).await.unwrap().unwrap().bytes);
        }
    }
}
