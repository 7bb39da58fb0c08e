//! `transport_pipeline_estimator`: bytes on the wire, encode and decode time,
//! and a modelled WAN transfer time for MATHLDBT, JSON and Arrow IPC on the
//! bars fixture (see `mathldbt::pipeline`).
//!
//! Exit codes: 0 success, 1 a codec failed or a round trip was not
//! lossless, 2 usage error.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};
use mathldbt::EncodeOptions;
use mathldbt::pipeline::{PipelineConfig, render_bmf, render_table, run};

const EXAMPLES: &str = "\
Model:
  t_transfer_s = rtt_ms / 1000 + bytes * 8 / (mbit * 1e6)
  t_total_s    = enc_s + t_transfer_s + dec_s
  enc_s / dec_s are the fastest of --repeat warm runs in this process.

Examples:
  transport_pipeline_estimator --rows 100000 --rtt-ms 30 --mbit 100
  transport_pipeline_estimator --rows 2000 --rtt-ms 30 --mbit 100 --format bmf > bmf.json
  transport_pipeline_estimator --rows 100000 --rtt-ms 5 --mbit 1000 --encoding plain";

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    /// A Markdown table (as in the benchmark log).
    Table,
    /// Bencher Metric Format JSON, for `bench-run import bmf`.
    Bmf,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum EncodingArg {
    /// Plain encodings everywhere.
    Plain,
    /// DictUtf8 for text, DeltaVarintI64 for null-free i64 and timestamps.
    DictDelta,
}

#[derive(Debug, Parser)]
#[command(
    name = "transport_pipeline_estimator",
    version,
    about = "Estimate the end-to-end cost of shipping the bars fixture as MATHLDBT, JSON or Arrow IPC",
    after_help = EXAMPLES
)]
struct Cli {
    /// Rows of the bars fixture.
    #[arg(long, default_value_t = 100_000)]
    rows: usize,
    /// Round-trip time of the link, in milliseconds.
    #[arg(long, default_value_t = 30.0)]
    rtt_ms: f64,
    /// Bandwidth of the link, in Mbit/s.
    #[arg(long, default_value_t = 100.0)]
    mbit: f64,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// MATHLDBT encodings.
    #[arg(long, value_enum, default_value = "dict-delta")]
    encoding: EncodingArg,
    /// Timed runs per measurement; the fastest is reported.
    #[arg(long, default_value_t = 5)]
    repeat: usize,
}

fn main() -> ExitCode {
    match run_cli(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn run_cli(cli: Cli) -> Result<()> {
    let link_ok =
        cli.mbit > 0.0 && cli.mbit.is_finite() && cli.rtt_ms >= 0.0 && cli.rtt_ms.is_finite();
    if !link_ok {
        bail!("--mbit must be positive and --rtt-ms non-negative");
    }
    let config = PipelineConfig {
        rows: cli.rows,
        rtt_ms: cli.rtt_ms,
        mbit: cli.mbit,
        options: match cli.encoding {
            EncodingArg::Plain => EncodeOptions::plain(),
            EncodingArg::DictDelta => EncodeOptions::dict_delta(),
        },
        repeat: cli.repeat,
    };
    let rows = run(&config).context("running the transport pipeline estimate")?;
    match cli.format {
        Format::Table => print!("{}", render_table(&config, &rows)),
        Format::Bmf => println!("{}", render_bmf(&config, &rows)),
    }
    Ok(())
}
