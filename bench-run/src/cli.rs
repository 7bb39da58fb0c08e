//! Command-line interface of `bench-run`.

use bench_report::{ExportFormat, OutputFormat};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// How runs are named: the end of the help of every command that takes a run.
macro_rules! run_refs {
    () => {
        "A run is named by its id, `latest`, `previous` (the default baseline of latest), a tag, a
git revision (the newest run at that commit: main, HEAD~1, v1.2, a hash prefix) or
merge-base:REV, the newest run at the merge base of REV and HEAD (what `git merge-base REV HEAD`
prints): on a pull request's branch, merge-base:origin/main is the commit the branch left
origin/main at."
    };
}

const ABOUT: &str = "Run criterion and gungraun suites, record every result with its provenance in \
an append-only ledger (a SQLite file, or PostgreSQL for a team), compare runs and gate CI on \
regressions.";

const EXAMPLES: &str = "\
Examples:
  bench-run --suite mathldbt_transport            run a suite, record it, print deltas vs the previous run
  bench-run --suite mathldbt_transport --quick    a short smoke run
  bench-run --suite ledger -p bench-run -- encode pass a filter (and any criterion flag) after --
  bench-run --suite generators -C benches         a suite of the separate workspace in benches/
                                                  (found from the root too)
  bench-run list --suite mathldbt_transport       runs of a suite, newest first
  bench-run show latest --format json             one run with full provenance and results
  bench-run ab --suite mathldbt_transport --base main
                                                  CI verdict: the working tree against main in
                                                  paired rounds (holds on a busy machine)
  bench-run compare previous latest               before/after table with confidence intervals
  bench-run gate --base main --explain            exit 1 on a regression against main's latest run
  bench-run gate --base main --confirm 3          re-run flagged benchmarks 3 times before failing
  bench-run gate --base merge-base:origin/main    on a branch: against the run at the commit where
                                                  it left origin/main
  bench-run ratio 68 --anchor 67 --at-least 20    how many times faster than an imported anchor run
  bench-run log --title T --claim C               append the latest run to BENCHMARKS.md
  bench-run import bmf sizes.json --suite wire    record metrics from another tool
  bench-run --suite ledger --push https://bench.example/   record, then push to a bench-web server

Runs are named by id, `latest`, `previous`, a tag, a git revision (the newest run at that commit),
or merge-base:REV (the newest run at the merge base of REV and HEAD, e.g. merge-base:origin/main).
`previous` and the default baseline skip --quick runs and gate --confirm re-runs.
Exit codes: 0 success / no regression, 1 regression (gate, ab), 2 error, incomparable runs, or a
run recorded on a busy machine (gate; --allow-busy judges it anyway).";

