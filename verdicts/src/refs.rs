//! Run references: how a user names a run on the command line or in a URL.
//!
//! A reference is, in order of precedence:
//!
//! | form | meaning |
//! |---|---|
//! | `42` | run id 42; when no run has that id, the text is tried as a name below (an all-digit hash prefix) |
//! | `5f3a9c1e#42` | run 42 of the ledger whose identity starts with `5f3a9c1e` (8 to 32 hex digits): this ledger's own run 42, or the copy here of that ledger's run 42. BENCHMARKS.md cites runs this way, since every ledger numbers its runs from 1 |
//! | `latest` | the newest run (of the suite in context, if any) |
//! | `previous` | the default baseline of `latest`: the newest earlier run of the same suite on the same machine that is a full measurement (`--quick` runs and `gate --confirm` re-runs are skipped; [`bench_store::LedgerStore::previous_run`]) |
//! | `merge-base:REV` | the newest run at the merge base of REV and `HEAD`, e.g. `merge-base:origin/main`: the commit a pull request's branch left main at |
//! | a tag | the run the tag names (`bench-run tag RUN NAME`) |
//! | a git revision | the newest run at that commit: `main`, `HEAD~1`, `v1.2`, a hash or prefix |
//!
//! Git revisions are resolved in the repository of the working directory; a hash prefix is
//! also matched against the ledger directly, so a ledger can be queried outside its repository.
//! `merge-base:REV` needs the repository (its `HEAD` is the other side), and fails with a
//! [`MergeBaseError`] when REV names no commit, when REV and `HEAD` share no history or when
//! there is no repository, and with [`RefError::NoRunAtMergeBase`], naming the commit, when no
//! run was recorded there.

use bench_git::{MERGE_BASE_PREFIX, merge_base_rev};
use bench_git::{MergeBase, MergeBaseError};
use bench_model::RunId;
use bench_store::{Ledger, LedgerError};
use std::path::Path;

/// A parsed run reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunRef {
    /// A run id.
    Id(RunId),
    /// The newest run.
    Latest,
    /// The default baseline of the newest run: the newest earlier full run of the same suite
    /// and machine.
    Previous,
    /// `merge-base:REV`: the newest run at the merge base of REV and `HEAD`.
    MergeBase(String),
    /// `LEDGER#RUN`: run `run` of the ledger whose identity starts with `ledger`.
    Cited {
        /// 8 to 32 lowercase hex digits of a ledger's identity.
        ledger: String,
        /// The run's id in that ledger.
        run: RunId,
    },
    /// A tag or a git revision.
    Name(String),
}

impl RunRef {
    /// Parses a reference; never fails (unknown names fail at resolution).
    #[must_use]
    pub fn parse(text: &str) -> Self {
        let text = text.trim();
        if let Some(rev) = merge_base_rev(text) {
            return Self::MergeBase(rev.to_owned());
        }
        if let Some((ledger, run)) = parse_citation(text) {
            return Self::Cited { ledger, run };
        }
        match text {
            "latest" => Self::Latest,
            "previous" => Self::Previous,
            // Only the canonical spelling of a number is an id, so an id that matches no run
            // can be tried again as the same text (`0123` is a name: a hash prefix or a tag).
            _ => match text.parse::<RunId>() {
                Ok(id) if id.to_string() == text => Self::Id(id),
                _ => Self::Name(text.to_owned()),
            },
        }
    }
}

impl std::fmt::Display for RunRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Id(id) => write!(f, "{id}"),
            Self::Latest => f.write_str("latest"),
            Self::Previous => f.write_str("previous"),
            Self::MergeBase(rev) => write!(f, "{MERGE_BASE_PREFIX}{rev}"),
            Self::Cited { ledger, run } => write!(f, "{ledger}#{run}"),
            Self::Name(name) => f.write_str(name),
        }
    }
}

/// Hex digits of a ledger's identity a citation carries: enough that two ledgers rarely share
/// them (one in four billion), few enough to read.
pub const CITATION_DIGITS: usize = 8;

