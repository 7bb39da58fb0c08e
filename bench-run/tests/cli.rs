//! The command line: references (ids, tags, git revisions), the append-only log, imports and
//! exports, help.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::path::Path;
use util::{Sandbox, assert_exit, git, json, stderr, stdout};

fn testdata(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../adapters/testdata")
        .join(path)
}

#[test]
fn runs_are_found_by_git_revision_tag_and_id_and_the_log_only_appends() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    git(&ws, &["init", "-q", "-b", "main"]);
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-q", "-m", "first state"]);
    assert_exit(&sandbox.quick_run(&[], &[]), 0);
    std::fs::write(ws.join("NOTES"), "second").unwrap();
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-q", "-m", "second state"]);
    assert_exit(&sandbox.quick_run(&[], &[]), 0);

    // HEAD~1 is the first run's commit, recorded through git2 with branch and summary.
    let first = json(
        &sandbox
            .bench_run()
            .args(["show", "HEAD~1", "--format", "json"])
            .output()
            .unwrap(),
    );
    assert_eq!(first["run"]["id"], 1);
    assert_eq!(first["run"]["git_branch"], "main");
    assert_eq!(first["run"]["git_summary"], "first state");
    assert_eq!(first["run"]["git_dirty"], false);
    let commit = first["run"]["git_commit"].as_str().unwrap().to_owned();
    assert_eq!(commit.len(), 40);
    // A hash prefix works too, and `main` is the newest run at main's commit.
    let by_prefix = json(
        &sandbox
            .bench_run()
            .args(["show", &commit[..8], "--format", "json"])
            .output()
            .unwrap(),
    );
    assert_eq!(by_prefix["run"]["id"], 1);
    let main = json(
        &sandbox
            .bench_run()
            .args(["show", "main", "--format", "json"])
            .output()
            .unwrap(),
    );
    assert_eq!(main["run"]["id"], 2);

    // Tags and annotations.
    assert_exit(
        &sandbox
            .bench_run()
            .args(["tag", "1", "before"])
            .output()
            .unwrap(),
        0,
    );
    assert_exit(
        &sandbox
            .bench_run()
            .args(["annotate", "before", "measured with the fan stuck"])
            .output()
            .unwrap(),
        0,
    );
    let tagged = json(
        &sandbox
            .bench_run()
            .args(["show", "before", "--format", "json"])
            .output()
            .unwrap(),
    );
    assert_eq!(tagged["run"]["tags"][0], "before");
    assert_eq!(
        tagged["run"]["annotations"][0]["text"],
        "measured with the fan stuck"
    );
    assert_exit(
        &sandbox
            .bench_run()
            .args(["tag", "1", "123"])
            .output()
            .unwrap(),
        2,
    );

    // The log appends an entry and never touches what is there. Both runs are --quick runs,
    // which are never a default baseline: the baseline is named.
    let log = sandbox.write("BENCHMARKS.md", b"# Log\n\nold entry, hand written\n");
    let before = std::fs::read(&log).unwrap();
    let out = sandbox
        .bench_run()
        .args(["log", "latest", "--base", "1", "--note", "second commit"])
        .args(["--title", "Second state", "--claim", "sum/1000 as before."])
        .arg("--file")
        .arg(&log)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let after = std::fs::read_to_string(&log).unwrap();
    assert!(
        after.as_bytes().starts_with(&before),
        "existing text was rewritten"
    );
    for needle in [
        "— Second state (run #2, `tiny_suite`)",
        "sum/1000 as before.",
        "- Machine (first entry on it):",
        "- Command: `",
        "- Build: --quick",
        "second commit",
        "Baseline for deltas: run #1",
        "| `sum/1000`",
        "Change vs #1",
        "--suite tiny_suite --quick",
        // Cited by the ledger's identity and the run's id (`LEDGER#2`).
        "- Run: `",
        "#2`.\n",
        "All results: `bench-run show ",
    ] {
        assert!(
            after.contains(needle),
            "log entry lacks {needle:?}:\n{after}"
        );
    }
    let out = sandbox
        .bench_run()
        .args([
            "log",
            "1",
            "--title",
            "First state",
            "--claim",
            "The first run.",
        ])
        .arg("--file")
        .arg(&log)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let again = std::fs::read_to_string(&log).unwrap();
    assert!(again.starts_with(&after));
    assert!(
        again.contains("No baseline") && again.contains("measured with the fan stuck"),
        "{again}"
    );
    assert!(
        again[after.len()..].contains("(described in an earlier entry)"),
        "{again}"
    );
}

