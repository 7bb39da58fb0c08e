//! The readspeed command, shared by `root-tool readspeed` and `root-readspeed` (seed 001's
//! command, as it prints it): the arguments, the run and the report.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use root_reader::page_cache;
use root_reader::readspeed::bottleneck::{self, Evidence};
use root_reader::readspeed::{self, Mode, Selection};

use crate::selection::resolve_regex;
use crate::selftest;

/// Seed 001's "Beware of caching", said where the numbers are read.
pub(crate) const CACHE_ADVICE: &str = "If the data is stored on a local disk, the operating system \
may serve all or part of it from memory after the first read: a second run then measures memory, \
not the storage. If in real life the data is read only once in a while, clear the cache first: \
--evict-cache drops these files' pages (no superuser needed), or drop every cached page with \
`echo 3 > /proc/sys/vm/drop_caches` as the superuser.";

/// What `readspeed` takes.
#[derive(Args)]
pub(crate) struct ReadspeedArgs {
    /// Files to read.
    #[arg(long, num_args = 1.., required_unless_present = "test")]
    pub files: Vec<PathBuf>,
    /// Trees: one name for every file, or one per file (as rootreadspeed).
    #[arg(long, num_args = 1.., required_unless_present = "test")]
    pub trees: Vec<String>,
    /// Branches: full paths, column names, or names no other branch has (as `dump`).
    #[arg(long, num_args = 1.., group = "sel")]
    pub branches: Vec<String>,
    /// Regular expressions selecting branches (matched against each branch's own name and
    /// its full path).
    #[arg(long, num_args = 1.., group = "sel")]
    pub branches_regex: Vec<String>,
    /// Every readable branch.
    #[arg(long, group = "sel")]
    pub all_branches: bool,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Time only the decompression of the same baskets, preloaded in memory.
    #[arg(long, group = "mode")]
    pub decompress_only: bool,
    /// Time the decompression of the preloaded baskets plus one copy of each payload (the
    /// floor of any reader that hands out values in its own memory).
    #[arg(long, group = "mode")]
    pub decompress_copy: bool,
    /// Time reading the baskets from the files as the full read does, plus one copy of each
    /// payload and one end per entry where entries vary in size (per item in vector<string>
    /// and vector<vector<T>>), without decoding (the floor of any reader of the files that
    /// hands out entries in its own memory). On RNTuples: each page read, checked and
    /// decompressed as the full read does, then copied once.
    #[arg(long, group = "mode")]
    pub read_copy: bool,
    /// Time reading the baskets from the files as the full read does, plus finding where
    /// each string starts (each item in vector<string> and vector<vector<T>>), nothing
    /// checked or copied, one at a time (what finding the strings costs a reader that lends
    /// them where they lie).
    #[arg(long, group = "mode")]
    pub read_find: bool,
    /// Time reading the baskets from the files as the full read does and decompressing
    /// them, nothing else (the floor of any reader of the files).
    #[arg(long, group = "mode")]
    pub read_decompress: bool,
    /// Time reading and decompressing as --read-decompress does, plus touching what any
    /// reader of every entry must: one byte of every 64-byte line of the entries (of
    /// char*, std::string and TString branches, each entry's length byte instead), and
    /// each basket's entry-offset table, its starts converted; summed, nothing else (the
    /// floor of any reader of the entries).
    #[arg(long, group = "mode")]
    pub read_touch: bool,
    /// The full read, with the strings of char*, std::string, TString and vector<string>
    /// branches copied into columns of their own (as `dump` and the library's column reads
    /// return them) instead of checked and handed out where they lie in the decompressed
    /// basket.
    #[arg(long, group = "mode")]
    pub copy_strings: bool,
    /// Also time each basket's stages apart and report where the time went: reading the
    /// records, decompressing them, reading their entry-offset tables, decoding the
    /// entries (in thread-seconds; five clock reads a basket, so the stages add up to a
    /// little more than an untimed run).
    #[arg(long)]
    pub stages: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = SpeedFormat::Text)]
    pub format: SpeedFormat,
    /// Benchmark name used in `--format bmf`.
    #[arg(long, default_value = "root-tool/readspeed")]
    pub bmf_name: String,
    /// Check this build on this machine instead: read the fixtures built into the tool
    /// (written by ROOT 6.40) in every mode on one and two threads, and compare the bytes
    /// read with what ROOT's rootreadspeed reports for them; exits 1 on any difference.
    #[arg(long, exclusive = true)]
    pub test: bool,
    /// Drop the files' pages from the operating system's page cache before the run, so that
    /// it reads from the storage (posix_fadvise DONTNEED; dirty pages are written back first).
    #[arg(long)]
    pub evict_cache: bool,
    /// The application's own wall-clock run time on the same data, in seconds: decides the
    /// first case of the bottleneck table (application logic).
    #[arg(long, value_name = "SECONDS")]
    pub app_real_time: Option<f64>,
    /// What the storage can deliver, in MB/s (MB of 2^20 bytes): decides the third case of the
    /// bottleneck table (decompression).
    #[arg(long, value_name = "MBPS")]
    pub storage_mb_s: Option<f64>,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum SpeedFormat {
    Text,
    Json,
    Bmf,
}

