//! End to end: a ledger seeded by the real `bench-run`, the real `bench-web` on an ephemeral
//! port, and real headless Chromium (Debian's `chromium`) loading the dashboard, a compare page
//! and a trend page. Checks table content and chart sizes in the DOM Chromium built, that no
//! page logs a console message (a script error or a content-security-policy violation), and
//! saves screenshots to `target/web-artifacts/`. Also pushes a run with `bench-run --push` to a
//! second `bench-web` that accepts ingest.
//!
//! Without `/usr/bin/chromium` (or `$CHROMIUM`) the browser test is skipped locally and fails
//! under CI (`CI=true`): `tools/test.sh` installs Chromium.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use util::{RAW_SCRIPT, bench_run_binary, scale_bmf, testdata};

/// How long one Chromium invocation may take.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(90);

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    if path.exists() {
        return Some(path);
    }
    assert!(
        !testkit::under_ci(),
        "Chromium not found at {} and CI=true: the end-to-end browser test cannot run. \
         tools/test.sh installs Debian's chromium (apt-get install -y chromium) before the tests.",
        path.display()
    );
    eprintln!(
        "SKIPPED: Chromium not found at {}; install Debian's chromium (or run tools/test.sh) to run \
         the browser test",
        path.display()
    );
    None
}

/// Where screenshots go: `target/web-artifacts/`.
fn artifacts_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("web-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

struct BenchRun {
    exe: PathBuf,
    dir: PathBuf,
    db: PathBuf,
}

impl BenchRun {
    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(&self.exe);
        cmd.arg("--db")
            .arg(&self.db)
            .args(args)
            .current_dir(&self.dir)
            .env_remove("BENCH_DB")
            .env_remove("BENCH_MACHINE")
            .env_remove("BENCH_PUSH_TOKEN");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "bench-run {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Imports a BMF document (the example scaled by `factor`) and returns the run id.
    fn import_bmf(
        &self,
        suite: &str,
        doc: &serde_json::Value,
        name: &str,
        env: &[(&str, &str)],
    ) -> i64 {
        let file = self.dir.join(name);
        std::fs::write(&file, doc.to_string()).unwrap();
        let out = self.run(
            &["import", "bmf", file.to_str().unwrap(), "--suite", suite],
            env,
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }
}

/// A running `bench-web`, killed on drop.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(db: &Path, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bench-web"))
            .arg("--db")
            .arg(db)
            .args(["--addr", "127.0.0.1:0"])
            .args(extra)
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
        let addr = line
            .trim()
            .strip_prefix("bench-web: listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line from bench-web: {line:?}"))
            .parse()
            .unwrap();
        eprintln!("bench-web listening on {addr}");
        Self { child, addr }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// A plain HTTP/1.1 GET: (status, body).
    fn get(&self, path: &str) -> (u16, String) {
        util::http_get(&self.addr.to_string(), path)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs Chromium headless on `url` with `mode` (`--dump-dom` or `--screenshot=...`) and returns
/// its standard output. Fails if the page logged anything to the console: the pages have no
/// scripts, so a message there is a script error or a content-security-policy violation.
fn chromium_run(chromium: &Path, url: &str, mode: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--window-size=1280,2000",
            // Console messages go to standard error as `...:INFO:CONSOLE:...`.
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(mode)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).unwrap();
        s
    });
    let mut stderr = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > CHROMIUM_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {mode} {url} timed out after {CHROMIUM_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = reader.join().unwrap();
    let err = err_reader.join().unwrap();
    assert!(
        status.success(),
        "chromium {mode} {url} failed: {status}\n{err}"
    );
    let console: Vec<&str> = err.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(
        console.is_empty(),
        "chromium {mode} {url}: the page logged to the console:\n{}",
        console.join("\n")
    );
    out
}

/// The `width` and `height` attributes of every chart `<svg>` in a DOM dump.
fn chart_sizes(dom: &str) -> Vec<(f64, f64)> {
    let attr = |tag: &str, name: &str| -> f64 {
        let key = format!(" {name}=\"");
        let start = tag
            .find(&key)
            .unwrap_or_else(|| panic!("no {name} in {tag}"))
            + key.len();
        let end = tag[start..].find('"').unwrap() + start;
        tag[start..end].parse().unwrap()
    };
    dom.match_indices("<svg ")
        .map(|(i, _)| &dom[i..i + dom[i..].find('>').unwrap()])
        .filter(|tag| tag.contains("class=\"chart\""))
        .map(|tag| (attr(tag, "width"), attr(tag, "height")))
        .collect()
}