/// The citation of run `run` of the ledger with identity `ledger_id`: `5f3a9c1e#42`, a name
/// that stays the run's in any ledger holding it or its copy.
#[must_use]
pub fn citation(ledger_id: &str, run: RunId) -> String {
    let digits = ledger_id.get(..CITATION_DIGITS).unwrap_or(ledger_id);
    format!("{digits}#{run}")
}

/// `(ledger prefix, run)` of a citation `HEX#N` (8 to 32 lowercase hex digits, a canonical
/// positive number), or `None`.
fn parse_citation(text: &str) -> Option<(String, RunId)> {
    let (ledger, run) = text.split_once('#')?;
    let hex = (CITATION_DIGITS..=32).contains(&ledger.len())
        && ledger
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let run: RunId = run.parse().ok().filter(|r: &RunId| *r > 0)?;
    (hex && text.ends_with(&format!("#{run}"))).then(|| (ledger.to_owned(), run))
}

/// Errors raised while resolving a reference.
#[derive(Debug, thiserror::Error)]
pub enum RefError {
    /// Nothing matched.
    #[error("no run matches {reference:?}{}{}", suite.as_ref().map(|s| format!(" in suite {s}")).unwrap_or_default(), hint.as_ref().map(|h| format!(": {h}")).unwrap_or_default())]
    NotFound {
        /// The reference as given.
        reference: String,
        /// The suite in context.
        suite: Option<String>,
        /// Why, when there is more to say than "nothing".
        hint: Option<String>,
    },
    /// `merge-base:REV` names no commit.
    #[error(transparent)]
    MergeBase(#[from] MergeBaseError),
    /// `merge-base:REV` names a commit at which no run is recorded.
    #[error(
        "no run{} at commit {commit}{}, the merge base of `{rev}` and HEAD \
         (`merge-base:{rev}`); record one at that commit, or name another baseline",
        suite.as_ref().map(|s| format!(" of suite {s}")).unwrap_or_default(),
        summary.as_ref().map(|s| format!(" ({s:?})")).unwrap_or_default()
    )]
    NoRunAtMergeBase {
        /// REV.
        rev: String,
        /// The merge base: a full commit hash.
        commit: String,
        /// The first line of its message.
        summary: Option<String>,
        /// The suite in context.
        suite: Option<String>,
    },
    /// The ledger failed.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

/// Resolves `reference` to a run id. `suite` narrows `latest`, `previous` and git revisions;
/// `git_dir` is where git revisions are looked up (`None` skips git, and fails `merge-base:`).
///
/// # Errors
/// [`RefError::NotFound`] when nothing matches; for `merge-base:REV`, [`RefError::MergeBase`]
/// when it names no commit and [`RefError::NoRunAtMergeBase`] when no run is recorded there.
pub async fn resolve(
    ledger: &Ledger,
    reference: &RunRef,
    suite: Option<&str>,
    git_dir: Option<&Path>,
) -> Result<RunId, RefError> {
    let not_found = |hint: Option<String>| RefError::NotFound {
        reference: reference.to_string(),
        suite: suite.map(str::to_owned),
        hint,
    };
    let found = match reference {
        RunRef::Id(id) => match ledger.run(*id).await? {
            Some(run) => Some(run.id),
            // A commit whose hash starts with digits only, named by its prefix.
            None => resolve_name(ledger, &id.to_string(), suite, git_dir).await?,
        },
        RunRef::Latest => ledger.latest_run(suite).await?,
        RunRef::Previous => match ledger.latest_run(suite).await? {
            Some(latest) => match ledger.previous_run(latest).await? {
                Some(previous) => Some(previous),
                None => {
                    return Err(not_found(Some(format!(
                        "`previous` is the newest full run of the latest run's suite on its \
                         machine before it (run #{latest}), and none was recorded: --quick runs, \
                         the two sides of a `bench-run ab` and `gate --confirm` re-runs never \
                         count. Record one with `bench-run --suite S`, or name a run by its id \
                         (`bench-run list`)"
                    ))));
                }
            },
            None => None,
        },
        RunRef::MergeBase(rev) => {
            let base = resolve_merge_base(rev, git_dir)?;
            return match ledger.run_at_commit(&base.commit, suite).await? {
                Some(run) => Ok(run),
                None => Err(RefError::NoRunAtMergeBase {
                    rev: rev.clone(),
                    commit: base.commit,
                    summary: base.summary,
                    suite: suite.map(str::to_owned),
                }),
            };
        }
        RunRef::Cited {
            ledger: prefix,
            run,
        } => {
            let own = ledger.ledger_id().await?;
            if own.starts_with(prefix.as_str()) {
                return match ledger.run(*run).await? {
                    Some(found) => Ok(found.id),
                    None => Err(not_found(Some(format!(
                        "this ledger ({}) has no run #{run}",
                        citation(&own, *run).split('#').next().unwrap_or_default()
                    )))),
                };
            }
            let copies = ledger.copies_of(prefix, *run).await?;
            return match copies.as_slice() {
                [copy] => Ok(*copy),
                [] => Err(not_found(Some(format!(
                    "it was recorded in ledger {prefix}, and this ledger ({}) holds no copy of \
                     it; copy that ledger here with `bench-run ledger copy --from LEDGER`, or \
                     look it up there",
                    own.get(..CITATION_DIGITS).unwrap_or(&own)
                )))),
                _ => Err(not_found(Some(format!(
                    "runs #{run} of {} ledgers whose identities start with {prefix} were copied \
                     here; give more of the ledger's digits",
                    copies.len()
                )))),
            };
        }
        RunRef::Name(name) => match resolve_name(ledger, name, suite, git_dir).await? {
            Some(run) => Some(run),
            None => return Err(not_found(name_hint(name, git_dir))),
        },
    };
    found.ok_or_else(|| not_found(None))
}