const RATIO_EXAMPLES: &str = "\
Examples:
  bench-run ratio 68 --anchor 67 --anchor 69 --at-least 20
      a suite against an imported anchor with the same benchmark names (a Python run's BMF)
  bench-run ratio 62 --anchor 61 --pair '*/ours_read=*/cpp_read' --pair '*/ours_write=*/cpp_write'
      names that differ between the two sides
  bench-run ratio 62 65 --pair '*/ours_read=*/riegeli_crate_read' --at-least 1.5
      against another implementation measured in the same runs

Every pairing of one of our runs with one anchor run gives a ratio (within each run when the
anchors are in our runs); the table shows their median and range. Speeds meet in bytes/s, ops/s
(criterion elements or an imported ops/s) or, failing those, iterations/s.
Exit codes: 0 done (every median at the bar), 1 some median below --at-least, 2 error.";

const INTERLEAVE_EXAMPLES: &str = "\
Examples:
  bench-run interleave --suite head_to_head_interleaved \\
      --worker 'target/release/examples/h2h_worker' \\
      --worker 'tools/.venv/bin/python tools/riegeli_cpp_worker.py' \\
      --pair '*/ours_write_file=*/cpp_write' --pair '*/ours_read_file=*/cpp_read' --rounds 21
      ours against C++, every cell's two sides back to back in each of 21 rounds
  bench-run interleave --suite booklet_ops_interleaved --worker ... --only '*/50000' --at-least 20
  bench-run interleave --suite booklet_ab \\
      --worker-as 'before=../before/target/release/examples/ops_worker 50000' \\
      --worker-as 'after=target/release/examples/ops_worker 50000' \\
      --pair 'after/*=before/*' --only 'after/*/random_read/*'
      a change against the build before it (a worktree at the old commit), paired

Each round runs one trial of every benchmark in a random order, the two sides of a pair back to
back in a random order, so both meet the machine's drift together. The run is recorded like any
other (its results are per-iteration medians of the counted rounds, every trial kept as a
sample); `bench-run ratio RUN --pair ...` reads it again later.

Worker protocol (JSON lines): the worker first prints
  {\"protocol\":\"bench-run-worker/1\",\"benchmarks\":[{\"id\":\"x/ours\",\"throughput\":{\"bytes\":N}}]}
then answers each {\"run\":\"x/ours\"} with {\"id\":\"x/ours\",\"iters\":K,\"ns\":T} (K iterations
it timed itself in T ns) or {\"id\":\"x/ours\",\"error\":\"why\"}; it exits when stdin closes.
Rust workers can use bench_worker::serve.
Exit codes: 0 done, 1 some median below --at-least, 2 error (nothing is recorded).";

const COMPARE_HELP: &str = concat!(
    "\
Examples:
  bench-run compare previous latest
      the newest run against the default baseline
  bench-run compare merge-base:origin/main latest --suite mathldbt_transport
      on a branch: the newest run against the run at the commit where the branch left origin/main

",
    run_refs!(),
    "
Exit codes: 0 compared, 2 error or runs of different suites."
);

const GATE_HELP: &str = concat!(
    "\
Examples:
  bench-run gate --base main --explain
      exit 1 on a regression of the newest run against the newest run at main's commit
  bench-run gate --base merge-base:origin/main
      on a pull request's branch: against the run at the commit where it left origin/main

",
    run_refs!(),
    "
Exit codes: 0 no regression, 1 regression, 2 error, incomparable runs, or a run recorded on a
busy machine (--allow-busy judges it anyway)."
);

const LOG_HELP: &str = concat!(
    "\
Examples:
  bench-run log 6 --title 'Two threads read pt 1.86x faster' \\
      --claim 'readspeed files, zstd: two threads over one 1.86 [1.77, 1.91] (bar 1.8: met)'
      append run #6's entry: its ratios first, then its largest significant changes
  bench-run log --dry-run
      print the latest run's entry instead of appending it (title and claim optional)
  bench-run log latest --base merge-base:origin/main --title 'Cache' --claim '...' \\
      --note 'the cache change' --rows 8
      deltas against the run at the commit where this branch left origin/main; 8 rows

An entry has the title and claim, the command stored in the ledger, the machine (in full only
in the first entry on it; later entries name its fingerprint), git, the baseline and at most
15 results: ratios held against a bar (`ratio` and `speedup` metrics), then the largest
significant changes against the baseline, then one result of each benchmark group in turn. It
ends with `bench-run show N`, which has all of them.

",
    run_refs!()
);

const PROFILE_EXAMPLES: &str = "\
Examples:
  bench-run profile --suite tiny_suite --benchmark '^fnv$'
      where fnv spends its time in the working tree: top functions, flamegraph in the ledger
  bench-run profile --suite booklet_ops --rev v0.3.0 --seconds 10 --format json
      a release's profiles, ten seconds of sampling per benchmark
  bench-run ab --suite tiny_suite --base main --profile-regressions
      ab's verdict, then base and head profiles of every regression and their difference

Wall-time suites run each benchmark in criterion's --profile-time mode under
`perf record -e cpu-clock --call-graph dwarf` (Debian's linux-perf; perf_event_paranoid at most 2);
instruction-count (gungraun) suites run under callgrind, whose per-function counts are exact.
The run is recorded (source profile, its results the profiles' totals) with each benchmark's
folded stacks, flamegraph SVG and top functions as artifacts; `bench-web` shows them on the run
page.";

const BISECT_EXAMPLES: &str = "\
Examples:
  bench-run bisect --suite tiny_suite --good v1.2.0 --bad main --benchmark '^fnv$'
      which commit between v1.2.0 and main made fnv slower
  bench-run bisect --suite mathldbt_transport --good HEAD~32 --bad HEAD --threshold 3 \\
      --summary bisect.md
      a commit is bad when more than 3% slower than HEAD~32; the result as markdown too

First the good and bad ends are measured against each other in paired rounds: the benchmarks
bad confirms slower are the targets (exit 2 when none is: nothing to bisect). Each step then
builds the commit nearest the middle of the open range (first-parent commits, one checkout in
the build home, as `ab`) and measures it against good in paired rounds: it is bad when the
interval of its change lies above the threshold, good when below; an unclear step gets more
rounds, then the search stops and says which range is left. A commit whose bench executable is
byte-identical to a judged commit's takes that verdict unmeasured; a commit that does not build
is skipped and named. At the end the culprit's parent is measured against the culprit, and the
culprit's effect is set beside the whole range's (under 70% of it: the range holds more than
one change). Every step is recorded (sources bisect-base and bisect-head, with pairings).

Exit status: 0 culprit found, 1 range left unresolved, 2 nothing to bisect or bad input.";

const AB_EXAMPLES: &str = "\
Examples:
  bench-run ab --suite mathldbt_transport --base main
      the working tree (uncommitted changes included) against main
  bench-run ab --suite mathldbt_transport --base merge-base:origin/main --head HEAD
      a pull request: its branch against the commit where it left origin/main (the merge base
      of origin/main and HEAD, as `git merge-base origin/main HEAD` prints it)
  bench-run ab --suite tiny_suite --base v1.2.0 --head HEAD --summary summary.md
      two commits; the verdict also goes to summary.md as markdown
  bench-run ab --suite booklet_ops --base main -- 'random_read/.*'
      only the benchmarks criterion's filter selects
  bench-run ab --suite microbenches --base HEAD~1 --head HEAD --layouts 8
      eight function orders per side, for a suite whose benchmarks move with code layout

Both revisions are built one after the other from one checkout at one path, in a build home of
the repository's own (~/.cache/bench-run/<repo>-<hash>/, or $BENCH_RUN_BUILD_HOME): identical
source gives identical executables, and nothing is built into or left in the user's target/.
Identical executables are reported and not measured. Each side is then relinked in K function
orders (--layouts, lld's --shuffle-sections; no recompiling), and each process gets an
environment of a random size, because links of the same code can differ in speed by tens of
percent. Each round runs the base and the head once each under one layout, in a balanced random
order; a benchmark's verdict comes from the rounds' head/base ratios (exact sign test,
order-statistic interval), with Holm's correction across the suite, and a change within the
benchmark's layout spread (how far its layouts were apart) is reported as layout-sensitive,
not as a regression (--layout-strict keeps it). A neighbour's load hits both sides of a round
alike, so the verdict holds on a busy machine. Both sides are recorded (sources ab-base and
ab-head) with their layouts; `bench-run compare` on them repeats the paired verdict.
Exit codes: 0 no regression, 1 regression, 2 error or unusable input.";

/// Top-level arguments.
#[derive(Debug, Parser)]
#[command(
    name = "bench-run",
    version,
    about = ABOUT,
    after_help = EXAMPLES,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    /// The ledger: a SQLite file path (default: results/ledger.sqlite at the workspace root) or
    /// a PostgreSQL URL, e.g. postgres://bench@db.example.com/bench or, on a unix socket,
    /// postgres://bench@localhost/bench?host=/run/postgresql.
    #[arg(long, global = true, env = "BENCH_DB", value_name = "PATH|URL")]
    pub db: Option<String>,

    /// The project on a team server that --push, --server and push --to address (default:
    /// the repository's name, from its `origin` remote; without one, the server's default
    /// project). A local ledger has one project and ignores it.
    #[arg(long, global = true, env = "BENCH_PROJECT", value_name = "NAME")]
    pub project: Option<String>,

    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub run: RunArgs,
}

/// Running a suite.
#[derive(Debug, Args, Clone, Default)]
pub struct RunArgs {
    /// Bench target to run (a `[[bench]]` of any workspace member).
    #[arg(long, value_name = "NAME", required = true)]
    pub suite: Option<String>,

    /// Baseline for the delta table (default: the previous run of the suite on this machine):
    /// an id, tag, git revision, or `merge-base:REV`, e.g. `merge-base:origin/main`.
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,

    /// Short warm-up and measurement (for smoke runs; not for decisions). The run is labelled
    /// quick only if the settings took effect (a suite may set its own sample size and times).
    #[arg(long)]
    pub quick: bool,

    #[command(flatten)]
    pub build: BuildArgs,

    /// After recording, push the run to a bench-web server (`POST URL/api/runs` with the bearer
    /// token in `BENCH_PUSH_TOKEN`); a failed push is a warning and the local run is kept.
    #[arg(long, value_name = "URL")]
    pub push: Option<String>,

    /// Output format of the delta table.
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutputFormat,

    #[command(flatten)]
    pub verdict: VerdictArgs,

    /// Arguments passed to criterion (after --).
    #[arg(last = true, value_name = "CRITERION ARGS")]
    pub criterion_args: Vec<String>,
}

/// How to find and build a suite: shared by `--suite`, `calibrate` and `ab`.
#[derive(Debug, Args, Clone, Default)]
pub struct BuildArgs {
    /// Package of the suite, when several have one of that name.
    #[arg(short = 'p', long, value_name = "PACKAGE")]
    pub package: Option<String>,

    /// Cargo features to enable.
    #[arg(short = 'F', long, value_delimiter = ',', value_name = "FEATURES")]
    pub features: Vec<String>,

    /// Enable all cargo features.
    #[arg(long)]
    pub all_features: bool,

    /// Disable default cargo features.
    #[arg(long)]
    pub no_default_features: bool,

    /// Cargo profile (default: bench).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,

    /// Run in the workspace containing this directory (default: the current directory). A suite
    /// not found there is looked for in separate workspaces below it (e.g. `benches/` with its
    /// own [workspace]).
    #[arg(short = 'C', long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,

    /// Also record this environment variable (repeatable).
    #[arg(long = "record-env", value_name = "NAME")]
    pub record_env: Vec<String>,
}

impl BuildArgs {
    /// The cargo options these flags select.
    pub fn options(&self) -> bench_runner::suite::BuildOptions {
        bench_runner::suite::BuildOptions {
            features: self.features.clone(),
            all_features: self.all_features,
            no_default_features: self.no_default_features,
            profile: self.profile.clone(),
        }
    }

    /// The directory the workspace is looked for from: `-C DIR` (relative to `cwd`) or `cwd`.
    pub fn start_dir(&self, cwd: &std::path::Path) -> PathBuf {
        self.workspace
            .as_deref()
            .map_or_else(|| cwd.to_owned(), |d| cwd.join(d))
    }
}

/// Multiple-comparison correction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CorrectionArg {
    /// Holm step-down (controls the family-wise error rate).
    Holm,
    /// Benjamini-Hochberg (controls the false discovery rate).
    Bh,
    /// No correction.
    None,
}

/// Settings of the verdict.
#[derive(Debug, Args, Clone, Default)]
pub struct VerdictArgs {
    /// Smallest change (percent) that can count as a regression or improvement [default: 3;
    /// rows judged on exact values, such as instruction counts, use 0.5].
    #[arg(long, value_name = "PCT")]
    pub threshold: Option<f64>,

    /// Threshold for benchmarks matching a pattern, e.g. `decode_*=10` (repeatable; `*` wildcards).
    #[arg(long = "threshold-for", value_name = "PATTERN=PCT")]
    pub threshold_for: Vec<String>,

    /// Benchmarks to ignore (repeatable; `*` wildcards).
    #[arg(long, value_name = "PATTERN")]
    pub ignore: Vec<String>,

    /// File of benchmarks (one `*` pattern per line, `#` comments) that are compared and shown
    /// but never fail the gate (default: `.bench-quarantine` at the workspace root, if present).
    #[arg(long, value_name = "FILE")]
    pub quarantine: Option<PathBuf>,

    /// Significance level after correction [default: 0.05].
    #[arg(long, value_name = "ALPHA")]
    pub alpha: Option<f64>,

    /// Multiple-comparison correction across the suite [default: holm].
    #[arg(long, value_enum, value_name = "METHOD")]
    pub correction: Option<CorrectionArg>,

    /// Print every input of each verdict.
    #[arg(long)]
    pub explain: bool,

    /// Paired runs under several layouts: keep a regression or improvement that lies within
    /// the benchmark's layout spread, instead of reporting it as layout-sensitive.
    #[arg(long)]
    pub layout_strict: bool,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List runs, newest first.
    #[command(after_help = "Examples:
  bench-run list --suite mathldbt_transport --limit 10
  bench-run list --branch main --format json")]
    List {
        /// Only this suite.
        #[arg(long)]
        suite: Option<String>,
        /// Only this branch.
        #[arg(long)]
        branch: Option<String>,
        /// At most this many runs.
        #[arg(long, default_value_t = 50)]
        limit: i64,
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        format: OutputFormat,
    },
    /// Show one run: provenance and every result, with how many raw samples each stored
    /// (`bench-run export RUN --format json` prints the samples themselves).
    #[command(after_help = "Examples:
  bench-run show latest
  bench-run show 42 --format json      # samples as counts
  bench-run export 42 --format json    # the raw samples themselves")]
    Show {
        /// The run.
        run: String,
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        format: OutputFormat,
    },
    /// Compare two runs: before/after table with confidence intervals and verdicts.
    #[command(after_help = COMPARE_HELP)]
    Compare {
        /// The baseline run (id, `latest`, `previous`, tag, git revision, or `merge-base:REV`,
        /// e.g. `merge-base:origin/main`: the run at the merge base of REV and HEAD).
        base: String,
        /// The run to judge.
        head: String,
        /// Suite, to narrow `latest`, `previous` and git revisions (default: any suite).
        #[arg(long)]
        suite: Option<String>,
        /// Compare runs of different suites (refused otherwise; other differences between the
        /// runs are only warnings here).
        #[arg(long)]
        allow_mismatch: bool,
        /// Judge the runs of this bench-web server's ledger (its `GET /api/evidence`)
        /// instead of the local one; a --private server needs BENCH_READ_TOKEN.
        #[arg(long, env = "BENCH_SERVER", value_name = "URL")]
        server: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        format: OutputFormat,
        #[command(flatten)]
        verdict: VerdictArgs,
    },
    /// Exit 1 if HEAD regressed against BASE, 2 if they cannot be compared.
    #[command(after_help = GATE_HELP)]
    Gate {
        /// The baseline run (id, tag, git revision, `previous`, or `merge-base:REV`, e.g.
        /// `merge-base:origin/main`: the run at the merge base of REV and HEAD).
        #[arg(long)]
        base: String,
        /// The run to judge.
        #[arg(long, default_value = "latest")]
        head: String,
        /// Suite, to narrow `latest`, `previous` and git revisions (default: any suite).
        #[arg(long)]
        suite: Option<String>,
        /// Compare even across machines, toolchains, profiles or features.
        #[arg(long)]
        allow_mismatch: bool,
        /// Judge runs recorded on a busy machine (other processes or the hypervisor took CPU
        /// time while they measured) instead of refusing them; the report still warns.
        #[arg(long)]
        allow_busy: bool,
        /// When regressions are found, re-run only the flagged benchmarks N more times (new
        /// runs of the head's suite in the workspace of the current directory) and fail only
        /// if a regression holds in more than half of them.
        #[arg(long, value_name = "N", default_value_t = 0)]
        confirm: u32,
        /// Judge the runs of this bench-web server's ledger (its `GET /api/evidence`)
        /// instead of the local one; a --private server needs BENCH_READ_TOKEN.
        #[arg(long, env = "BENCH_SERVER", value_name = "URL")]
        server: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        format: OutputFormat,
        #[command(flatten)]
        verdict: VerdictArgs,
    },
    /// How many times faster our benchmarks are than an anchor's, over one or more runs.
    #[command(after_help = RATIO_EXAMPLES)]
    Ratio {
        /// Our runs (one or more).
        #[arg(required = true, value_name = "RUN")]
        runs: Vec<String>,
        /// A run holding the anchor's results (repeatable). Without it, the anchors are other
        /// benchmarks of our runs (name them with --pair), compared within each run.
        #[arg(long, value_name = "RUN")]
        anchor: Vec<String>,
        /// Which anchor benchmark each of ours faces: `OURS=ANCHOR`, one `*` on each side at
        /// most, e.g. `*/ours_read=*/cpp_read` (repeatable; default: the same name).
        #[arg(long, value_name = "OURS=ANCHOR")]
        pair: Vec<String>,
        /// Only our benchmarks matching this (repeatable; `*` wildcards).
        #[arg(long, value_name = "PATTERN")]
        only: Vec<String>,
        /// The bar: exit 1 when a median ratio is below it.
        #[arg(long, value_name = "X")]
        at_least: Option<f64>,
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        format: OutputFormat,
    },
    /// Run our benchmarks and an anchor's in alternation, trial by trial, through worker
    /// processes; record the run and print the paired ratios.
    #[command(after_help = INTERLEAVE_EXAMPLES)]
    Interleave {
        /// A worker command, run with `sh -c` from the current directory (repeatable; usually
        /// ours and the anchor's). It speaks the `bench-run-worker/1` protocol on stdin/stdout.
        #[arg(long, required_unless_present = "worker_as", value_name = "COMMAND")]
        worker: Vec<String>,
        /// A worker whose benchmark names get `LABEL/` in front (repeatable): two builds of the
        /// same worker, say before and after a change, can then run side by side and be paired
        /// with `--pair 'after/*=before/*'`.
        #[arg(long, value_name = "LABEL=COMMAND")]
        worker_as: Vec<String>,
        /// Which anchor benchmark each of ours faces: `OURS=ANCHOR`, one `*` on each side at
        /// most (repeatable). Paired benchmarks run back to back in each round; an anchor may
        /// face several of ours (it still runs once a round).
        #[arg(long, value_name = "OURS=ANCHOR")]
        pair: Vec<String>,
        /// Only benchmarks matching this, with their pair (repeatable; `*` wildcards).
        #[arg(long, value_name = "PATTERN")]
        only: Vec<String>,
        /// Counted rounds: every benchmark runs one trial per round.
        #[arg(long, default_value_t = 15)]
        rounds: usize,
        /// Rounds run first and not counted (warm caches, lazily built state, CPU clocks).
        #[arg(long, default_value_t = 1)]
        warmup_rounds: usize,
        /// Seed of the random order (the run records it, so an order can be replayed).
        #[arg(long)]
        seed: Option<u64>,
        /// Give up (and record nothing) when a worker takes longer than this to greet or to
        /// answer one trial.
        #[arg(long, default_value_t = 600, value_name = "SECONDS")]
        timeout: u64,
        /// The bar: exit 1 when a median paired ratio is below it.
        #[arg(long, value_name = "X")]
        at_least: Option<f64>,
        /// Output format of the ratios.
        #[arg(long, value_enum, default_value = "table")]
        format: OutputFormat,
        #[command(flatten)]
        record: ImportArgs,
    },
    /// Paired A/B: build the suite at two revisions and run their bench executables
    /// alternately, one process per side per round; judge each benchmark on the rounds.
    #[command(after_help = AB_EXAMPLES)]
    Ab(AbArgs),
    /// Find the commit that made a suite slower: build the first-parent commits between a good
    /// and a bad revision and test midpoints with paired rounds against the good one.
    #[command(after_help = BISECT_EXAMPLES)]
    Bisect(BisectArgs),
    /// Where the time goes: profile a suite's benchmarks (perf on criterion's --profile-time,
    /// callgrind for gungraun suites) and store the profiles and flamegraphs in the ledger.
    #[command(after_help = PROFILE_EXAMPLES)]
    Profile(ProfileArgs),
    /// Run a suite repeatedly to learn its run-to-run noise on this machine.
    #[command(after_help = "Examples:
  bench-run calibrate --suite mathldbt_transport --runs 8
  bench-run calibrate --suite microbenches --layouts 8 --runs 4
      how far each benchmark moves between links of the same code in 8 function orders
      (4 processes per layout): which benchmarks cannot carry a small threshold

With --layouts K nothing is recorded: the working tree is built once in ab's build home, linked
in K shuffled function orders, and each round runs every layout once, in a random order, with
ab's short budget and environment pad. Per benchmark it prints each layout's median, the layout
spread (max over min of those medians) and the process noise within one layout; `bench-run ab`
calls a change within the spread layout-sensitive, not a regression.")]
    Calibrate {
        /// Number of runs (with --layouts: rounds, each running every layout once).
        #[arg(long, default_value_t = 5)]
        runs: u32,
        /// Measure the suite's layout sensitivity over K function orders instead of its
        /// run-to-run noise (nothing is recorded).
        #[arg(long, value_name = "K")]
        layouts: Option<usize>,
        /// Seed of the layouts and the order of each round (default: from the clock).
        #[arg(long, requires = "layouts")]
        seed: Option<u64>,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Push recorded runs to a bench-web server (again): idempotent, so a run the server
    /// already holds is not stored twice. The token is BENCH_PUSH_TOKEN.
    #[command(after_help = "Examples:
  bench-run push latest --to https://bench.example/
  bench-run push 41 42 --to https://bench.example/     # both sides of an ab run")]
    Push {
        /// The runs.
        #[arg(required = true)]
        runs: Vec<String>,
        /// The server.
        #[arg(long, value_name = "URL")]
        to: String,
    },
    /// Name a run (the name then works wherever a run is expected).
    #[command(after_help = "Examples:
  bench-run tag latest v1.2.0
  bench-run compare v1.2.0 latest")]
    Tag {
        /// The run.
        run: String,
        /// The name.
        name: String,
    },
    /// Attach a note to a run (how a stored result is corrected).
    #[command(after_help = "Examples:
  bench-run annotate 42 'laptop on battery: ignore the decode numbers'")]
    Annotate {
        /// The run.
        run: String,
        /// The note.
        text: String,
    },
    /// Append a run's entry to BENCHMARKS.md (never rewrites existing text).
    #[command(after_help = LOG_HELP)]
    Log {
        /// The run (default: latest).
        #[arg(default_value = "latest")]
        run: String,
        /// The entry's title, one line: what was measured, e.g. 'Two threads read pt 1.86x
        /// faster' (required unless --dry-run). The heading adds the run's id and suite unless
        /// the title names the run ('run #N').
        #[arg(long, value_name = "TEXT", required_unless_present = "dry_run",
              value_parser = parse_one_line)]
        title: Option<String>,
        /// What the run shows, in one line, with the numbers and the bar it is held against
        /// (required unless --dry-run).
        #[arg(long, value_name = "TEXT", required_unless_present = "dry_run",
              value_parser = parse_one_line)]
        claim: Option<String>,
        /// The log file (default: BENCHMARKS.md at the workspace root).
        #[arg(long, value_name = "PATH")]
        file: Option<PathBuf>,
        /// A note to add to the entry (repeatable).
        #[arg(long)]
        note: Vec<String>,
        /// Baseline for the deltas (default: the previous run of the suite on the same machine):
        /// an id, tag, git revision, or `merge-base:REV`, e.g. `merge-base:origin/main`.
        #[arg(long, value_name = "REF")]
        base: Option<String>,
        /// Choose rows only among the results whose `BENCHMARK` or `BENCHMARK:METRIC` matches
        /// PATTERN (`*` matches anything; repeatable).
        #[arg(long, value_name = "PATTERN")]
        only: Vec<String>,
        /// Show at most N results (15 at most).
        #[arg(long, value_name = "N", default_value_t = bench_report::log::MAX_ROWS,
              value_parser = parse_log_rows)]
        rows: usize,
        /// Print the entry instead of appending it.
        #[arg(long)]
        dry_run: bool,
    },
    /// Record results produced by another tool, or kept by hand in a markdown log.
    #[command(after_help = "Examples:
  bench-run import criterion target/criterion --suite decode
  bench-run import bmf sizes.json --suite wire --direction ratio=higher
  bench-run import hyperfine hyperfine.json --suite cli_startup
  bench-run import markdown-log BENCHMARKS.md")]
    Import {
        #[command(subcommand)]
        source: ImportSource,
    },
    /// Export a run.
    #[command(after_help = "Examples:
  bench-run export latest > run.json
  bench-run export 42 --format csv > run42.csv")]
    Export {
        /// The run.
        run: String,
        /// Export format.
        #[arg(long, value_enum, default_value = "json")]
        format: ExportFormat,
    },
    /// Work on whole ledgers.
    #[command(after_help = "Examples:
  bench-run ledger copy --from results/ledger.sqlite --to postgres://bench@db/bench")]
    Ledger {
        #[command(subcommand)]
        command: LedgerCommand,
    },
}

