//! Where the time went: profiles of a built suite's benchmarks ([`bench_profile`] captures,
//! diffs and draws them), turned into the ledger's artifacts.
//!
//! ```text
//! built side ──perf record (criterion --profile-time) or callgrind (gungraun)──▶ Profile
//! Profile ──▶ folded stacks, flamegraph SVG                   (artifacts of the side's run)
//! base + head Profiles ──▶ function changes (JSON), differential flamegraph (of the head's run)
//! ```

use crate::ab::BuiltSide;
use bench_model::RunId;
use bench_model::{ArtifactKind, CountUnit, FunctionCountRow, FunctionCounts, NewArtifact};
use bench_profile::{FunctionChange, Profile, ProfileError, Unit};
use std::path::Path;

/// How long criterion's `--profile-time` runs one benchmark when the user says nothing.
pub const DEFAULT_PROFILE_SECONDS: u32 = 5;

/// Functions shown per benchmark in the terminal and markdown.
pub const TOP_FUNCTIONS: usize = 10;

/// The profile of one benchmark of a built side.
#[derive(Debug)]
pub struct BenchmarkProfile {
    /// The benchmark's full id.
    pub benchmark: String,
    /// Its profile, or why there is none.
    pub profile: Result<Profile, ProfileError>,
    /// Wall time of the capture (the profiled run, its warm-up and the folding), in seconds.
    pub seconds: f64,
}

/// Profiles `benchmarks` of `side`, one after the other (criterion suites under perf for
/// `seconds` each, gungraun suites under callgrind), in `scratch`. `on_start(i, n, id)` is
/// called before each.
pub fn profile_side(
    side: &BuiltSide,
    benchmarks: &[String],
    seconds: u32,
    scratch: &Path,
    mut on_start: impl FnMut(usize, usize, &str),
) -> Vec<BenchmarkProfile> {
    let tool = side.tool();
    benchmarks
        .iter()
        .enumerate()
        .map(|(i, benchmark)| {
            on_start(i + 1, benchmarks.len(), benchmark);
            let started = std::time::Instant::now();
            let profile = tempfile::tempdir_in(scratch)
                .map_err(|source| ProfileError::Io {
                    what: "cannot create a scratch directory for a profile".to_owned(),
                    source,
                })
                .and_then(|work| {
                    tool.profile(&side.exe, &side.target, benchmark, work.path(), seconds)
                });
            BenchmarkProfile {
                benchmark: benchmark.clone(),
                profile,
                seconds: started.elapsed().as_secs_f64(),
            }
        })
        .collect()
}

/// Which profiler made a profile of this unit.
#[must_use]
pub fn profiler_of(unit: Unit) -> &'static str {
    match unit {
        Unit::Samples => "perf",
        Unit::Instructions => "callgrind",
    }
}

/// The functions whose self time changed most from `base` to `head`, or (without a base) the
/// largest self shares of `head`; at most `limit`.
///
/// Sample shares are zero-sum: when head adds a function that takes half the time, every other
/// function's share halves although its time did not move. With `time_ratio`, the benchmark's
/// measured head/base time per iteration, a function's self time is estimated as its share
/// times the benchmark's time, and the change is that estimate's change as a share of the
/// base's time (`head_share * time_ratio - base_share`): the new function's half, the others'
/// nothing. Without it (no timing), the change is the share's. Instruction counts are exact:
/// their change is the count's.
///
/// # Errors
/// When the two profiles count different units.
pub fn function_counts(
    base: Option<&Profile>,
    head: &Profile,
    limit: usize,
    time_ratio: Option<f64>,
) -> Result<FunctionCounts, ProfileError> {
    let unit = match head.unit {
        Unit::Samples => CountUnit::Samples,
        Unit::Instructions => CountUnit::Instructions,
    };
    let ratio = time_ratio
        .filter(|r| r.is_finite() && *r > 0.0)
        .unwrap_or(1.0);
    let mut rows: Vec<FunctionCountRow> = match base {
        Some(base) => bench_profile::diff(base, head)?
            .into_iter()
            .map(|c: FunctionChange| FunctionCountRow {
                change: change_of(unit, &c, ratio),
                function: c.name,
                base_share: c.base_share,
                head_share: c.head_share,
                base: c.base_self,
                head: c.head_self,
            })
            .collect(),
        None => head
            .functions
            .iter()
            .map(|f| FunctionCountRow {
                function: f.name.clone(),
                base_share: 0.0,
                head_share: head.share(f.self_count),
                base: 0,
                head: f.self_count,
                change: match unit {
                    CountUnit::Samples => head.share(f.self_count),
                    #[expect(clippy::cast_precision_loss, reason = "a count shown as a change")]
                    CountUnit::Instructions => f.self_count as f64,
                },
            })
            .collect(),
    };
    // Stable: ties keep the diff's order.
    rows.sort_by(|a, b| b.change.abs().total_cmp(&a.change.abs()));
    rows.truncate(limit);
    Ok(FunctionCounts { unit, rows })
}

