//! From a parsed command line to one subcommand.

use crate::cli::{Cli, Command, LedgerCommand};
use crate::commands::support::{self, open_ledger, resolve_run};
use crate::commands::{
    ab, bisect, calibrate, calibrate_layouts, compare, gate, import, ledger, log, profile, push,
    ratio, run,
};
use crate::outcome::Outcome;
use anyhow::{Context, Result};
use bench_model::RunSource;
use bench_store::RunFilter;

pub async fn dispatch(cli: Cli) -> Result<Outcome> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let db = cli.db.clone();
    support::set_project(cli.project.as_deref())?;
    match cli.command {
        None => run::run_suite(&cli.run, db.as_deref(), &cwd, RunSource::BenchRun).await,
        Some(Command::List {
            suite,
            branch,
            limit,
            format,
        }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let runs = ledger
                .runs(&RunFilter {
                    suite,
                    branch,
                    limit: Some(limit),
                    ..RunFilter::default()
                })
                .await?;
            print!("{}", bench_report::runs_list(&runs, format));
            Ok(Outcome::Ok)
        }
        Some(Command::Show { run, format }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let run = resolve_run(&ledger, &run, None, &cwd).await?;
            let results = ledger.measurements(run.id).await?;
            print!("{}", bench_report::run_show(&run, &results, format));
            Ok(Outcome::Ok)
        }
        Some(Command::Compare {
            base,
            head,
            suite,
            allow_mismatch,
            server,
            format,
            verdict,
        }) => {
            let request = compare::Request {
                base: &base,
                head: &head,
                suite: suite.as_deref(),
                allow_mismatch,
                format,
                verdict: &verdict,
            };
            match server {
                Some(url) => compare::compare_on_server(&url, &cwd, &request).await,
                None => {
                    let ledger = open_ledger(db.as_deref(), &cwd).await?;
                    compare::compare(&ledger, &cwd, &request).await
                }
            }
        }
        Some(Command::Gate {
            base,
            head,
            suite,
            allow_mismatch,
            allow_busy,
            confirm,
            server,
            format,
            verdict,
        }) => {
            let request = gate::Request {
                base: &base,
                head: &head,
                suite: suite.as_deref(),
                allow: bench_verdicts::gate::Allow {
                    mismatch: allow_mismatch,
                    busy: allow_busy,
                },
                format,
                verdict: &verdict,
                confirm_runs: confirm,
            };
            match server {
                Some(url) => {
                    let server = bench_client::remote::Server::new(
                        &support::server_url(&url),
                        gate::read_token(),
                    );
                    gate::gate(gate::Source::Server(server), &cwd, &request).await
                }
                None => {
                    let ledger = open_ledger(db.as_deref(), &cwd).await?;
                    gate::gate(gate::Source::Local(&ledger), &cwd, &request).await
                }
            }
        }
        Some(Command::Ratio {
            runs,
            anchor,
            pair,
            only,
            at_least,
            format,
        }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let request = ratio::RatioRequest {
                runs,
                anchors: anchor,
                pairs: pair,
                only,
                at_least,
                format,
            };
            ratio::ratio(&ledger, &cwd, request).await
        }
        Some(Command::Interleave {
            worker,
            worker_as,
            pair,
            only,
            rounds,
            warmup_rounds,
            seed,
            timeout,
            at_least,
            format,
            record,
        }) => {
            let request = ratio::InterleaveRequest {
                workers: worker,
                labeled_workers: worker_as,
                pairs: pair,
                only,
                rounds,
                warmup: warmup_rounds,
                seed,
                timeout: std::time::Duration::from_secs(timeout),
                at_least,
                format,
                record,
            };
            ratio::interleave(request, db.as_deref(), &cwd).await
        }
        Some(Command::Ab(args)) => ab::ab(&args, db.as_deref(), &cwd).await,
        Some(Command::Bisect(args)) => bisect::bisect(&args, db.as_deref(), &cwd).await,
        Some(Command::Profile(args)) => profile::profile(&args, db.as_deref(), &cwd).await,
        Some(Command::Calibrate {
            runs,
            layouts: Some(layouts),
            seed,
            run,
        }) => calibrate_layouts::calibrate_layouts(&run, runs, layouts, seed, &cwd),
        Some(Command::Calibrate { runs, run, .. }) => {
            calibrate::calibrate(&run, runs, db.as_deref(), &cwd).await
        }
        Some(Command::Push { runs, to }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            push::push_runs(&ledger, &runs, &to, &cwd).await
        }
        Some(Command::Tag { run, name }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let run = resolve_run(&ledger, &run, None, &cwd).await?;
            ledger.tag(run.id, &name).await?;
            eprintln!("tagged run #{} as {name:?}", run.id);
            Ok(Outcome::Ok)
        }
        Some(Command::Annotate { run, text }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let run = resolve_run(&ledger, &run, None, &cwd).await?;
            ledger.annotate(run.id, &text).await?;
            eprintln!("annotated run #{}", run.id);
            Ok(Outcome::Ok)
        }
        Some(Command::Log {
            run,
            title,
            claim,
            file,
            note,
            base,
            only,
            rows,
            dry_run,
        }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let request = log::Request {
                run: &run,
                title: title.as_deref(),
                claim: claim.as_deref(),
                file,
                notes: note,
                base: base.as_deref(),
                only: &only,
                rows,
                dry_run,
            };
            log::log_run(&ledger, &cwd, request).await
        }
        Some(Command::Import { source }) => import::import(source, db.as_deref(), &cwd).await,
        Some(Command::Export { run, format }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let run = resolve_run(&ledger, &run, None, &cwd).await?;
            let results = ledger.measurements(run.id).await?;
            print!("{}", bench_report::export(&run, &results, format));
            Ok(Outcome::Ok)
        }
        Some(Command::Ledger {
            command: LedgerCommand::Copy { from, to, format },
        }) => ledger::copy(&from, &to, cli.project.as_deref(), format, &cwd).await,
    }
}