/// What to do with whole ledgers.
#[derive(Debug, Subcommand)]
pub enum LedgerCommand {
    /// Copy every run (results, raw samples, conditions, annotations), pairing and tag of one
    /// ledger into another, on any engines: how a local history moves to a team's server.
    ///
    /// Runs keep their recording time and provenance under new ids; each copy remembers where
    /// it came from, so running the copy again adds only what is new. Nothing in the
    /// destination is changed: a tag name it already uses for a run of its own is left alone
    /// and reported.
    #[command(after_help = "Examples:
  bench-run ledger copy --from results/ledger.sqlite --to postgres://bench@db/bench
  bench-run ledger copy --from postgres://bench@db/bench --to backup.sqlite --format json
  bench-run ledger copy --from postgres://bench@db/bench --to quick-xml.sqlite --project quick-xml
      one project of a team's server (into the same project of the destination)")]
    Copy {
        /// The ledger to copy from (a SQLite path or a postgres:// URL); opened read-only.
        #[arg(long, value_name = "PATH|URL")]
        from: String,
        /// The ledger to copy into (created and migrated if needed).
        #[arg(long, value_name = "PATH|URL")]
        to: String,
        /// Output format of the report.
        #[arg(long, value_enum, default_value = "table")]
        format: OutputFormat,
    },
}

