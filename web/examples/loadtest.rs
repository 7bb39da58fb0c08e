//! A bounded loopback load test of `bench-web`.
//!
//! Starts the app in-process on `127.0.0.1:0` over a generated ledger (in a SQLite file, or with
//! `--postgres` in a PostgreSQL server the example starts as the tests do; or `--db PATH|URL`),
//! then keeps `--connections` keep-alive HTTP/1.1 clients busy for `--duration` seconds (at most
//! 120, and at most `--max-requests` requests in all) on a mix of pages and API calls, after one
//! untimed request of each (its latency reported as `latency_cold`) and until the dashboard
//! has no pending verdict (warm: each line's newest run compared), each reader pausing
//! `--think-ms` between requests as a person browsing does (0, the default: no pause), while
//! `--pushers` clients push runs (`POST /api/runs`, each with its idempotency key) as CI runners
//! do. Prints a summary on stderr and the latencies and ingest rate as Bencher Metric Format JSON
//! on stdout (or `--out FILE`), ready for `bench-run import bmf FILE --suite web_load`. Exits 1
//! if any request failed.
//!
//! ```text
//! cargo run --release -p web --example loadtest -- --duration 30 --out target/web-load.json
//! cargo run --release -p web --example loadtest -- --postgres --pushers 4 --out target/pg.json
//! ```
//!
//! Traffic goes only to the loopback address of the in-process server.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use anyhow::{Context, Result, bail};
use bench_store::{Ledger, Location};
use clap::Parser;
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use testkit::synthetic::SyntheticSuite;

