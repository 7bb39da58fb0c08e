//! Instruction-count suites: `bench-run --suite` on the gungraun fixture workspace
//! (`tests/fixtures/gungraun_tiny`) records exact counts, two runs of the same work give the same
//! counts, and 2% more work shows as a 2% `instructions` change in `compare`. Missing or
//! mismatched tools are explained.
//!
//! The runs need valgrind and `gungraun-runner` 0.20.0 (tools/test.sh installs both). Without
//! them these tests print `SKIPPED`, or fail under `CI=true`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use util::{assert_exit, json, stderr};

/// The gungraun version of the fixture (and of the workspace's suites).
const VERSION: &str = "0.20.0";

/// The six counts a default Callgrind run gives every benchmark.
const METRICS: [&str; 6] = [
    "estimated_cycles",
    "instructions",
    "l1_hits",
    "ll_hits",
    "ram_hits",
    "total_read_write",
];

const BENCHMARKS: [&str; 3] = [
    "tiny/checksum/n10000",
    "tiny/checksum/n40000",
    "tiny/fnv/kib4",
];

/// Whether valgrind and the matching `gungraun-runner` are installed. Without them: `false`
/// after printing `SKIPPED`, or a panic under CI, where tools/test.sh must have installed them.
fn tools_available(test: &str) -> bool {
    let runs = |program: &str| {
        Command::new(program)
            .arg("--version")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let runner = runs("gungraun-runner");
    let missing = match (runs("valgrind"), runner.as_deref()) {
        (None, _) => Some("valgrind is not installed".to_owned()),
        (_, Some(v)) if v == format!("gungraun-runner {VERSION}") => None,
        (_, found) => Some(format!(
            "gungraun-runner {VERSION} is not on PATH (found: {}); \
             cargo install gungraun-runner --version {VERSION} --locked",
            found.unwrap_or("none")
        )),
    };
    let Some(missing) = missing else {
        return true;
    };
    assert!(
        !testkit::under_ci(),
        "{test}: {missing}, and CI=true: tools/test.sh installs both"
    );
    eprintln!("SKIPPED: {test}: {missing}");
    false
}

/// A copy of the gungraun fixture workspace and a ledger, in a scratch directory.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gungraun_tiny");
        util::copy_dir(&source, &dir.path().join("gungraun_tiny"));
        Self { dir }
    }

    /// `bench-run --db <ledger>` in the fixture workspace. Builds share one target directory,
    /// so gungraun is compiled once for all tests.
    fn bench_run(&self) -> Command {
        let target: PathBuf =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("gungraun-fixture-target");
        let mut command = Command::new(env!("CARGO_BIN_EXE_bench-run"));
        command
            .current_dir(self.dir.path().join("gungraun_tiny"))
            .env("CARGO_TARGET_DIR", target)
            .env_remove("BENCH_DB")
            .env_remove("FIXTURE_SLOWDOWN")
            .env_remove("GUNGRAUN_RUNNER")
            .env_remove("GUNGRAUN_VALGRIND_BIN")
            .arg("--db")
            .arg(self.dir.path().join("ledger.sqlite"));
        command
    }

    /// Records one run of the suite, with `FIXTURE_SLOWDOWN` when given.
    fn record(&self, slowdown: Option<&str>) -> Output {
        let _guard = util::bench_lock();
        let mut command = self.bench_run();
        command.args(["--suite", "tiny_instructions"]);
        if let Some(spec) = slowdown {
            command.env("FIXTURE_SLOWDOWN", spec);
        }
        command.output().unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let output = self.bench_run().args(args).output().unwrap();
        assert_exit(&output, 0);
        json(&output)
    }
}

/// `(benchmark, metric) -> result` of `show RUN --format json`.
fn results(show: &Value) -> Vec<((String, String), Value)> {
    show["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let key = (
                r["benchmark"].as_str().unwrap().to_owned(),
                r["metric"].as_str().unwrap().to_owned(),
            );
            (key, r.clone())
        })
        .collect()
}

/// The compare row of `benchmark` and `metric`.
fn row<'a>(compare: &'a Value, benchmark: &str, metric: &str) -> &'a Value {
    compare["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["benchmark"] == benchmark && r["metric"] == metric)
        .unwrap_or_else(|| panic!("no row {benchmark} [{metric}] in {compare:#}"))
}