/// Arguments of `bench-run profile`.
#[derive(Debug, Args, Clone)]
pub struct ProfileArgs {
    /// Bench target to run (a `[[bench]]` of any workspace member).
    #[arg(long, value_name = "NAME")]
    pub suite: String,

    /// Only benchmarks matching this criterion filter (a regex) [default: every benchmark].
    #[arg(long, value_name = "PATTERN")]
    pub benchmark: Option<String>,

    /// The revision to profile, built in the build home [default: the working tree].
    #[arg(long, value_name = "REV")]
    pub rev: Option<String>,

    /// Seconds of criterion's --profile-time per benchmark (wall-time suites).
    #[arg(long, default_value_t = 5, value_name = "SECONDS")]
    pub seconds: u32,

    /// Where the build goes (as `ab --build-home`).
    #[arg(long, value_name = "DIR")]
    pub build_home: Option<PathBuf>,

    /// Also write the top functions as markdown to this file.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,

    /// After recording, push the run and its profiles to this bench-web server (token in
    /// BENCH_PUSH_TOKEN).
    #[arg(long, visible_alias = "server", value_name = "URL")]
    pub push: Option<String>,

    #[command(flatten)]
    pub build: BuildArgs,

    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutputFormat,
}

/// Arguments of `bench-run bisect`.
#[derive(Debug, Args, Clone)]
pub struct BisectArgs {
    /// Bench target to run (a `[[bench]]` of any workspace member).
    #[arg(long, value_name = "NAME")]
    pub suite: String,

