//! Shared helpers of the web tests: seeded ledgers and requests through the router.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use bench_model::{
    BenchmarkId, Estimate, GitInfo, Machine, Measurement, NewRun, RunId, RunProvenance, RunSource,
    Samples, SamplingMode, Statistic,
};
use bench_store::Ledger;
use http_body_util::BodyExt;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use tower::ServiceExt;

/// The script tag a hostile benchmark name carries.
pub const RAW_SCRIPT: &str = "<script>alert(1)</script>";
/// The same, escaped as it must appear in HTML.
pub const ESCAPED_SCRIPT: &str = "&#60;script&#62;alert(1)&#60;/script&#62;";

pub fn testdata(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../adapters/testdata")
        .join(path)
}

/// A response, read whole.
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    pub fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

pub async fn send(app: &Router, request: Request<Body>) -> Reply {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    Reply {
        status,
        headers,
        body: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

pub async fn get(app: &Router, uri: &str) -> Reply {
    send(app, Request::get(uri).body(Body::empty()).unwrap()).await
}

pub async fn post_json(app: &Router, uri: &str, token: Option<&str>, body: &str) -> Reply {
    let mut request = Request::post(uri).header("content-type", "application/json");
    if let Some(t) = token {
        request = request.header("authorization", format!("Bearer {t}"));
    }
    send(app, request.body(Body::from(body.to_owned())).unwrap()).await
}

pub fn machine(name: &str) -> Machine {
    Machine {
        fingerprint: format!("{name}-fingerprint"),
        hostname: format!("{name}-host"),
        cpu_model: format!("Test CPU {name}"),
        physical_cores: Some(2),
        logical_cores: 4,
        memory_bytes: Some(8 << 30),
        os: "Debian GNU/Linux 12".to_owned(),
        kernel: "6.1.0".to_owned(),
        arch: "x86_64".to_owned(),
        testbed: None,
    }
}

pub fn provenance(suite: &str, machine_name: &str, commit: u32) -> RunProvenance {
    RunProvenance {
        suite: suite.to_owned(),
        package: Some("demo".to_owned()),
        command: vec!["bench-run".into(), "--suite".into(), suite.to_owned()],
        cargo_command: Some(vec!["cargo".into(), "bench".into()]),
        cwd: "/work/demo".to_owned(),
        machine: machine(machine_name),
        toolchain: None,
        build: bench_model::BuildConfig {
            profile: "bench".to_owned(),
            ..Default::default()
        },
        env: BTreeMap::from([("BENCH_MACHINE".to_owned(), machine_name.to_owned())]),
        git: GitInfo {
            commit: Some(format!("{commit:08x}{}", "ab".repeat(16))),
            branch: Some("main".to_owned()),
            dirty: false,
            commit_time: Some(1_767_225_600 + i64::from(commit) * 86_400),
            summary: Some(format!("commit number {commit}")),
        },
        cpu_governor: Some("performance".to_owned()),
        turbo: Some("off".to_owned()),
        quick: false,
        duration_ms: Some(1234),
        bench_exe: None,
        conditions: None,
    }
}

/// A criterion-like time measurement around `level` ns with 20 deterministic samples.
pub fn timed(name: &str, level: f64, seed: u32) -> Measurement {
    const WIGGLE: [f64; 10] = [0.0, 0.3, -0.2, 0.5, -0.4, 0.1, -0.1, 0.2, -0.3, 0.4];
    let times: Vec<f64> = (0..20)
        .map(|i| {
            let w = WIGGLE[(i + seed as usize) % WIGGLE.len()];
            level * (1.0 + 0.004 * w) * 10.0
        })
        .collect();
    let samples = Samples::new(SamplingMode::Flat, vec![10.0; 20], times).unwrap();
    let estimate = Estimate {
        point: level,
        lower: Some(level * 0.995),
        upper: Some(level * 1.005),
        confidence_level: Some(0.95),
        standard_error: Some(level * 0.002),
    };
    Measurement {
        benchmark: BenchmarkId {
            full: name.to_owned(),
            group: name.split('/').next().map(str::to_owned),
            function: name.split('/').nth(1).map(str::to_owned),
            value: None,
        },
        metric: "time".to_owned(),
        unit: "ns".to_owned(),
        direction: bench_model::Direction::LowerIsBetter,
        estimate,
        statistics: BTreeMap::from([(Statistic::Median, estimate)]),
        throughput: None,
        samples: Some(samples),
    }
}

/// The seeded ledger of the handler tests:
///
/// - suite `demo` on machine `m1`: runs 1..=8 at commits 1..=8; `parse/small` steps from
///   1 µs to 1.3 µs at run 5 (a regression, and a change point), `parse/large` stays at
///   50 µs; run 1 is tagged `baseline`, run 3 annotated;
/// - suite `demo` on machine `m2`: run 9;
/// - suite `bmf`: runs 10 and 11, the BMF example (with a `<script>` benchmark name), the
///   second with different values.
pub async fn seeded() -> (Ledger, Vec<RunId>) {
    let ledger = Ledger::in_memory().await.unwrap();
    let mut ids = Vec::new();
    for i in 1..=8u32 {
        let small = if i >= 5 { 1300.0 } else { 1000.0 };
        let run = NewRun {
            source: RunSource::BenchRun,
            provenance: provenance("demo", "m1", i),
            measurements: vec![
                timed("parse/small", small, i),
                timed("parse/large", 50_000.0, i + 3),
            ],
        };
        ids.push(ledger.record_run(&run).await.unwrap());
    }
    ledger.tag(ids[0], "baseline").await.unwrap();
    ledger
        .annotate(ids[2], "kernel upgraded <b>between</b> runs")
        .await
        .unwrap();
    let other = NewRun {
        source: RunSource::BenchRun,
        provenance: provenance("demo", "m2", 9),
        measurements: vec![timed("parse/small", 900.0, 1)],
    };
    ids.push(ledger.record_run(&other).await.unwrap());
    for (i, scale) in [(10u32, 1.0), (11, 1.5)] {
        let text = std::fs::read_to_string(testdata("bmf/example.json")).unwrap();
        let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        scale_bmf(&mut doc, scale);
        let measurements =
            bench_adapters::bmf::parse(doc.to_string().as_bytes(), &BTreeMap::new()).unwrap();
        let mut provenance = provenance("bmf", "m1", i);
        provenance.build.profile = "unknown".to_owned();
        let run = NewRun {
            source: RunSource::ImportBmf,
            provenance,
            measurements,
        };
        ids.push(ledger.record_run(&run).await.unwrap());
    }
    (ledger, ids)
}

/// Multiplies every value and bound of a BMF document by `factor`.
pub fn scale_bmf(doc: &mut serde_json::Value, factor: f64) {
    for measures in doc.as_object_mut().unwrap().values_mut() {
        for measure in measures.as_object_mut().unwrap().values_mut() {
            for key in ["value", "lower_value", "upper_value"] {
                if let Some(v) = measure.get(key).and_then(serde_json::Value::as_f64) {
                    measure[key] = serde_json::json!(v * factor);
                }
            }
        }
    }
}

/// `target/<profile>/` of this build, from the path of the `bench-web` binary.
pub fn profile_dir() -> PathBuf {
    std::path::Path::new(env!("CARGO_BIN_EXE_bench-web"))
        .parent()
        .unwrap()
        .to_owned()
}

/// The `bench-run` binary of this workspace, built (or found up to date) with cargo.
pub fn bench_run_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("BENCH_RUN_BIN") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "BENCH_RUN_BIN={} is not a file",
            path.display()
        );
        return path;
    }
    let dir = profile_dir();
    let target_dir = dir.parent().unwrap();
    let profile = dir.file_name().unwrap().to_str().unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "--quiet",
        "-p",
        "bench-run",
        "--bin",
        "bench-run",
        "--target-dir",
    ])
    .arg(target_dir)
    .current_dir(env!("CARGO_MANIFEST_DIR"));
    match profile {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        other => {
            cmd.args(["--profile", other]);
        }
    }
    let status = cmd.status().expect("cannot run cargo to build bench-run");
    assert!(
        status.success(),
        "cargo build -p bench-run --bin bench-run failed"
    );
    let exe = dir.join(format!("bench-run{}", std::env::consts::EXE_SUFFIX));
    assert!(exe.exists(), "{} missing after the build", exe.display());
    exe
}

/// A plain HTTP/1.1 GET of `path` on `addr` (`host:port`): (status, body), a chunked body
/// joined.
pub fn http_get(addr: &str, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let body = &raw[split + 4..];
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let body = if head.contains("transfer-encoding: chunked") {
        dechunk(body)
    } else {
        body.to_vec()
    };
    (status, String::from_utf8(body).unwrap())
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = body.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&body[..eol]).unwrap().trim();
        let n = usize::from_str_radix(size, 16).unwrap();
        if n == 0 {
            break;
        }
        let rest = &body[eol + 2..];
        out.extend_from_slice(&rest[..n]);
        body = &rest[n + 2..];
    }
    out
}

/// Conditions of a run that shared its machine with a compile job.
pub fn busy_conditions() -> bench_model::RunConditions {
    bench_model::RunConditions {
        cpus: 2,
        wall_ms: 5300,
        load_start: None,
        load_end: None,
        own_cpus: 0.58,
        others_cpus: 1.42,
        steal_pct: 0.1,
        per_benchmark: vec![bench_model::BenchmarkConditions {
            benchmark: "parse/small".to_owned(),
            wall_ms: 1700,
            others_cpus: 1.49,
            steal_pct: 0.0,
        }],
    }
}
