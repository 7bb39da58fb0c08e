//! What a bisection found and what it cost, as a table, markdown or JSON.

use super::search::{Decision, Found, SOLE_CHANGE_SHARE, Status};
use bench_analysis::paired::PairedChange;
use bench_runner::ab::ChainCommit;
use serde::Serialize;

/// One tested commit, as the report shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// 1-based step number (0: the ends).
    pub step: usize,
    /// The commit.
    pub commit: ChainCommit,
    /// What was learnt.
    #[serde(flatten)]
    pub status: Status,
    /// The rounds' change against good, when measured.
    pub change: Option<PairedChange>,
    /// The recorded runs (good's, the commit's), when measured.
    pub runs: Option<(i64, i64)>,
}

/// The culprit's own effect: its parent against it.
#[derive(Debug, Clone, Serialize)]
pub struct CulpritEffect {
    /// The change (log scale) over the final step's rounds.
    pub change: PairedChange,
    /// Its share of the whole range's effect.
    pub share_of_range: Option<f64>,
    /// Whether the range holds more than one change ([`SOLE_CHANGE_SHARE`]).
    pub more_than_one_change: bool,
    /// The recorded runs (parent's, culprit's).
    pub runs: (i64, i64),
}

/// What a bisection found and what it cost.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The suite.
    pub suite: String,
    /// The good end.
    pub good: ChainCommit,
    /// The bad end.
    pub bad: ChainCommit,
    /// Commits after good up to bad.
    pub commits_in_range: usize,
    /// The benchmarks bad confirmed slower.
    pub targets: Vec<String>,
    /// The whole range's effect (good against bad, log scale).
    pub range_effect: PairedChange,
    /// The threshold between good and bad, in percent.
    pub threshold_pct: f64,
    /// Where the search ended.
    pub found: Found,
    /// The culprit, when found.
    pub culprit: Option<ChainCommit>,
    /// The last good and the first bad commit's hashes, when the search left a range.
    pub left_range: Option<(String, String)>,
    /// Its own effect, when found and measured.
    pub culprit_effect: Option<CulpritEffect>,
    /// Every commit learnt about, in the order tested.
    pub steps: Vec<Step>,
    /// Distinct bench executables measured.
    pub executables_measured: usize,
    /// Commits judged unmeasured: their executable was identical to a judged one's.
    pub same_binary: Vec<String>,
    /// Commits that did not build, with the first line of why.
    pub unbuildable: Vec<(String, String)>,
    /// Wall time of the whole bisection, in seconds.
    pub wall_s: f64,
}

fn pct(log: f64) -> f64 {
    log.exp_m1() * 100.0
}

fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

impl Report {
    /// The headline: the culprit and its effect, or the range left.
    #[must_use]
    pub fn headline(&self) -> String {
        match (&self.found, &self.culprit) {
            (Found::Culprit { .. }, Some(c)) => {
                let mut line = format!("first bad commit: {} {}", short(&c.hash), c.summary);
                if let Some(e) = &self.culprit_effect {
                    line.push_str(&format!(
                        " ({:+.1}% [{:+.1}%, {:+.1}%] of the range's {:+.1}%)",
                        pct(e.change.log_median),
                        pct(e.change.log_lower),
                        pct(e.change.log_upper),
                        pct(self.range_effect.log_median)
                    ));
                }
                line
            }
            (Found::Unresolved { good, bad }, _) => {
                let (last_good, first_bad) = self
                    .left_range
                    .as_ref()
                    .map_or(("?", "?"), |(g, b)| (short(g), short(b)));
                format!(
                    "unresolved: the first bad commit lies after {last_good} up to {first_bad} \
                     ({} commit(s))",
                    bad - good
                )
            }
            (Found::Culprit { .. }, None) => "first bad commit: unknown".to_owned(),
        }
    }

