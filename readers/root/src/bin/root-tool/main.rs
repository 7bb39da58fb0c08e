//! `root-tool`: list, dump and time ROOT TTrees; list and dump RNTuples.
//!
//! A thin command-line layer over the `root_reader` library.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use root_reader::compression::Algorithm;
use root_reader::readspeed::{self, Mode, Selection};
use root_reader::{BasketCache, Chain, Parallel, RootFile};

mod dump_args;
mod rntuple;
mod selection;
mod selftest;

use dump_args::{DumpFormat, parse_range};
use selection::resolve_regex;

#[derive(Parser)]
#[command(
    name = "root-tool",
    version,
    about = "List, dump and time the TTrees of ROOT files",
    after_help = "Examples:\n  root-tool ls events.root\n  root-tool ls events.root --format json\n  \
                  root-tool dump events.root sub/t;2 --branches pt,jets --entries 0:10\n  \
                  root-tool dump events.root t --format csv\n  \
                  root-tool readspeed --files a.root b.root --trees t --branches pt jets --threads 2\n  \
                  root-tool readspeed --files a.root --trees t --branches-regex '^j' --format json"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List trees (with directory paths and cycles) and their branches, each by its full path,
    /// and RNTuples with their fields, types and column encodings.
    ///
    /// A branch's full path is the names of its parent branches and its own joined by `/`, as
    /// uproot's `keys()` gives them (`a/x`, `a/hit/hit.e`, `c./c.x`); a branch with earlier
    /// siblings of its name gets `#k` (the second top-level `dup` is `dup#2`). `--format json`
    /// gives each branch's own `name`, its `path` and its `column` (the name `dump` gives it).
    #[command(after_help = "Example:\n  root-tool ls events.root --format json")]
    Ls {
        /// The ROOT file.
        file: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = LsFormat::Text)]
        format: LsFormat,
    },
    /// Print entries of a tree or an RNTuple, one line per entry.
    ///
    /// Each column is named by its branch's own name when no other branch of the tree has that
    /// name, else by the branch's full path (as `ls` shows it: `a/x` and `b/x` where two split
    /// objects both have a member `x`), so that no name repeats in a line or the CSV header.
    #[command(after_help = "Examples:\n  root-tool dump f.root t\n  \
                            root-tool dump f.root 'dir/t;1' --branches a,b --entries 10:20 --format csv\n  \
                            root-tool dump f.root t --branches a/x,b/hit/hit.e,n\n  \
                            root-tool dump run1.root events --chain run2.root --chain run3.root --entries 990:1010")]
    Dump {
        /// The ROOT file.
        file: PathBuf,
        /// The tree or RNTuple: `name`, `dir/name`, `name;cycle` (highest cycle by default).
        /// RNTuples: `--branches` names fields (top-level, or dotted paths to subfields), and
        /// only `--format jsonl` is written.
        tree: String,
        /// Comma-separated branches (default: every readable branch): full paths (`a/x`, as
        /// `ls` shows them), column names, or names no other branch has. A name several branches
        /// have is refused with their full paths; a branch named twice is refused.
        #[arg(long, value_delimiter = ',')]
        branches: Vec<String>,
        /// Entry range `START:STOP` (either side may be omitted), of the whole chain.
        #[arg(long)]
        entries: Option<String>,
        /// Further files holding the same tree, read after FILE as one tree (a chain;
        /// repeatable).
        #[arg(long, value_name = "FILE")]
        chain: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = DumpFormat::Jsonl)]
        format: DumpFormat,
    },
    /// Measure read throughput like ROOT's rootreadspeed.
    #[command(
        after_help = "Examples:\n  root-tool readspeed --files f.root --trees t --branches pt\n  \
                            root-tool readspeed --files f.root --trees t --all-branches --threads 2 --format json\n  \
                            root-tool readspeed --files f.root --trees t --branches pt --decompress-only\n  \
                            root-tool readspeed --files f.root --trees t --branches pt --read-decompress\n  \
                            root-tool readspeed --files f.root --trees t --branches name --read-touch\n  \
                            root-tool readspeed --files f.root --trees t --branches name --read-find\n  \
                            root-tool readspeed --files f.root --trees t --branches name --copy-strings\n  \
                            root-tool readspeed --files f.root --trees t --branches name --stages\n  \
                            root-tool readspeed --test"
    )]
    Readspeed {
        /// Files to read.
        #[arg(long, num_args = 1.., required_unless_present = "test")]
        files: Vec<PathBuf>,
        /// Trees: one name for every file, or one per file (as rootreadspeed).
        #[arg(long, num_args = 1.., required_unless_present = "test")]
        trees: Vec<String>,
        /// Branches: full paths, column names, or names no other branch has (as `dump`).
        #[arg(long, num_args = 1.., group = "sel")]
        branches: Vec<String>,
        /// Regular expressions selecting branches (matched against each branch's own name and
        /// its full path).
        #[arg(long, num_args = 1.., group = "sel")]
        branches_regex: Vec<String>,
        /// Every readable branch.
        #[arg(long, group = "sel")]
        all_branches: bool,
        /// Worker threads.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Time only the decompression of the same baskets, preloaded in memory.
        #[arg(long, group = "mode")]
        decompress_only: bool,
        /// Time the decompression of the preloaded baskets plus one copy of each payload (the
        /// floor of any reader that hands out values in its own memory).
        #[arg(long, group = "mode")]
        decompress_copy: bool,
        /// Time reading the baskets from the files as the full read does, plus one copy of each
        /// payload and one end per entry where entries vary in size (per item in vector<string>
        /// and vector<vector<T>>), without decoding (the floor of any reader of the files that
        /// hands out entries in its own memory). On RNTuples: each page read, checked and
        /// decompressed as the full read does, then copied once.
        #[arg(long, group = "mode")]
        read_copy: bool,
        /// Time reading the baskets from the files as the full read does, plus finding where
        /// each string starts (each item in vector<string> and vector<vector<T>>), nothing
        /// checked or copied, one at a time (what finding the strings costs a reader that lends
        /// them where they lie).
        #[arg(long, group = "mode")]
        read_find: bool,
        /// Time reading the baskets from the files as the full read does and decompressing
        /// them, nothing else (the floor of any reader of the files).
        #[arg(long, group = "mode")]
        read_decompress: bool,
        /// Time reading and decompressing as --read-decompress does, plus touching what any
        /// reader of every entry must: one byte of every 64-byte line of the entries (of
        /// char*, std::string and TString branches, each entry's length byte instead), and
        /// each basket's entry-offset table, its starts converted; summed, nothing else (the
        /// floor of any reader of the entries).
        #[arg(long, group = "mode")]
        read_touch: bool,
        /// The full read, with the strings of char*, std::string, TString and vector<string>
        /// branches copied into columns of their own (as `dump` and the library's column reads
        /// return them) instead of checked and handed out where they lie in the decompressed
        /// basket.
        #[arg(long, group = "mode")]
        copy_strings: bool,
        /// Also time each basket's stages apart and report where the time went: reading the
        /// records, decompressing them, reading their entry-offset tables, decoding the
        /// entries (in thread-seconds; five clock reads a basket, so the stages add up to a
        /// little more than an untimed run).
        #[arg(long)]
        stages: bool,
        /// Output format.
        #[arg(long, value_enum, default_value_t = SpeedFormat::Text)]
        format: SpeedFormat,
        /// Benchmark name used in `--format bmf`.
        #[arg(long, default_value = "root-tool/readspeed")]
        bmf_name: String,
        /// Check this build on this machine instead: read the fixtures built into the tool
        /// (written by ROOT 6.40) in every mode on one and two threads, and compare the bytes
        /// read with what ROOT's rootreadspeed reports for them; exits 1 on any difference.
        #[arg(long, exclusive = true)]
        test: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum LsFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum SpeedFormat {
    Text,
    Json,
    Bmf,
}

fn main() -> Result<()> {
    match run(Cli::parse()) {
        // A reader that stopped early (`dump ... | head`) is not a failure of the dump.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            Ok(())
        }
        other => other,
    }
}