/// A row's change: for samples, the change in estimated self time as a share of the base's
/// time (`ratio`: head/base time per iteration); for instructions, the exact count's.
fn change_of(unit: CountUnit, c: &FunctionChange, ratio: f64) -> f64 {
    match unit {
        CountUnit::Samples => c.head_share * ratio - c.base_share,
        #[expect(
            clippy::cast_precision_loss,
            reason = "a count delta shown as a change"
        )]
        CountUnit::Instructions => c.self_delta() as f64,
    }
}

/// The artifacts of one benchmark's profile on run `run`: its folded stacks, its flamegraph,
/// and with a base profile (of run `base_run`) the function changes ([`function_counts`],
/// scaled by `time_ratio`) and the differential flamegraph; else its own largest functions.
///
/// # Errors
/// When a flamegraph cannot be drawn or the units differ.
pub fn artifacts(
    run: RunId,
    benchmark: &str,
    head: &Profile,
    base: Option<(RunId, &Profile)>,
    time_ratio: Option<f64>,
) -> Result<Vec<NewArtifact>, ProfileError> {
    let profiler = profiler_of(head.unit).to_owned();
    let artifact = |kind: ArtifactKind, against: Option<RunId>, bytes: Vec<u8>| {
        NewArtifact::new(run, benchmark, kind, profiler.clone(), against, bytes)
    };
    let mut out = vec![
        artifact(
            ArtifactKind::FoldedStacks,
            None,
            head.folded.clone().into_bytes(),
        ),
        artifact(
            ArtifactKind::Flamegraph,
            None,
            bench_profile::profile_flamegraph_svg(head, benchmark)?.into_bytes(),
        ),
    ];
    let counts = function_counts(base.map(|(_, p)| p), head, 50, time_ratio)?;
    let against = base.map(|(id, _)| id);
    out.push(artifact(
        ArtifactKind::FunctionCounts,
        against,
        serde_json::to_vec(&counts).unwrap_or_default(),
    ));
    if let Some((base_run, base)) = base {
        out.push(artifact(
            ArtifactKind::DiffFlamegraph,
            Some(base_run),
            bench_profile::profile_diff_flamegraph_svg(
                base,
                head,
                &format!("{benchmark}: base run #{base_run} -> run #{run}"),
            )?
            .into_bytes(),
        ));
    }
    Ok(out)
}

/// A change as shown: points of share for samples, an instruction delta for counts.
fn change_cell(unit: CountUnit, change: f64) -> String {
    match unit {
        CountUnit::Samples => format!("{:+.1}pt", change * 100.0),
        CountUnit::Instructions => format!("{change:+.0}"),
    }
}

/// The function rows of one benchmark as a terminal table.
#[must_use]
pub fn counts_table(benchmark: &str, counts: &FunctionCounts, with_base: bool) -> String {
    let mut out = format!("{benchmark} ({}):\n", counts.unit.name());
    if with_base {
        out.push_str(&format!(
            "  {:>8} {:>8} {:>8}  function\n",
            "base", "head", "change"
        ));
    } else {
        out.push_str(&format!("  {:>8}  function\n", "self"));
    }
    for row in counts.rows.iter().take(TOP_FUNCTIONS) {
        if with_base {
            out.push_str(&format!(
                "  {:>7.1}% {:>7.1}% {:>9}  {}\n",
                row.base_share * 100.0,
                row.head_share * 100.0,
                change_cell(counts.unit, row.change),
                row.function
            ));
        } else {
            out.push_str(&format!(
                "  {:>7.1}%  {}\n",
                row.head_share * 100.0,
                row.function
            ));
        }
    }
    out
}