fn screenshot(chromium: &Path, server: &Server, path: &str, name: &str) -> PathBuf {
    let file = artifacts_dir().join(format!("{name}.png"));
    let _ = std::fs::remove_file(&file);
    chromium_run(
        chromium,
        &server.url(path),
        &format!("--screenshot={}", file.display()),
    );
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    assert!(bytes.starts_with(b"\x89PNG"), "{name}: not a PNG");
    assert!(
        bytes.len() > 20_000,
        "{name}: suspiciously small screenshot ({} bytes)",
        bytes.len()
    );
    eprintln!("screenshot: {}", file.display());
    file
}

/// Checks shared by every dumped page: the hostile benchmark name is text, never markup.
fn assert_escaped(dom: &str, page: &str) {
    assert!(
        !dom.contains(RAW_SCRIPT),
        "{page}: the raw script tag is in the DOM"
    );
    assert!(
        !dom.contains("<script"),
        "{page}: a script element is in the DOM"
    );
}

#[test]
fn browser_dashboard_compare_and_trend() {
    let Some(chromium) = chromium() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let bench_run = BenchRun {
        exe: bench_run_binary(),
        dir: work.path().to_owned(),
        db: work.path().join("ledger.sqlite"),
    };

    // Seed: one run on another machine; the BMF example (with a `<script>` benchmark) six
    // times on this machine, stepping +40% at the fourth run; the hyperfine capture twice (raw
    // samples).
    let example: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(testdata("bmf/example.json")).unwrap())
            .unwrap();
    bench_run.import_bmf(
        "demo",
        &example,
        "other.json",
        &[("BENCH_MACHINE", "ci-runner")],
    );
    let mut bmf_runs = Vec::new();
    for (i, factor) in [1.0, 1.004, 0.997, 1.4, 1.402, 1.398].iter().enumerate() {
        let mut doc = example.clone();
        scale_bmf(&mut doc, *factor);
        bmf_runs.push(bench_run.import_bmf("demo", &doc, &format!("bmf-{i}.json"), &[]));
    }
    bench_run.run(&["tag", &bmf_runs[0].to_string(), "before-change"], &[]);
    bench_run.run(
        &[
            "annotate",
            &bmf_runs[3].to_string(),
            "switched allocator <jemalloc>",
        ],
        &[],
    );
    bench_run.run(
        &["annotate", &bmf_runs[1].to_string(), "noisy neighbour"],
        &[],
    );
    // Hyperfine: the capture twice, then 3x slower (a regression on raw samples).
    let hyperfine = testdata("hyperfine/basic.json");
    let mut slower: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&hyperfine).unwrap()).unwrap();
    for result in slower["results"].as_array_mut().unwrap() {
        for key in ["mean", "median", "min", "max"] {
            result[key] = serde_json::json!(result[key].as_f64().unwrap() * 3.0);
        }
        for t in result["times"].as_array_mut().unwrap() {
            *t = serde_json::json!(t.as_f64().unwrap() * 3.0);
        }
    }
    let slower_file = work.path().join("hyperfine-slower.json");
    std::fs::write(&slower_file, slower.to_string()).unwrap();
    for file in [&hyperfine, &hyperfine, &slower_file] {
        let file = file.to_str().unwrap();
        bench_run.run(&["import", "hyperfine", file, "--suite", "cli"], &[]);
    }

    // The server opens the ledger read-only.
    let server = Server::start(&bench_run.db, &[]);
    let (status, _) = server.get("/");
    assert_eq!(status, 200);

    // Dashboard.
    let dom = chromium_run(&chromium, &server.url("/"), "--dump-dom");
    assert_escaped(&dom, "dashboard");
    assert!(dom.contains("<h1>Dashboard</h1>"), "{dom}");
    assert!(dom.contains("href=\"/suites/demo\""));
    assert!(dom.contains("href=\"/suites/cli\""));
    assert!(dom.contains("Latest runs"));
    assert!(
        dom.contains("no regression"),
        "demo's last two imports are alike"
    );
    // The slower hyperfine import is an open regression, judged on its raw samples.
    assert!(dom.contains("Open regressions"));
    assert!(dom.contains("sleep &lt;10ms&gt;"), "{dom}");
    assert!(dom.contains("+200.00%"));
    screenshot(&chromium, &server, "/", "dashboard");

    // Compare: before/after of the step.
    let compare = format!("/compare?base=before-change&head={}", bmf_runs[3]);
    let dom = chromium_run(&chromium, &server.url(&compare), "--dump-dom");
    assert_escaped(&dom, "compare");
    assert!(
        dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "escaped name shown as text"
    );
    assert!(
        dom.contains("<th scope=\"row\">bench_fib_10 <span class=\"metric\">[latency]</span></th>"),
        "{dom}"
    );
    assert!(dom.contains("88.00 ns"), "before");
    assert!(dom.contains("123.2 ns"), "after");
    assert!(dom.contains("+40.00%"));
    assert!(dom.contains("Geometric mean"));
    assert!(dom.contains("<textarea id=\"markdown\""));
    assert!(dom.contains("regression"));
    // Issue 24: the notes of the span compared, on the head and on a run in between.
    assert!(
        dom.contains("<h2 id=\"annotations-heading\">Annotations</h2>"),
        "{dom}"
    );
    assert!(dom.contains("switched allocator &lt;jemalloc&gt;"), "{dom}");
    assert!(dom.contains("noisy neighbour"), "{dom}");
    screenshot(&chromium, &server, &compare, "compare");

    // Trend: one chart per benchmark and metric, each with a size; the change point marked.
    let dom = chromium_run(&chromium, &server.url("/suites/demo"), "--dump-dom");
    assert_escaped(&dom, "trend");
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    let sizes = chart_sizes(&dom);
    assert_eq!(
        sizes.len(),
        6,
        "six benchmark/metric series in the BMF example"
    );
    for (i, (w, h)) in sizes.iter().enumerate() {
        assert!(*w > 0.0 && *h > 0.0, "chart {i} has size {w}x{h}");
    }
    assert!(
        dom.contains("class=\"change-point\""),
        "the +40% step is marked"
    );
    assert!(dom.contains("switched allocator &lt;jemalloc&gt;"));
    // Issue 24: the x axis names each run (all six imports are of one commit, or none) and
    // says what its labels are.
    for run in &bmf_runs {
        assert!(dom.contains(&format!("\n#{run} · ")), "run {run}: {dom}");
    }
    assert!(dom.contains(web::chart::X_AXIS_TITLE), "{dom}");
    screenshot(&chromium, &server, "/suites/demo", "trend");

    // Log scale: the latency of bench_fib_10 (88 ns to 123 ns) labelled every 10 ns.
    let dom = chromium_run(
        &chromium,
        &server.url("/suites/demo?scale=log"),
        "--dump-dom",
    );
    for tick in ["90 ns", "100 ns", "110 ns", "120 ns"] {
        assert!(dom.contains(&format!("\n{tick}\n</text>")), "{tick}: {dom}");
    }
    screenshot(&chromium, &server, "/suites/demo?scale=log", "trend-log");

    // The run page and the hyperfine trend (raw samples, seconds scaled).
    let dom = chromium_run(
        &chromium,
        &server.url("/suites/cli?scale=log"),
        "--dump-dom",
    );
    assert_escaped(&dom, "cli trend");
    assert!(
        dom.contains("sleep &lt;10ms&gt;"),
        "hyperfine command names are text"
    );
    let (status, body) = server.get(&format!("/runs/{}", bmf_runs[0]));
    assert_eq!(status, 200);
    assert!(!body.contains(RAW_SCRIPT));
    drop(server);

    // Ingest: a second server accepting pushes, fed by `bench-run --push`.
    let pushed_db = work.path().join("central.sqlite");
    let central = Server::start(&pushed_db, &["--ingest-token", "e2e-secret-0123456789"]);
    let mut doc = example.clone();
    scale_bmf(&mut doc, 2.0);
    let file = work.path().join("push.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let url = central.url("");
    // Imports the file and pushes the run with `token`; returns bench-run's stderr.
    let push = |token: &str| {
        let out = bench_run.run(
            &[
                "import",
                "bmf",
                file.to_str().unwrap(),
                "--suite",
                "pushed",
                "--push",
                &url,
            ],
            &[("BENCH_PUSH_TOKEN", token)],
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stderr = push("e2e-secret-0123456789");
    assert!(stderr.contains("pushed run"), "{stderr}");
    let (status, body) = central.get("/api/runs?suite=pushed");
    assert_eq!(status, 200, "{body}");
    let runs: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1, "{body}");
    assert_eq!(runs["runs"][0]["results"], 6);

    // A wrong token: the push fails with a warning, the local run is kept.
    let stderr = push("wrong");
    assert!(stderr.contains("warning: could not push"), "{stderr}");
    assert!(stderr.contains("401"), "{stderr}");
    let (_, body) = central.get("/api/runs?suite=pushed");
    let runs: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1);
}