fn run(cli: Cli) -> Result<()> {
    // Scans hold the resident memory near the cache bound only if freed baskets go back to
    // the system (see root_reader::memory).
    root_reader::set_memory_release(root_reader::malloc_trim);
    match cli.command {
        Command::Ls { file, format } => ls(&file, format),
        Command::Dump {
            file,
            tree,
            branches,
            entries,
            chain,
            format,
        } => {
            if is_rntuple(&file, &tree) {
                if !chain.is_empty() {
                    bail!("--chain is not supported for RNTuples");
                }
                return rntuple::dump(&file, &tree, &branches, entries.as_deref(), format);
            }
            let mut files = vec![file];
            files.extend(chain);
            dump(&files, &tree, &branches, entries.as_deref(), format)
        }
        Command::Readspeed {
            files,
            trees,
            branches,
            branches_regex,
            all_branches,
            threads,
            decompress_only,
            decompress_copy,
            read_copy,
            read_find,
            read_decompress,
            read_touch,
            copy_strings,
            stages,
            format,
            bmf_name,
            test,
        } => {
            if test {
                if !selftest::run()? {
                    std::process::exit(1);
                }
                return Ok(());
            }
            let selection = selection(&files, &trees, branches, &branches_regex, all_branches)?;
            if threads == 0 {
                bail!("--threads must be at least 1");
            }
            let config = readspeed::Config {
                files,
                trees,
                branches: selection,
                threads,
                mode: if decompress_only {
                    Mode::DecompressOnly
                } else if decompress_copy {
                    Mode::DecompressCopy
                } else if read_copy {
                    Mode::ReadCopy
                } else if read_find {
                    Mode::ReadFind
                } else if read_decompress {
                    Mode::ReadDecompress
                } else if read_touch {
                    Mode::ReadTouch
                } else if copy_strings {
                    Mode::FullCopiedStrings
                } else {
                    Mode::Full
                },
                stages,
            };
            let report = readspeed::run(&config).context("readspeed failed")?;
            print_report(&report, format, &bmf_name);
            Ok(())
        }
    }
}

