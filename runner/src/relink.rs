//! Layout randomization by relinking: one build, K executables that differ only in the order
//! of their functions.
//!
//! Two executables of the same code can differ in speed by tens of percent because of where
//! their hot loops land (cache lines, branch-predictor aliasing, page boundaries): Mytkowicz et
//! al., "Producing Wrong Data Without Doing Anything Obviously Wrong!" (ASPLOS 2009);
//! Stabilizer (Curtsinger and Berger, ASPLOS 2013). Measured on quick-xml's version bump
//! (BENCHMARKS.md, issue 45's experiment), the default link of one side put `escape_text` 35%
//! slower than most shuffled links of the *same* code. So `bench-run ab --layouts K` measures
//! each side under K function orders and judges the change against their spread.
//!
//! How: while cargo builds a side, the linker it calls is a shim that runs `bench-run` as the
//! linker ([`act_as_linker`]). It links as asked with the real linker, and when the output is
//! the suite's bench executable it repeats that same link once per seed with
//! `-Wl,--shuffle-sections=.text*=SEED` (lld, the linker rustc uses on x86_64 Linux, shuffles
//! input sections; rustc puts every function in its own section), each into its own file. No
//! code is recompiled: the K links read the same object files the real link just read. A
//! relink that fails (another linker, an old lld) is recorded with its error in the manifest
//! ([`MANIFEST`]), and `ab` then falls back to fewer layouts with a warning.
//!
//! ```text
//! cargo ──rustc──▶ shim ──▶ bench-run (as linker) ──▶ cc ARGS                 (the real link)
//!                                                  └─▶ cc ARGS' --shuffle-sections=.text*=s_k
//!                                                      -o DIR/layout-s_k      (k = 1..K)
//! ```

use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Set (to `1`) only by the shim: this process is the linker.
pub const AS_LINKER_ENV: &str = "BENCH_RUN_AS_LINKER";
/// The `bench-run` executable the shim runs.
pub const SELF_ENV: &str = "BENCH_RUN_LINK_SELF";
/// The linker to run for real (`cc` unless the workspace configured another).
pub const REAL_LINKER_ENV: &str = "BENCH_RUN_LINK_REAL";
/// The crate name of the bench executable whose link is repeated.
pub const CRATE_ENV: &str = "BENCH_RUN_LINK_CRATE";
/// The directory receiving the layouts and their manifest.
pub const DIR_ENV: &str = "BENCH_RUN_LINK_DIR";
/// The seeds, comma-separated.
pub const SEEDS_ENV: &str = "BENCH_RUN_LINK_SEEDS";
/// The manifest the linker writes into [`DIR_ENV`].
pub const MANIFEST: &str = "layouts.json";

/// What the linker is asked to do besides the real link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkPlan {
    /// The linker to run for real.
    pub real_linker: String,
    /// Crate name of the bench executable (`microbenches` for `microbenches-0123abcd`).
    pub crate_name: String,
    /// Where the layouts go.
    pub dir: PathBuf,
    /// One relink per seed.
    pub seeds: Vec<u64>,
}

impl LinkPlan {
    /// The environment that hands this plan to the linker (besides [`AS_LINKER_ENV`], which
    /// only the shim sets).
    #[must_use]
    pub fn env(&self, bench_run: &Path) -> Vec<(String, OsString)> {
        vec![
            (SELF_ENV.to_owned(), bench_run.as_os_str().to_owned()),
            (REAL_LINKER_ENV.to_owned(), self.real_linker.clone().into()),
            (CRATE_ENV.to_owned(), self.crate_name.clone().into()),
            (DIR_ENV.to_owned(), self.dir.as_os_str().to_owned()),
            (
                SEEDS_ENV.to_owned(),
                self.seeds
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
                    .into(),
            ),
        ]
    }

    /// The plan in this process's environment, when the shim started it as the linker.
    #[must_use]
    pub fn from_env() -> Option<Self> {
        if std::env::var_os(AS_LINKER_ENV).is_none_or(|v| v != "1") {
            return None;
        }
        let seeds = std::env::var(SEEDS_ENV).unwrap_or_default();
        Some(Self {
            real_linker: std::env::var(REAL_LINKER_ENV).unwrap_or_else(|_| "cc".to_owned()),
            crate_name: std::env::var(CRATE_ENV).unwrap_or_default(),
            dir: std::env::var_os(DIR_ENV).map(PathBuf::from)?,
            seeds: seeds
                .split(',')
                .filter_map(|s| s.trim().parse().ok())
                .collect(),
        })
    }
}