impl ReadspeedArgs {
    fn mode(&self) -> Mode {
        if self.decompress_only {
            Mode::DecompressOnly
        } else if self.decompress_copy {
            Mode::DecompressCopy
        } else if self.read_copy {
            Mode::ReadCopy
        } else if self.read_find {
            Mode::ReadFind
        } else if self.read_decompress {
            Mode::ReadDecompress
        } else if self.read_touch {
            Mode::ReadTouch
        } else if self.copy_strings {
            Mode::FullCopiedStrings
        } else {
            Mode::Full
        }
    }
}

/// Runs the command: the self-test, or one measurement, printed.
pub(crate) fn run(args: ReadspeedArgs) -> Result<()> {
    if args.test {
        if !selftest::run()? {
            std::process::exit(1);
        }
        return Ok(());
    }
    if args.threads == 0 {
        bail!("--threads must be at least 1");
    }
    for (name, v) in [
        ("--app-real-time", args.app_real_time),
        ("--storage-mb-s", args.storage_mb_s),
    ] {
        if v.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
            bail!("{name} must be a positive number");
        }
    }
    let mode = args.mode();
    let selection = selection(
        &args.files,
        &args.trees,
        args.branches,
        &args.branches_regex,
        args.all_branches,
    )?;
    if args.evict_cache {
        page_cache::evict(&args.files).context("cannot evict the files from the page cache")?;
    }
    // Asked before the run opens anything: what the run will find in memory.
    let cached = page_cache::residency(&args.files).ok();
    let config = readspeed::Config {
        files: args.files,
        trees: args.trees,
        branches: selection,
        threads: args.threads,
        mode,
        stages: args.stages,
    };
    let report = readspeed::run(&config).context("readspeed failed")?;
    let evidence = Evidence {
        app_real_time_s: args.app_real_time,
        storage_mb_s: args.storage_mb_s,
        cores_available: std::thread::available_parallelism().map_or(1, usize::from),
        resident_before: cached.map(|c| c.fraction()),
    };
    let mut out = std::io::stdout().lock();
    write_report(
        &mut out,
        &report,
        &evidence,
        cached,
        args.format,
        &args.bmf_name,
    )?;
    out.flush()?;
    Ok(())
}

/// The branches chosen on the command line (one way, as rootreadspeed).
fn selection(
    files: &[PathBuf],
    trees: &[String],
    branches: Vec<String>,
    branches_regex: &[String],
    all_branches: bool,
) -> Result<Selection> {
    Ok(if all_branches {
        Selection::All
    } else if !branches_regex.is_empty() {
        Selection::Names(resolve_regex(files, trees, branches_regex)?)
    } else if !branches.is_empty() {
        Selection::Names(branches)
    } else {
        bail!("choose branches with --branches, --branches-regex or --all-branches");
    })
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Full => "read+decompress+decode",
        Mode::FullCopiedStrings => "read+decompress+decode, strings copied",
        Mode::DecompressOnly => "decompress-only",
        Mode::DecompressCopy => "decompress+copy",
        Mode::ReadCopy => "read+decompress+copy",
        Mode::ReadFind => "read+decompress+find",
        Mode::ReadDecompress => "read+decompress",
        Mode::ReadTouch => "read+decompress+touch",
    }
}

