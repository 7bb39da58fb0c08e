//! Artifacts: files kept in the ledger with a run and one of its benchmarks, such as the
//! profiles that explain a verdict (issue 46).
//!
//! An artifact is append-only like everything else in the ledger: it is recorded once, never
//! replaced, and read back byte for byte with its SHA-256. Each has a [`ArtifactKind`], which
//! fixes the media type it is served with, so a stored file can never be served as HTML.
//!
//! | kind | name | media type | what |
//! |---|---|---|---|
//! | [`ArtifactKind::FoldedStacks`] | `folded` | `text/plain` | collapsed stacks, `a;b;c 42` per line |
//! | [`ArtifactKind::Flamegraph`] | `flamegraph` | `image/svg+xml` | a flamegraph of one run |
//! | [`ArtifactKind::DiffFlamegraph`] | `diff-flamegraph` | `image/svg+xml` | head against a base run ([`NewArtifact::against`]) |
//! | [`ArtifactKind::FunctionCounts`] | `function-counts` | `application/json` | per-function self counts, [`FunctionCounts`] |
//!
//! Glossary: the **base** of an artifact is the run it was compared against (a differential
//! flamegraph, a function-count diff); its **profiler** names the tool that sampled or counted
//! (`perf`, `callgrind`, `pprof`).

use crate::run::RunId;
use serde::{Deserialize, Serialize};

/// Row id of an artifact.
pub type ArtifactId = i64;

/// Largest artifact the ledger keeps, in bytes: a flamegraph of a deep profile is a few MiB;
/// anything near this is a mistake (a raw `perf.data`), not a rendering.
pub const MAX_ARTIFACT_BYTES: usize = 32 * 1024 * 1024;

/// Longest benchmark id of an artifact, in bytes (the push format's limit on names).
pub const MAX_ARTIFACT_NAME_BYTES: usize = 1024;

/// Longest profiler name, in bytes.
pub const MAX_PROFILER_BYTES: usize = 32;

/// Known profiler names ([`NewArtifact::profiler`] is open to others of the same shape).
pub mod profiler {
    /// `perf record` samples (wall-time suites).
    pub const PERF: &str = "perf";
    /// valgrind's callgrind exact counts (gungraun suites).
    pub const CALLGRIND: &str = "callgrind";
    /// pprof samples.
    pub const PPROF: &str = "pprof";
}

/// What an artifact holds. Persisted by [`ArtifactKind::code`]; named in URLs and the push
/// format by [`ArtifactKind::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArtifactKind {
    /// Collapsed stacks (`frame;frame;frame count` per line), the input of a flamegraph.
    #[serde(rename = "folded")]
    FoldedStacks,
    /// A flamegraph (SVG).
    Flamegraph,
    /// A differential flamegraph of a head run against its base (SVG).
    DiffFlamegraph,
    /// Per-function self counts of base and head, as [`FunctionCounts`] JSON.
    FunctionCounts,
}

impl ArtifactKind {
    /// Every kind, in display order.
    pub const ALL: [Self; 4] = [
        Self::Flamegraph,
        Self::DiffFlamegraph,
        Self::FunctionCounts,
        Self::FoldedStacks,
    ];

    /// Permanent storage code.
    #[must_use]
    pub const fn code(self) -> i64 {
        match self {
            Self::FoldedStacks => 1,
            Self::Flamegraph => 2,
            Self::DiffFlamegraph => 3,
            Self::FunctionCounts => 4,
        }
    }

    /// Inverse of [`ArtifactKind::code`].
    #[must_use]
    pub const fn from_code(code: i64) -> Option<Self> {
        match code {
            1 => Some(Self::FoldedStacks),
            2 => Some(Self::Flamegraph),
            3 => Some(Self::DiffFlamegraph),
            4 => Some(Self::FunctionCounts),
            _ => None,
        }
    }

