//! The decisions of `bench-run bisect`: which commit to test next, whether a tested commit is
//! like the good end or like the bad one, and what the search found. Pure: the command builds
//! and measures ([`super`]), this module only reads what it measured.
//!
//! ```text
//! chain:  good = c0  c1  c2 ... c(n-1)  cn = bad     (first-parent commits, oldest first)
//! confirm  good vs bad, paired rounds: which benchmarks got slower (the targets), and by how
//!          much (E, the median over rounds of the targets' mean log-ratio)
//! step     probe the untested commit nearest the middle of (last good, first bad):
//!            - it does not build             -> skipped (as `git bisect skip`)
//!            - its executable hashes like a judged commit's -> that commit's verdict, unmeasured
//!            - else paired rounds against good: d_r = mean over targets of ln(probe_r / good_r)
//!              bad  when the interval of median(d) lies above the threshold (E/2 by default),
//!              good when it lies below, else more rounds up to a cap, then unclear (stop)
//! result   the first bad commit when its parent is good; else the range left, and why
//! ```
//!
//! Judging every probe against the good end in rounds of their own makes each step a paired
//! comparison (drift between steps cancels), and the threshold halfway to the bad end's effect
//! asks "is it like good, or like bad?" with the most room on both sides. When two changes
//! each make part of the slowdown, the search follows the one that crosses the threshold, and
//! [`explained_share`] says how much of the range the culprit explains.

use bench_analysis::paired::{self, PairedChange};
use serde::Serialize;

/// What is known of one commit of the chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Status {
    /// Not tested yet.
    Untested,
    /// Like the good end.
    Good {
        /// How it was decided.
        by: Decision,
    },
    /// Like the bad end.
    Bad {
        /// How it was decided.
        by: Decision,
    },
    /// Its suite did not build: it cannot be judged (as `git bisect skip`).
    Unbuildable {
        /// The build's error, first line.
        reason: String,
    },
    /// Measured to the cap and still not clearly like either end.
    Unclear,
}

/// How a commit's verdict was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// It is one end of the range, given by the user.
    End,
    /// Paired rounds against the good end.
    Measured,
    /// Its bench executable is byte-identical to that of a commit already judged.
    SameBinary,
}

/// The search over a chain of commits: index 0 is the good end, the last the bad end.
#[derive(Debug, Clone)]
pub struct Search {
    status: Vec<Status>,
}

/// Where a search ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Found {
    /// The first bad commit: its parent is good.
    Culprit {
        /// Its index in the chain.
        index: usize,
    },
    /// The first bad commit lies in `(good, bad]`, which holds commits that could not be judged.
    Unresolved {
        /// The last good commit's index.
        good: usize,
        /// The first bad commit's index.
        bad: usize,
    },
}

impl Search {
    /// A search over `commits` commits (at least two: the good and the bad end).
    ///
    /// # Panics
    /// Never: fewer than two commits give a search that is already over.
    #[must_use]
    pub fn new(commits: usize) -> Self {
        let mut status = vec![Status::Untested; commits.max(2)];
        status[0] = Status::Good { by: Decision::End };
        if let Some(last) = status.last_mut() {
            *last = Status::Bad { by: Decision::End };
        }
        Self { status }
    }

    /// What is known of every commit.
    #[must_use]
    pub fn statuses(&self) -> &[Status] {
        &self.status
    }

    /// Records what was learnt of commit `index`.
    pub fn mark(&mut self, index: usize, status: Status) {
        if let Some(slot) = self.status.get_mut(index) {
            *slot = status;
        }
    }

    /// The last good commit before the first bad one, and that first bad one.
    #[must_use]
    pub fn bounds(&self) -> (usize, usize) {
        let bad = self
            .status
            .iter()
            .position(|s| matches!(s, Status::Bad { .. }))
            .unwrap_or(self.status.len() - 1);
        let good = self.status[..bad]
            .iter()
            .rposition(|s| matches!(s, Status::Good { .. }))
            .unwrap_or(0);
        (good, bad)
    }