fn write_report(
    out: &mut impl Write,
    r: &readspeed::Report,
    evidence: &Evidence,
    cached: Option<page_cache::Residency>,
    format: SpeedFormat,
    bmf_name: &str,
) -> std::io::Result<()> {
    let mode = mode_name(r.mode);
    let rows = bottleneck::table(r, evidence);
    let holding = bottleneck::holding(&rows);
    match format {
        SpeedFormat::Text => {
            // root-readspeed's report first, line for line, its times as ROOT takes them
            // (opening the files included); then what it does not print.
            writeln!(
                out,
                "Real time to setup MT run:      {:.6} s",
                r.setup_real_time_s
            )?;
            writeln!(
                out,
                "CPU time to setup MT run:       {:.2} s",
                r.setup_cpu_time_s
            )?;
            writeln!(
                out,
                "Real time:                      {:.6} s",
                r.root_real_time_s()
            )?;
            writeln!(
                out,
                "CPU time:                       {:.2} s",
                r.root_cpu_time_s()
            )?;
            writeln!(
                out,
                "Uncompressed data read:         {} bytes",
                r.uncompressed_bytes
            )?;
            writeln!(
                out,
                "Throughput:                     {:.3} MB/s",
                r.root_throughput_mb_s()
            )?;
            writeln!(out)?;
            writeln!(out, "Mode:                           {mode}")?;
            writeln!(out, "Threads:                        {}", r.threads)?;
            writeln!(
                out,
                "Real time reading entries:      {:.6} s (files already open)",
                r.real_time_s
            )?;
            writeln!(out, "CPU time reading entries:       {:.2} s", r.cpu_time_s)?;
            writeln!(
                out,
                "Throughput reading entries:     {:.3} MB/s (10^6 bytes), {:.3} MB/s per thread",
                r.throughput_mb_s(),
                r.throughput_per_thread_mb_s()
            )?;
            writeln!(
                out,
                "Compressed data read:           {} bytes",
                r.compressed_bytes
            )?;
            writeln!(
                out,
                "Compressed throughput:          {:.3} MB/s",
                r.root_compressed_throughput_mb_s()
            )?;
            writeln!(
                out,
                "Baskets:                        {} ({} branches)",
                r.baskets, r.branches
            )?;
            writeln!(
                out,
                "CPU efficiency:                 {:.1} %",
                100.0 * r.cpu_efficiency()
            )?;
            if let Some(c) = cached {
                writeln!(
                    out,
                    "In the page cache before:       {:.1} % of {} bytes",
                    100.0 * c.fraction(),
                    c.total_bytes
                )?;
                if c.fraction() > 0.5 {
                    writeln!(out, "{CACHE_ADVICE}")?;
                }
            }
            writeln!(out)?;
            writeln!(out, "Where is the bottleneck? (MB = 2^20 bytes)")?;
            for row in &rows {
                let mark = match row.holds {
                    Some(true) => "yes",
                    Some(false) => "no ",
                    None => "?  ",
                };
                writeln!(out, "  [{mark}] {}: if {}", row.case.name(), row.condition)?;
            }
            match holding.as_slice() {
                [] => writeln!(out, "No case holds on what is known.")?,
                cases => {
                    for case in cases {
                        writeln!(out, "{}: {}.", case.name(), case.advice())?;
                    }
                }
            }
            if let Some(st) = r.stages {
                writeln!(out)?;
                writeln!(
                    out,
                    "Stages (thread-seconds, each basket timed stage by stage):"
                )?;
                let total = st.total_s().max(1e-12);
                for (name, t) in st.named() {
                    writeln!(out, "  {name:<12}{t:>12.6} s  {:>5.1} %", 100.0 * t / total)?;
                }
            }
        }
        SpeedFormat::Json => {
            let doc = serde_json::json!({
                "mode": mode,
                "setup_real_time_s": r.setup_real_time_s,
                "setup_cpu_time_s": r.setup_cpu_time_s,
                "root_real_time_s": r.root_real_time_s(),
                "root_cpu_time_s": r.root_cpu_time_s(),
                "root_throughput_mib_s": r.root_throughput_mb_s(),
                "real_time_s": r.real_time_s,
                "cpu_time_s": r.cpu_time_s,
                "uncompressed_bytes": r.uncompressed_bytes,
                "compressed_bytes": r.compressed_bytes,
                "baskets": r.baskets,
                "branches": r.branches,
                "threads": r.threads,
                "throughput_mb_s": r.throughput_mb_s(),
                "throughput_per_thread_mb_s": r.throughput_per_thread_mb_s(),
                "compressed_throughput_mb_s": r.compressed_throughput_mb_s(),
                "cpu_efficiency": r.cpu_efficiency(),
                "page_cache_resident_fraction": cached.map(|c| c.fraction()),
                "bottleneck": rows.iter().map(|row| serde_json::json!({
                    "case": row.case.name(),
                    "condition": row.condition,
                    "holds": row.holds,
                })).collect::<Vec<_>>(),
                "stages": r.stages.map(|st| {
                    st.named()
                        .iter()
                        .map(|(name, t)| (format!("{name}_s"), serde_json::json!(t)))
                        .collect::<serde_json::Map<_, _>>()
                }),
            });
            writeln!(out, "{doc}")?;
        }
        SpeedFormat::Bmf => {
            let doc = serde_json::json!({
                bmf_name: {
                    "latency": {"value": r.real_time_s * 1e9},
                    "throughput": {"value": r.throughput_mb_s()},
                }
            });
            writeln!(out, "{doc}")?;
        }
    }
    Ok(())
}