    /// The kind's name, as in the push format.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::FoldedStacks => "folded",
            Self::Flamegraph => "flamegraph",
            Self::DiffFlamegraph => "diff-flamegraph",
            Self::FunctionCounts => "function-counts",
        }
    }

    /// Inverse of [`ArtifactKind::name`].
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The one media type an artifact of this kind is stored and served with.
    #[must_use]
    pub const fn media_type(self) -> &'static str {
        match self {
            Self::FoldedStacks => "text/plain",
            Self::Flamegraph | Self::DiffFlamegraph => "image/svg+xml",
            Self::FunctionCounts => "application/json",
        }
    }

    /// Whether the artifact compares against a base run (and must name it).
    #[must_use]
    pub const fn needs_base(self) -> bool {
        matches!(self, Self::DiffFlamegraph)
    }
}

impl std::fmt::Display for ArtifactKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An artifact to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewArtifact {
    /// The run it belongs to.
    pub run: RunId,
    /// The benchmark's full id in that run.
    pub benchmark: String,
    /// What it holds.
    pub kind: ArtifactKind,
    /// The tool that produced the profile: [`profiler::PERF`], [`profiler::CALLGRIND`],
    /// [`profiler::PPROF`] (lowercase ASCII letters, digits and `-`).
    pub profiler: String,
    /// The base run, for a differential flamegraph or a diff of function counts.
    pub against: Option<RunId>,
    /// Its media type: always [`ArtifactKind::media_type`] of its kind.
    pub media_type: String,
    /// The content.
    pub bytes: Vec<u8>,
}

impl NewArtifact {
    /// An artifact of `kind` with the kind's media type.
    #[must_use]
    pub fn new(
        run: RunId,
        benchmark: impl Into<String>,
        kind: ArtifactKind,
        profiler: impl Into<String>,
        against: Option<RunId>,
        bytes: Vec<u8>,
    ) -> Self {
        Self {
            run,
            benchmark: benchmark.into(),
            kind,
            profiler: profiler.into(),
            against,
            media_type: kind.media_type().to_owned(),
            bytes,
        }
    }

    /// Checks everything that does not need the ledger: the names, the media type, the size
    /// and the content's shape ([`check_content`]).
    ///
    /// # Errors
    /// The first [`ArtifactError`] found.
    pub fn check(&self) -> Result<(), ArtifactError> {
        check_benchmark(&self.benchmark)?;
        check_profiler(&self.profiler)?;
        if self.media_type != self.kind.media_type() {
            return Err(ArtifactError::MediaType {
                kind: self.kind,
                media_type: truncated(&self.media_type),
            });
        }
        if self.against == Some(self.run) {
            return Err(ArtifactError::AgainstItself(self.run));
        }
        if self.kind.needs_base() && self.against.is_none() {
            return Err(ArtifactError::NoBase(self.kind));
        }
        check_content(self.kind, &self.bytes)
    }
}

/// An artifact as listed: everything but its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactSummary {
    /// Row id.
    pub id: ArtifactId,
    /// The run it belongs to.
    pub run: RunId,
    /// The benchmark's full id.
    pub benchmark: String,
    /// What it holds.
    pub kind: ArtifactKind,
    /// The tool that produced it.
    pub profiler: String,
    /// The base run it compares against, if any.
    pub against: Option<RunId>,
    /// Its media type.
    pub media_type: String,
    /// Its size in bytes.
    pub size: u64,
    /// SHA-256 of its bytes, 64 lowercase hex digits.
    pub sha256: String,
    /// When it was recorded (RFC 3339, UTC).
    pub created_at: String,
}

/// An artifact with its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredArtifact {
    /// What it is.
    pub summary: ArtifactSummary,
    /// The content.
    pub bytes: Vec<u8>,
}

