//! `bench-run log`: entries a person reads, appended to a log whose existing bytes never change.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::path::Path;
use util::{Sandbox, assert_exit, json, stderr};

/// A BMF document of 200 results: 190 latencies in 19 groups and 10 ratios. `slower` multiplies
/// the latencies of `group_0` (their intervals then no longer overlap the first run's).
fn bmf_200(slower: f64) -> String {
    let mut entries = Vec::new();
    for i in 0..190 {
        let scale = if i % 19 == 0 { slower } else { 1.0 };
        let v = (1000.0 + f64::from(i)) * scale;
        entries.push(format!(
            r#""group_{g}/bench_{i:03}": {{"latency": {{"value": {v}, "lower_value": {l}, "upper_value": {u}}}}}"#,
            g = i % 19,
            l = v * 0.99,
            u = v * 1.01,
        ));
    }
    for i in 0..10 {
        let v = 1.5 + f64::from(i) / 10.0;
        entries.push(format!(
            r#""speedup/case_{i}": {{"ratio": {{"value": {v}, "lower_value": {l}, "upper_value": {u}}}}}"#,
            l = v - 0.1,
            u = v + 0.1,
        ));
    }
    format!("{{{}}}", entries.join(","))
}

fn import(sandbox: &Sandbox, name: &str, document: &str, machine: &str) {
    let file = sandbox.write(name, document.as_bytes());
    let out = sandbox
        .bench_run()
        .args(["import", "bmf"])
        .arg(&file)
        .args(["--suite", "wire", "--direction", "ratio=higher"])
        .env("BENCH_MACHINE", machine)
        .output()
        .unwrap();
    assert_exit(&out, 0);
}