    /// The next commit to test: the untested one nearest the middle of the open range (the
    /// lower of two equally near), or `None` when the search is over.
    #[must_use]
    pub fn next(&self) -> Option<usize> {
        if self.status.iter().any(|s| matches!(s, Status::Unclear)) {
            return None;
        }
        let (good, bad) = self.bounds();
        let middle = good + (bad - good) / 2;
        (good + 1..bad)
            .filter(|&i| self.status[i] == Status::Untested)
            .min_by_key(|&i| (i.abs_diff(middle), i))
    }

    /// Untested commits left in the open range.
    #[must_use]
    pub fn left(&self) -> usize {
        let (good, bad) = self.bounds();
        (good + 1..bad)
            .filter(|&i| self.status[i] == Status::Untested)
            .count()
    }

    /// Where the search ended (call when [`Search::next`] is `None`).
    #[must_use]
    pub fn found(&self) -> Found {
        let (good, bad) = self.bounds();
        if bad == good + 1 {
            Found::Culprit { index: bad }
        } else {
            Found::Unresolved { good, bad }
        }
    }
}

/// A probe's verdict from its rounds against the good end.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Likeness {
    /// Good, bad, or not yet clear.
    pub verdict: Verdict,
    /// The rounds' change against the good end (`d_r`, the targets' mean log-ratio).
    pub change: PairedChange,
}

/// Which end a probe is like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Its change against good lies below the threshold.
    Good,
    /// Its change against good lies above the threshold.
    Bad,
    /// The interval holds the threshold.
    Unclear,
}

/// How a probe compares, from its rounds' log-ratios against the good end `d` (one per round): bad
/// when the median's interval at `confidence` lies above `threshold` (a log-ratio), good when
/// it lies below, unclear when it holds it. `None` without rounds or with a non-finite value.
#[must_use]
pub fn likeness(d: &[f64], threshold: f64, confidence: f64) -> Option<Likeness> {
    let change = paired::analyze(d, confidence)?;
    let verdict = if change.log_lower > threshold {
        Verdict::Bad
    } else if change.log_upper < threshold {
        Verdict::Good
    } else {
        Verdict::Unclear
    };
    Some(Likeness { verdict, change })
}

/// The threshold between good and bad as a log-ratio: `ln(1 + pct/100)` when the user gave a
/// percentage, else half the whole range's effect `range_effect` (a log-ratio).
#[must_use]
pub fn threshold(pct: Option<f64>, range_effect: f64) -> f64 {
    pct.map_or(range_effect / 2.0, |p| (p / 100.0).ln_1p())
}

/// The share of the whole range's effect (a log-ratio) that the culprit's own effect explains;
/// `None` when the range's effect is not a slowdown.
#[must_use]
pub fn explained_share(culprit_effect: f64, range_effect: f64) -> Option<f64> {
    (range_effect > 0.0).then(|| culprit_effect / range_effect)
}

/// Below this share of the range's effect, the culprit is not the range's only change.
pub const SOLE_CHANGE_SHARE: f64 = 0.7;

/// Per-round values of one step folded into one log-ratio per round: the mean over `targets`
/// of `ln(head_r / base_r)`. `base` and `head` hold each target's per-round values (the same
/// number of rounds). `None` when a target is missing or a value is not positive and finite.
#[must_use]
pub fn round_changes(base: &[Vec<f64>], head: &[Vec<f64>]) -> Option<Vec<f64>> {
    let rounds = base.first()?.len();
    if base.len() != head.len() || rounds == 0 {
        return None;
    }
    let mut sums = vec![0.0; rounds];
    for (b, h) in base.iter().zip(head) {
        let d = paired::log_ratios(b, h).ok()?;
        if d.len() != rounds {
            return None;
        }
        for (sum, v) in sums.iter_mut().zip(d) {
            *sum += v;
        }
    }
    #[expect(clippy::cast_precision_loss, reason = "target counts are small")]
    let n = base.len() as f64;
    Some(sums.into_iter().map(|s| s / n).collect())
}