#[test]
fn counts_are_recorded_exact_and_two_percent_more_work_shows_as_two_percent() {
    if !tools_available("gungraun counts") {
        return;
    }
    let fixture = Fixture::new();
    let first = fixture.record(None);
    assert_exit(&first, 0);
    let err = stderr(&first);
    assert!(err.contains("is a gungraun suite"), "{err}");
    assert!(
        err.contains("[3/3] tiny/fnv/kib4"),
        "progress shows n of m:\n{err}"
    );
    assert_exit(&fixture.record(None), 0);
    assert_exit(&fixture.record(Some("checksum=1.02")), 0);

    // The counts are recorded as exact values: no bounds, no samples, lower is better.
    let show = fixture.json(&["show", "1", "--format", "json"]);
    assert_eq!(show["run"]["suite"], "tiny_instructions");
    assert_eq!(show["run"]["quick"], false);
    let first_results = results(&show);
    let keys: Vec<(String, String)> = first_results.iter().map(|(k, _)| k.clone()).collect();
    let expected: Vec<(String, String)> = BENCHMARKS
        .iter()
        .flat_map(|b| METRICS.iter().map(|m| ((*b).to_owned(), (*m).to_owned())))
        .collect();
    assert_eq!(keys, expected);
    for ((benchmark, metric), r) in &first_results {
        let value = r["estimate"].as_f64().unwrap();
        assert!(
            value >= 0.0 && value.fract() == 0.0,
            "{benchmark} {metric}: {value}"
        );
        assert_eq!(r["unit"], "count", "{benchmark} {metric}");
        assert_eq!(r["direction"], "lower_is_better", "{benchmark} {metric}");
        assert!(r["lower"].is_null() && r["upper"].is_null(), "{r}");
        assert_eq!(r["samples"], 0, "{benchmark} {metric}");
    }
    let instructions = |results: &[((String, String), Value)], benchmark: &str| {
        results
            .iter()
            .find(|((b, m), _)| b == benchmark && m == "instructions")
            .map(|(_, r)| r["estimate"].as_f64().unwrap())
            .unwrap()
    };
    let small = instructions(&first_results, "tiny/checksum/n10000");
    let large = instructions(&first_results, "tiny/checksum/n40000");
    assert!(small > 10_000.0 && large > 3.5 * small, "{small} {large}");

    // Two runs of identical work: identical counts, every change exactly zero, no verdict.
    let second = fixture.json(&["show", "2", "--format", "json"]);
    assert_eq!(results(&second), first_results);
    let same = fixture.json(&["compare", "1", "2", "--format", "json"]);
    for r in same["rows"].as_array().unwrap() {
        assert_eq!(r["change_pct"], 0.0, "{r:#}");
        assert_eq!(r["evidence"]["kind"], "exact", "{r:#}");
        assert_eq!(r["significant"], false, "{r:#}");
        assert_eq!(r["verdict"], "unchanged", "{r:#}");
    }

    // 2% more elements for `checksum`: its instruction counts grow by 2% (less the benchmark's
    // few dozen fixed instructions), judged on exact values; `fnv` does not move.
    let changed = fixture.json(&["compare", "2", "3", "--format", "json"]);
    for benchmark in ["tiny/checksum/n10000", "tiny/checksum/n40000"] {
        let r = row(&changed, benchmark, "instructions");
        let change = r["change_pct"].as_f64().unwrap();
        assert!(
            (1.9..=2.1).contains(&change),
            "{benchmark}: {change}%\n{r:#}"
        );
        assert_eq!(r["evidence"]["kind"], "exact", "{r:#}");
        assert_eq!(r["significant"], true, "{r:#}");
    }
    for metric in METRICS {
        let r = row(&changed, "tiny/fnv/kib4", metric);
        assert_eq!(r["change_pct"], 0.0, "{r:#}");
    }
}

#[test]
fn a_runner_of_another_version_is_named_with_the_install_command() {
    let fixture = Fixture::new();
    // A fake `gungraun-runner` of another version, first on PATH.
    let bin = fixture.dir.path().join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let runner = bin.join("gungraun-runner");
    std::fs::write(&runner, "#!/bin/sh\necho 'gungraun-runner 0.19.1'\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&runner, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let output = {
        let _guard = util::bench_lock();
        fixture
            .bench_run()
            .args(["--suite", "tiny_instructions"])
            .env("PATH", path)
            .output()
            .unwrap()
    };
    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains("uses gungraun 0.20.0")
            && err.contains("version 0.19.1")
            && err.contains("cargo install gungraun-runner --version 0.20.0 --locked"),
        "{err}"
    );
}

