//! `root-tool readspeed --test`: checks this build on this machine, as rootreadspeed's `--test`.
//!
//! Three fixtures written by ROOT 6.40 (`tools/root_fixtures.py`) are built into the tool, with
//! the bytes ROOT's own rootreadspeed reports for seven selections of them
//! (`tools/readspeed_expected.py`): numbers, jagged arrays, vectors, strings, nested vectors,
//! packed reals, leaf lists, split members; two codecs; two files read as one. Every selection
//! is read in every mode on one and two threads, and the uncompressed and compressed bytes must
//! equal ROOT's. Missing files, trees and branches must be errors that name them.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use root_reader::readspeed::{self, Config, Mode, Selection};

const EXPECTED: &str = include_str!("../../../tests/fixtures/readspeed_expected.json");

const FIXTURES: [(&str, &[u8]); 3] = [
    (
        "types_zstd.root",
        include_bytes!("../../../tests/fixtures/types_zstd.root"),
    ),
    (
        "types_zlib.root",
        include_bytes!("../../../tests/fixtures/types_zlib.root"),
    ),
    (
        "objects.root",
        include_bytes!("../../../tests/fixtures/objects.root"),
    ),
];

/// A directory removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs every check, printing one line each; `Ok(true)` when all pass.
pub(crate) fn run() -> Result<bool> {
    let dir = Scratch(
        std::env::temp_dir().join(format!("root-tool-readspeed-test-{}", std::process::id())),
    );
    std::fs::create_dir_all(&dir.0)
        .with_context(|| format!("cannot create {}", dir.0.display()))?;
    for (name, bytes) in FIXTURES {
        std::fs::write(dir.0.join(name), bytes)
            .with_context(|| format!("cannot write {name} into {}", dir.0.display()))?;
    }
    let expected: serde_json::Value =
        serde_json::from_str(EXPECTED).context("the built-in expectations are not JSON")?;
    let cases = expected["cases"]
        .as_array()
        .context("the built-in expectations have no cases")?;

    let mut passed = 0;
    let mut failed = 0;
    let mut check = |what: String, outcome: Result<(), String>| match outcome {
        Ok(()) => {
            passed += 1;
            println!("ok      {what}");
        }
        Err(why) => {
            failed += 1;
            println!("FAILED  {what}: {why}");
        }
    };

    for case in cases {
        let (config, label, want) = case_config(case, &dir.0)?;
        for threads in [1, 2] {
            for mode in Mode::ALL {
                // Stages timed too: the bytes read must not change with them.
                let config = Config {
                    threads,
                    mode,
                    stages: true,
                    ..config.clone()
                };
                let outcome = readspeed::run(&config)
                    .map_err(|e| format!("error: {e}"))
                    .and_then(|r| {
                        let got = (r.uncompressed_bytes, r.compressed_bytes);
                        // Stages are clocked on each thread's wall clock: together at most
                        // the real time on every thread (CPU time would be less whenever the
                        // machine runs something else besides: a loaded CI runner).
                        let wall = r.real_time_s * threads as f64;
                        if r.stages.is_none_or(|s| s.total_s() > wall * 1.05 + 0.01) {
                            Err(format!(
                                "stages {:?} for {} s of real time on {threads} thread(s)",
                                r.stages, r.real_time_s
                            ))
                        } else if got == want {
                            Ok(())
                        } else {
                            Err(format!(
                                "read {} uncompressed and {} compressed bytes, rootreadspeed {} and {}",
                                got.0, got.1, want.0, want.1
                            ))
                        }
                    });
                check(format!("{label}, {threads} thread(s), {mode:?}"), outcome);
            }
        }
    }

    let good = dir.0.join("types_zstd.root");
    let refused = |config: Config, must_name: &str| match readspeed::run(&config) {
        Ok(_) => Err("no error".to_string()),
        Err(e) if e.to_string().contains(must_name) => Ok(()),
        Err(e) => Err(format!("the error does not name {must_name:?}: {e}")),
    };
    let base = Config {
        files: vec![good.clone()],
        trees: vec!["t".to_string()],
        branches: Selection::Names(vec!["f".to_string()]),
        threads: 1,
        mode: Mode::Full,
        stages: false,
    };
    check(
        "a missing file is an error naming it".to_string(),
        refused(
            Config {
                files: vec![dir.0.join("missing.root")],
                ..base.clone()
            },
            "missing.root",
        ),
    );
    check(
        "a missing tree is an error naming it".to_string(),
        refused(
            Config {
                trees: vec!["no_such_tree".to_string()],
                ..base.clone()
            },
            "no_such_tree",
        ),
    );
    check(
        "a missing branch is an error naming it".to_string(),
        refused(
            Config {
                branches: Selection::Names(vec!["no_such_branch".to_string()]),
                ..base.clone()
            },
            "no_such_branch",
        ),
    );

    println!(
        "\n{} checks: {passed} passed, {failed} failed",
        passed + failed
    );
    Ok(failed == 0)
}

/// A case of the expectations: its configuration (one thread, full read), a label and ROOT's
/// (uncompressed, compressed) bytes.
fn case_config(case: &serde_json::Value, dir: &Path) -> Result<(Config, String, (u64, u64))> {
    let strings = |key: &str| -> Result<Vec<String>> {
        case[key]
            .as_array()
            .with_context(|| format!("a case without {key}"))?
            .iter()
            .map(|v| v.as_str().map(str::to_string).context("not a string"))
            .collect()
    };
    let files = strings("files")?;
    let trees = strings("trees")?;
    let names = strings("names")?;
    let select = case["select"].as_str().context("a case without select")?;
    let paths: Vec<PathBuf> = files.iter().map(|f| dir.join(f)).collect();
    let branches = match select {
        "all-branches" => Selection::All,
        "branches" => Selection::Names(names.clone()),
        "branches-regex" => {
            Selection::Names(crate::selection::resolve_regex(&paths, &trees, &names)?)
        }
        other => anyhow::bail!("unknown selection {other:?}"),
    };
    let bytes = |key: &str| case[key].as_u64().with_context(|| format!("no {key}"));
    let want = (bytes("uncompressed_bytes")?, bytes("compressed_bytes")?);
    let label = format!(
        "{} --trees {} --{select} {}",
        files.join(" "),
        trees.join(" "),
        names.join(" ")
    );
    Ok((
        Config {
            files: paths,
            trees,
            branches,
            threads: 1,
            mode: Mode::Full,
            stages: false,
        },
        label,
        want,
    ))
}