/// Why an artifact cannot be recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArtifactError {
    /// Over [`MAX_ARTIFACT_BYTES`].
    #[error("an artifact of {size} bytes is larger than the ledger keeps ({max} bytes)")]
    TooLarge {
        /// Its size.
        size: usize,
        /// The cap.
        max: usize,
    },
    /// No bytes at all.
    #[error("an artifact of kind {0} is empty")]
    Empty(ArtifactKind),
    /// An empty, overlong or control-character benchmark id.
    #[error(
        "an artifact's benchmark id is 1 to {MAX_ARTIFACT_NAME_BYTES} bytes without control \
         characters, got {0:?}"
    )]
    Benchmark(String),
    /// A profiler name not of the accepted shape.
    #[error(
        "a profiler is named by 1 to {MAX_PROFILER_BYTES} lowercase ASCII letters, digits or \
         '-' (perf, callgrind, pprof), got {0:?}"
    )]
    Profiler(String),
    /// A media type other than the kind's.
    #[error("an artifact of kind {kind} is {}, got {media_type:?}", kind.media_type())]
    MediaType {
        /// The kind.
        kind: ArtifactKind,
        /// The media type given.
        media_type: String,
    },
    /// A base run that is the run itself.
    #[error("an artifact of run {0} cannot compare against run {0} itself")]
    AgainstItself(RunId),
    /// A kind that compares against a base, without one.
    #[error("an artifact of kind {0} compares against a base run; none was named")]
    NoBase(ArtifactKind),
    /// Content not of the kind's shape.
    #[error("the content is not a valid {kind} artifact: {reason}")]
    Content {
        /// The kind.
        kind: ArtifactKind,
        /// What is wrong.
        reason: String,
    },
}

fn truncated(s: &str) -> String {
    s.chars().take(80).collect()
}

fn check_benchmark(benchmark: &str) -> Result<(), ArtifactError> {
    if benchmark.trim().is_empty()
        || benchmark.len() > MAX_ARTIFACT_NAME_BYTES
        || benchmark.chars().any(char::is_control)
    {
        return Err(ArtifactError::Benchmark(truncated(benchmark)));
    }
    Ok(())
}

fn check_profiler(profiler: &str) -> Result<(), ArtifactError> {
    let shaped = profiler
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if profiler.is_empty() || profiler.len() > MAX_PROFILER_BYTES || !shaped {
        return Err(ArtifactError::Profiler(truncated(profiler)));
    }
    Ok(())
}

/// Checks that `bytes` are of the shape `kind` promises: within [`MAX_ARTIFACT_BYTES`], not
/// empty, UTF-8 text for every kind, an `<svg` element for the flamegraphs, [`FunctionCounts`]
/// JSON for function counts. This catches truncated or mislabelled uploads; it is no sanitizer
/// (an SVG is served under a content security policy instead).
///
/// # Errors
/// [`ArtifactError::TooLarge`], [`ArtifactError::Empty`] or [`ArtifactError::Content`].
pub fn check_content(kind: ArtifactKind, bytes: &[u8]) -> Result<(), ArtifactError> {
    if bytes.len() > MAX_ARTIFACT_BYTES {
        return Err(ArtifactError::TooLarge {
            size: bytes.len(),
            max: MAX_ARTIFACT_BYTES,
        });
    }
    if bytes.is_empty() {
        return Err(ArtifactError::Empty(kind));
    }
    let content = |reason: String| ArtifactError::Content { kind, reason };
    let text = std::str::from_utf8(bytes).map_err(|e| content(format!("not UTF-8 text: {e}")))?;
    match kind {
        ArtifactKind::FoldedStacks => Ok(()),
        ArtifactKind::Flamegraph | ArtifactKind::DiffFlamegraph => {
            if text.contains("<svg") && text.trim_end().ends_with('>') {
                Ok(())
            } else {
                Err(content("not an SVG document".to_owned()))
            }
        }
        ArtifactKind::FunctionCounts => FunctionCounts::from_json(bytes).map(|_| ()),
    }
}

/// What a per-function count is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CountUnit {
    /// Profiler samples (perf, pprof).
    Samples,
    /// Executed instructions (callgrind).
    Instructions,
}

impl CountUnit {
    /// The unit's name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Samples => "samples",
            Self::Instructions => "instructions",
        }
    }
}

