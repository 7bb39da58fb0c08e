//! The handlers' shared state: the ledger, who may do what, where git revisions resolve, and the
//! trend cache. Below every handler module and the router that merges them (lib.rs), which all
//! import it.

use crate::error::AppError;
use crate::kept::Kept;
use crate::limits::{AUTH_WINDOW, AuthThrottle, Limits, PushSlots};
use crate::metrics::Metrics;
use crate::{access, trend};
use axum::body::Bytes;
use axum::http::HeaderMap;
use bench_analysis::compare::Comparison;
use bench_model::RunId;
use bench_store::Ledger;
use bench_verdicts::comparison::Compared;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// How many analysed trend histories (suite and machine) the server keeps between requests.
pub const TREND_CACHE_CAPACITY: usize = 16;

/// How many dashboard verdicts (a newest run against its baseline) the server keeps.
pub const VERDICT_CACHE_CAPACITY: usize = 1024;

/// How many comparisons (compare pages and their API) and evidence answers (`gate --server`)
/// the server keeps, each: both hold every measurement of two runs, a few MB at 1,000
/// benchmarks.
pub const COMPARE_CACHE_CAPACITY: usize = 64;

/// How many drawn pages (trend, run and compare pages) the server keeps: a trend page of 50
/// charts of 1,250 points is about 5 MB, a run or compare page of 1,000 benchmarks under 1 MB.
pub const DRAWN_PAGE_CACHE_CAPACITY: usize = 32;

/// A drawn page: project, the page with its query, and a hash of what else it shows
/// ([`crate::pages::drawn`]).
pub type DrawnKey = (String, String, u64);

/// A dashboard verdict: project, base run, head run.
pub type VerdictKey = (String, RunId, RunId);

/// A comparison: project, base, head, threshold (its bits), runs of different suites allowed.
pub type ComparedKey = (String, RunId, RunId, u64, bool);

/// An evidence answer: project, base, head, runs of history.
pub type EvidenceKey = (String, RunId, RunId, usize);

/// Shared state of the handlers.
#[derive(Debug, Clone)]
pub struct AppState {
    ledger: Ledger,
    access: Arc<access::Access>,
    git_dir: Option<Arc<PathBuf>>,
    trends: Arc<trend::TrendCache>,
    limits: Limits,
    throttle: Arc<AuthThrottle>,
    pushes: PushSlots,
    metrics: Arc<Metrics>,
    verdicts: Arc<Kept<VerdictKey, Comparison>>,
    compared: Arc<Kept<ComparedKey, Compared>>,
    evidence: Arc<Kept<EvidenceKey, Bytes>>,
    drawn: Arc<Kept<DrawnKey, Bytes>>,
    preparing: Arc<tokio::sync::Semaphore>,
    comparing: Arc<tokio::sync::Semaphore>,
}

impl AppState {
    /// State over `ledger`, open to readers, with ingest disabled, git revisions not resolved,
    /// and a trend cache of [`TREND_CACHE_CAPACITY`] histories.
    #[must_use]
    pub fn new(ledger: Ledger) -> Self {
        Self {
            ledger,
            access: Arc::new(access::Access::open()),
            git_dir: None,
            trends: Arc::new(trend::TrendCache::new(TREND_CACHE_CAPACITY)),
            limits: Limits::default(),
            throttle: Arc::new(AuthThrottle::new(
                Limits::default().auth_failures,
                AUTH_WINDOW,
            )),
            pushes: PushSlots::new(Limits::default().max_concurrent_pushes),
            metrics: Arc::new(Metrics::default()),
            verdicts: Arc::new(Kept::new(VERDICT_CACHE_CAPACITY)),
            compared: Arc::new(Kept::new(COMPARE_CACHE_CAPACITY)),
            evidence: Arc::new(Kept::new(COMPARE_CACHE_CAPACITY)),
            drawn: Arc::new(Kept::new(DRAWN_PAGE_CACHE_CAPACITY)),
            preparing: Arc::new(tokio::sync::Semaphore::new(1)),
            comparing: Arc::new(tokio::sync::Semaphore::new(1)),
        }
    }