/// The shim cargo calls as the linker: a fixed file (its path enters cargo's fingerprints, so
/// it must not move between runs) that starts `bench-run` as the linker.
#[must_use]
pub fn shim_script() -> String {
    format!("#!/bin/sh\n{AS_LINKER_ENV}=1 exec \"${SELF_ENV}\" \"$@\"\n")
}

/// Writes the shim to `path` (executable), unless it is there already with that content.
///
/// # Errors
/// When it cannot be written.
pub fn write_shim(path: &Path) -> std::io::Result<()> {
    let script = shim_script();
    if std::fs::read_to_string(path).is_ok_and(|s| s == script) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, script)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// One relinked executable, as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relinked {
    /// The shuffle seed.
    pub seed: u64,
    /// The executable, when the relink succeeded.
    pub exe: Option<PathBuf>,
    /// The linker's complaint, when it failed.
    pub error: Option<String>,
}

/// The manifest of one build's layouts.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Manifest {
    /// The executable the real link wrote.
    pub linked: PathBuf,
    /// The relinks, in seed order.
    pub layouts: Vec<Relinked>,
}

/// Reads the manifest in `dir` (`None`: no link of the bench executable happened).
#[must_use]
pub fn read_manifest(dir: &Path) -> Option<Manifest> {
    let text = std::fs::read(dir.join(MANIFEST)).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Splits the text of a response file (`@file`) as gcc does: arguments separated by
/// whitespace; a backslash takes the next character literally; single and double quotes group.
#[must_use]
pub fn split_response_file(text: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut in_arg = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (c, quote) {
            ('\\', _) => {
                if let Some(next) = chars.next() {
                    current.push(next);
                }
                in_arg = true;
            }
            (q, Some(open)) if q == open => quote = None,
            (_, Some(_)) => current.push(c),
            ('\'' | '"', None) => {
                quote = Some(c);
                in_arg = true;
            }
            (w, None) if w.is_whitespace() => {
                if in_arg {
                    args.push(std::mem::take(&mut current));
                    in_arg = false;
                }
            }
            _ => {
                current.push(c);
                in_arg = true;
            }
        }
    }
    if in_arg {
        args.push(current);
    }
    args
}

/// Quotes `args` for a gcc response file, the inverse of [`split_response_file`].
#[must_use]
pub fn response_file_text(args: &[String]) -> String {
    let mut text = String::new();
    for arg in args {
        for c in arg.chars() {
            if c.is_whitespace() || matches!(c, '\\' | '\'' | '"') {
                text.push('\\');
            }
            text.push(c);
        }
        text.push('\n');
    }
    text
}

/// `args` with every `@file` replaced by the arguments it holds (one level, as rustc writes
/// them). A file that cannot be read is left as it is.
#[must_use]
pub fn expand_response_files(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    for arg in args {
        match arg
            .strip_prefix('@')
            .and_then(|p| std::fs::read_to_string(p).ok())
        {
            Some(text) => out.extend(split_response_file(&text)),
            None => out.push(arg.clone()),
        }
    }
    out
}

/// The output file of a link command line (`-o FILE` or `-oFILE`; the last one wins).
#[must_use]
pub fn output_of(args: &[String]) -> Option<&str> {
    let mut output = None;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "-o" {
            output = iter.next().map(String::as_str);
        } else if let Some(rest) = arg.strip_prefix("-o").filter(|r| !r.is_empty()) {
            output = Some(rest);
        }
    }
    output
}

/// Whether `output` is the bench executable of crate `crate_name`: cargo names it
/// `<crate>-<16 hex digits>` in `deps/`.
#[must_use]
pub fn is_bench_exe(output: &str, crate_name: &str) -> bool {
    let name = Path::new(output)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.strip_prefix(crate_name)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|hash| !hash.is_empty() && hash.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The shuffle flag lld takes for `seed`: every input section whose name starts with `.text`.
#[must_use]
pub fn shuffle_flag(seed: u64) -> String {
    format!("-Wl,--shuffle-sections=.text*={seed}")
}

/// The command line of the relink with `seed` into `output`: the original one with its output
/// replaced and the shuffle flag appended.
#[must_use]
pub fn relink_args(args: &[String], output: &Path, seed: u64) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len() + 1);
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "-o" {
            iter.next();
        } else if arg.starts_with("-o") && arg.len() > 2 {
            // -oFILE: dropped, replaced below
        } else {
            out.push(arg.clone());
        }
    }
    out.push("-o".to_owned());
    out.push(output.display().to_string());
    out.push(shuffle_flag(seed));
    out
}