/// One function of a [`FunctionCounts`] table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FunctionCountRow {
    /// The function's symbol, as the profiler named it (untrusted text).
    pub function: String,
    /// Its share of the base run's total, 0 to 1.
    pub base_share: f64,
    /// Its share of the head run's total, 0 to 1.
    pub head_share: f64,
    /// Its self count in the base run.
    pub base: u64,
    /// Its self count in the head run.
    pub head: u64,
    /// The change from base to head: for [`CountUnit::Samples`], the change in the function's
    /// estimated self time as a share of the base's time, `head_share * r - base_share` with
    /// `r` the benchmark's measured head/base time (1 when unknown: then the share's change;
    /// run lengths differ, so counts are not comparable); for [`CountUnit::Instructions`],
    /// head minus base (exact counts of one execution each). Rows rank by its magnitude.
    pub change: f64,
}

/// The `function-counts` artifact: per-function self counts of a base and a head run, in
/// JSON: `{"unit": "samples" | "instructions", "rows": [{"function", "base_share",
/// "head_share", "base", "head", "change"}]}`. A profile of one run alone has base counts of
/// zero.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FunctionCounts {
    /// What the counts are of.
    pub unit: CountUnit,
    /// One row per function.
    pub rows: Vec<FunctionCountRow>,
}

impl FunctionCounts {
    /// Reads and checks the JSON form.
    ///
    /// # Errors
    /// [`ArtifactError::Content`] for invalid JSON, a non-finite share or change, or a share
    /// outside 0 to 1.
    pub fn from_json(bytes: &[u8]) -> Result<Self, ArtifactError> {
        let content = |reason: String| ArtifactError::Content {
            kind: ArtifactKind::FunctionCounts,
            reason,
        };
        let counts: Self = serde_json::from_slice(bytes).map_err(|e| content(e.to_string()))?;
        for (i, row) in counts.rows.iter().enumerate() {
            let shares_ok = [row.base_share, row.head_share]
                .iter()
                .all(|s| s.is_finite() && (0.0..=1.0).contains(s));
            if !shares_ok || !row.change.is_finite() {
                return Err(content(format!(
                    "rows[{i}]: shares are finite numbers from 0 to 1 and the change is finite"
                )));
            }
        }
        Ok(counts)
    }