    /// Limits other than the defaults ([`crate::limits`]).
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.throttle = Arc::new(AuthThrottle::new(limits.auth_failures, AUTH_WINDOW));
        self.pushes = PushSlots::new(limits.max_concurrent_pushes);
        self.limits = limits;
        self
    }

    /// Keeps at most `capacity` analysed trend histories between requests, and as many drawn
    /// pages up to [`DRAWN_PAGE_CACHE_CAPACITY`] (0: none).
    #[must_use]
    pub fn with_trend_cache(mut self, capacity: usize) -> Self {
        self.trends = Arc::new(trend::TrendCache::new(capacity));
        self.drawn = Arc::new(Kept::new(capacity.min(DRAWN_PAGE_CACHE_CAPACITY)));
        self
    }

    /// Who may push and read ([`access`]). Pushing needs a ledger opened writable.
    #[must_use]
    pub fn with_access(mut self, access: access::Access) -> Self {
        self.access = Arc::new(access);
        self
    }

    /// Enables `POST /api/runs` for clients presenting `token` as a bearer token (a server open
    /// to readers with one push token). The ledger must have been opened writable.
    #[must_use]
    pub fn with_ingest_token(self, token: &str) -> Self {
        self.with_access(access::Access::open().with_token(access::Scope::Push, token))
    }

    /// Resolves git revisions in refs (`main`, `HEAD~1`) in the repository at `dir`.
    #[must_use]
    pub fn with_git_dir(mut self, dir: PathBuf) -> Self {
        self.git_dir = Some(Arc::new(dir));
        self
    }

    /// The ledger, scoped to the request's project ([`crate::project`]).
    #[must_use]
    pub fn ledger(&self) -> Ledger {
        let project = crate::project::current();
        if self.ledger.project() == &project {
            self.ledger.clone()
        } else {
            self.ledger.in_project(&project)
        }
    }

    /// Where git revisions are resolved, if anywhere.
    #[must_use]
    pub fn git_dir(&self) -> Option<&std::path::Path> {
        self.git_dir.as_deref().map(PathBuf::as_path)
    }

    /// The cache of analysed trends.
    #[must_use]
    pub fn trend_cache(&self) -> &trend::TrendCache {
        &self.trends
    }

    /// Who may push and read.
    #[must_use]
    pub fn access(&self) -> &access::Access {
        &self.access
    }

    /// The server's limits.
    #[must_use]
    pub const fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Slots for pushes at once.
    #[must_use]
    pub const fn push_slots(&self) -> &PushSlots {
        &self.pushes
    }

    /// The dashboard's kept verdicts.
    #[must_use]
    pub fn verdict_cache(&self) -> &Kept<VerdictKey, Comparison> {
        &self.verdicts
    }

    /// The kept comparisons of the compare page and `/api/compare`.
    #[must_use]
    pub fn compared_cache(&self) -> &Kept<ComparedKey, Compared> {
        &self.compared
    }

    /// The one permit of preparing a pushed run's views ([`crate::warm`]).
    #[must_use]
    pub const fn preparing(&self) -> &Arc<tokio::sync::Semaphore> {
        &self.preparing
    }

    /// The one permit of the dashboard's background comparison (`pages::dashboard`).
    #[must_use]
    pub const fn comparing(&self) -> &Arc<tokio::sync::Semaphore> {
        &self.comparing
    }

    /// The kept drawn pages.
    #[must_use]
    pub fn drawn_pages(&self) -> &Kept<DrawnKey, Bytes> {
        &self.drawn
    }

    /// The kept answers of `/api/evidence`, as JSON.
    #[must_use]
    pub fn evidence_cache(&self) -> &Kept<EvidenceKey, Bytes> {
        &self.evidence
    }

    /// The server's counters.
    #[must_use]
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Whether the request with `headers` from `peer` may do what `scope` allows
    /// ([`access::Access::check`]), refusing an address that presented too many wrong tokens
    /// ([`AuthThrottle`]) before looking at its token. Returns the allowing token's name.
    ///
    /// # Errors
    /// Those of [`access::Access::check`], and [`AppError::TooManyRequests`].
    pub fn authorize(
        &self,
        headers: &HeaderMap,
        peer: Option<IpAddr>,
        scope: access::Scope,
    ) -> Result<Option<String>, AppError> {
        let needs_token = scope == access::Scope::Push || self.access.is_private();
        if needs_token {
            self.throttle.check(peer)?;
        }
        match self.access.check(headers, scope) {
            Err(AppError::WrongToken) => {
                self.throttle.failed(peer);
                self.metrics.auth_failed();
                Err(AppError::WrongToken)
            }
            other => other.map(|name| name.map(str::to_owned)),
        }
    }
}