/// About how many more probes a range of `left` untested commits needs (binary search).
#[must_use]
pub fn steps_left(left: usize) -> usize {
    let mut steps = 0;
    let mut n = left;
    while n > 0 {
        n /= 2;
        steps += 1;
    }
    steps
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn measured_good() -> Status {
        Status::Good {
            by: Decision::Measured,
        }
    }

    fn measured_bad() -> Status {
        Status::Bad {
            by: Decision::Measured,
        }
    }

    /// Runs a search over `n` commits where commits from `culprit` on are bad.
    fn search_with(n: usize, culprit: usize, skip: &[usize]) -> (Found, usize) {
        let mut search = Search::new(n);
        let mut probes = 0;
        while let Some(i) = search.next() {
            probes += 1;
            let status = if skip.contains(&i) {
                Status::Unbuildable {
                    reason: "error".into(),
                }
            } else if i >= culprit {
                measured_bad()
            } else {
                measured_good()
            };
            search.mark(i, status);
        }
        (search.found(), probes)
    }

    #[test]
    fn a_binary_search_finds_every_culprit_of_33_commits_in_5_probes() {
        // good + 32 commits, the last one bad.
        for culprit in 1..33 {
            let (found, probes) = search_with(33, culprit, &[]);
            assert_eq!(found, Found::Culprit { index: culprit });
            assert!(probes <= 5, "culprit {culprit}: {probes} probes");
        }
    }

    #[test]
    fn an_unbuildable_neighbour_leaves_the_range_open_and_is_named() {
        // The culprit is 5; 4 does not build: the first bad one is 4 or 5.
        let (found, _) = search_with(9, 5, &[4]);
        assert_eq!(found, Found::Unresolved { good: 3, bad: 5 });
        // An unbuildable commit away from the culprit costs one more probe, nothing else.
        let (found, _) = search_with(9, 6, &[4]);
        assert_eq!(found, Found::Culprit { index: 6 });
    }

    #[test]
    fn an_unclear_probe_ends_the_search() {
        let mut search = Search::new(9);
        let first = search.next().unwrap();
        assert_eq!(first, 4);
        search.mark(first, Status::Unclear);
        assert_eq!(search.next(), None);
        assert_eq!(search.found(), Found::Unresolved { good: 0, bad: 8 });
    }

    #[test]
    fn two_commits_need_no_probe() {
        let search = Search::new(2);
        assert_eq!(search.next(), None);
        assert_eq!(search.found(), Found::Culprit { index: 1 });
    }

    #[test]
    fn a_probe_is_judged_against_the_threshold() {
        let t = threshold(None, 0.10_f64.ln_1p());
        let like_good = [0.001, -0.002, 0.003, 0.0, 0.002, -0.001, 0.001, 0.0];
        let like_bad = [0.09, 0.1, 0.11, 0.095, 0.098, 0.102, 0.097, 0.1];
        let straddling = [0.02, 0.07, 0.03, 0.06, 0.01, 0.08, 0.04, 0.05];
        assert_eq!(
            likeness(&like_good, t, 0.99).unwrap().verdict,
            Verdict::Good
        );
        assert_eq!(likeness(&like_bad, t, 0.99).unwrap().verdict, Verdict::Bad);
        assert_eq!(
            likeness(&straddling, t, 0.99).unwrap().verdict,
            Verdict::Unclear
        );
        assert!(likeness(&[], t, 0.99).is_none());
        assert!(likeness(&[f64::NAN], t, 0.99).is_none());
        // A user's threshold replaces half the range.
        assert!((threshold(Some(10.0), 1.0) - 0.1_f64.ln_1p()).abs() < 1e-12);
    }

    #[test]
    fn rounds_fold_into_the_targets_mean_log_ratio() {
        let base = vec![vec![100.0, 100.0], vec![10.0, 20.0]];
        let head = vec![vec![110.0, 100.0], vec![10.0, 22.0]];
        let d = round_changes(&base, &head).unwrap();
        assert!((d[0] - 1.1_f64.ln() / 2.0).abs() < 1e-12);
        assert!((d[1] - 1.1_f64.ln() / 2.0).abs() < 1e-12);
        assert!(round_changes(&base, &head[..1]).is_none());
        assert!(round_changes(&[vec![1.0]], &[vec![0.0]]).is_none());
        assert!(round_changes(&[], &[]).is_none());
    }

    #[test]
    fn the_share_of_the_range_says_whether_one_change_explains_it() {
        assert_eq!(explained_share(0.05, 0.1), Some(0.5));
        assert_eq!(explained_share(0.05, 0.0), None);
        assert_eq!(steps_left(0), 0);
        assert_eq!(steps_left(31), 5);
    }
}
