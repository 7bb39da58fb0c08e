//! The handlers' shared state: the ledger, who may do what, where git revisions resolve, and the
//! trend cache. Below every handler module and the router that merges them (lib.rs), which all
//! import it.

use bench_store::Ledger;
use std::path::PathBuf;
use std::sync::Arc;

use crate::{access, trend};

/// How many analysed trend histories (suite and machine) the server keeps between requests.
pub const TREND_CACHE_CAPACITY: usize = 16;

/// Shared state of the handlers.
#[derive(Debug, Clone)]
pub struct AppState {
    ledger: Ledger,
    access: Arc<access::Access>,
    git_dir: Option<Arc<PathBuf>>,
    trends: Arc<trend::TrendCache>,
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
        }
    }

    /// Keeps at most `capacity` analysed trend histories between requests (0: none).
    #[must_use]
    pub fn with_trend_cache(mut self, capacity: usize) -> Self {
        self.trends = Arc::new(trend::TrendCache::new(capacity));
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

    /// The ledger.
    #[must_use]
    pub const fn ledger(&self) -> &Ledger {
        &self.ledger
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
}
