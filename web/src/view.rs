//! Small presentation helpers shared by the pages: links, dates, labels. Values and
//! percentages are formatted by [`bench_model::format`]; nothing here does statistics.

use bench_model::{Direction, RunSummary, format};

/// Percent-encodes one path segment (RFC 3986 unreserved characters stay as they are).
#[must_use]
pub fn path_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `path` in the current project ([`crate::project::href`]).
#[must_use]
pub fn href(path: &str) -> String {
    crate::project::href(path)
}

/// `path?k=v&...` with the non-empty parameters, form-encoded (`path` as given: pass it
/// through [`href`] first for a page of the project).
#[must_use]
pub fn url(path: &str, params: &[(&str, &str)]) -> String {
    let kept: Vec<(&str, &str)> = params
        .iter()
        .copied()
        .filter(|(_, v)| !v.is_empty())
        .collect();
    match serde_urlencoded::to_string(&kept) {
        Ok(q) if !q.is_empty() => format!("{path}?{q}"),
        _ => path.to_owned(),
    }
}

/// The link to a run's page.
#[must_use]
pub fn run_href(id: i64) -> String {
    href(&format!("/runs/{id}"))
}

/// The link to a suite's trend page.
#[must_use]
pub fn suite_href(suite: &str) -> String {
    href(&format!("/suites/{}", path_segment(suite)))
}

/// The link to a comparison.
#[must_use]
pub fn compare_href(base: i64, head: i64) -> String {
    url(
        &href("/compare"),
        &[("base", &base.to_string()), ("head", &head.to_string())],
    )
}

/// `2026-01-02T03:04:05.678Z` as `2026-01-02 03:04`.
#[must_use]
pub fn datetime(rfc3339: &str) -> String {
    rfc3339
        .chars()
        .take(16)
        .collect::<String>()
        .replace('T', " ")
}

/// Seconds since the epoch as `2026-01-02`.
#[must_use]
pub fn date(secs: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(secs).map_or_else(
        |_| secs.to_string(),
        |t| format!("{:04}-{:02}-{:02}", t.year(), u8::from(t.month()), t.day()),
    )
}

/// A short machine label: the first 8 characters of the fingerprint.
#[must_use]
pub fn short_machine(fingerprint: &str) -> String {
    fingerprint.chars().take(8).collect()
}

/// How a machine is named on the pages: its testbed, else its short fingerprint.
#[must_use]
pub fn machine_label(machine: &bench_model::Machine) -> String {
    machine
        .testbed
        .clone()
        .unwrap_or_else(|| short_machine(&machine.fingerprint))
}

/// A short commit label (`abc1234567`, `+` when dirty), empty outside git.
#[must_use]
pub fn short_commit(commit: Option<&str>, dirty: bool) -> String {
    bench_report::short_commit(commit, dirty)
}

/// A value in its unit, or `—`.
#[must_use]
pub fn value_or_dash(value: Option<f64>, unit: &str) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format::value(v, unit))
}

/// The metric label of a result: the metric, with `↑` when higher is better.
#[must_use]
pub fn metric_label(metric: &str, direction: Direction) -> String {
    if direction == Direction::HigherIsBetter {
        format!("{metric} ↑")
    } else {
        metric.to_owned()
    }
}

/// A run as a row of the run lists.
#[derive(Debug, Clone)]
pub struct RunRow {
    /// Run id.
    pub id: i64,
    /// Link to the run.
    pub href: String,
    /// Suite.
    pub suite: String,
    /// Link to the suite's trend.
    pub suite_href: String,
    /// Recording time.
    pub created: String,
    /// Short commit.
    pub commit: String,
    /// First line of the commit message.
    pub summary: String,
    /// Branch.
    pub branch: String,
    /// Short machine fingerprint.
    pub machine: String,
    /// CPU model.
    pub cpu: String,
    /// Number of results.
    pub results: i64,
    /// Where the results came from.
    pub source: &'static str,
    /// Tags.
    pub tags: String,
    /// Whether the machine was busy while it ran (false when not recorded).
    pub busy: bool,
    /// Whether it is a `--quick` run.
    pub quick: bool,
}

impl RunRow {
    /// The row of a listed run.
    #[must_use]
    pub fn new(r: &RunSummary) -> Self {
        Self {
            id: r.id,
            href: run_href(r.id),
            suite: r.suite.clone(),
            suite_href: suite_href(&r.suite),
            created: datetime(&r.created_at),
            commit: short_commit(r.git_commit.as_deref(), r.git_dirty),
            summary: r.git_summary.clone().unwrap_or_default(),
            branch: r.git_branch.clone().unwrap_or_default(),
            machine: short_machine(&r.machine),
            cpu: r.cpu_model.clone(),
            results: r.results,
            source: r.source.name(),
            tags: r.tags.join(", "),
            busy: bench_analysis::contention::is_busy(r.conditions.as_ref()) == Some(true),
            quick: r.quick,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_encoded() {
        assert_eq!(path_segment("a b/<c>"), "a%20b%2F%3Cc%3E");
        assert_eq!(suite_href("json_vs_mathldbt"), "/suites/json_vs_mathldbt");
        assert_eq!(
            url("/runs", &[("suite", "a&b"), ("branch", ""), ("page", "2")]),
            "/runs?suite=a%26b&page=2"
        );
        assert_eq!(url("/runs", &[("suite", "")]), "/runs");
        assert_eq!(compare_href(1, 2), "/compare?base=1&head=2");
    }

    #[test]
    fn dates() {
        assert_eq!(datetime("2026-01-02T03:04:05.678Z"), "2026-01-02 03:04");
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(1_767_323_045), "2026-01-02");
    }
}
