//! `root-readspeed`, seed 001's command, end to end: the seed's example command as printed, its
//! report line for line with Real time taken as ROOT takes it (opening the files included), the
//! reading of the entries alone beside it, the page cache before the run, and the seed's
//! three-case bottleneck table.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod util;

use util::fixture_arg as fixture;

use serde_json::Value;

fn readspeed(args: &[&str]) -> (bool, String, String) {
    util::run(env!("CARGO_BIN_EXE_root-readspeed"), args)
}

/// The value of a `Label:   value unit` line.
fn value(out: &str, label: &str) -> f64 {
    let line = out
        .lines()
        .find(|l| l.split(':').next() == Some(label))
        .unwrap_or_else(|| panic!("no {label:?} line in\n{out}"));
    line.split(':')
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn the_seeds_example_command_runs_as_printed() {
    // `root-readspeed --trees t --files test1.root test2.root --threads 2 --branches x`, on two
    // files ROOT wrote with a tree `t`, reading its float branch `f`.
    let (a, b) = (fixture("types_zstd.root"), fixture("types_lz4.root"));
    let (ok, out, err) = readspeed(&[
        "--trees",
        "t",
        "--files",
        &a,
        &b,
        "--threads",
        "2",
        "--branches",
        "f",
    ]);
    assert!(ok, "{err}");
    // The six lines of seed 001's example, in its order.
    assert_eq!(util::first_six_labels(&out), util::ROOTREADSPEED_LINES);
    // 200 floats in each file.
    assert_eq!(value(&out, "Uncompressed data read"), 1600.0);
    // ROOT's real time holds the opening of the files: the setup plus the reading.
    let (setup, real, entries) = (
        value(&out, "Real time to setup MT run"),
        value(&out, "Real time"),
        value(&out, "Real time reading entries"),
    );
    assert!((real - (setup + entries)).abs() <= 2e-6, "{out}");
    assert!(real > entries, "{out}");
    // root-readspeed's MB is 2^20 bytes, over its real time.
    let throughput = value(&out, "Throughput");
    assert!(
        (throughput - 1600.0 / 1048576.0 / real).abs() <= 0.0005 + throughput * 1e-3,
        "{out}"
    );
    assert!(out.contains("In the page cache before:"), "{out}");
    assert!(out.contains("Where is the bottleneck?"), "{out}");
    for case in [
        "Application logic is the bottleneck: if Real time",
        "Raw I/O is the bottleneck: if Real time",
        "Decompression is the bottleneck: if Real time",
    ] {
        assert!(out.contains(case), "{case} missing in\n{out}");
    }
}

#[test]
fn json_gives_roots_times_and_the_table_decided_by_the_evidence_given() {
    let f = fixture("types_zstd.root");
    let (ok, out, err) = readspeed(&[
        "--trees",
        "t",
        "--files",
        &f,
        "--all-branches",
        "--format",
        "json",
        "--app-real-time",
        "1000",
        "--storage-mb-s",
        "1e9",
    ]);
    assert!(ok, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let n = |k: &str| doc[k].as_f64().unwrap_or_else(|| panic!("{k} in {doc}"));
    assert_eq!(
        n("root_real_time_s"),
        n("setup_real_time_s") + n("real_time_s")
    );
    assert_eq!(
        n("root_cpu_time_s"),
        n("setup_cpu_time_s") + n("cpu_time_s")
    );
    let expected = n("uncompressed_bytes") / 1048576.0 / n("root_real_time_s");
    assert!((n("root_throughput_mib_s") - expected).abs() < 1e-9 * expected.max(1.0));
    let fraction = n("page_cache_resident_fraction");
    assert!((0.0..=1.0).contains(&fraction));
    let rows = doc["bottleneck"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    // A 1000 s application reading this small file is its own bottleneck.
    assert_eq!(rows[0]["case"], "Application logic is the bottleneck");
    assert_eq!(rows[0]["holds"], true);
    // With both facts given, the raw-I/O and decompression rows are decided, one way or the other.
    assert!(
        rows[1]["holds"].is_boolean() && rows[2]["holds"].is_boolean(),
        "{doc}"
    );
    // Raw I/O and decompression exclude each other (on a busy machine with the file in memory,
    // neither holds: the wait is for cores).
    assert!(
        !(rows[1]["holds"] == true && rows[2]["holds"] == true),
        "{doc}"
    );
}

#[test]
fn evict_cache_reads_from_the_storage_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.root");
    std::fs::copy(util::fixture("types_zstd.root"), &copy).unwrap();
    let copy = copy.display().to_string();
    // Just written: in memory, and the advice says what that means.
    let (ok, out, err) = readspeed(&["--trees", "t", "--files", &copy, "--branches", "f"]);
    assert!(ok, "{err}");
    assert!(value(&out, "In the page cache before") > 50.0, "{out}");
    assert!(out.contains("drop_caches"), "{out}");
    let (ok, out, err) = readspeed(&[
        "--trees",
        "t",
        "--files",
        &copy,
        "--branches",
        "f",
        "--evict-cache",
    ]);
    assert!(ok, "{err}");
    // Some filesystems keep pages they are advised to drop (tmpfs): only a drop is checked.
    assert!(value(&out, "In the page cache before") <= 100.0, "{out}");
    assert_eq!(value(&out, "Uncompressed data read"), 800.0);
}

#[test]
fn help_self_test_and_bad_arguments() {
    let (ok, out, _) = readspeed(&["--help"]);
    assert!(ok);
    assert!(out.contains(
        "root-readspeed --trees t --files test1.root test2.root --threads 2 --branches x"
    ));
    assert!(
        out.contains("drop_caches") && out.contains("--evict-cache"),
        "{out}"
    );
    let (ok, out, _) = readspeed(&["-h"]);
    assert!(ok && out.contains("--branches"), "{out}");
    // The seed's `./src/root-readspeed --test`: the built-in fixtures against ROOT's counts.
    let (ok, out, err) = readspeed(&["--test"]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("115 checks: 115 passed, 0 failed"), "{out}");
    let f = fixture("types_zstd.root");
    // Each case: what follows `--trees t --files`, and what the error must name.
    for (rest, says) in [
        (vec![f.as_str()], "--branches"),
        (vec![&f, "--branches", "zz"], "zz"),
        (vec![&f, "--branches", "f", "--threads", "0"], "--threads"),
        (
            vec![&f, "--branches", "f", "--storage-mb-s", "0"],
            "--storage-mb-s",
        ),
        (vec!["/nonexistent.root", "--branches", "f"], "nonexistent"),
    ] {
        let args = [&["--trees", "t", "--files"][..], &rest].concat();
        let (ok, _, err) = readspeed(&args);
        assert!(!ok && err.contains(says), "{args:?}: {err}");
    }
}
