//! `root-readspeed`: seed 001's command as it prints it (`root-readspeed --trees t --files a.root
//! b.root --threads 2 --branches x`), the same measurement and report as `root-tool readspeed`.

use anyhow::Result;
use clap::Parser;

#[path = "../root-tool/readspeed_cmd.rs"]
mod readspeed_cmd;
#[path = "../root-tool/selection.rs"]
mod selection;
#[path = "../root-tool/selftest.rs"]
mod selftest;
#[path = "../root-tool/stopped_reader.rs"]
mod stopped_reader;

#[derive(Parser)]
#[command(
    name = "root-readspeed",
    version,
    about = "Measure what throughput can be expected reading the branches of ROOT TTrees (or the \
             fields of RNTuples) for a given system, dataset and number of threads",
    after_help = const_format_help()
)]
struct Cli {
    #[command(flatten)]
    args: readspeed_cmd::ReadspeedArgs,
}

const fn const_format_help() -> &'static str {
    "Examples:\n  \
     root-readspeed --trees t --files test1.root test2.root --threads 2 --branches x\n  \
     root-readspeed --trees events --files run.root --branches-regex '^Jet_' --evict-cache\n  \
     root-readspeed --trees t --files f.root --all-branches --app-real-time 12.5 --storage-mb-s 500\n  \
     root-readspeed --trees t --files f.root --branches x --format json\n  \
     root-readspeed --test\n\n\
     Real time is timed as ROOT's root-readspeed times it: from opening the files to the last \
     entry read (its throughput in MB of 2^20 bytes); the reading of the entries alone follows \
     as a line of its own.\n\n\
     Beware of caching: a file read a moment ago is served from memory, and a second run \
     measures memory, not the storage. The report says how much of the files was in the page \
     cache before the run; --evict-cache drops the files' pages first (no superuser needed), \
     or drop every cached page with `echo 3 > /proc/sys/vm/drop_caches` as the superuser."
}

fn main() -> Result<()> {
    root_reader::set_memory_release(root_reader::malloc_trim);
    stopped_reader::ok_if_reader_stopped(readspeed_cmd::run(Cli::parse().args))
}
