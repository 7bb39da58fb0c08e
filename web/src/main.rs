//! `bench-web`: serves the bench-run ledger as web pages and JSON.
//!
//! ```text
//! bench-web [--db PATH|URL] [--addr 127.0.0.1:8080] [--token [NAME=]SCOPE:SECRET]...
//!           [--tokens-file F] [--private] [--tls-cert PEM --tls-key PEM]
//! ```
//!
//! The ledger is opened read-only unless ingest is enabled (a push token is given), in which
//! case it is opened (and created) writable so pushed runs can be recorded. The bound address is
//! printed on standard output once the server listens (`--addr 127.0.0.1:0` picks a free port).

use anyhow::{Context, Result, anyhow};
use bench_store::{Ledger, Location};
use clap::Parser;
use std::io::Write;
use std::net::SocketAddr;
use web::AppState;
use web::access::{self, Access, Scope};

/// Serve the bench-run ledger: dashboard, runs, before/after comparisons and trend charts.
#[derive(Debug, Parser)]
#[command(
    name = "bench-web",
    version,
    about,
    after_help = "Examples:
  bench-web                                   # results/ledger.sqlite, read-only, on :8080
  bench-web --db postgres://bench@db.internal/bench --tokens-file /etc/bench-web/tokens
  bench-web --db 'postgres://bench@localhost/bench?host=/run/postgresql' \\
            --token push:$RUNNER_TOKEN --token read:$DASHBOARD_TOKEN --private

A tokens file holds one [NAME=]SCOPE:SECRET per line (push: may POST runs; read: may read a
--private server); blank lines and lines starting with # are skipped. It must not be readable
by group or others (chmod 600). Secrets are at least 16 characters; NAME (letters, digits, . _ -)
is what the log says of a push, never the secret. Without --private anyone who can reach the
server can read it.

Exposed on a network: serve HTTPS with --tls-cert/--tls-key (PEM), or put a reverse proxy that
terminates TLS in front (README, \"Running the team server\"). GET /healthz says whether the
ledger answers (no token needed); GET /metrics is in Prometheus' text format."
)]
struct Cli {
    /// The ledger: a SQLite file path (default: results/ledger.sqlite at the workspace root, as
    /// for bench-run) or a PostgreSQL URL (postgres://user@host/db).
    #[arg(long, env = "BENCH_DB", value_name = "PATH|URL")]
    db: Option<String>,

    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    addr: SocketAddr,

    /// A token: `push:SECRET` may push runs (opens the ledger writable), `read:SECRET` may
    /// read a --private server (repeatable; BENCH_TOKENS takes several, space-separated).
    #[arg(
        long = "token",
        env = "BENCH_TOKENS",
        hide_env_values = true,
        value_delimiter = ' ',
        value_name = "SCOPE:SECRET"
    )]
    tokens: Vec<String>,

    /// Read tokens from this file: one SCOPE:SECRET per line (keeps secrets out of `ps`).
    #[arg(long, value_name = "FILE")]
    tokens_file: Option<std::path::PathBuf>,

    /// Pages and GET /api need a read token (Bearer, or the password of Basic auth).
    #[arg(long)]
    private: bool,

    /// Serve HTTPS with this PEM certificate chain (needs --tls-key).
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<std::path::PathBuf>,

    /// The PEM private key of --tls-cert (PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<std::path::PathBuf>,

    /// Seconds a client may take to send a request's head (and a keep-alive connection may
    /// stay idle); a slower one gets 408.
    #[arg(long, default_value_t = 10, value_name = "S", value_parser = clap::value_parser!(u64).range(1..=3600))]
    header_timeout: u64,

    /// Pushes read and stored at once; more get 429 (bench-run retries them).
    #[arg(long, default_value_t = 16, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    max_pushes: u64,

    /// Wrong tokens one address may present per minute before it gets 429 for the rest of
    /// the minute.
    #[arg(long, default_value_t = 20, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    auth_failures: u32,

    /// A push token (older spelling of `--token push:SECRET`).
    #[arg(
        long,
        env = "BENCH_INGEST_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    ingest_token: Option<String>,
}

/// The tokens and privacy the command line asks for.
fn access(cli: &Cli) -> Result<Access> {
    let mut specs: Vec<String> = cli
        .tokens
        .iter()
        .filter(|t| !t.is_empty())
        .cloned()
        .collect();
    if let Some(path) = &cli.tokens_file {
        check_private_file(path)?;
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the tokens file {}", path.display()))?;
        specs.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_owned),
        );
    }
    let mut access = Access::open().private(cli.private);
    for spec in &specs {
        access = access.with_spec(&access::parse_spec(spec)?);
    }
    if let Some(secret) = cli.ingest_token.as_deref().filter(|t| !t.is_empty()) {
        access::check_secret(Scope::Push, secret)?;
        access = access.with_token(Scope::Push, secret);
    }
    if cli.private && !access.has_read_token() {
        return Err(anyhow!(
            "--private needs a read token (--token read:SECRET), or nobody could read the server"
        ));
    }
    Ok(access)
}

/// Refuses a secrets file that others may read: its secrets are as good as published.
#[cfg(unix)]
fn check_private_file(path: &std::path::Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(path)
        .with_context(|| format!("cannot read the tokens file {}", path.display()))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(anyhow!(
            "the tokens file {} may be read by others (mode {:o}); its secrets would be as good \
             as published: chmod 600 {}",
            path.display(),
            mode & 0o777,
            path.display()
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private_file(_: &std::path::Path) -> Result<()> {
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}

async fn serve(cli: Cli) -> Result<()> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let location = bench_verdicts::location::default_location(cli.db.as_deref(), &cwd)?;
    let access = access(&cli)?;
    let ingest = access.ingest_enabled();
    let ledger = if ingest {
        Ledger::open(&location).await
    } else {
        if let Location::Sqlite(path) = &location
            && !path.exists()
        {
            return Err(anyhow!(
                "no ledger at {}; record a run with bench-run first, pass --db PATH, or enable \
                 ingest with --token push:SECRET to start an empty one",
                path.display()
            ));
        }
        Ledger::open_read_only(&location).await
    }
    .with_context(|| format!("cannot open the ledger {location}"))?;
    let private = access.is_private();
    let limits = web::limits::Limits {
        header_timeout: std::time::Duration::from_secs(cli.header_timeout),
        max_concurrent_pushes: usize::try_from(cli.max_pushes).unwrap_or(usize::MAX),
        auth_failures: cli.auth_failures,
        ..web::limits::Limits::default()
    };
    let tls = match (&cli.tls_cert, &cli.tls_key) {
        (Some(cert), Some(key)) => Some(web::serve::tls_config(cert, key)?),
        _ => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let state = AppState::new(ledger)
        .with_git_dir(bench_verdicts::location::workspace_root(&cwd))
        .with_access(access)
        .with_limits(limits);
    let listener = tokio::net::TcpListener::bind(cli.addr)
        .await
        .with_context(|| format!("cannot listen on {}", cli.addr))?;
    let bound = listener.local_addr().context("no local address")?;
    tracing::info!(
        ledger = %location,
        ingest,
        private,
        "bench-web listening on {scheme}://{bound}"
    );
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "bench-web: listening on {scheme}://{bound}").context("stdout")?;
        out.flush().context("stdout")?;
    }
    let options = web::serve::ServeOptions {
        limits,
        tls,
        ..web::serve::ServeOptions::default()
    };
    web::serve::serve(listener, web::app(state), options, shutdown_signal())
        .await
        .context("server error")
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        // Colours only on a terminal: a server log is usually a file or a journal.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    match runtime.block_on(serve(cli)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}