fn fingerprint(sandbox: &Sandbox, run: &str) -> String {
    let out = sandbox
        .bench_run()
        .args(["show", run, "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    json(&out)["run"]["machine"]["fingerprint"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn log(sandbox: &Sandbox, file: &Path, args: &[&str]) -> std::process::Output {
    sandbox
        .bench_run()
        .arg("log")
        .args(args)
        .arg("--file")
        .arg(file)
        .output()
        .unwrap()
}

/// The table rows of an entry (one per result shown).
fn table_rows(entry: &str) -> Vec<&str> {
    entry.lines().filter(|l| l.starts_with("| `")).collect()
}

#[test]
fn a_second_entry_names_the_machine_by_fingerprint_and_leaves_the_first_unchanged() {
    let sandbox = Sandbox::empty();
    import(&sandbox, "first.json", &bmf_200(1.0), "bench-box");
    import(&sandbox, "second.json", &bmf_200(1.5), "bench-box");
    let machine = fingerprint(&sandbox, "1");
    assert_eq!(fingerprint(&sandbox, "2"), machine);
    let file = sandbox.dir.path().join("BENCHMARKS.md");

    // The first entry creates the log and describes the machine in full.
    let out = log(
        &sandbox,
        &file,
        &[
            "1",
            "--title",
            "Wire ratios",
            "--claim",
            "Every wire case is at least 1.5x (bar 1.5: met).",
        ],
    );
    assert_exit(&out, 0);
    let first = std::fs::read(&file).unwrap();
    let first_text = String::from_utf8(first.clone()).unwrap();
    assert!(first_text.starts_with("# Benchmark log (append-only)"));
    assert!(
        first_text.contains("## ") && first_text.contains(" — Wire ratios (run #1, `wire`)\n\nEvery wire case is at least 1.5x (bar 1.5: met).\n"),
        "{first_text}"
    );
    assert!(
        first_text.contains(&format!("  - Fingerprint: `{machine}`\n")),
        "{first_text}"
    );
    assert!(
        first_text.contains("- Command: `bench-run --db "),
        "{first_text}"
    );
    let rows = table_rows(&first_text);
    assert_eq!(rows.len(), 15, "{first_text}");
    // The ten ratios come first, with their ranges.
    assert!(
        rows[..10].iter().all(|r| r.contains("(ratio ↑)")),
        "{first_text}"
    );
    assert!(rows[0].contains("[1.400, 1.600]"), "{first_text}");
    assert!(
        rows[10..].iter().all(|r| r.contains("(latency)")),
        "{first_text}"
    );
    assert!(
        first_text.contains("Results: 15 of 200 — 10 ratios held against a bar, 5 others"),
        "{first_text}"
    );
    // The run is cited by the ledger's identity and its id, and `show` takes the citation.
    let citation = first_text
        .rsplit_once("All results: `bench-run show ")
        .and_then(|(_, rest)| rest.strip_suffix("`.\n"))
        .unwrap_or_else(|| panic!("no citation: {first_text}"))
        .to_owned();
    let (ledger_digits, run) = citation.split_once('#').unwrap();
    assert_eq!(run, "1");
    assert!(
        ledger_digits.len() == 8 && ledger_digits.bytes().all(|b| b.is_ascii_hexdigit()),
        "{citation}"
    );
    assert!(
        first_text.contains(&format!("- Run: `{citation}`\n")),
        "{first_text}"
    );
    let shown = sandbox
        .bench_run()
        .args(["show", &citation, "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&shown, 0);
    assert_eq!(json(&shown)["run"]["id"], 1);
    let elsewhere = sandbox
        .bench_run()
        .args(["show", "0000ffff#1"])
        .output()
        .unwrap();
    assert_exit(&elsewhere, 2);
    assert!(
        stderr(&elsewhere).contains("recorded in ledger 0000ffff"),
        "{}",
        stderr(&elsewhere)
    );

    // The second names the machine by its fingerprint; the first entry's bytes stay as they were.
    let out = log(
        &sandbox,
        &file,
        &[
            "2",
            "--base",
            "1",
            "--title",
            "Group 0 slower",
            "--claim",
            "group_0 latencies rose by half; the ratios held.",
            "--rows",
            "12",
        ],
    );
    assert_exit(&out, 0);
    let both = std::fs::read(&file).unwrap();
    assert!(both.starts_with(&first), "the first entry was rewritten");
    let second = String::from_utf8(both[first.len()..].to_vec()).unwrap();
    assert!(
        second.contains(&format!(
            "- Machine: `{machine}` (described in an earlier entry)\n"
        )),
        "{second}"
    );
    assert!(
        !second.contains("Fingerprint:") && !second.contains("CPU:"),
        "{second}"
    );
    let rows = table_rows(&second);
    assert_eq!(rows.len(), 12, "{second}");
    assert!(
        rows[..10].iter().all(|r| r.contains("(ratio ↑)")),
        "{second}"
    );
    // After the ratios, the largest significant changes: group_0's latencies, 50% slower.
    for row in &rows[10..] {
        assert!(
            row.contains("`group_0/") && row.contains("+50.00%") && row.contains("regression"),
            "{second}"
        );
    }
    assert!(second.contains("| Change vs #1 |"), "{second}");
    assert!(second.ends_with(&format!(
        "\nAll results: `bench-run show {ledger_digits}#2`.\n"
    )));
}

#[test]
fn a_machine_the_log_has_not_described_is_described_in_full() {
    let sandbox = Sandbox::empty();
    import(&sandbox, "one.json", &bmf_200(1.0), "box-a");
    import(&sandbox, "two.json", &bmf_200(1.0), "box-b");
    let (a, b) = (fingerprint(&sandbox, "1"), fingerprint(&sandbox, "2"));
    assert_ne!(a, b);
    // An existing log in the old layout, describing box-a.
    let old = format!(
        "# Benchmark log (append-only)\n\n---\n\n## 2026-11-22 — `wire` (bench-run run #1, import-bmf)\n\nMachine:\n\n- CPU: x\n- Fingerprint: `{a}`\n"
    );
    let file = sandbox.write("BENCHMARKS.md", old.as_bytes());
    for (run, expect_full) in [("1", false), ("2", true)] {
        let out = log(
            &sandbox,
            &file,
            &["--dry-run", run, "--title", "T", "--claim", "C"],
        );
        assert_exit(&out, 0);
        let entry = String::from_utf8(out.stdout).unwrap();
        let fp = if run == "1" { &a } else { &b };
        assert_eq!(
            entry.contains(&format!("  - Fingerprint: `{fp}`\n")),
            expect_full,
            "{entry}"
        );
        assert_eq!(
            entry.contains(&format!(
                "- Machine: `{fp}` (described in an earlier entry)"
            )),
            !expect_full,
            "{entry}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        old,
        "--dry-run wrote"
    );
}

#[test]
fn an_entry_needs_a_title_and_a_one_line_claim() {
    let sandbox = Sandbox::empty();
    import(&sandbox, "one.json", &bmf_200(1.0), "box-a");
    let file = sandbox.write("BENCHMARKS.md", b"# Log\n");
    for args in [
        &["--claim", "C"][..],
        &["--title", "T"],
        &["--title", "T", "--claim", "two\nlines"],
        &["--title", " ", "--claim", "C"],
        &["--title", "T", "--claim", "C", "--rows", "16"],
    ] {
        let out = log(&sandbox, &file, args);
        assert_exit(&out, 2);
        assert!(
            ["--title", "--claim", "one line", "rows"]
                .iter()
                .any(|w| stderr(&out).contains(w)),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"# Log\n");
    // A preview needs neither and says where they go.
    let out = log(&sandbox, &file, &["--dry-run"]);
    assert_exit(&out, 0);
    let entry = String::from_utf8(out.stdout).unwrap();
    assert!(
        entry.contains("TITLE (--title)") && entry.contains("CLAIM (--claim)"),
        "{entry}"
    );
}