    /// A revision where the suite was fast (an ancestor of --bad on its first-parent line).
    #[arg(long, value_name = "REV")]
    pub good: String,

    /// A revision where it is slow.
    #[arg(long, value_name = "REV")]
    pub bad: String,

    /// Only benchmarks matching this criterion filter (a regex, passed to every process)
    /// [default: every benchmark the good and bad ends confirm slower].
    #[arg(long, value_name = "PATTERN")]
    pub benchmark: Option<String>,

    /// A commit is bad when it is slower than good by more than this (percent) [default: half
    /// the whole range's slowdown, as the first step measures it].
    #[arg(long, value_name = "PCT")]
    pub threshold: Option<f64>,

    /// Rounds per step at first; a step that is not yet clear gets as many again, up to four
    /// times as many [default: 8; the first step as many as `ab` would run].
    #[arg(long, value_name = "N")]
    pub rounds: Option<usize>,

    /// Seed of the side orders and the layouts (default: from the clock; recorded either way).
    #[arg(long)]
    pub seed: Option<u64>,

    /// Function orders per commit (as `ab --layouts`) [default: 4].
    #[arg(long, value_name = "K")]
    pub layouts: Option<usize>,

    /// Where the builds go (as `ab --build-home`).
    #[arg(long, value_name = "DIR")]
    pub build_home: Option<PathBuf>,