/// A flamegraph of `folded` stacks, as inferno writes it (with its script).
fn flamegraph(folded: &str, title: &str) -> Vec<u8> {
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_owned();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, folded.lines(), &mut svg).unwrap();
    svg
}

/// The differential flamegraph of `head` against `base` (inferno-diff-folded, then a
/// flamegraph of the difference).
fn diff_flamegraph(base: &str, head: &str) -> Vec<u8> {
    let mut folded = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options::default(),
        base.as_bytes(),
        head.as_bytes(),
        &mut folded,
    )
    .unwrap();
    let folded = String::from_utf8(folded).unwrap();
    flamegraph(&folded, "head against base")
}

/// Issue 46: real inferno flamegraphs, stored in the ledger, shown as images on the compare
/// page and interactive when opened: inferno's script runs under the artifact's sandboxed
/// policy without a console message, while the page itself runs no script.
#[test]
fn browser_flamegraphs_render_on_the_compare_page_and_run_when_opened() {
    use bench_model::{ArtifactKind, NewArtifact, NewRun, RunSource};
    use bench_store::Ledger;
    let Some(chromium) = chromium() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let db = work.path().join("ledger.sqlite");
    let base_stacks = "main;parse;tokens 60\nmain;parse;alloc 20\nmain;render 20\n";
    let head_stacks = "main;parse;tokens 60\nmain;parse;alloc 50\nmain;render 20\n";
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (base, head, head_svg) = runtime.block_on(async {
        let ledger = Ledger::open(db.as_path()).await.unwrap();
        let mut ids = Vec::new();
        for (commit, level) in [(1, 1000.0), (2, 1300.0)] {
            let run = NewRun {
                source: RunSource::BenchRun,
                provenance: util::provenance("demo", "m1", commit),
                measurements: vec![util::timed("parse/small", level, commit)],
            };
            ids.push(ledger.record_run(&run).await.unwrap());
        }
        let (base, head) = (ids[0], ids[1]);
        let counts = serde_json::json!({"unit": "samples", "rows": [
            {"function": RAW_SCRIPT, "base_share": 0.2, "head_share": 0.38,
             "base": 20, "head": 50, "change": 0.18}]});
        let mut head_svg = 0;
        for (run, kind, against, bytes) in [
            (
                base,
                ArtifactKind::Flamegraph,
                None,
                flamegraph(base_stacks, "base"),
            ),
            (
                head,
                ArtifactKind::Flamegraph,
                None,
                flamegraph(head_stacks, "head"),
            ),
            (
                head,
                ArtifactKind::DiffFlamegraph,
                Some(base),
                diff_flamegraph(base_stacks, head_stacks),
            ),
            (
                head,
                ArtifactKind::FunctionCounts,
                Some(base),
                counts.to_string().into_bytes(),
            ),
        ] {
            let a = NewArtifact::new(run, "parse/small", kind, "perf", against, bytes);
            let id = ledger.record_artifact(&a).await.unwrap();
            if run == head && kind == ArtifactKind::Flamegraph {
                head_svg = id;
            }
        }
        ledger.close().await;
        (base, head, head_svg)
    });
    let server = Server::start(&db, &[]);

    // The compare page: three flamegraphs as images and the top functions, escaped.
    let compare = format!("/compare?base={base}&head={head}");
    let dom = chromium_run(&chromium, &server.url(&compare), "--dump-dom");
    assert_escaped(&dom, "compare with profiles");
    assert_eq!(
        dom.matches("<img src=\"/artifacts/").count(),
        3,
        "base, head and differential flamegraphs: {dom}"
    );
    assert!(
        dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{dom}"
    );
    let shot = screenshot(&chromium, &server, &compare, "compare-profiles");
    let page_bytes = std::fs::metadata(&shot).unwrap().len();

    // Opened directly, the SVG's own script runs (inferno's init() drops the fixed width to
    // fit the window), sandboxed, and logs nothing (chromium_run fails on any console line).
    let svg_url = server.url(&format!("/artifacts/{head_svg}"));
    let dom = chromium_run(&chromium, &svg_url, "--dump-dom");
    let root = &dom[dom.find("<svg").expect("an svg document")..];
    let root_tag = &root[..root.find('>').unwrap()];
    assert!(root_tag.contains("onload=\"init(evt)\""), "{root_tag}");
    assert!(
        !root_tag.contains(" width="),
        "init() ran and made the flamegraph fluid: {root_tag}"
    );
    assert!(
        dom.contains("main;parse;alloc") || dom.contains("alloc"),
        "{dom}"
    );
    let file = artifacts_dir().join("flamegraph.png");
    chromium_run(
        &chromium,
        &svg_url,
        &format!("--screenshot={}", file.display()),
    );
    let svg_bytes = std::fs::metadata(&file).unwrap().len();
    assert!(
        svg_bytes > 5_000,
        "a flamegraph screenshot of {svg_bytes} bytes"
    );
    eprintln!("screenshots: compare {page_bytes} bytes, flamegraph {svg_bytes} bytes");
}