/// Why a name matched nothing, when the reason is not "no such run": outside a git
/// repository, a git revision (`HEAD`, `main`, `HEAD~1`) cannot be resolved at all.
fn name_hint(name: &str, git_dir: Option<&Path>) -> Option<String> {
    let in_repo = git_dir.is_some_and(bench_git::is_repository);
    (!in_repo).then(|| {
        format!(
            "it is no run id, tag or recorded commit's hash prefix, and {} is not in a git \
             repository, so `{name}` cannot be read as a git revision; run the command inside \
             the repository, or name the run by its id (`bench-run list`)",
            git_dir.map_or_else(|| "this directory".to_owned(), |d| d.display().to_string())
        )
    })
}

/// The commit `merge-base:REV` names (`rev` without the prefix) in the repository containing
/// `git_dir`: the merge base of REV and that repository's `HEAD`.
///
/// # Errors
/// A [`MergeBaseError`], also when `git_dir` is `None` ([`MergeBaseError::NoRepository`]).
pub fn resolve_merge_base(rev: &str, git_dir: Option<&Path>) -> Result<MergeBase, MergeBaseError> {
    match git_dir {
        Some(dir) => bench_git::merge_base_with_head(dir, rev),
        None if rev.trim().is_empty() => Err(MergeBaseError::MissingRevision),
        None => Err(MergeBaseError::NoRepository {
            rev: rev.trim().to_owned(),
        }),
    }
}