    /// Notes under the headline: more than one change, why a range is left, what was skipped.
    #[must_use]
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(e) = &self.culprit_effect
            && e.more_than_one_change
        {
            notes.push(format!(
                "the range holds more than one change: the culprit explains {:.0}% of the \
                 range's slowdown (under {:.0}%); bisect the rest with --good {}",
                e.share_of_range.unwrap_or(0.0) * 100.0,
                SOLE_CHANGE_SHARE * 100.0,
                self.culprit.as_ref().map_or("", |c| short(&c.hash))
            ));
        }
        if self.steps.iter().any(|s| s.status == Status::Unclear) {
            notes.push(
                "a commit was neither clearly like good nor like bad at the round cap (a partial \
                 change, or noise beyond the cap): the search stopped there"
                    .to_owned(),
            );
        }
        for (hash, reason) in &self.unbuildable {
            notes.push(format!(
                "skipped {} (does not build): {reason}",
                short(hash)
            ));
        }
        notes
    }

    /// The report as a terminal table.
    #[must_use]
    pub fn table(&self) -> String {
        let mut out = format!("bisect {}: {}\n", self.suite, self.headline());
        for note in self.notes() {
            out.push_str(&format!("  note: {note}\n"));
        }
        out.push_str(&format!(
            "\n{:<5} {:<12} {:<15} {:>8} {:>18} {:>6}  {}\n",
            "step", "commit", "verdict", "change", "interval", "rounds", "summary"
        ));
        for s in &self.steps {
            let (verdict, change, interval, rounds) = step_cells(s);
            out.push_str(&format!(
                "{:<5} {:<12} {:<15} {:>8} {:>18} {:>6}  {}\n",
                if s.step == 0 {
                    "end".to_owned()
                } else {
                    s.step.to_string()
                },
                short(&s.commit.hash),
                verdict,
                change,
                interval,
                rounds,
                s.commit.summary
            ));
        }
        out.push_str(&format!("\n{}\n", self.cost_line()));
        out
    }

    /// What the bisection cost, in one line.
    #[must_use]
    pub fn cost_line(&self) -> String {
        format!(
            "{} commits in range; {} step(s); {} executable(s) measured; {} same-binary \
             commit(s) judged unmeasured; {} unbuildable; {:.0} s; targets: {}; threshold \
             {:+.1}%",
            self.commits_in_range,
            self.steps.iter().filter(|s| s.step > 0).count(),
            self.executables_measured,
            self.same_binary.len(),
            self.unbuildable.len(),
            self.wall_s,
            self.targets.join(", "),
            self.threshold_pct
        )
    }

    /// The report as markdown, for an issue comment.
    #[must_use]
    pub fn markdown(&self) -> String {
        let mut out = format!("### bench-run bisect: {}\n\n", self.suite);
        out.push_str(&format!("**{}**\n\n", escape_md(&self.headline())));
        if let Some(c) = &self.culprit {
            out.push_str(&format!(
                "Commit `{}`, authored {}: {}\n\n",
                c.hash,
                c.author_date,
                escape_md(&c.summary)
            ));
        }
        for note in self.notes() {
            out.push_str(&format!("- {}\n", escape_md(&note)));
        }
        out.push_str(&format!(
            "\nRange `{}`..`{}`; whole range {:+.1}% [{:+.1}%, {:+.1}%].\n\n",
            short(&self.good.hash),
            short(&self.bad.hash),
            pct(self.range_effect.log_median),
            pct(self.range_effect.log_lower),
            pct(self.range_effect.log_upper)
        ));
        out.push_str("| step | commit | verdict | change | interval | rounds | summary |\n");
        out.push_str("|---:|---|---|---:|---:|---:|---|\n");
        for s in &self.steps {
            let (verdict, change, interval, rounds) = step_cells(s);
            out.push_str(&format!(
                "| {} | `{}` | {verdict} | {change} | {interval} | {rounds} | {} |\n",
                if s.step == 0 {
                    "end".to_owned()
                } else {
                    s.step.to_string()
                },
                short(&s.commit.hash),
                escape_md(&s.commit.summary)
            ));
        }
        out.push_str(&format!("\n{}\n", escape_md(&self.cost_line())));
        out
    }
}

fn step_cells(s: &Step) -> (String, String, String, String) {
    let verdict = match &s.status {
        Status::Untested => "untested".to_owned(),
        Status::Good { by } => format!("good{}", by_suffix(*by)),
        Status::Bad { by } => format!("bad{}", by_suffix(*by)),
        Status::Unbuildable { .. } => "unbuildable".to_owned(),
        Status::Unclear => "unclear".to_owned(),
    };
    match &s.change {
        Some(c) => (
            verdict,
            format!("{:+.1}%", pct(c.log_median)),
            format!("[{:+.1}%, {:+.1}%]", pct(c.log_lower), pct(c.log_upper)),
            c.rounds.to_string(),
        ),
        None => (verdict, "-".into(), "-".into(), "-".into()),
    }
}

fn by_suffix(by: Decision) -> &'static str {
    match by {
        Decision::End => "",
        Decision::Measured => "",
        Decision::SameBinary => " (same exe)",
    }
}

/// Escapes what markdown tables and emphasis would read in a commit summary.
fn escape_md(text: &str) -> String {
    text.chars()
        .flat_map(|c| match c {
            '|' | '*' | '_' | '`' | '<' | '>' | '[' | ']' => vec!['\\', c],
            '\n' => vec![' '],
            c => vec![c],
        })
        .collect()
}