/// The file name of the layout linked with `seed`.
#[must_use]
pub fn layout_file_name(seed: u64) -> String {
    format!("layout-{seed}")
}

/// Runs as the linker: links with `args` as asked, then, when the output is the plan's bench
/// executable, relinks it once per seed into the plan's directory and writes the manifest.
/// Returns the exit code of the real link (a failed relink never fails the build).
#[must_use]
pub fn act_as_linker(plan: &LinkPlan, args: &[String]) -> i32 {
    let status = Command::new(&plan.real_linker).args(args).status();
    let code = match status {
        Ok(s) => s.code().unwrap_or(1),
        Err(e) => {
            eprintln!(
                "bench-run (as the linker): cannot run {}: {e}",
                plan.real_linker
            );
            return 1;
        }
    };
    if code != 0 {
        return code;
    }
    let expanded = expand_response_files(args);
    let Some(output) = output_of(&expanded).map(str::to_owned) else {
        return 0;
    };
    if !is_bench_exe(&output, &plan.crate_name) {
        return 0;
    }
    let _ = std::fs::create_dir_all(&plan.dir);
    let layouts = plan
        .seeds
        .iter()
        .map(|&seed| relink(plan, &expanded, seed))
        .collect();
    let manifest = Manifest {
        linked: PathBuf::from(output),
        layouts,
    };
    if let Ok(text) = serde_json::to_vec_pretty(&manifest) {
        let _ = std::fs::write(plan.dir.join(MANIFEST), text);
    }
    0
}

fn relink(plan: &LinkPlan, args: &[String], seed: u64) -> Relinked {
    let exe = plan.dir.join(layout_file_name(seed));
    let _ = std::fs::remove_file(&exe);
    // Passed as a response file: the original command line may have been one already because
    // it is too long for the system.
    let response = plan.dir.join(format!("link-args-{seed}"));
    let failed = |error: String| Relinked {
        seed,
        exe: None,
        error: Some(error),
    };
    if let Err(e) = std::fs::write(
        &response,
        response_file_text(&relink_args(args, &exe, seed)),
    ) {
        return failed(format!("cannot write {}: {e}", response.display()));
    }
    let output = Command::new(&plan.real_linker)
        .arg(format!("@{}", response.display()))
        .output();
    let _ = std::fs::remove_file(&response);
    match output {
        Ok(o) if o.status.success() && exe.is_file() => Relinked {
            seed,
            exe: Some(exe),
            error: None,
        },
        Ok(o) => failed(format!(
            "{} exited with {}: {}",
            plan.real_linker,
            o.status,
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .take(5)
                .collect::<Vec<_>>()
                .join(" / ")
        )),
        Err(e) => failed(format!("cannot run {}: {e}", plan.real_linker)),
    }
}

/// The environment variable through which cargo takes the linker for `triple`
/// (`CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER`).
#[must_use]
pub fn linker_env_var(triple: &str) -> String {
    format!(
        "CARGO_TARGET_{}_LINKER",
        triple.to_ascii_uppercase().replace(['-', '.'], "_")
    )
}

/// The environment-size pad of a process under layout `seed`: a variable whose value is 0 to
/// 4095 bytes long, so the stack starts at a different offset (Mytkowicz et al. measured the
/// environment's size alone moving a benchmark by tens of percent). Both sides of a round get
/// the same pad.
#[must_use]
pub fn env_pad(seed: u64) -> (String, String) {
    if seed == 0 {
        return (ENV_PAD.to_owned(), String::new());
    }
    let len =
        usize::try_from(bench_analysis::stats::SplitMix64(seed).next_u64() % 4096).unwrap_or(0);
    (ENV_PAD.to_owned(), "x".repeat(len))
}

/// The path through which the linker shim can run this very executable: `/proc/<pid>/exe` on
/// Linux, which still works when the file is replaced meanwhile (a rebuild of bench-run during
/// a long ab), else the executable's path.
///
/// # Errors
/// When neither can be found.
pub fn own_executable() -> std::io::Result<PathBuf> {
    let proc = PathBuf::from(format!("/proc/{}/exe", std::process::id()));
    if proc.exists() {
        return Ok(proc);
    }
    std::env::current_exe()
}

/// The name of the pad variable.
pub const ENV_PAD: &str = "BENCH_RUN_ENV_PAD";

