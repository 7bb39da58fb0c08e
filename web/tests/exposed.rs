//! A server exposed to a network, over real sockets (`web::serve`): slow headers get 408, a
//! slow body 408, a flood of pushes 429, wrong tokens from one address 429 after a few, oversized,
//! deep and huge pushes 413/400; nothing of them is stored, and a reader is served throughout
//! (its p99 printed). TLS with a self-signed certificate; `/healthz` and `/metrics`; the binary
//! refuses a tokens file others may read and logs a push with its token's name, never its
//! secret.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use bench_store::Ledger;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use web::access::{Access, Scope};
use web::limits::Limits;
use web::serve::{ServeOptions, serve};
use web::{AppState, app};

const PUSH: &str = "push-secret-0123456789";

/// Limits short enough for a test, long enough that a loaded machine moves 32 MiB within the
/// body timeout.
fn test_limits() -> Limits {
    Limits {
        header_timeout: Duration::from_millis(800),
        body_timeout: Duration::from_secs(3),
        max_concurrent_pushes: 1,
        auth_failures: 5,
    }
}

/// A server on a free port over `ledger`, with a push token and open reads.
async fn start(
    ledger: Ledger,
    limits: Limits,
    tls: Option<std::sync::Arc<rustls::ServerConfig>>,
) -> SocketAddr {
    let state = AppState::new(ledger)
        .with_access(Access::open().with_named_token("runners", Scope::Push, PUSH))
        .with_limits(limits);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let options = ServeOptions {
        limits,
        tls,
        ..ServeOptions::default()
    };
    tokio::spawn(serve(listener, app(state), options, std::future::pending()));
    addr
}

/// Sends `request` and reads the answer to its end (the request says `connection: close`):
/// status and text. The server may answer and close before the request is all sent (a body
/// over the limit): the answer is read all the same.
async fn exchange(addr: SocketAddr, request: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let _ = stream.write_all(request).await;
    read_answer(&mut stream).await
}

/// Reads until the server closes (or resets) the connection.
async fn read_answer<S: tokio::io::AsyncRead + Unpin>(stream: &mut S) -> (u16, String) {
    let mut raw = Vec::new();
    let mut chunk = [0_u8; 8192];
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(n) = stream.read(&mut chunk).await {
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&chunk[..n]);
        }
    })
    .await
    .expect("an answer within 30 s");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, text)
}

fn get(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nhost: test\r\nconnection: close\r\n\r\n").into_bytes()
}

fn post(path: &str, token: &str, body: &[u8]) -> Vec<u8> {
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nhost: test\r\nconnection: close\r\nauthorization: Bearer \
         {token}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    request
}