/// The function rows of one benchmark as markdown (names escaped for tables).
#[must_use]
pub fn counts_markdown(benchmark: &str, counts: &FunctionCounts, with_base: bool) -> String {
    let escape = |s: &str| {
        s.replace('|', "\\|")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('`', "\\`")
    };
    let mut out = format!("#### `{}` ({})\n\n", escape(benchmark), counts.unit.name());
    if with_base {
        out.push_str("| base | head | change | function |\n|---:|---:|---:|---|\n");
    } else {
        out.push_str("| self | function |\n|---:|---|\n");
    }
    for row in counts.rows.iter().take(TOP_FUNCTIONS) {
        if with_base {
            out.push_str(&format!(
                "| {:.1}% | {:.1}% | {} | {} |\n",
                row.base_share * 100.0,
                row.head_share * 100.0,
                change_cell(counts.unit, row.change),
                escape(&row.function)
            ));
        } else {
            out.push_str(&format!(
                "| {:.1}% | {} |\n",
                row.head_share * 100.0,
                escape(&row.function)
            ));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn profile(folded: &str) -> Profile {
        Profile::from_folded(Unit::Samples, folded.to_owned(), "test").unwrap()
    }

    #[test]
    fn a_new_function_tops_the_changes_and_every_artifact_is_made() {
        let base = profile("main;work;hash 90\nmain;other 10\n");
        let head = profile("main;work;hash 45\nmain;work;slow_new 50\nmain;other 5\n");
        // Shares alone: hash lost nearly as much share as slow_new gained.
        let shares = function_counts(Some(&base), &head, 5, None).unwrap();
        let hash_share = shares.rows.iter().find(|r| r.function == "hash").unwrap();
        assert!((hash_share.change + 0.45).abs() < 1e-9);
        // The benchmark took twice as long: hash and other kept their time, slow_new is the
        // change (as much time as the whole base).
        let counts = function_counts(Some(&base), &head, 5, Some(2.0)).unwrap();
        assert_eq!(counts.rows[0].function, "slow_new");
        assert!((counts.rows[0].change - 1.0).abs() < 1e-9);
        let hash = counts.rows.iter().find(|r| r.function == "hash").unwrap();
        assert!(hash.change.abs() < 1e-9, "{hash:?}");
        let artifacts = artifacts(7, "hash/1k", &head, Some((6, &base)), Some(2.0)).unwrap();
        let kinds: Vec<ArtifactKind> = artifacts.iter().map(|a| a.kind).collect();
        assert_eq!(
            kinds,
            [
                ArtifactKind::FoldedStacks,
                ArtifactKind::Flamegraph,
                ArtifactKind::FunctionCounts,
                ArtifactKind::DiffFlamegraph
            ]
        );
        assert!(artifacts.iter().all(|a| a.run == 7 && a.profiler == "perf"));
        assert_eq!(artifacts[3].against, Some(6));
        let stored = FunctionCounts::from_json(&artifacts[2].bytes).unwrap();
        assert_eq!(stored, counts);
        let table = counts_table("hash/1k", &counts, true);
        assert!(table.contains("slow_new"), "{table}");
        let md = counts_markdown("<b>", &counts, true);
        assert!(md.contains("&lt;b&gt;") && !md.contains("<b>"), "{md}");
    }

    #[test]
    fn without_a_base_the_largest_functions_are_listed() {
        let head = profile("main;a 30\nmain;b 70\n");
        let counts = function_counts(None, &head, 1, None).unwrap();
        assert_eq!(counts.rows.len(), 1);
        assert_eq!(counts.rows[0].function, "b");
        assert_eq!(artifacts(1, "x", &head, None, None).unwrap().len(), 3);
    }
}
