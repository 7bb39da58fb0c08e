//! `root-tool`: list, dump and time ROOT TTrees; list and dump RNTuples.
//!
//! A thin command-line layer over the `root_reader` library.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use root_reader::compression::Algorithm;
use root_reader::{BasketCache, Chain, Parallel, RootFile};

mod dump_args;
mod readspeed_cmd;
mod rntuple;
mod selection;
mod selftest;
mod stopped_reader;

use dump_args::{DumpFormat, parse_range};

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
    Readspeed(readspeed_cmd::ReadspeedArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum LsFormat {
    Text,
    Json,
}

fn main() -> Result<()> {
    stopped_reader::ok_if_reader_stopped(run(Cli::parse()))
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
        Command::Readspeed(args) => readspeed_cmd::run(args),
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