#[test]
fn missing_valgrind_is_named() {
    if !tools_available("gungraun without valgrind") {
        return;
    }
    let fixture = Fixture::new();
    let output = {
        let _guard = util::bench_lock();
        fixture
            .bench_run()
            .args(["--suite", "tiny_instructions"])
            .env("GUNGRAUN_VALGRIND_BIN", "/nonexistent/valgrind")
            .output()
            .unwrap()
    };
    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains("/nonexistent/valgrind") && err.contains("install valgrind"),
        "{err}"
    );
}

/// Makes `fnv1a` also call a new, named function: more instructions in the head, all of them
/// in that function.
fn add_function_to_fnv(workspace: &Path) {
    let path = workspace.join("src/lib.rs");
    let text = std::fs::read_to_string(&path).unwrap();
    let head = text.replace(
        "pub fn fnv1a(bytes: &[u8]) -> u64 {\n    bytes.iter()",
        "pub fn fnv1a(bytes: &[u8]) -> u64 {\n    added_in_head(bytes) ^ bytes.iter()",
    ) + "\n/// Work the head adds.\n#[inline(never)]\npub fn added_in_head(bytes: &[u8]) -> u64 {\n    \
         bytes.iter().fold(7u64, |h, b| h.rotate_left(5).wrapping_mul(31) ^ u64::from(*b))\n}\n";
    assert!(head.contains("added_in_head(bytes) ^"), "fnv1a has moved");
    std::fs::write(&path, head).unwrap();
}

#[test]
fn ab_profiles_a_gungraun_regression_under_callgrind_and_the_added_function_tops_the_exact_diff() {
    if !tools_available("gungraun profiles") {
        return;
    }
    let fixture = Fixture::new();
    let workspace = fixture.dir.path().join("gungraun_tiny");
    util::git(&workspace, &["init", "-q"]);
    util::git(&workspace, &["add", "-A"]);
    util::git(&workspace, &["commit", "-q", "-m", "base"]);
    add_function_to_fnv(&workspace);
    // One build home for every run of this test binary, so gungraun compiles once.
    let build_home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gungraun-build-home");
    let output = {
        let _guard = util::bench_lock();
        fixture
            .bench_run()
            .env("BENCH_RUN_BUILD_HOME", &build_home)
            .args(["ab", "--suite", "tiny_instructions", "--base", "HEAD"])
            .args(["--profile-regressions", "--format", "json"])
            .output()
            .unwrap()
    };
    assert_exit(&output, 1);
    let doc = json(&output);
    let profiles = doc["profiles"].as_array().unwrap();
    // Only fnv regressed; checksum's counts are identical on both sides.
    let names: Vec<&str> = profiles
        .iter()
        .map(|p| p["benchmark"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tiny/fnv/kib4"], "{doc:#}");
    let fnv = &profiles[0];
    assert_eq!(fnv["profiler"], "callgrind", "{fnv:#}");
    assert_eq!(fnv["counts"]["unit"], "instructions", "{fnv:#}");
    let top = &fnv["counts"]["rows"][0];
    assert!(
        top["function"].as_str().unwrap().contains("added_in_head"),
        "{fnv:#}"
    );
    // Exact: the base has none of it, and the head's count is a whole number of instructions
    // that a second profile of the same build repeats.
    assert_eq!(top["base"], 0, "{top:#}");
    let head_count = top["head"].as_f64().unwrap();
    assert!(head_count >= 4096.0 && head_count.fract() == 0.0, "{top:#}");
    let again = {
        let _guard = util::bench_lock();
        fixture
            .bench_run()
            .env("BENCH_RUN_BUILD_HOME", &build_home)
            .args([
                "profile",
                "--suite",
                "tiny_instructions",
                "--benchmark",
                "fnv",
            ])
            .args(["--format", "json"])
            .output()
            .unwrap()
    };
    assert_exit(&again, 0);
    let again = json(&again);
    let row = again[0]["counts"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["function"] == top["function"])
        .unwrap_or_else(|| panic!("no {} in {again:#}", top["function"]))
        .clone();
    // A profile of one run alone counts it as the head.
    assert_eq!(row["head"].as_f64(), Some(head_count), "{row:#}");
    let kinds = util::artifact_kinds(fnv);
    assert!(kinds.contains(&"diff-flamegraph"), "{kinds:?}");
}
