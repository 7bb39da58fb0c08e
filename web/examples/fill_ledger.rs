//! Fills a ledger with an organisation's history (`testkit::synthetic::Organisation`): several
//! projects that all have a suite `benches`, on several testbeds, with raw samples. What the
//! team server's scale is measured on (`loadtest --db URL --project project-0`).
//!
//! ```text
//! cargo run --release -p web --example fill_ledger -- --db 'postgres://...' \
//!     --projects 4 --testbeds 2 --benchmarks 1000 --runs 10000 --samples 20 --writers 4
//! ```
//!
//! Runs are recorded through the store (one transaction each, as a push is), by `--writers`
//! concurrent writers; a ledger that holds some of them already is filled from where it
//! stopped (`--from`). Prints the rate as it goes, and at the end the results stored and, for
//! PostgreSQL, the database's size per million results.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use anyhow::{Context, Result, bail};
use bench_store::{Ledger, Location};
use clap::Parser;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use testkit::synthetic::Organisation;

#[derive(Debug, Parser)]
struct Args {
    /// The ledger to fill (a path or a postgres:// URL); created if needed.
    #[arg(long, value_name = "PATH|URL")]
    db: String,
    #[arg(long, default_value_t = 4)]
    projects: usize,
    #[arg(long, default_value_t = 2)]
    testbeds: usize,
    #[arg(long, default_value_t = 1000)]
    benchmarks: usize,
    /// Runs in all.
    #[arg(long, default_value_t = 10_000)]
    runs: usize,
    /// Raw samples per result.
    #[arg(long, default_value_t = 20)]
    samples: usize,
    /// Concurrent writers.
    #[arg(long, default_value_t = 4)]
    writers: usize,
    /// Start at this run (to resume a fill that stopped).
    #[arg(long, default_value_t = 0)]
    from: usize,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.writers == 0 || args.runs == 0 || args.benchmarks == 0 {
        bail!("--writers, --runs and --benchmarks must be at least 1");
    }
    let org = Organisation {
        projects: args.projects,
        testbeds: args.testbeds,
        benchmarks: args.benchmarks,
        runs: args.runs,
        samples: args.samples,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let location = Location::parse(&args.db)?;
        let ledger = Ledger::open(&location)
            .await
            .with_context(|| format!("cannot open {location}"))?;
        let started = Instant::now();
        let done = Arc::new(AtomicUsize::new(0));
        let todo = args.runs.saturating_sub(args.from);
        let per_writer = todo.div_ceil(args.writers);
        let writers: Vec<_> = (0..args.writers)
            .map(|w| {
                let (org, ledger, done) = (org.clone(), ledger.clone(), Arc::clone(&done));
                let from = args.from + w * per_writer;
                let to = (from + per_writer).min(args.runs);
                tokio::spawn(async move {
                    org.record_range(&ledger, from, to, |_| {
                        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                        if n % 100 == 0 {
                            let s = started.elapsed().as_secs_f64();
                            eprintln!(
                                "fill: {n}/{todo} runs in {s:.0} s ({:.1} runs/s, {:.0} results/s)",
                                n as f64 / s,
                                (n * org.benchmarks) as f64 / s
                            );
                        }
                    })
                    .await
                })
            })
            .collect();
        for w in writers {
            w.await??;
        }
        let seconds = started.elapsed().as_secs_f64();
        let results = todo * args.benchmarks;
        eprintln!(
            "fill: {todo} runs, {results} results ({} raw samples each) in {seconds:.0} s ({:.0} results/s)",
            args.samples,
            results as f64 / seconds
        );
        ledger.close().await;
        if let Location::Postgres(_) = location
            && let Some(bytes) = postgres_size(&args.db)
        {
            let total = args.runs * args.benchmarks;
            eprintln!(
                "fill: the database holds {:.2} GB for {total} results: {:.0} MB per million results",
                bytes as f64 / 1e9,
                bytes as f64 / 1e6 / (total as f64 / 1e6)
            );
        }
        Ok(())
    })
}

/// `pg_database_size` of the ledger's database, through Debian's `psql`.
fn postgres_size(url: &str) -> Option<u64> {
    let psql = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin/psql")))
        .find(|p| p.is_file())?;
    let output = std::process::Command::new(psql)
        .args([url, "-Atc", "SELECT pg_database_size(current_database())"])
        .output()
        .ok()?;
    String::from_utf8_lossy(&output.stdout).trim().parse().ok()
}