    /// The `n` rows with the largest change in magnitude, largest first (ties by function
    /// name, so the order is stable).
    #[must_use]
    pub fn top_by_change(&self, n: usize) -> Vec<&FunctionCountRow> {
        let mut rows: Vec<&FunctionCountRow> = self.rows.iter().collect();
        rows.sort_by(|a, b| {
            b.change
                .abs()
                .total_cmp(&a.change.abs())
                .then_with(|| a.function.cmp(&b.function))
        });
        rows.truncate(n);
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_codes_and_names_are_permanent() {
        let pinned = [
            (ArtifactKind::FoldedStacks, 1, "folded", "text/plain"),
            (ArtifactKind::Flamegraph, 2, "flamegraph", "image/svg+xml"),
            (
                ArtifactKind::DiffFlamegraph,
                3,
                "diff-flamegraph",
                "image/svg+xml",
            ),
            (
                ArtifactKind::FunctionCounts,
                4,
                "function-counts",
                "application/json",
            ),
        ];
        for (kind, code, name, media) in pinned {
            assert_eq!(kind.code(), code);
            assert_eq!(ArtifactKind::from_code(code), Some(kind));
            assert_eq!(kind.name(), name);
            assert_eq!(ArtifactKind::from_name(name), Some(kind));
            assert_eq!(kind.media_type(), media);
            let json = serde_json::to_string(&kind).unwrap_or_default();
            assert_eq!(json, format!("\"{name}\""));
        }
        assert_eq!(ArtifactKind::from_code(0), None);
        assert_eq!(ArtifactKind::from_name("svg"), None);
    }

    fn artifact(kind: ArtifactKind, bytes: &[u8]) -> NewArtifact {
        let against = kind.needs_base().then_some(1);
        NewArtifact::new(2, "g/f/1", kind, profiler::PERF, against, bytes.to_vec())
    }

    #[test]
    fn well_formed_artifacts_pass() {
        let cases: [(ArtifactKind, &[u8]); 4] = [
            (ArtifactKind::FoldedStacks, b"main;f 3\nmain;g 1\n"),
            (ArtifactKind::Flamegraph, b"<?xml version=\"1.0\"?><svg></svg>\n"),
            (ArtifactKind::DiffFlamegraph, b"<svg xmlns=\"x\"/>"),
            (
                ArtifactKind::FunctionCounts,
                br#"{"unit":"samples","rows":[{"function":"f","base_share":0.5,"head_share":0.25,"base":2,"head":1,"change":-0.25}]}"#,
            ),
        ];
        for (i, (kind, bytes)) in cases.into_iter().enumerate() {
            assert_eq!(artifact(kind, bytes).check(), Ok(()), "case {i}");
        }
    }

    #[test]
    fn malformed_artifacts_say_why() {
        let mut wrong_media = artifact(ArtifactKind::Flamegraph, b"<svg/>");
        wrong_media.media_type = "text/html".to_owned();
        let mut no_base = artifact(ArtifactKind::DiffFlamegraph, b"<svg/>");
        no_base.against = None;
        let mut itself = artifact(ArtifactKind::FoldedStacks, b"a 1");
        itself.against = Some(itself.run);
        let mut bad_profiler = artifact(ArtifactKind::FoldedStacks, b"a 1");
        bad_profiler.profiler = "Perf Record".to_owned();
        let mut bad_name = artifact(ArtifactKind::FoldedStacks, b"a 1");
        bad_name.benchmark = "a\nb".to_owned();
        let cases = [
            (wrong_media, "is image/svg+xml"),
            (no_base, "none was named"),
            (itself, "itself"),
            (bad_profiler, "profiler"),
            (bad_name, "benchmark id"),
            (artifact(ArtifactKind::FoldedStacks, b""), "empty"),
            (artifact(ArtifactKind::FoldedStacks, b"\xff\xfe"), "UTF-8"),
            (artifact(ArtifactKind::Flamegraph, b"<html>"), "SVG"),
            (
                artifact(ArtifactKind::FunctionCounts, b"{\"unit\":\"samples\""),
                "function-counts",
            ),
            (
                artifact(
                    ArtifactKind::FunctionCounts,
                    br#"{"unit":"samples","rows":[{"function":"f","base_share":2,"head_share":0,"base":0,"head":0,"change":0}]}"#,
                ),
                "rows[0]",
            ),
        ];
        for (i, (a, want)) in cases.into_iter().enumerate() {
            let err = a.check().err().map(|e| e.to_string()).unwrap_or_default();
            assert!(err.contains(want), "case {i}: {err:?}");
        }
    }

    #[test]
    fn the_size_cap_is_checked_before_the_content() {
        let big = vec![b'a'; MAX_ARTIFACT_BYTES + 1];
        assert_eq!(
            check_content(ArtifactKind::FoldedStacks, &big),
            Err(ArtifactError::TooLarge {
                size: MAX_ARTIFACT_BYTES + 1,
                max: MAX_ARTIFACT_BYTES
            })
        );
    }

    #[test]
    fn top_functions_rank_by_the_size_of_their_change() {
        let row = |function: &str, change: f64| FunctionCountRow {
            function: function.to_owned(),
            base_share: 0.0,
            head_share: 0.0,
            base: 0,
            head: 0,
            change,
        };
        let counts = FunctionCounts {
            unit: CountUnit::Instructions,
            rows: vec![row("a", 0.1), row("b", -0.3), row("c", 0.3), row("d", 0.0)],
        };
        let top: Vec<&str> = counts
            .top_by_change(3)
            .iter()
            .map(|r| r.function.as_str())
            .collect();
        assert_eq!(top, ["b", "c", "a"]);
    }
}