    /// Also write the result as markdown to this file (for an issue comment).
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,

    /// After recording, push every step's pair of runs to this bench-web server (token in
    /// BENCH_PUSH_TOKEN).
    #[arg(long, visible_alias = "server", value_name = "URL")]
    pub push: Option<String>,

    #[command(flatten)]
    pub build: BuildArgs,

    /// Output format of the result.
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutputFormat,

    /// Arguments passed to every criterion process (after --), as `ab` takes them.
    #[arg(last = true, value_name = "CRITERION ARGS")]
    pub criterion_args: Vec<String>,
}

/// Arguments of `bench-run ab`.
#[derive(Debug, Args, Clone)]
pub struct AbArgs {
    /// Bench target to run (a `[[bench]]` of any workspace member).
    #[arg(long, value_name = "NAME")]
    pub suite: String,

    /// The baseline revision: a branch, tag or commit, or `merge-base:REV`, the merge base of
    /// REV and HEAD (e.g. `merge-base:origin/main`).
    #[arg(long, value_name = "REV")]
    pub base: String,

    /// The revision to judge (default: the working tree, uncommitted changes included).
    #[arg(long, value_name = "REV")]
    pub head: Option<String>,

    /// Rounds; each runs one base and one head process (default: enough for the suite's size
    /// to reach a verdict under Holm's correction with one round out of line, at least 10).
    #[arg(long, value_name = "N")]
    pub rounds: Option<usize>,

