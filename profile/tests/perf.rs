//! Wall-time profiles of a real criterion benchmark under perf: base and head builds of the
//! fixture crate, where head adds `slow_checksum_added_in_head`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod util;

use bench_profile::{
    PerfOptions, ProfileError, Unit, capture_criterion, diff, profile_diff_flamegraph_svg,
    profile_flamegraph_svg,
};
use util::{ADDED, Side, build, fixture, run_lock};

fn options() -> PerfOptions {
    PerfOptions {
        // Enough for ~3000 samples; criterion needs at least one second.
        seconds: 3,
        current_dir: Some(fixture()),
        ..PerfOptions::default()
    }
}

fn capture(side: Side, id: &str) -> Result<bench_profile::Profile, ProfileError> {
    let exe = build(side).wall;
    let scratch = tempfile::tempdir().unwrap();
    let _guard = run_lock();
    capture_criterion(&exe, id, scratch.path(), &options())
}

#[test]
fn the_function_head_added_tops_the_diff() {
    let base = capture(Side::Base, "digest").unwrap();
    let head = capture(Side::Head, "digest").unwrap();
    assert_eq!(base.unit, Unit::Samples);
    // So `perf script` runs with --no-inline: there is nothing inlined to find.
    assert!(
        !bench_profile::perf::has_debug_info(&build(Side::Base).wall),
        "a default `cargo bench` build carries no debug info"
    );
    // About 997 a second for 3 s (plus criterion's warm-up): counts are samples, not the
    // nanoseconds each sample stands for.
    assert!(
        (1000..20_000).contains(&base.total),
        "{} samples in 3 s at 997 Hz",
        base.total
    );
    assert_eq!(base.self_count(ADDED), 0, "base has no such function");

    let changes = diff(&base, &head).unwrap();
    for c in changes.iter().take(5) {
        eprintln!(
            "{:>6.2}% -> {:>6.2}%  {}",
            c.base_share * 100.0,
            c.head_share * 100.0,
            c.name
        );
    }
    let top = &changes[0];
    assert_eq!(
        top.name,
        ADDED,
        "top changes: {:?}",
        &changes[..changes.len().min(5)]
    );
    assert_eq!(top.base_self, 0);
    assert!(top.head_share > 0.3, "{top:?}");
    // The benchmark's own functions shrank in share, not in work: they are still there.
    for name in ["profiled::fnv1a", "profiled::rotate_sum"] {
        let change = changes.iter().find(|c| c.name == name).unwrap();
        assert!(
            change.base_share > 0.05 && change.head_share > 0.0,
            "{change:?}"
        );
        assert!(change.share_change() < 0.0, "{change:?}");
    }

    // Full stacks without debug info: DWARF unwinding through `.eh_frame`.
    let line = head.folded.lines().find(|l| l.contains(ADDED)).unwrap();
    assert!(
        line.starts_with("digest;"),
        "root renamed to the benchmark: {line}"
    );
    assert!(
        line.contains("main;") && line.contains(&format!("profiled::digest;{ADDED} ")),
        "{line}"
    );

    let svg = profile_flamegraph_svg(&head, "head").unwrap();
    assert!(svg.contains(ADDED));
    let diff_svg = profile_diff_flamegraph_svg(&base, &head, "base -> head").unwrap();
    assert!(diff_svg.contains(ADDED) && diff_svg.contains("samples"));
}

#[test]
fn an_id_that_matches_no_benchmark_exactly_is_an_error() {
    // As a regular expression `dig` would profile both `digest` and `digest_twice`.
    let err = capture(Side::Base, "dig").unwrap_err();
    match &err {
        ProfileError::BenchmarkNotFound {
            benchmark,
            available,
            ..
        } => {
            assert_eq!(benchmark, "dig");
            assert_eq!(available, &["digest", "digest_twice"]);
        }
        other => panic!("{other}"),
    }
    assert!(
        err.to_string().contains("it has: digest, digest_twice"),
        "{err}"
    );
}

#[test]
fn missing_perf_says_what_to_install() {
    let scratch = tempfile::tempdir().unwrap();
    let options = PerfOptions {
        perf: "/nonexistent/perf".to_owned(),
        ..options()
    };
    let err =
        capture_criterion(&build(Side::Base).wall, "digest", scratch.path(), &options).unwrap_err();
    assert!(matches!(err, ProfileError::PerfMissing { .. }), "{err}");
    assert!(err.to_string().contains("linux-perf"), "{err}");
}
