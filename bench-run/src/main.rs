//! `bench-run`: a thin command-line layer over the use cases (`bench-usecases`,
//! `bench-verdicts`) and the runner (`bench-runner`).
//!
//! Exit codes: 0 success (no regression), 1 regression found by `gate` or a ratio below the
//! bar of `ratio`, 2 any error,
//! unusable input or incomparable runs.

mod cli;
mod commands;
mod dispatch;
mod outcome;

use clap::Parser;
use outcome::Outcome;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Started by `bench-run ab`'s linker shim while cargo builds a side: link, then relink the
    // suite's executable once per layout seed (bench_runner::relink).
    if let Some(plan) = bench_runner::relink::LinkPlan::from_env() {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let code = bench_runner::relink::act_as_linker(&plan, &args);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let cli = cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(dispatch::dispatch(cli)) {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Regression | Outcome::BelowBar | Outcome::PushFailed) => ExitCode::from(1),
        Ok(Outcome::Incomparable) => ExitCode::from(2),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