#[test]
fn imports_and_exports_keep_metrics_and_escape_nothing_away() {
    let sandbox = Sandbox::empty();
    let hostile = r#"{"<script>alert(1)</script>": {"latency": {"value": 12.5, "lower_value": 12.0, "upper_value": 13.0}},
                      "wire/zstd": {"bytes": {"value": 293862}, "ops/s": {"value": 1500.0}, "ratio": {"value": 15.6}}}"#;
    let file = sandbox.write("metrics.json", hostile.as_bytes());
    let out = sandbox
        .bench_run()
        .args(["import", "bmf"])
        .arg(&file)
        .args(["--suite", "wire", "--direction", "ratio=higher"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(stdout(&out).trim(), "1", "import prints the new run id");
    let shown = json(
        &sandbox
            .bench_run()
            .args(["show", "1", "--format", "json"])
            .output()
            .unwrap(),
    );
    let results = shown["results"].as_array().unwrap();
    let find = |bench: &str, metric: &str| {
        results
            .iter()
            .find(|r| r["benchmark"] == bench && r["metric"] == metric)
            .unwrap_or_else(|| panic!("{bench} {metric}: {shown:#}"))
    };
    assert_eq!(
        find("<script>alert(1)</script>", "latency")["estimate"],
        12.5
    );
    assert_eq!(find("wire/zstd", "bytes")["direction"], "lower_is_better");
    assert_eq!(find("wire/zstd", "ops/s")["direction"], "higher_is_better");
    assert_eq!(find("wire/zstd", "ratio")["direction"], "higher_is_better");

    // Markdown output escapes the name; JSON keeps it verbatim.
    let md = sandbox
        .bench_run()
        .args(["show", "1", "--format", "markdown"])
        .output()
        .unwrap();
    assert_exit(&md, 0);
    assert!(
        !stdout(&md).contains("<script>") && stdout(&md).contains("&lt;script&gt;"),
        "{}",
        stdout(&md)
    );

    // A second import with a smaller ratio is a regression of a higher-is-better metric.
    let worse = hostile.replace("15.6", "10.0");
    let file = sandbox.write("metrics2.json", worse.as_bytes());
    assert_exit(
        &sandbox
            .bench_run()
            .args(["import", "bmf"])
            .arg(&file)
            .args(["--suite", "wire", "--direction", "ratio=higher"])
            .output()
            .unwrap(),
        0,
    );
    let gate = sandbox
        .bench_run()
        .args(["gate", "--base", "1", "--head", "2", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&gate, 1);
    let rows = json(&gate)["rows"].as_array().unwrap().clone();
    let ratio = rows.iter().find(|r| r["metric"] == "ratio").unwrap();
    assert_eq!(ratio["verdict"], "regression", "{ratio:#}");

    // Exports.
    let csv = sandbox
        .bench_run()
        .args(["export", "1", "--format", "csv"])
        .output()
        .unwrap();
    assert_exit(&csv, 0);
    assert!(
        stdout(&csv).starts_with("run_id,benchmark,metric"),
        "{}",
        stdout(&csv)
    );
    assert!(
        stdout(&csv).contains("1,<script>alert(1)</script>,latency"),
        "{}",
        stdout(&csv)
    );
    let bmf = sandbox
        .bench_run()
        .args(["export", "1", "--format", "bmf"])
        .output()
        .unwrap();
    assert_exit(&bmf, 0);
    let doc = json(&bmf);
    assert_eq!(doc["wire/zstd"]["bytes"]["value"], 293_862.0);
    // A BMF export imports back to the same values.
    let round = sandbox.write("round.json", &bmf.stdout);
    assert_exit(
        &sandbox
            .bench_run()
            .args(["import", "bmf"])
            .arg(&round)
            .args(["--suite", "wire"])
            .output()
            .unwrap(),
        0,
    );
    let back = json(
        &sandbox
            .bench_run()
            .args(["show", "3", "--format", "json"])
            .output()
            .unwrap(),
    );
    assert_eq!(back["results"].as_array().unwrap().len(), results.len());
}

#[test]
fn hyperfine_and_cargo_criterion_captures_import() {
    let sandbox = Sandbox::empty();
    for (kind, file) in [
        ("hyperfine", "hyperfine/basic.json"),
        (
            "cargo-criterion",
            "cargo-criterion/criterion-0.8-rerun.jsonl",
        ),
    ] {
        let path = testdata(file);
        assert!(path.exists(), "{}", path.display());
        let out = sandbox
            .bench_run()
            .args(["import", kind])
            .arg(&path)
            .args(["--suite", kind])
            .output()
            .unwrap();
        assert_exit(&out, 0);
        let id = stdout(&out).trim().to_owned();
        let shown = json(
            &sandbox
                .bench_run()
                .args(["show", &id, "--format", "json"])
                .output()
                .unwrap(),
        );
        let results = shown["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{kind}");
        assert!(
            results
                .iter()
                .all(|r| r["unit"] == "ns" && r["samples"].as_u64().unwrap() > 0),
            "{kind}: {shown:#}"
        );
    }
    let criterion = testdata("criterion/0.5");
    let out = sandbox
        .bench_run()
        .args(["import", "criterion"])
        .arg(&criterion)
        .args(["--suite", "old"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
}

#[test]
fn libtest_captures_import_from_a_file_and_from_stdin() {
    use std::io::Write as _;
    use std::process::Stdio;

    let sandbox = Sandbox::empty();
    let names = [
        "benches::add_two",
        "benches::checksum_4k",
        "benches::nested::string_format",
        "benches::sort_10k",
        "vec_push_1k",
    ];
    let basic = testdata("libtest/basic.txt");
    let out = sandbox
        .bench_run()
        .args(["import", "libtest"])
        .arg(&basic)
        .args(["--suite", "libtest"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(stdout(&out).trim(), "1");

    // Standard input, in the terse format of `cargo bench -q`.
    let mut child = sandbox
        .bench_run()
        .args(["import", "libtest", "-", "--suite", "libtest"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let quiet = std::fs::read(testdata("libtest/quiet.txt")).unwrap();
    child.stdin.take().unwrap().write_all(&quiet).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_exit(&out, 0);
    assert_eq!(stdout(&out).trim(), "2");

    for id in ["1", "2"] {
        let shown = json(
            &sandbox
                .bench_run()
                .args(["show", id, "--format", "json"])
                .output()
                .unwrap(),
        );
        assert_eq!(shown["run"]["source"], "import-libtest", "{shown:#}");
        let results = shown["results"].as_array().unwrap();
        let mut got: Vec<&str> = results
            .iter()
            .map(|r| r["benchmark"].as_str().unwrap())
            .collect();
        got.sort_unstable();
        assert_eq!(got, names, "run {id}");
        for r in results {
            assert_eq!(
                (r["metric"].as_str(), r["unit"].as_str()),
                (Some("time"), Some("ns"))
            );
            assert_eq!(r["samples"], 0, "{r:#}");
            assert!(r["lower"].is_null() && r["upper"].is_null(), "{r:#}");
            assert_eq!(
                r["statistics"]["median"]["estimate"], r["estimate"],
                "{r:#}"
            );
            assert!(
                r["statistics"]["range"]["estimate"].as_f64().unwrap() > 0.0,
                "{r:#}"
            );
        }
        if id == "1" {
            let vec_push = results
                .iter()
                .find(|r| r["benchmark"] == "vec_push_1k")
                .unwrap();
            assert_eq!(vec_push["estimate"], 993.71);
            assert_eq!(vec_push["statistics"]["range"]["estimate"], 366.51);
        }
    }

    // Two runs of the same suite compare like any other.
    let out = sandbox
        .bench_run()
        .args(["compare", "1", "2", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&out, 0);

    // A capture cut inside a test run records nothing.
    let whole = std::fs::read(&basic).unwrap();
    let cut = sandbox.write("cut.txt", &whole[..whole.len() / 2]);
    let out = sandbox
        .bench_run()
        .args(["import", "libtest"])
        .arg(&cut)
        .args(["--suite", "libtest"])
        .output()
        .unwrap();
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("cut.txt"), "{}", stderr(&out));
    assert!(stderr(&out).contains("cut short"), "{}", stderr(&out));
    let out = sandbox
        .bench_run()
        .args(["import", "libtest", "--help"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let help = stdout(&out);
    for word in [
        "#[bench]",
        "range",
        "not a confidence interval",
        "Examples:",
        "import libtest -",
    ] {
        assert!(
            help.contains(word),
            "import libtest --help lacks {word}:\n{help}"
        );
    }
}

#[test]
fn help_lists_subcommands_and_examples() {
    let sandbox = Sandbox::empty();
    let out = sandbox.command().arg("--help").output().unwrap();
    assert_exit(&out, 0);
    let text = stdout(&out);
    for word in [
        "list",
        "show",
        "compare",
        "gate",
        "calibrate",
        "tag",
        "annotate",
        "log",
        "import",
        "export",
        "Examples:",
        "Exit codes",
    ] {
        assert!(text.contains(word), "--help lacks {word}");
    }
    let out = sandbox.command().output().unwrap();
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("--suite"), "{}", stderr(&out));
}