/// Function orders per side when `bench-run ab --layouts` is not given: on quick-xml's version
/// bump (BENCHMARKS.md, 2026-12-02) one link could sit 35-50% away from the others on a few
/// benchmarks; four layouts make it unlikely that both sides' rounds land on such a link alone,
/// and cost rounds rounded up to a multiple of four.
pub const DEFAULT_LAYOUTS: usize = 4;

/// The shuffle seeds of `k` layouts, drawn from a run's seed: distinct, non-zero (0 is "the
/// linker's own order"), none for one layout.
#[must_use]
pub fn layout_seeds(k: usize, seed: u64) -> Vec<u64> {
    if k <= 1 {
        return Vec::new();
    }
    let mut rng = bench_analysis::stats::SplitMix64(seed ^ 0x1A70_u64.rotate_left(48));
    let mut seeds = Vec::with_capacity(k);
    while seeds.len() < k {
        let s = rng.next_u64() >> 1;
        if s != 0 && !seeds.contains(&s) {
            seeds.push(s);
        }
    }
    seeds
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn response_files_round_trip_as_gcc_reads_them() {
        let args = strings(&["-m64", "/a b/c.o", "x\\y", "-Wl,--as-needed", "it's", ""]);
        let text = response_file_text(&args);
        // An empty argument has no representation but a quote pair; rustc never passes one.
        assert_eq!(split_response_file(&text), args[..5].to_vec());
        assert_eq!(
            split_response_file("a 'b c' \"d e\"\n\tf\\ g"),
            strings(&["a", "b c", "d e", "f g"])
        );
    }

    #[test]
    fn the_output_is_found_and_replaced() {
        let args = strings(&["cc", "x.o", "-o", "/t/deps/micro-0123abcdef012345", "-pie"]);
        assert_eq!(output_of(&args), Some("/t/deps/micro-0123abcdef012345"));
        assert_eq!(output_of(&strings(&["-ofoo"])), Some("foo"));
        assert_eq!(output_of(&strings(&["-O1"])), None);
        let relinked = relink_args(&args, Path::new("/l/layout-7"), 7);
        assert_eq!(
            relinked,
            strings(&[
                "cc",
                "x.o",
                "-pie",
                "-o",
                "/l/layout-7",
                "-Wl,--shuffle-sections=.text*=7"
            ])
        );
        assert_eq!(
            relink_args(&strings(&["-ofoo", "a.o"]), Path::new("b"), 1)[..3],
            strings(&["a.o", "-o", "b"])[..]
        );
    }

    #[test]
    fn only_the_suites_executable_is_relinked() {
        assert!(is_bench_exe("/t/deps/micro-0123abcdef012345", "micro"));
        assert!(!is_bench_exe("/t/deps/micro_x-0123abcdef012345", "micro"));
        assert!(!is_bench_exe("/t/deps/libmicro-0123.so", "micro"));
        assert!(!is_bench_exe(
            "/t/build/micro-0123/build_script_build-01",
            "micro"
        ));
        assert!(!is_bench_exe("/t/deps/micro-", "micro"));
    }

    #[test]
    fn the_linker_variable_follows_cargos_spelling() {
        assert_eq!(
            linker_env_var("x86_64-unknown-linux-gnu"),
            "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER"
        );
    }

    #[test]
    fn layout_seeds_are_distinct_nonzero_and_seeded() {
        assert!(layout_seeds(1, 7).is_empty());
        let seeds = layout_seeds(8, 7);
        assert_eq!(seeds.len(), 8);
        assert!(seeds.iter().all(|s| *s != 0));
        let mut unique = seeds.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), 8);
        assert_eq!(layout_seeds(8, 7), seeds);
        assert_ne!(layout_seeds(8, 8), seeds);
    }

    #[test]
    fn pads_are_bounded_and_seeded() {
        assert_eq!(env_pad(0).1.len(), 0);
        let a = env_pad(1).1.len();
        assert!(a < 4096);
        assert_eq!(env_pad(1).1.len(), a);
        assert!((1..50).map(|s| env_pad(s).1.len()).any(|l| l != a));
    }

    #[test]
    fn the_shim_runs_bench_run_as_the_linker() {
        let dir = tempfile::tempdir().unwrap();
        let shim = dir.path().join("bin/linker");
        write_shim(&shim).unwrap();
        let text = std::fs::read_to_string(&shim).unwrap();
        assert!(text.contains("BENCH_RUN_AS_LINKER=1 exec \"$BENCH_RUN_LINK_SELF\" \"$@\""));
        write_shim(&shim).unwrap();
    }
}