#[derive(Debug, Parser)]
struct Args {
    /// Serve this ledger (a path or a postgres:// URL) instead of a generated one.
    #[arg(long, value_name = "PATH|URL")]
    db: Option<String>,
    /// Generate the ledger in a PostgreSQL server started for the run (Debian's postgresql).
    #[arg(long, conflicts_with = "db")]
    postgres: bool,
    /// Clients pushing runs while the readers read (0: no ingest).
    #[arg(long, default_value_t = 0)]
    pushers: usize,
    /// Benchmarks in each pushed run.
    #[arg(long, default_value_t = 100)]
    push_benchmarks: usize,
    /// Raw samples of each pushed benchmark.
    #[arg(long, default_value_t = 100)]
    push_samples: usize,
    /// Seconds of load (at most 120).
    #[arg(long, default_value_t = 30)]
    duration: u64,
    /// Concurrent keep-alive connections (readers).
    #[arg(long, default_value_t = 8)]
    connections: usize,
    /// Milliseconds each reader waits after an answer before its next request, as a person
    /// browsing does (0: readers ask without pause, a stress test).
    #[arg(long, default_value_t = 0)]
    think_ms: u64,
    /// Stop after this many requests in all, even before the duration.
    #[arg(long, default_value_t = 2_000_000)]
    max_requests: usize,
    /// Read and push in this project of the ledger (`/p/NAME/...`; default: the default
    /// project). `fill_ledger` writes `project-0`, `project-1`, ...
    #[arg(long, value_name = "NAME")]
    project: Option<String>,
    /// The suite the readers read (default: the project's suite of most runs, other than the
    /// pushers' `ingest`).
    #[arg(long)]
    suite: Option<String>,
    /// First part of every benchmark name in the BMF output (scenarios of one recording apart).
    #[arg(long, default_value = "loopback")]
    prefix: String,
    /// Write the BMF JSON here instead of standard output.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Generated ledger: suite `load`, 20 benchmarks x 200 runs.
async fn generate(location: &Location) -> Result<()> {
    let ledger = Ledger::open(location).await?;
    let suite = SyntheticSuite {
        suite: "load".to_owned(),
        benchmarks: 20,
        runs: 200,
    };
    suite.record(&ledger).await?;
    ledger.close().await;
    Ok(())
}

#[derive(Default)]
struct Tally {
    /// Latencies in nanoseconds, per route.
    latencies: BTreeMap<&'static str, Vec<u64>>,
    errors: usize,
    /// Why requests failed: "route: status or error", with counts.
    reasons: BTreeMap<String, usize>,
}

impl Tally {
    fn fail(&mut self, route: &str, reason: impl std::fmt::Display) {
        self.errors += 1;
        *self
            .reasons
            .entry(format!("{route}: {reason}"))
            .or_default() += 1;
    }
}

async fn client(
    addr: SocketAddr,
    routes: Vec<(&'static str, String)>,
    offset: usize,
    deadline: Instant,
    budget: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    think: Duration,
) -> Tally {
    let mut tally = Tally::default();
    let mut sender = None;
    let mut i = offset;
    while Instant::now() < deadline
        && budget
            .fetch_update(
                std::sync::atomic::Ordering::Relaxed,
                std::sync::atomic::Ordering::Relaxed,
                |n| n.checked_sub(1),
            )
            .is_ok()
    {
        let (name, path) = &routes[i % routes.len()];
        i += 1;
        if sender.is_none() {
            match tokio::net::TcpStream::connect(addr).await {
                Ok(stream) => {
                    match hyper::client::conn::http1::handshake(TokioIo::new(stream)).await {
                        Ok((s, conn)) => {
                            tokio::spawn(conn);
                            sender = Some(s);
                        }
                        Err(e) => {
                            tally.fail(name, format!("handshake: {e}"));
                            continue;
                        }
                    }
                }
                Err(e) => {
                    tally.fail(name, format!("connect: {e}"));
                    continue;
                }
            }
        }
        let Some(s) = sender.as_mut() else { continue };
        // A keep-alive connection takes the next request only once it has finished the last
        // response; sending earlier is refused by the client itself.
        if let Err(e) = s.ready().await {
            tally.fail(name, format!("connection closed: {e}"));
            sender = None;
            continue;
        }
        let request = hyper::Request::get(path.as_str())
            .header("host", addr.to_string())
            .body(Empty::<Bytes>::new())
            .unwrap();
        let start = Instant::now();
        let outcome = match s.send_request(request).await {
            Ok(response) => {
                let status = response.status();
                match response.into_body().collect().await {
                    Ok(_) if status.is_success() => Ok(()),
                    Ok(body) => Err(format!(
                        "{status}: {}",
                        String::from_utf8_lossy(&body.to_bytes())
                            .chars()
                            .take(200)
                            .collect::<String>()
                    )),
                    Err(e) => Err(format!("body: {e}")),
                }
            }
            Err(e) => Err(format!("send: {e}")),
        };
        let elapsed = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        match outcome {
            Ok(()) => tally.latencies.entry(name).or_default().push(elapsed),
            Err(reason) => {
                tally.fail(name, reason);
                sender = None;
            }
        }
        if !think.is_zero() {
            tokio::time::sleep(think.min(deadline.saturating_duration_since(Instant::now()))).await;
        }
    }
    tally
}

/// The body of `GET path`, on a connection of its own.
async fn fetch_body(addr: SocketAddr, path: &str) -> Result<String> {
    let stream = tokio::net::TcpStream::connect(addr).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let request = hyper::Request::get(path)
        .header("host", addr.to_string())
        .body(Empty::<Bytes>::new())?;
    let response = sender.send_request(request).await?;
    let body = response.into_body().collect().await?.to_bytes();
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// What the dashboard shows while a verdict on it is still being computed.
const PENDING: &str = "comparing…";

/// Asks for the dashboard until no verdict on it is pending (each newest run compared with
/// its baseline: on a ledger of many lines, seconds after a start), at most `limit`; how long
/// that took.
async fn settle_dashboard(addr: SocketAddr, path: &str, limit: Duration) -> Result<Duration> {
    let started = Instant::now();
    while fetch_body(addr, path).await?.contains(PENDING) {
        if started.elapsed() > limit {
            bail!("the dashboard still had pending verdicts after {limit:?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(started.elapsed())
}

/// This invocation's part of every idempotency key: a ledger that an earlier load test pushed
/// to takes this one's pushes as new runs, not as repeats.
static SESSION: std::sync::LazyLock<u128> = std::sync::LazyLock::new(|| {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
});

/// The suite the pushers push to.
const PUSHED_SUITE: &str = "ingest";

/// The push token of the in-process server.
const TOKEN: &str = "loadtest-push-token-0123456789";

/// One pushed run's body: `benchmarks` benchmarks of `samples` samples, values set by `n`.
fn push_body(pusher: usize, n: usize, benchmarks: usize, samples: usize) -> Vec<u8> {
    use bench_model::{Machine, Measurement, RunProvenance, RunSource, Samples, SamplingMode};
    let level = 1000.0 + (n % 97) as f64;
    let measurements: Vec<Measurement> = (0..benchmarks)
        .map(|b| {
            let times: Vec<f64> = (0..samples)
                .map(|s| (level + b as f64) * (1.0 + s as f64 * 1e-4))
                .collect();
            Measurement {
                samples: Some(Samples::new(SamplingMode::Flat, vec![1.0; samples], times).unwrap()),
                ..Measurement::time_ns(&format!("ingest/bench_{b:03}"), level + b as f64)
            }
        })
        .collect();
    let provenance = RunProvenance {
        suite: PUSHED_SUITE.to_owned(),
        machine: Machine {
            fingerprint: format!("runner-{pusher}"),
            testbed: Some(format!("runner-{pusher}")),
            cpu_model: "ci runner".to_owned(),
            logical_cores: 2,
            ..Machine::default()
        },
        ..RunProvenance::default()
    };
    serde_json::to_vec(&serde_json::json!({
        "version": 1,
        "source": RunSource::BenchRun,
        "provenance": provenance,
        "measurements": measurements,
    }))
    .unwrap()
}

/// A pusher: posts runs one after another until the deadline; the latencies of the
/// acknowledged ones.
async fn pusher(
    addr: SocketAddr,
    id: usize,
    bodies: Arc<Vec<Bytes>>,
    deadline: Instant,
    path: String,
) -> Tally {
    let mut tally = Tally::default();
    let mut sender = None;
    let mut n = 0;
    while Instant::now() < deadline {
        n += 1;
        // Bodies are made before the clock starts: the client's serializing is not the server's
        // work. Each push has its own key, so each is a new run.
        let body = bodies[n % bodies.len()].clone();
        if sender.is_none() {
            let stream = match tokio::net::TcpStream::connect(addr).await {
                Ok(s) => s,
                Err(e) => {
                    tally.fail("ingest", format!("connect: {e}"));
                    continue;
                }
            };
            match hyper::client::conn::http1::handshake(TokioIo::new(stream)).await {
                Ok((s, conn)) => {
                    tokio::spawn(conn);
                    sender = Some(s);
                }
                Err(e) => {
                    tally.fail("ingest", format!("handshake: {e}"));
                    continue;
                }
            }
        }
        let Some(s) = sender.as_mut() else { continue };
        if s.ready().await.is_err() {
            sender = None;
            continue;
        }
        let request = hyper::Request::post(path.as_str())
            .header("host", addr.to_string())
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("idempotency-key", format!("loadtest/{}/{id}/{n}", *SESSION))
            .body(http_body_util::Full::new(body))
            .unwrap();
        let start = Instant::now();
        let outcome = match s.send_request(request).await {
            Ok(response) => {
                let status = response.status();
                match response.into_body().collect().await {
                    Ok(_) if status == hyper::StatusCode::CREATED => Ok(()),
                    Ok(body) => Err(format!(
                        "{status}: {}",
                        String::from_utf8_lossy(&body.to_bytes())
                            .chars()
                            .take(200)
                            .collect::<String>()
                    )),
                    Err(e) => Err(format!("body: {e}")),
                }
            }
            Err(e) => Err(format!("send: {e}")),
        };
        let elapsed = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        match outcome {
            Ok(()) => tally.latencies.entry("ingest").or_default().push(elapsed),
            Err(reason) => {
                tally.fail("ingest", reason);
                sender = None;
            }
        }
    }
    tally
}

fn percentile(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64
}

fn measure(value: f64, unit: &str, direction: &str) -> serde_json::Value {
    serde_json::json!({"value": value, "unit": unit, "direction": direction})
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.duration == 0 || args.duration > 120 {
        bail!("--duration must be between 1 and 120 seconds");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let scratch = tempfile::tempdir()?;
        let location = match (&args.db, args.postgres) {
            (Some(db), _) => Location::parse(db)?,
            (None, true) => {
                let server = testkit::postgres::server("loadtest --postgres")
                    .context("no PostgreSQL: install Debian's postgresql or set BENCH_PG_BIN")?;
                let location = Location::parse(&server.create_database())?;
                generate(&location).await?;
                location
            }
            (None, false) => {
                let location = Location::Sqlite(scratch.path().join("load.sqlite"));
                generate(&location).await?;
                location
            }
        };
        let ledger = if args.pushers > 0 {
            Ledger::open(&location).await
        } else {
            Ledger::open_read_only(&location).await
        }
        .with_context(|| format!("cannot open {location}"))?;
        let project = args
            .project
            .as_deref()
            .map(bench_model::Project::new)
            .transpose()?
            .unwrap_or_default();
        let prefix = if project.as_str() == bench_model::Project::DEFAULT {
            String::new()
        } else {
            format!("/p/{project}")
        };
        let suite = ledger
            .in_project(&project)
            .suites()
            .await?
            .into_iter()
            .filter(|s| match &args.suite {
                Some(wanted) => &s.suite == wanted,
                None => s.suite != PUSHED_SUITE,
            })
            .max_by_key(|s| s.runs)
            .with_context(|| match &args.suite {
                Some(wanted) => format!("the project has no suite {wanted:?}"),
                None => "the project has no runs but pushed ones".to_owned(),
            })?;
        let head = suite.latest_run;
        let base = ledger
            .in_project(&project)
            .previous_run(head)
            .await?
            .unwrap_or(head);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let mut state = web::AppState::new(ledger);
        if args.pushers > 0 {
            state = state.with_ingest_token(TOKEN);
        }
        let app = web::app(state);
        let server = tokio::spawn(web::serve::serve(
            listener,
            app,
            web::serve::ServeOptions::default(),
            std::future::pending(),
        ));

        let suite_path = format!("/suites/{}", suite.suite);
        let routes: Vec<(&'static str, String)> = vec![
            ("dashboard", format!("{prefix}/")),
            ("runs", format!("{prefix}/runs")),
            ("run", format!("{prefix}/runs/{head}")),
            ("compare", format!("{prefix}/compare?base={base}&head={head}")),
            ("trend_page", format!("{prefix}{suite_path}")),
            ("api_runs", format!("{prefix}/api/runs")),
            ("api_trend", format!("{prefix}/api{suite_path}/trend")),
            // What `bench-run gate --server` asks for.
            ("gate_evidence", format!("{prefix}/api/evidence?base=previous&head={head}")),
        ];
        eprintln!(
            "loadtest: {} connections for {} s against http://{addr} (suite {}, runs #{base} and #{head})",
            args.connections, args.duration, suite.suite
        );
        // Warm-up: each route once, in order, on one connection, before the clock starts. The
        // bars are for a warm server; what the first request of each costs is reported apart
        // (`latency_cold`).
        let warm_up = client(
            addr,
            routes.clone(),
            0,
            Instant::now() + Duration::from_secs(600),
            Arc::new(std::sync::atomic::AtomicUsize::new(routes.len())),
            Duration::ZERO,
        )
        .await;
        if warm_up.errors > 0 {
            bail!("the warm-up failed: {:?}", warm_up.reasons);
        }
        // Warm means every verdict the dashboard shows is known: a server that has run for a
        // while has compared each line's newest run with its baseline.
        let settled = settle_dashboard(addr, &format!("{prefix}/"), Duration::from_secs(300)).await?;
        eprintln!("loadtest: the dashboard's verdicts were all known {:.1} s after the warm-up pass", settled.as_secs_f64());
        let cold: BTreeMap<&str, u64> = warm_up
            .latencies
            .iter()
            .filter_map(|(name, v)| Some((*name, *v.first()?)))
            .collect();
        let deadline = Instant::now() + Duration::from_secs(args.duration);
        let budget = Arc::new(std::sync::atomic::AtomicUsize::new(args.max_requests));
        let started = Instant::now();
        let mut clients: Vec<_> = (0..args.connections)
            .map(|c| {
                let think = Duration::from_millis(args.think_ms);
                tokio::spawn(client(addr, routes.clone(), c, deadline, budget.clone(), think))
            })
            .collect();
        clients.extend((0..args.pushers).map(|p| {
            let bodies = Arc::new(
                (0..8)
                    .map(|n| Bytes::from(push_body(p, n, args.push_benchmarks, args.push_samples)))
                    .collect::<Vec<_>>(),
            );
            tokio::spawn(pusher(addr, p, bodies, deadline, format!("{prefix}/api/runs")))
        }));
        let mut total = Tally::default();
        for c in clients {
            let t = c.await?;
            total.errors += t.errors;
            for (reason, n) in t.reasons {
                *total.reasons.entry(reason).or_default() += n;
            }
            for (name, mut v) in t.latencies {
                total.latencies.entry(name).or_default().append(&mut v);
            }
        }
        let elapsed = started.elapsed().as_secs_f64();
        server.abort();
        let mut doc_ingest = None;

        let pushed = total.latencies.remove("ingest").unwrap_or_default();
        if args.pushers > 0 {
            let mut sorted = pushed.clone();
            sorted.sort_unstable();
            let rate = pushed.len() as f64 / elapsed;
            eprintln!(
                "loadtest: {} pushers acknowledged {} runs of {} benchmarks x {} samples in {elapsed:.1} s ({rate:.1} runs/s); push p50 {:.1} ms, p99 {:.1} ms",
                args.pushers,
                pushed.len(),
                args.push_benchmarks,
                args.push_samples,
                percentile(&sorted, 0.50) / 1e6,
                percentile(&sorted, 0.99) / 1e6
            );
            doc_ingest = Some(serde_json::json!({
                "throughput": measure(rate, "runs/s", "higher_is_better"),
                "latency_p50": measure(percentile(&sorted, 0.50), "ns", "lower_is_better"),
                "latency_p99": measure(percentile(&sorted, 0.99), "ns", "lower_is_better"),
            }));
        }
        let mut all: Vec<u64> = total.latencies.values().flatten().copied().collect();
        all.sort_unstable();
        let requests = all.len() + total.errors;
        let mut doc = serde_json::Map::new();
        let mut overall = serde_json::Map::new();
        overall.insert("latency_p50".into(), measure(percentile(&all, 0.50), "ns", "lower_is_better"));
        overall.insert("latency_p99".into(), measure(percentile(&all, 0.99), "ns", "lower_is_better"));
        overall.insert("errors".into(), measure(total.errors as f64, "requests", "lower_is_better"));
        overall.insert(
            "throughput".into(),
            measure(all.len() as f64 / elapsed, "ops/s", "higher_is_better"),
        );
        if !all.is_empty() {
            doc.insert(format!("{}/mixed", args.prefix), serde_json::Value::Object(overall));
        }
        if let Some(ingest) = doc_ingest {
            doc.insert(
                format!(
                    "{}/ingest_{}x{}",
                    args.prefix, args.push_benchmarks, args.push_samples
                ),
                ingest,
            );
        }
        eprintln!(
            "loadtest: {requests} requests in {elapsed:.1} s ({:.0}/s), {} errors; p50 {:.2} ms, p99 {:.2} ms",
            all.len() as f64 / elapsed,
            total.errors,
            percentile(&all, 0.50) / 1e6,
            percentile(&all, 0.99) / 1e6
        );
        for (name, latencies) in &mut total.latencies {
            latencies.sort_unstable();
            let (p50, p99) = (percentile(latencies, 0.50), percentile(latencies, 0.99));
            let first = cold.get(name).map_or(f64::NAN, |&ns| ns as f64);
            eprintln!(
                "  {name:<13} {:>7} requests  p50 {:>8.2} ms  p99 {:>8.2} ms  (cold {:>8.2} ms)",
                latencies.len(),
                p50 / 1e6,
                p99 / 1e6,
                first / 1e6
            );
            let mut metrics = serde_json::json!({
                "latency_p50": measure(p50, "ns", "lower_is_better"),
                "latency_p99": measure(p99, "ns", "lower_is_better"),
            });
            if first.is_finite() {
                metrics["latency_cold"] = measure(first, "ns", "lower_is_better");
            }
            doc.insert(format!("{}/{name}", args.prefix), metrics);
        }
        let json = serde_json::to_string_pretty(&serde_json::Value::Object(doc))?;
        match &args.out {
            Some(path) => std::fs::write(path, json + "\n")
                .with_context(|| format!("cannot write {}", path.display()))?,
            None => println!("{json}"),
        }
        for (reason, n) in &total.reasons {
            eprintln!("  failed {n}x  {reason}");
        }
        if total.errors > 0 {
            bail!("{} request(s) failed", total.errors);
        }
        Ok(())
    })
}