async fn resolve_name(
    ledger: &Ledger,
    name: &str,
    suite: Option<&str>,
    git_dir: Option<&Path>,
) -> Result<Option<RunId>, LedgerError> {
    if let Some(run) = ledger.run_by_tag(name).await? {
        return Ok(Some(run));
    }
    if let Some(commit) = git_dir.and_then(|dir| bench_git::commit_of(dir, name))
        && let Some(run) = ledger.run_at_commit(&commit, suite).await?
    {
        return Ok(Some(run));
    }
    let is_hash_prefix = name.len() >= 4 && name.chars().all(|c| c.is_ascii_hexdigit());
    if is_hash_prefix {
        return ledger
            .run_at_commit(&name.to_ascii_lowercase(), suite)
            .await;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_model::{NewRun, RunProvenance, RunSource};

    #[test]
    fn parses_every_form() {
        assert_eq!(RunRef::parse("42"), RunRef::Id(42));
        assert_eq!(RunRef::parse(" latest "), RunRef::Latest);
        assert_eq!(RunRef::parse("previous"), RunRef::Previous);
        assert_eq!(RunRef::parse("main"), RunRef::Name("main".into()));
        assert_eq!(RunRef::parse("HEAD~1"), RunRef::Name("HEAD~1".into()));
        assert_eq!(RunRef::parse("-1"), RunRef::Id(-1));
        assert_eq!(RunRef::parse("0123"), RunRef::Name("0123".into()));
        assert_eq!(RunRef::parse("+5"), RunRef::Name("+5".into()));
        let cited = |ledger: &str, run| RunRef::Cited {
            ledger: ledger.to_owned(),
            run,
        };
        assert_eq!(RunRef::parse("5f3a9c1e#42"), cited("5f3a9c1e", 42));
        assert_eq!(
            RunRef::parse(&citation(&"ab".repeat(16), 7)),
            cited("abababab", 7)
        );
        assert_eq!(
            RunRef::parse(&format!("{}#1", "a".repeat(32))),
            cited(&"a".repeat(32), 1)
        );
        // Not citations: too few or too many digits, upper case, not hex, not a run number.
        for text in [
            "5f3a9c1#42",
            &format!("{}#1", "a".repeat(33)),
            "5F3A9C1E#42",
            "5f3a9c1g#42",
            "5f3a9c1e#0",
            "5f3a9c1e#042",
            "5f3a9c1e#-1",
            "5f3a9c1e#",
            "5f3a9c1e#4#2",
        ] {
            assert_eq!(RunRef::parse(text), RunRef::Name(text.into()), "{text}");
        }
        assert_eq!(cited("5f3a9c1e", 42).to_string(), "5f3a9c1e#42");
    }

    #[test]
    fn parses_merge_base_references() {
        let merge_base = |rev: &str| RunRef::MergeBase(rev.to_owned());
        assert_eq!(
            RunRef::parse("merge-base:origin/main"),
            merge_base("origin/main")
        );
        assert_eq!(RunRef::parse(" merge-base: main "), merge_base("main"));
        assert_eq!(RunRef::parse("merge-base:HEAD~2"), merge_base("HEAD~2"));
        assert_eq!(RunRef::parse("merge-base:v1.2"), merge_base("v1.2"));
        assert_eq!(RunRef::parse("merge-base:1234"), merge_base("1234"));
        // Nothing after the colon still parses; resolution says what is missing.
        assert_eq!(RunRef::parse("merge-base:"), merge_base(""));
        // Only the exact prefix: other spellings are tags or git revisions.
        assert_eq!(
            RunRef::parse("merge-base"),
            RunRef::Name("merge-base".into())
        );
        assert_eq!(
            RunRef::parse("Merge-Base:main"),
            RunRef::Name("Merge-Base:main".into())
        );
        assert_eq!(
            RunRef::parse("merge-base-main"),
            RunRef::Name("merge-base-main".into())
        );
        assert_eq!(
            RunRef::parse("main:merge-base:x"),
            RunRef::Name("main:merge-base:x".into())
        );
        assert_eq!(
            merge_base_rev(" merge-base:origin/main"),
            Some("origin/main")
        );
        assert_eq!(merge_base_rev("merge-base: "), Some(""));
        assert_eq!(merge_base_rev("origin/main"), None);
        assert_eq!(
            RunRef::parse("merge-base:origin/main").to_string(),
            "merge-base:origin/main"
        );
    }

    #[tokio::test]
    async fn merge_base_needs_a_revision_and_a_repository() -> Result<(), RefError> {
        let ledger = Ledger::in_memory().await?;
        let resolve_text = |text: &str| {
            let reference = RunRef::parse(text);
            let ledger = &ledger;
            async move { resolve(ledger, &reference, None, None).await }
        };
        let no_repository = resolve_text("merge-base:main").await;
        assert!(
            matches!(
                &no_repository,
                Err(RefError::MergeBase(MergeBaseError::NoRepository { rev })) if rev == "main"
            ),
            "{no_repository:?}"
        );
        let missing = resolve_text("merge-base:").await;
        assert!(
            matches!(
                &missing,
                Err(RefError::MergeBase(MergeBaseError::MissingRevision))
            ),
            "{missing:?}"
        );
        if let Err(e) = missing {
            assert!(e.to_string().contains("merge-base:origin/main"), "{e}");
        }
        Ok(())
    }

    fn run_at(commit: &str) -> NewRun {
        let mut provenance = RunProvenance {
            suite: "s".to_owned(),
            ..RunProvenance::default()
        };
        provenance.git.commit = Some(commit.to_owned());
        NewRun {
            source: RunSource::ImportBmf,
            provenance,
            measurements: vec![bench_model::Measurement::time_ns("b", 1.0)],
        }
    }

    fn run_of(suite: &str, source: RunSource, quick: bool) -> NewRun {
        NewRun {
            source,
            provenance: RunProvenance {
                suite: suite.to_owned(),
                quick,
                ..RunProvenance::default()
            },
            measurements: vec![bench_model::Measurement::time_ns("b", 1.0)],
        }
    }

    #[tokio::test]
    #[allow(clippy::unwrap_used)]
    async fn previous_skips_quick_runs_and_confirmation_reruns() -> Result<(), RefError> {
        let ledger = Ledger::in_memory().await?;
        let full = ledger
            .record_run(&run_of("s", RunSource::BenchRun, false))
            .await?;
        let other_suite = ledger
            .record_run(&run_of("t", RunSource::BenchRun, false))
            .await?;
        let quick = ledger
            .record_run(&run_of("s", RunSource::BenchRun, true))
            .await?;
        let confirmation = ledger
            .record_run(&run_of("s", RunSource::Confirmation, false))
            .await?;
        let calibration = ledger
            .record_run(&run_of("s", RunSource::Calibration, false))
            .await?;
        let quick_head = ledger
            .record_run(&run_of("s", RunSource::BenchRun, true))
            .await?;
        // A quick head's baseline is the newest full run; quick and confirmation runs are
        // nobody's default baseline.
        assert_eq!(ledger.previous_run(quick_head).await?, Some(calibration));
        assert_eq!(ledger.previous_run(calibration).await?, Some(full));
        assert_eq!(ledger.previous_run(confirmation).await?, Some(full));
        assert_eq!(ledger.previous_run(quick).await?, Some(full));
        assert_eq!(ledger.previous_run(full).await?, None);
        assert_eq!(ledger.previous_run(other_suite).await?, None);
        let previous = resolve(&ledger, &RunRef::Previous, Some("s"), None).await?;
        assert_eq!(previous, calibration);
        // Outside a git repository, a git revision says why it cannot be one.
        let outside = tempfile::tempdir().map_err(|e| RefError::NotFound {
            reference: e.to_string(),
            suite: None,
            hint: None,
        })?;
        let err = resolve(
            &ledger,
            &RunRef::parse("HEAD"),
            Some("s"),
            Some(outside.path()),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("is not in a git repository, so `HEAD` cannot be read"),
            "{err}"
        );
        // With only quick runs before it, `previous` says why nothing matched.
        let only_quick = Ledger::in_memory().await?;
        only_quick
            .record_run(&run_of("q", RunSource::BenchRun, true))
            .await?;
        let latest = only_quick
            .record_run(&run_of("q", RunSource::BenchRun, true))
            .await?;
        let err = resolve(&only_quick, &RunRef::Previous, Some("q"), None)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("no run matches \"previous\" in suite q: ")
                && err.contains(&format!("(run #{latest})"))
                && err.contains("--quick runs, the two sides of a `bench-run ab`"),
            "{err}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn an_all_digit_hash_prefix_finds_its_run_and_ids_come_first() -> Result<(), RefError> {
        let ledger = Ledger::in_memory().await?;
        let digits = ledger
            .record_run(&run_at("1234567890abcdef1234567890abcdef12345678"))
            .await?;
        let hex = ledger
            .record_run(&run_at("0badc0de1234567890abcdef1234567890abcdef"))
            .await?;
        let find = |text: &str| {
            let reference = RunRef::parse(text);
            let ledger = &ledger;
            async move { resolve(ledger, &reference, None, None).await }
        };
        assert_eq!(find("12345678").await?, digits);
        assert_eq!(find("0badc0de").await?, hex);
        // A number that is a run id names that run, not a commit starting with it.
        assert_eq!(find(&hex.to_string()).await?, hex);
        assert!(matches!(
            find("98765432").await,
            Err(RefError::NotFound { .. })
        ));
        Ok(())
    }
}