    /// Seed of the side order and the layouts (default: from the clock; recorded either way).
    #[arg(long)]
    pub seed: Option<u64>,

    /// Function orders per side: each side is relinked K times with a shuffled order and the
    /// rounds rotate through them (1: the linker's own order only) [default: 4; 1 for
    /// instruction-count suites, whose counts do not depend on layout].
    #[arg(long, value_name = "K")]
    pub layouts: Option<usize>,

    /// Where the builds go [default: $BENCH_RUN_BUILD_HOME, else ~/.cache/bench-run]; each
    /// repository gets its own directory there, reused by later runs.
    #[arg(long, value_name = "DIR")]
    pub build_home: Option<PathBuf>,

    /// Also write the verdict as markdown to this file (for a PR comment or
    /// `$GITHUB_STEP_SUMMARY`).
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,

    /// After recording, push both sides and their pairing to this bench-web server (token in
    /// BENCH_PUSH_TOKEN); the summary then links the server's compare page. The verdict needs
    /// no history (it comes from the rounds), so nothing else is read from the server.
    #[arg(long, visible_alias = "server", value_name = "URL")]
    pub push: Option<String>,

    #[command(flatten)]
    pub build: BuildArgs,

    /// Output format of the verdict table.
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutputFormat,

    /// After the verdict, profile base and head of every benchmark judged a regression and
    /// store both profiles, their function diff and the differential flamegraph (`--profile`
    /// is cargo's profile, as in `cargo bench --profile`).
    #[arg(long)]
    pub profile_regressions: bool,

    /// Profile base and head of this benchmark (its full id; repeatable), regression or not.
    #[arg(long, value_name = "ID")]
    pub profile_benchmark: Vec<String>,

    /// Seconds of criterion's --profile-time per benchmark and side, when profiling.
    #[arg(long, default_value_t = 5, value_name = "SECONDS")]
    pub profile_time: u32,

    #[command(flatten)]
    pub verdict: VerdictArgs,

    /// Arguments passed to every criterion process (after --): a filter, or a budget that
    /// replaces ab's own (--warm-up-time 0.2 --measurement-time 0.5 --sample-size 100).
    #[arg(last = true, value_name = "CRITERION ARGS")]
    pub criterion_args: Vec<String>,
}

/// Options shared by imports.
#[derive(Debug, Args, Clone)]
pub struct ImportArgs {
    /// Suite name to record the results under.
    #[arg(long)]
    pub suite: String,
    /// Also record this environment variable (repeatable).
    #[arg(long = "record-env", value_name = "NAME")]
    pub record_env: Vec<String>,

    /// After recording, push the run to a bench-web server (`POST URL/api/runs` with the bearer
    /// token in `BENCH_PUSH_TOKEN`); a failed push is a warning and the local run is kept.
    #[arg(long, value_name = "URL")]
    pub push: Option<String>,
}

