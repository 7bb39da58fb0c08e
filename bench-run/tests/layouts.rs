//! Issue 45: verdicts about the code, not the build. Identical source gives identical
//! executables, also on a real crate the size of quick-xml; each side's relinked layouts differ
//! from each other and still pass the suite's own `--test`; a linker that cannot shuffle
//! leaves ab on one layout, with a warning.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use bench_runner::ab::{self, SideBuild};
use bench_runner::build_home::BuildHome;
use bench_runner::suite::BuildOptions;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use util::{Sandbox, assert_exit, bench_lock, git, git_output, stderr};

fn repository() -> Sandbox {
    Sandbox::repository()
}

fn bench_run_exe() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_bench-run"))
}

fn host() -> String {
    let out = Command::new("rustc").arg("-vV").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .unwrap()
}

#[test]
fn relinked_layouts_differ_from_each_other_and_pass_the_suites_own_test() {
    let sandbox = repository();
    let repo = sandbox.workspace();
    let home = BuildHome::open(&repo, &sandbox.build_home(), |_| {}).unwrap();
    home.switch_to(&git_output(&repo, &["rev-parse", "HEAD"]))
        .unwrap();
    let options = BuildOptions::default();
    let seeds = [11, 22, 33];
    let build = |exe_dir: &Path| {
        let _guard = bench_lock();
        ab::build_side(
            &home,
            Path::new(""),
            &SideBuild {
                suite: "tiny_suite",
                package: None,
                options: &options,
                layout_seeds: &seeds,
                exe_dir,
                bench_run: bench_run_exe(),
                force_link: true,
            },
        )
        .unwrap()
    };
    let first = build(&sandbox.dir.path().join("first"));
    assert!(
        first.layout_failures.is_empty(),
        "{:?}",
        first.layout_failures
    );
    assert_eq!(
        first.layouts.iter().map(|l| l.seed).collect::<Vec<_>>(),
        seeds
    );
    let hashes: BTreeSet<&str> = std::iter::once(first.sha256.as_str())
        .chain(first.layouts.iter().map(|l| l.sha256.as_str()))
        .collect();
    assert_eq!(hashes.len(), 4, "every link is a different executable");
    for layout in &first.layouts {
        let test = Command::new(&layout.exe)
            .arg("--test")
            .current_dir(first.target.package_dir())
            .env("CRITERION_HOME", sandbox.dir.path().join("criterion"))
            .output()
            .unwrap();
        assert!(
            test.status.success(),
            "layout {} fails the suite's --test: {}",
            layout.seed,
            String::from_utf8_lossy(&test.stderr)
        );
        let said = String::from_utf8_lossy(&test.stdout);
        assert!(said.contains("Success"), "{said}");
    }
    // The same source linked again gives the same executables, seed for seed.
    let second = build(&sandbox.dir.path().join("second"));
    assert_eq!(second.sha256, first.sha256);
    for (a, b) in first.layouts.iter().zip(&second.layouts) {
        assert_eq!((a.seed, &a.sha256), (b.seed, &b.sha256));
    }
    // Nothing of the build is in the repository.
    assert!(!repo.join("target").exists());

    // `calibrate --layouts` measures the suite's layout sensitivity in the same build home.
    drop(home);
    let output = {
        let _guard = bench_lock();
        sandbox
            .bench_run()
            .args([
                "calibrate",
                "--suite",
                "tiny_suite",
                "--layouts",
                "3",
                "--runs",
                "2",
            ])
            .args(["--seed", "5", "--format", "json", "--", "fnv|sum/1000"])
            .output()
            .unwrap()
    };
    assert_exit(&output, 0);
    let doc = util::json(&output);
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{doc:#}");
    for row in rows {
        assert_eq!(
            row["layout_medians"].as_array().unwrap().len(),
            3,
            "{doc:#}"
        );
        assert!(row["layout_spread_pct"].as_f64().unwrap() >= 0.0, "{doc:#}");
        assert!(row["within_layout_pct"].as_f64().is_some(), "{doc:#}");
    }
    assert_eq!(
        util::run_count(&sandbox),
        0,
        "calibrate --layouts records nothing"
    );
}

/// A linker that refuses `--shuffle-sections`, as GNU ld does.
fn write_refusing_linker(dir: &Path) -> PathBuf {
    let path = dir.join("no-shuffle-cc");
    std::fs::write(
        &path,
        "#!/bin/sh\n\
         for a in \"$@\"; do\n\
           case \"$a\" in\n\
             @*) if grep -q shuffle-sections \"${a#@}\"; then echo \"ld: unrecognized option '--shuffle-sections'\" >&2; exit 1; fi;;\n\
             *shuffle-sections*) echo \"ld: unrecognized option '--shuffle-sections'\" >&2; exit 1;;\n\
           esac\n\
         done\n\
         exec cc \"$@\"\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

#[test]
fn a_linker_that_cannot_shuffle_leaves_one_layout_with_a_warning() {
    let sandbox = repository();
    let repo = sandbox.workspace();
    let linker = write_refusing_linker(sandbox.dir.path());
    std::fs::create_dir_all(repo.join(".cargo")).unwrap();
    std::fs::write(
        repo.join(".cargo/config.toml"),
        format!("[target.{}]\nlinker = \"{}\"\n", host(), linker.display()),
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(
        &repo,
        &["commit", "-q", "-m", "a linker of the project's own"],
    );
    let path = repo.join("benches/tiny_suite.rs");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("scaled(4096, \"fnv\")", "scaled(4000, \"fnv\")"),
    )
    .unwrap();
    let output = {
        let _guard = bench_lock();
        sandbox
            .bench_run()
            .args(["ab", "--suite", "tiny_suite", "--base", "HEAD"])
            .args(["--layouts", "3", "--rounds", "2", "--", "fnv"])
            .output()
            .unwrap()
    };
    let err = stderr(&output);
    assert!(output.status.code().is_some_and(|c| c <= 1), "{err}");
    assert!(err.contains("the relink with seed"), "{err}");
    assert!(
        err.contains("unrecognized option '--shuffle-sections'"),
        "{err}"
    );
    assert!(err.contains("measuring the default link only"), "{err}");
    assert!(err.contains("one layout"), "{err}");
}

/// The source of quick-xml 0.39.0 as published, from crates.io (`cargo vendor`), made a git
/// repository with a criterion bench of its reader (its manifest keeps its criterion
/// dev-dependency and its bench profile: fat LTO with debug info, so paths would show).
fn quick_xml_repository(sandbox: &Sandbox) -> PathBuf {
    let vendoring = sandbox.dir.path().join("vendoring");
    std::fs::create_dir_all(vendoring.join("src")).unwrap();
    std::fs::write(
        vendoring.join("Cargo.toml"),
        "[package]\nname = \"vendoring\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         [dependencies]\nquick-xml = \"=0.39.0\"\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(vendoring.join("src/lib.rs"), "").unwrap();
    let vendor = Command::new(env!("CARGO"))
        .args(["vendor", "--versioned-dirs", "vendor"])
        .current_dir(&vendoring)
        .output()
        .unwrap();
    assert!(vendor.status.success(), "cargo vendor: {}", stderr(&vendor));
    let repo = sandbox.dir.path().join("quick-xml");
    util::copy_dir(&vendoring.join("vendor/quick-xml-0.39.0"), &repo);
    let _ = std::fs::remove_file(repo.join(".cargo-checksum.json"));
    let mut manifest = std::fs::read_to_string(repo.join("Cargo.toml")).unwrap();
    manifest.push_str(
        "\n[workspace]\n\n[[bench]]\nname = \"read\"\npath = \"benches/read.rs\"\nharness = false\n",
    );
    std::fs::write(repo.join("Cargo.toml"), manifest).unwrap();
    std::fs::create_dir_all(repo.join("benches")).unwrap();
    std::fs::write(
        repo.join("benches/read.rs"),
        r#"use criterion::{criterion_group, criterion_main, Criterion};
use quick_xml::events::Event;
use quick_xml::reader::Reader;

fn read(c: &mut Criterion) {
    let doc: String = (0..200)
        .map(|i| format!("<item id=\"{i}\"><name>n&amp;{i}</name><v>{}</v></item>", i * 7))
        .collect();
    let doc = format!("<root>{doc}</root>");
    c.bench_function("read_events", |b| {
        b.iter(|| {
            let mut reader = Reader::from_str(&doc);
            let mut count = 0usize;
            loop {
                match reader.read_event().unwrap() {
                    Event::Eof => break,
                    _ => count += 1,
                }
            }
            count
        })
    });
}

criterion_group!(benches, read);
criterion_main!(benches);
"#,
    )
    .unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(
        &repo,
        &["commit", "-q", "-m", "quick-xml 0.39.0 with a bench"],
    );
    repo
}

#[test]
fn identical_source_gives_identical_executables_on_a_real_crate() {
    let sandbox = Sandbox::empty();
    let repo = quick_xml_repository(&sandbox);
    // A commit outside the compiled code, as a release's changelog or a docs-only PR is.
    let changelog = repo.join("Changelog.md");
    let text = std::fs::read_to_string(&changelog).unwrap_or_default();
    std::fs::write(
        &changelog,
        format!("## Unreleased\n\n- docs only\n\n{text}"),
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "docs only"]);
    let output = {
        let _guard = bench_lock();
        sandbox
            .bench_run()
            .current_dir(&repo)
            .args([
                "ab", "--suite", "read", "--base", "HEAD~1", "--head", "HEAD",
            ])
            .output()
            .unwrap()
    };
    assert_exit(&output, 0);
    let err = stderr(&output);
    assert!(err.contains("identical executables"), "{err}");
    assert!(err.contains("Nothing recorded"), "{err}");
    assert!(
        !repo.join("target").exists(),
        "ab built into the repository's target/"
    );
}