fn compression_name(setting: i32) -> String {
    match Algorithm::from_setting(setting) {
        Some(a) => format!("{}-{}", a.name(), setting % 100),
        None => "none".to_string(),
    }
}

fn ls(path: &PathBuf, format: LsFormat) -> Result<()> {
    let file = RootFile::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut trees = Vec::new();
    for entry in file.trees().context("cannot list the file's directories")? {
        let spec = format!("{};{}", entry.path, entry.key.cycle);
        let tree = file
            .tree(&spec)
            .with_context(|| format!("cannot read tree {spec}"))?;
        let branches: Vec<serde_json::Value> = tree
            .named_branches()
            .iter()
            .map(|named| {
                let b = &named.meta;
                serde_json::json!({
                    "path": named.path,
                    "name": b.name,
                    "column": named.column,
                    "type": match &b.layout { Ok(l) => l.describe(), Err(e) => format!("unsupported: {e}") },
                    "entries": b.entries,
                    "baskets": b.baskets.len(),
                    "compression": compression_name(b.compress),
                    "compressed_bytes": b.zip_bytes,
                    "uncompressed_bytes": b.tot_bytes,
                })
            })
            .collect();
        trees.push(serde_json::json!({
            "path": entry.path, "cycle": entry.key.cycle, "title": tree.title,
            "entries": tree.entries, "branches": branches,
        }));
    }
    let ntuples = rntuple::list(&file)?;
    let out = std::io::stdout();
    let mut out = BufWriter::new(out.lock());
    match format {
        LsFormat::Json => {
            let h = file.header();
            let doc = serde_json::json!({
                "file": path.display().to_string(), "root_version": h.version,
                "large": h.large, "compression": compression_name(h.compress), "trees": trees,
                "rntuples": ntuples,
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        LsFormat::Text => {
            for t in &trees {
                writeln!(
                    out,
                    "{};{}  {:?}  {} entries",
                    t["path"].as_str().unwrap_or_default(),
                    t["cycle"],
                    t["title"].as_str().unwrap_or_default(),
                    t["entries"]
                )?;
                for b in t["branches"].as_array().into_iter().flatten() {
                    writeln!(
                        out,
                        "  {:<24} {:<16} {:>10} entries {:>6} baskets  {:<8} zip {:>10} B  raw {:>10} B",
                        b["path"].as_str().unwrap_or_default(),
                        b["type"].as_str().unwrap_or_default(),
                        b["entries"],
                        b["baskets"],
                        b["compression"].as_str().unwrap_or_default(),
                        b["compressed_bytes"],
                        b["uncompressed_bytes"],
                    )?;
                }
            }
            rntuple::print(&mut out, &ntuples)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Whether `spec` names an RNTuple of the file (anything else goes the TTree way, whose errors
/// say what the object is).
fn is_rntuple(path: &PathBuf, spec: &str) -> bool {
    RootFile::open(path)
        .and_then(|f| f.find_key(spec))
        .is_ok_and(|k| k.is_rntuple())
}

fn dump(
    paths: &[PathBuf],
    spec: &str,
    names: &[String],
    range: Option<&str>,
    format: DumpFormat,
) -> Result<()> {
    let chain = Chain::open(paths, spec, BasketCache::DEFAULT_CAPACITY).with_context(|| {
        let files: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        format!("cannot read tree {spec} of {}", files.join(", "))
    })?;
    // The branches of the first file are the chain's.
    let tree = &chain.trees()[0];
    let selected = selected_branches(tree, names)?;
    let (start, stop) = parse_range(range, chain.entries())?;
    // Branches asked for by name must read; of the default selection, one that cannot is left
    // out with a warning, and the others are still dumped.
    let defaulted = names.is_empty();
    let mut columns = Vec::new();
    let mut kept = Vec::new();
    for column in selected {
        match chain.read_column(&column, start, stop, Parallel::Auto) {
            Ok(col) => {
                columns.push(col);
                kept.push(column);
            }
            // A branch missing from a file of the chain is a chain of other trees: an error.
            Err(e) if defaulted && !matches!(e, root_reader::Error::NoSuchBranch { .. }) => {
                eprintln!("warning: branch {column} left out: {e}");
            }
            Err(e) => return Err(e).with_context(|| format!("cannot read branch {column}")),
        }
    }
    let names = kept;
    let out = std::io::stdout();
    let mut out = BufWriter::new(out.lock());
    let keys: Vec<String> = names.iter().map(|n| root_reader::json::quoted(n)).collect();
    if let DumpFormat::Csv = format {
        writeln!(out, "{}", names.join(","))?;
    }
    let mut line = String::new();
    for j in 0..(stop - start) as usize {
        line.clear();
        match format {
            DumpFormat::Jsonl => {
                line.push('{');
                for (k, col) in columns.iter().enumerate() {
                    if k > 0 {
                        line.push(',');
                    }
                    line.push_str(&keys[k]);
                    line.push(':');
                    root_reader::json::write_entry(&mut line, col, j, ',');
                }
                line.push('}');
            }
            DumpFormat::Csv => {
                for (k, col) in columns.iter().enumerate() {
                    if k > 0 {
                        line.push(',');
                    }
                    root_reader::json::write_entry(&mut line, col, j, ' ');
                }
            }
        }
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(())
}

/// The column names of the branches `dump` reads: every readable branch of `tree` by default,
/// else the branch each of `names` selects (a column name, a full path, or a name no other
/// branch has); a branch asked for twice is refused, so that no column name repeats.
fn selected_branches(tree: &root_reader::Tree, names: &[String]) -> Result<Vec<String>> {
    if names.is_empty() {
        return Ok(tree
            .named_branches()
            .iter()
            .filter(|b| b.meta.layout.is_ok())
            .map(|b| b.column.clone())
            .collect());
    }
    let mut chosen: Vec<(&str, &str)> = Vec::with_capacity(names.len());
    for name in names {
        let b = tree
            .find_branch(name)
            .with_context(|| format!("cannot read branch {name}"))?;
        if let Some((first, _)) = chosen.iter().find(|(_, c)| *c == b.column) {
            bail!(
                "--branches names branch {} twice (as {first:?} and {name:?})",
                b.column
            );
        }
        chosen.push((name, &b.column));
    }
    Ok(chosen.into_iter().map(|(_, c)| c.to_string()).collect())
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

fn print_report(r: &readspeed::Report, format: SpeedFormat, bmf_name: &str) {
    let mode = match r.mode {
        Mode::Full => "read+decompress+decode",
        Mode::FullCopiedStrings => "read+decompress+decode, strings copied",
        Mode::DecompressOnly => "decompress-only",
        Mode::DecompressCopy => "decompress+copy",
        Mode::ReadCopy => "read+decompress+copy",
        Mode::ReadFind => "read+decompress+find",
        Mode::ReadDecompress => "read+decompress",
        Mode::ReadTouch => "read+decompress+touch",
    };
    match format {
        SpeedFormat::Text => {
            // rootreadspeed's report first, line for line; then what it does not print.
            println!(
                "Real time to setup MT run:      {:.6} s",
                r.setup_real_time_s
            );
            println!(
                "CPU time to setup MT run:       {:.2} s",
                r.setup_cpu_time_s
            );
            println!("Real time:                      {:.6} s", r.real_time_s);
            println!("CPU time:                       {:.2} s", r.cpu_time_s);
            println!(
                "Uncompressed data read:         {} bytes",
                r.uncompressed_bytes
            );
            println!(
                "Throughput:                     {:.3} MB/s",
                r.throughput_mb_s()
            );
            println!();
            println!("Mode:                           {mode}");
            println!("Threads:                        {}", r.threads);
            println!(
                "Throughput per thread:          {:.3} MB/s",
                r.throughput_per_thread_mb_s()
            );
            println!(
                "Compressed data read:           {} bytes",
                r.compressed_bytes
            );
            println!(
                "Compressed throughput:          {:.3} MB/s",
                r.compressed_throughput_mb_s()
            );
            println!(
                "Baskets:                        {} ({} branches)",
                r.baskets, r.branches
            );
            println!(
                "CPU efficiency:                 {:.1} %",
                100.0 * r.cpu_efficiency()
            );
            println!("{}", r.diagnosis());
            if let Some(st) = r.stages {
                println!();
                println!("Stages (thread-seconds, each basket timed stage by stage):");
                let total = st.total_s().max(1e-12);
                for (name, t) in st.named() {
                    println!("  {name:<12}{t:>12.6} s  {:>5.1} %", 100.0 * t / total);
                }
            }
        }
        SpeedFormat::Json => {
            let doc = serde_json::json!({
                "mode": mode,
                "setup_real_time_s": r.setup_real_time_s,
                "setup_cpu_time_s": r.setup_cpu_time_s,
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
                "diagnosis": r.diagnosis(),
                "stages": r.stages.map(|st| {
                    st.named()
                        .iter()
                        .map(|(name, t)| (format!("{name}_s"), serde_json::json!(t)))
                        .collect::<serde_json::Map<_, _>>()
                }),
            });
            println!("{doc}");
        }
        SpeedFormat::Bmf => {
            let doc = serde_json::json!({
                bmf_name: {
                    "latency": {"value": r.real_time_s * 1e9},
                    "throughput": {"value": r.throughput_mb_s()},
                }
            });
            println!("{doc}");
        }
    }
}
