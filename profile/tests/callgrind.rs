//! Instruction profiles of a real gungraun benchmark: base and head builds of the fixture
//! crate, where head adds `slow_checksum_added_in_head`. Counts are exact, so the tests
//! compare numbers, not shares.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod util;

use bench_profile::{
    GungraunOptions, Profile, ProfileError, Unit, capture_gungraun, diff,
    profile_diff_flamegraph_svg,
};
use util::{ADDED, Side, build, fixture, run_lock};

const BENCHMARK: &str = "profiled_group/digest/kib16";

fn options() -> GungraunOptions {
    GungraunOptions {
        current_dir: Some(fixture()),
        ..GungraunOptions::default()
    }
}

fn capture(side: Side, id: &str) -> Result<Profile, ProfileError> {
    let exe = build(side).instructions;
    let scratch = tempfile::tempdir().unwrap();
    let _guard = run_lock();
    capture_gungraun(&exe, id, scratch.path(), &options())
}

#[test]
fn the_function_head_added_tops_the_diff_with_an_exact_delta() {
    let base = capture(Side::Base, BENCHMARK).unwrap();
    let head = capture(Side::Head, BENCHMARK).unwrap();
    assert_eq!(base.unit, Unit::Instructions);
    // The fixture's loops over 16 KiB are the bulk of the work.
    assert!(base.total > 100_000, "{}", base.total);
    assert_eq!(base.self_count(ADDED), 0);

    let changes = diff(&base, &head).unwrap();
    for c in changes.iter().take(5) {
        eprintln!(
            "{:>10} -> {:>10}  {:+}  {}",
            c.base_self,
            c.head_self,
            c.self_delta(),
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
    let added = head.self_count(ADDED);
    assert_eq!(top.self_delta(), i128::from(added));
    // Four rounds over 16384 bytes: at least one instruction per byte and round.
    assert!(added >= 4 * 16_384, "{added}");
    // Nothing else in the benchmark changed: the other functions' counts are identical.
    for name in ["profiled::fnv1a", "profiled::rotate_sum"] {
        let change = changes.iter().find(|c| c.name == name).unwrap();
        assert!(
            change.base_self > 0 && change.self_delta() == 0,
            "{change:?}"
        );
    }

    // Run again: the same executable gives the same counts, to the instruction.
    let head_again = capture(Side::Head, BENCHMARK).unwrap();
    assert_eq!(head_again.functions, head.functions);
    assert_eq!(head_again.total, head.total);
    let again = diff(&base, &head_again).unwrap();
    assert_eq!(again[0].name, ADDED);
    assert_eq!(again[0].self_delta(), top.self_delta());

    // The call tree puts the new function under the benchmarked one.
    assert!(
        head.folded
            .lines()
            .any(|l| l.contains(&format!("profiled::digest;{ADDED} {added}"))),
        "{}",
        head.folded
    );
    let svg = profile_diff_flamegraph_svg(&base, &head, "base -> head").unwrap();
    assert!(svg.contains(ADDED) && svg.contains("instructions"));
}

#[test]
fn an_id_that_matches_no_benchmark_is_an_error() {
    let err = capture(Side::Base, "profiled_group/digest/nothing").unwrap_err();
    match &err {
        ProfileError::BenchmarkNotFound { available, .. } => {
            assert_eq!(available, &[BENCHMARK]);
        }
        other => panic!("{other}"),
    }
}

#[test]
fn missing_valgrind_says_what_to_install() {
    let scratch = tempfile::tempdir().unwrap();
    let options = GungraunOptions {
        valgrind: "/nonexistent/valgrind".to_owned(),
        ..options()
    };
    let err = capture_gungraun(
        &build(Side::Base).instructions,
        BENCHMARK,
        scratch.path(),
        &options,
    )
    .unwrap_err();
    assert!(matches!(err, ProfileError::ValgrindMissing { .. }), "{err}");
    assert!(
        err.to_string().contains("apt-get install valgrind"),
        "{err}"
    );
}