/// What to import.
#[derive(Debug, Subcommand)]
pub enum ImportSource {
    /// A criterion output directory (e.g. target/criterion).
    #[command(after_help = "Examples:
  cargo bench --bench decode && bench-run import criterion target/criterion --suite decode")]
    Criterion {
        /// The directory.
        dir: PathBuf,
        #[command(flatten)]
        args: ImportArgs,
    },
    /// A Bencher Metric Format JSON file.
    #[command(after_help = "Examples:
  bench-run import bmf sizes.json --suite wire
  some-tool --bmf | bench-run import bmf - --suite wire --direction ratio=higher")]
    Bmf {
        /// The file (`-` for standard input).
        file: PathBuf,
        /// Direction of a measure, e.g. `ratio=higher` (repeatable).
        #[arg(long, value_name = "MEASURE=lower|higher")]
        direction: Vec<String>,
        #[command(flatten)]
        args: ImportArgs,
    },
    /// A `hyperfine --export-json` file.
    #[command(after_help = "Examples:
  hyperfine --export-json hf.json 'target/release/tool input' && bench-run import hyperfine hf.json --suite cli")]
    Hyperfine {
        /// The file.
        file: PathBuf,
        #[command(flatten)]
        args: ImportArgs,
    },
    /// `cargo criterion --message-format=json` output.
    #[command(after_help = "Examples:
  cargo criterion --message-format=json | bench-run import cargo-criterion - --suite decode")]
    CargoCriterion {
        /// The file (`-` for standard input).
        file: PathBuf,
        #[command(flatten)]
        args: ImportArgs,
    },
    /// `cargo +nightly bench` output of `#[bench]` functions (libtest's `ns/iter (+/- ...)`
    /// lines).
    ///
    /// Each benchmark is recorded as a time in ns: the median libtest prints, with its `+/-`
    /// (the largest sample minus the smallest, not a confidence interval) kept as the `range`
    /// statistic. libtest prints no samples, so the results carry none. `= N MB/s` is checked
    /// but not recorded: the bytes per iteration behind it are not printed. The whole stdout is
    /// needed (each `running N tests` ... `test result:` block must be complete); cargo's
    /// progress on stderr and compiler output are skipped.
    #[command(after_help = "Examples:
  cargo +nightly bench > bench.txt && bench-run import libtest bench.txt --suite parser
  cargo +nightly bench --bench decode | bench-run import libtest - --suite decode")]
    Libtest {
        /// The file (`-` for standard input).
        file: PathBuf,
        #[command(flatten)]
        args: ImportArgs,
    },
    /// A hand-kept markdown log of results (a `BENCHMARKS.md` written before the ledger, in the
    /// layout of seed 002), so that a project's existing history shows on the trend pages.
    ///
    /// Each `## ` entry becomes one run per suite it measured (the `--bench`/`--bin` of its
    /// commands, or a heading that names one in backticks), recorded at the entry's `Date
    /// (UTC)` with its machine, toolchain, commands, profile and features, source
    /// `import-markdown-log`, and the rest of the entry (notes, operator, corrections) as an
    /// annotation. Results are read from bullets under a `Results ...:` label and from tables:
    /// times stated as medians become metric `time` in ns under criterion's ids
    /// (`suite/name/rows`, so the log's history continues in the live suite's trend); a value
    /// written `~` is kept as written and marked `approximate_median`; byte counts and other
    /// columns keep their names; delta columns are left out; templates are skipped. Seed 002's
    /// names that its live suites spell otherwise are recorded under the live ids and units:
    /// `encode_zstd_ws (level=3)` as `encode_zstd_ws`, "Owned"/"Fast-path encode" as
    /// `encode_*_ws`, the estimator's rows as `transport_pipeline/<payload>_<compression>/<rows>`
    /// with its times as `*_s` in seconds.
    ///
    /// A log with any line that cannot be read is refused whole, nothing recorded, every such
    /// line listed with its number; --skip-unreadable records the readable entries and lists
    /// the others. Importing again records nothing twice: each run is keyed by its entry's own
    /// text, so a log that grew records only its new entries. Runs are not pushed: a server
    /// records a push at the time it arrives, not at the entry's date.
    #[command(
        alias = "mdlog",
        after_help = "Examples:
  bench-run import markdown-log BENCHMARKS.md
  bench-run import markdown-log old/BENCHMARKS.md --skip-unreadable --format json
  bench-run list --suite mathldbt_transport    # the imported runs, at their own dates"
    )]
    MarkdownLog {
        /// The log (`-` for standard input).
        file: PathBuf,
        /// Record the entries that can be read and list the others, instead of refusing the
        /// whole log.
        #[arg(long)]
        skip_unreadable: bool,
        /// Output format of the list of runs.
        #[arg(long, value_enum, default_value = "table")]
        format: OutputFormat,
    },
}

/// `log --rows`: a count from 0 to the entry's limit.
fn parse_log_rows(text: &str) -> Result<usize, String> {
    let max = bench_report::log::MAX_ROWS;
    match text.parse::<usize>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!("expected a number of rows from 0 to {max}")),
    }
}

/// `log --title` and `--claim`: one line of text (a heading and a sentence of the entry).
fn parse_one_line(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.is_empty() {
        Err("expected one line of text, got nothing".to_owned())
    } else if text.contains(['\n', '\r']) {
        Err("expected one line of text: it holds a line break".to_owned())
    } else {
        Ok(text.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every subcommand, nested ones included, with its path (`import bmf`).
    fn subcommands(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
        for sub in cmd.get_subcommands() {
            let name = format!("{path} {}", sub.get_name()).trim().to_owned();
            out.push((name.clone(), sub.clone()));
            subcommands(sub, &name, out);
        }
    }

    #[test]
    fn every_subcommand_help_has_examples() {
        let mut all = Vec::new();
        subcommands(&Cli::command(), "", &mut all);
        assert!(all.len() > 15, "{}", all.len());
        for (name, mut cmd) in all {
            if name.ends_with("help") {
                continue;
            }
            let help = cmd.render_long_help().to_string();
            assert!(
                help.contains("Examples:"),
                "`{name} --help` has no examples:\n{help}"
            );
        }
    }

    #[test]
    fn compare_and_gate_help_show_defaults() {
        let mut cli = Cli::command();
        for name in ["compare", "gate"] {
            let help = cli
                .find_subcommand_mut(name)
                .map(|c| c.render_long_help().to_string())
                .unwrap_or_default();
            for default in [
                "[default: table]",
                "[default: 3;",
                "[default: 0.05]",
                "[default: holm]",
            ] {
                assert!(
                    help.contains(default),
                    "`{name} --help` lacks {default}:\n{help}"
                );
            }
        }
        let gate = cli
            .find_subcommand_mut("gate")
            .map(|c| c.render_long_help().to_string())
            .unwrap_or_default();
        assert!(gate.contains("[default: latest]"), "{gate}");
        assert!(gate.contains("[default: 0]"), "{gate}");
    }
}