/// Reads `/runs` every few milliseconds until `stop`, returning every latency; fails on any
/// answer but 200.
fn reader(
    addr: SocketAddr,
    stop: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<Vec<Duration>> {
    tokio::spawn(async move {
        let mut latencies = Vec::new();
        while !*stop.borrow() {
            let started = Instant::now();
            let (status, text) = exchange(addr, &get("/api/runs")).await;
            assert_eq!(
                status, 200,
                "a reader was refused during the attack: {text}"
            );
            latencies.push(started.elapsed());
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        latencies
    })
}

fn p99(mut latencies: Vec<Duration>) -> Duration {
    latencies.sort();
    latencies[(latencies.len() * 99 / 100).min(latencies.len() - 1)]
}

async fn runs_in(ledger: &Ledger) -> usize {
    ledger.runs(&Default::default()).await.unwrap().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_get_408_while_a_reader_is_served() {
    let (ledger, _) = util::seeded().await;
    let addr = start(ledger, test_limits(), None).await;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let reading = reader(addr, stopped);
    // 200 clients that send half a head and then nothing (slowloris).
    let mut slow = Vec::new();
    for _ in 0..200 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET /runs HTTP/1.1\r\nhost: test\r\nx-slow: ")
            .await
            .unwrap();
        slow.push(stream);
    }
    let started = Instant::now();
    for mut stream in slow {
        let (status, text) = read_answer(&mut stream).await;
        assert_eq!(status, 408, "{text}");
        assert!(text.contains("did not arrive within"), "{text}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "closed by the timeout"
    );
    stop.send(true).unwrap();
    let latencies = reading.await.unwrap();
    assert!(!latencies.is_empty());
    eprintln!(
        "reader during 200 slow clients: {} requests, p99 {:?}",
        latencies.len(),
        p99(latencies)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_pushes_are_refused_and_store_nothing() {
    let ledger = Ledger::in_memory().await.unwrap();
    let addr = start(ledger.clone(), test_limits(), None).await;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let reading = reader(addr, stopped);

    // Over the body limit: a million benchmarks in one run.
    let mut huge = String::from(r#"{"version":1,"source":"bench-run","measurements":["#);
    let one = r#"{"benchmark":{"full":"b"},"metric":"time","unit":"ns"},"#;
    huge.push_str(&one.repeat(1_000_000));
    huge.push_str("{}]}");
    let (status, text) = exchange(addr, &post("/api/runs", PUSH, huge.as_bytes())).await;
    assert_eq!(status, 413, "{text}");
    assert!(text.contains("exceeds"), "{text}");
    // Nested 100,000 deep.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (status, text) = exchange(addr, &post("/api/runs", PUSH, deep.as_bytes())).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("invalid run JSON"), "{text}");
    // A body that trickles: 408 after the body timeout.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = post("/api/runs", PUSH, &[b' '; 1000]);
    stream
        .write_all(&request[..request.len() - 900])
        .await
        .unwrap();
    let (status, text) = read_answer(&mut stream).await;
    assert_eq!(status, 408, "{text}");
    assert!(text.contains("request body did not arrive"), "{text}");

    // One push slot: a second push while one is being read is told to retry.
    let mut holder = TcpStream::connect(addr).await.unwrap();
    holder
        .write_all(&request[..request.len() - 900])
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (status, text) = exchange(addr, &post("/api/runs", PUSH, b"{}")).await;
    assert_eq!(status, 429, "{text}");
    assert!(
        text.to_ascii_lowercase().contains("retry-after: 1"),
        "{text}"
    );
    let (status, _) = read_answer(&mut holder).await;
    assert_eq!(status, 408);

    stop.send(true).unwrap();
    let latencies = reading.await.unwrap();
    eprintln!(
        "reader during hostile pushes: {} requests, p99 {:?}",
        latencies.len(),
        p99(latencies)
    );
    assert_eq!(runs_in(&ledger).await, 0, "nothing stored");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_wrong_tokens_are_slowed_down_and_counted() {
    let ledger = Ledger::in_memory().await.unwrap();
    let addr = start(ledger.clone(), test_limits(), None).await;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let reading = reader(addr, stopped);
    let mut statuses = Vec::new();
    for i in 0..1000 {
        let (status, text) =
            exchange(addr, &post("/api/runs", &format!("guess-{i:016}"), b"{}")).await;
        if status == 429 {
            assert!(text.contains("too many wrong tokens"), "{text}");
            assert!(text.to_ascii_lowercase().contains("retry-after:"), "{text}");
        }
        statuses.push(status);
    }
    assert_eq!(statuses[..5], [401; 5], "the first failures are told 401");
    assert!(
        statuses[5..].iter().all(|&s| s == 429),
        "then 429: {statuses:?}"
    );
    // While the address is blocked, even the right token waits for the window to end.
    let (status, _) = exchange(addr, &post("/api/runs", PUSH, b"{}")).await;
    assert_eq!(status, 429);
    stop.send(true).unwrap();
    let latencies = reading.await.unwrap();
    eprintln!(
        "reader during 1,000 wrong tokens: {} requests, p99 {:?}",
        latencies.len(),
        p99(latencies)
    );
    let (status, metrics) = exchange(addr, &get("/metrics")).await;
    assert_eq!(status, 200);
    assert!(
        metrics.contains("bench_web_auth_failures_total 5"),
        "{metrics}"
    );
    assert!(
        metrics.contains("bench_web_throttled_total 996"),
        "{metrics}"
    );
    assert!(
        metrics.contains(
            "bench_web_requests_total{route=\"/api/runs\",method=\"POST\",status=\"429\"} 996"
        ),
        "{metrics}"
    );
    assert_eq!(runs_in(&ledger).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_metrics_and_a_counted_push() {
    let (source, _) = util::seeded().await;
    let body = bench_client::push::push_body(&source, 5)
        .await
        .unwrap()
        .to_string();
    let ledger = Ledger::in_memory().await.unwrap();
    let addr = start(ledger.clone(), Limits::default(), None).await;
    let (status, text) = exchange(addr, &get("/healthz")).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("\"ledger\":\"reachable\""), "{text}");
    let (status, text) = exchange(addr, &post("/api/runs", PUSH, body.as_bytes())).await;
    assert_eq!(status, 201, "{text}");
    let (_, metrics) = exchange(addr, &get("/metrics")).await;
    assert!(metrics.contains("text/plain; version=0.0.4"), "{metrics}");
    assert!(
        metrics.contains("bench_web_ingested_runs_total 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains(
            "bench_web_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"} 1"
        ),
        "{metrics}"
    );
    assert!(
        metrics.contains(
            "bench_web_request_duration_seconds_bucket{route=\"/api/runs\",le=\"+Inf\"} 1"
        )
    );
    assert_eq!(runs_in(&ledger).await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_self_signed_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let (cert_pem, key_pem) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_pem, cert.cert.pem()).unwrap();
    std::fs::write(&key_pem, cert.signing_key.serialize_pem()).unwrap();
    let tls = web::serve::tls_config(&cert_pem, &key_pem).unwrap();
    let (ledger, _) = util::seeded().await;
    let addr = start(ledger, Limits::default(), Some(tls)).await;

    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.cert.der().clone()).unwrap();
    let client = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(client));
    let tcp = TcpStream::connect(addr).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let mut tls_stream = connector.connect(name, tcp).await.unwrap();
    tls_stream.write_all(&get("/api/runs/1")).await.unwrap();
    let (status, text) = read_answer(&mut tls_stream).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("\"id\":1"), "{text}");

    // Plain HTTP to the HTTPS port gets no HTTP answer.
    let (status, _) = exchange(addr, &get("/healthz")).await;
    assert_eq!(status, 0);

    // Files that are not a certificate and a key are refused with the file named.
    let err = web::serve::tls_config(&key_pem, &key_pem)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("certificate chain") && err.contains("key.pem"),
        "{err}"
    );
}

/// The binary: a tokens file others may read is refused; a push is logged with its token's
/// name and never its secret.
#[test]
fn the_binary_guards_its_tokens_and_logs_pushes_by_token_name() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(
        &tokens,
        format!("runners={}\n", format_args!("push:{PUSH}")),
    )
    .unwrap();
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o644)).unwrap();
    let db = dir.path().join("server.sqlite");
    let bench_web = env!("CARGO_BIN_EXE_bench-web");
    let refused = std::process::Command::new(bench_web)
        .args([
            "--db",
            db.to_str().unwrap(),
            "--addr",
            "127.0.0.1:0",
            "--tokens-file",
        ])
        .arg(&tokens)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("chmod 600") && !err.contains(PUSH), "{err}");

    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut server = std::process::Command::new(bench_web)
        .args([
            "--db",
            db.to_str().unwrap(),
            "--addr",
            "127.0.0.1:0",
            "--tokens-file",
        ])
        .arg(&tokens)
        .env("RUST_LOG", "info")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line.trim().rsplit("//").next().unwrap().to_owned();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let body = runtime.block_on(async {
        let (source, _) = util::seeded().await;
        bench_client::push::push_body(&source, 5)
            .await
            .unwrap()
            .to_string()
    });
    let (status, text) = runtime.block_on(exchange(
        addr.parse().unwrap(),
        &post("/api/runs", PUSH, body.as_bytes()),
    ));
    assert_eq!(status, 201, "{text}");
    server.kill().unwrap();
    server.wait().unwrap();
    let mut log = String::new();
    std::io::Read::read_to_string(&mut server.stderr.take().unwrap(), &mut log).unwrap();
    let pushed = log
        .lines()
        .find(|l| l.contains("ingested run"))
        .unwrap_or_else(|| panic!("no push logged: {log}"));
    assert!(
        pushed.contains("token=runners") && pushed.contains("run=1"),
        "{pushed}"
    );
    assert!(!log.contains(PUSH), "the secret is never logged");
}
