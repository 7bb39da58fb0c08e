//! Trends: a suite's history on one machine, one series per benchmark and metric, with change
//! points and annotations. Shared by the trend page and `/api/suites/{suite}/trend`.

use crate::error::AppError;
use bench_analysis::changepoint::ChangePoint;
use bench_analysis::compare::{CompareConfig, NoiseFloor, noise_analysis};
use bench_model::{Direction, HistoryPoint, RunId};
use bench_store::Ledger;
use bench_store::{
    MachineSummary, RunAnnotation, TrendData, TrendRun, TrendRuns, TrendSeries, TrendValue,
};
use serde::Serialize;
use std::sync::Arc;

/// Which machine's history a trend shows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum MachineChoice {
    /// The machine of the suite's newest run (the default).
    #[default]
    Latest,
    /// Every machine at once (mixes hardware; for a quick look only).
    All,
    /// The testbed of this name, or the machine whose fingerprint starts with this prefix.
    Fingerprint(String),
}

impl MachineChoice {
    /// Parses the `machine` query parameter: absent or empty = latest, `all`, or a fingerprint
    /// (prefix).
    #[must_use]
    pub fn parse(text: Option<&str>) -> Self {
        match text.map(str::trim) {
            None | Some("") => Self::Latest,
            Some("all") => Self::All,
            Some(f) => Self::Fingerprint(f.to_owned()),
        }
    }
}

/// The history of one benchmark and metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    /// Benchmark full id.
    pub benchmark: String,
    /// Metric.
    pub metric: String,
    /// Unit of the values.
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// Values in commit order; each names its run (an index into [`History::runs`]).
    pub points: Vec<TrendValue>,
    /// Detected changes of level (indices into `points`).
    pub change_points: Vec<ChangePoint>,
    /// Run-to-run noise of the series, as `bench-run gate` computes it.
    pub noise_floor: NoiseFloor,
}

/// The analysed history of a suite on a machine: runs in commit order and one series per
/// benchmark and metric. Shared (and cached) between requests.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct History {
    /// The runs, in commit order.
    pub runs: Vec<TrendRun>,
    /// One series per benchmark and metric, by benchmark then metric.
    pub series: Vec<Series>,
}

/// Series per page of a trend unless asked otherwise: a suite of 1,000 benchmarks is 20 pages,
/// each drawn and sent in milliseconds, where one page of all would take seconds.
pub const SERIES_PER_PAGE: usize = 50;

/// Most series one page may ask for.
pub const MAX_SERIES_PER_PAGE: usize = 1000;

/// Which of a trend's series are shown: page `page` (from 1) of `per_page`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesPage {
    /// The page, from 1.
    pub page: usize,
    /// Series per page.
    pub per_page: usize,
}

impl Default for SeriesPage {
    fn default() -> Self {
        Self {
            page: 1,
            per_page: SERIES_PER_PAGE,
        }
    }
}

impl SeriesPage {
    /// Page `page` of `per_page` series (defaults for `None`).
    ///
    /// # Errors
    /// [`AppError::BadRequest`] for page 0 or a page size outside 1 to
    /// [`MAX_SERIES_PER_PAGE`].
    pub fn new(page: Option<usize>, per_page: Option<usize>) -> Result<Self, AppError> {
        let page = page.unwrap_or(1);
        let per_page = per_page.unwrap_or(SERIES_PER_PAGE);
        if page == 0 {
            return Err(AppError::BadRequest(
                "parameter page starts at 1".to_owned(),
            ));
        }
        if !(1..=MAX_SERIES_PER_PAGE).contains(&per_page) {
            return Err(AppError::BadRequest(format!(
                "parameter per_page must be between 1 and {MAX_SERIES_PER_PAGE}, got {per_page}"
            )));
        }
        Ok(Self { page, per_page })
    }

    /// The indices of this page among `total` series (empty past the last page).
    #[must_use]
    pub fn range(self, total: usize) -> std::ops::Range<usize> {
        let start = (self.page - 1).saturating_mul(self.per_page).min(total);
        start..start.saturating_add(self.per_page).min(total)
    }

    /// How many pages `total` series fill (at least 1).
    #[must_use]
    pub const fn pages(self, total: usize) -> usize {
        if total == 0 {
            1
        } else {
            total.div_ceil(self.per_page)
        }
    }
}

/// A suite's trend.
#[derive(Debug, Clone, PartialEq)]
pub struct Trend {
    /// Suite name.
    pub suite: String,
    /// Machines that ran the suite.
    pub machines: Vec<MachineSummary>,
    /// The machine shown; `None` for all machines.
    pub machine: Option<MachineSummary>,
    /// Which runs are drawn: the suite's line, or every run.
    pub drawn: TrendRuns,
    /// The runs and series.
    pub history: Arc<History>,
    /// Annotations of the runs shown.
    pub annotations: Vec<RunAnnotation>,
    /// Which series are shown.
    pub page: SeriesPage,
}

impl Trend {
    /// The series of the page shown.
    #[must_use]
    pub fn series(&self) -> &[Series] {
        &self.history.series[self.page.range(self.history.series.len())]
    }

    /// The index of the first series shown among all of the history.
    #[must_use]
    pub fn first_series(&self) -> usize {
        self.page.range(self.history.series.len()).start
    }

    /// The page after this one, if any series are left.
    #[must_use]
    pub fn next_page(&self) -> Option<usize> {
        (self.page.page < self.page.pages(self.history.series.len())).then(|| self.page.page + 1)
    }
}

impl Serialize for Trend {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Trend", 11)?;
        s.serialize_field("suite", &self.suite)?;
        s.serialize_field("drawn", &self.drawn)?;
        s.serialize_field("machines", &self.machines)?;
        s.serialize_field("machine", &self.machine)?;
        s.serialize_field("runs", &self.history.runs)?;
        s.serialize_field("series", self.series())?;
        s.serialize_field("series_total", &self.history.series.len())?;
        s.serialize_field("page", &self.page.page)?;
        s.serialize_field("per_page", &self.page.per_page)?;
        s.serialize_field("next_page", &self.next_page())?;
        s.serialize_field("annotations", &self.annotations)?;
        s.end()
    }
}

/// A line's history: project, suite, machine (`None`: all), runs drawn.
pub type LineKey = (String, String, Option<i64>, TrendRuns);

/// What a line's history is as of: its newest run and how many runs it draws. The ledger is
/// append-only, so a history changes only when a run of that suite and machine is added; the
/// count catches a run that commits after a run with a larger id (concurrent pushes on
/// PostgreSQL), which the newest id alone would miss. Checked on every request (it comes with
/// the machine list the page needs anyway).
pub type LineStamp = (RunId, i64);

/// Analysed histories kept between requests, by line and [`LineStamp`]. When a line gains
/// runs, its newest kept history is extended by the new runs alone ([`extend`]) instead of
/// read again whole (at 10M results, 1,000 values against 1.25M), if that accounts for every
/// run the line now has. Annotations, which may be added to old runs, are not kept.
#[derive(Debug)]
pub struct TrendCache {
    kept: crate::kept::Kept<(LineKey, LineStamp), History>,
    newest: crate::kept::Kept<LineKey, (LineStamp, Arc<History>)>,
}

impl TrendCache {
    /// A cache of at most `capacity` histories (0: none kept).
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            kept: crate::kept::Kept::new(capacity),
            newest: crate::kept::Kept::new(capacity),
        }
    }

    /// Whether a history of `line` is kept, as of any run.
    #[must_use]
    pub fn holds(&self, line: &LineKey) -> bool {
        self.newest.get(line).is_some()
    }

    /// The history of `line` as of `stamp`, if kept.
    #[must_use]
    pub fn get(&self, line: &LineKey, stamp: LineStamp) -> Option<Arc<History>> {
        self.kept.get(&(line.clone(), stamp))
    }

    /// The history of `line` as of `stamp`: kept, extended from an older one, or read whole.
    async fn history(
        &self,
        ledger: &Ledger,
        line: LineKey,
        stamp: LineStamp,
    ) -> Result<Arc<History>, AppError> {
        let (_, suite, machine_id, runs) = line.clone();
        let older = self.newest.get(&line).filter(|kept| kept.0 < stamp);
        let history = self
            .kept
            .get_or_compute((line.clone(), stamp), async {
                // Runs after the newest one kept (not after the stamp: a whole read may hold
                // runs committed after its stamp was taken).
                let after = older
                    .as_ref()
                    .and_then(|kept| kept.1.runs.iter().map(|r| r.id).max());
                if let (Some(kept), Some(after)) = (&older, after) {
                    let since = ledger.trend_since(&suite, machine_id, runs, after).await?;
                    let complete = |h: &History| i64::try_from(h.runs.len()).ok() >= Some(stamp.1);
                    if let Some(extended) = extend(&kept.1, since).filter(complete) {
                        return Ok::<_, AppError>(extended);
                    }
                }
                let data = ledger.trend(&suite, machine_id, runs).await?;
                Ok(History {
                    runs: data.runs,
                    series: data.series.into_iter().map(analyse).collect(),
                })
            })
            .await?;
        if self.newest.get(&line).is_none_or(|kept| kept.0 < stamp) {
            self.newest
                .put(line, Arc::new((stamp, Arc::clone(&history))));
        }
        Ok(history)
    }
}

/// `kept` with the runs of `newer` (recorded after it) added, analysed again; `None` when a
/// newer run does not come after every kept one in commit order (a run of an older commit
/// recorded late goes between points: the whole line is read again then). Commit order is the
/// store's ([`bench_store::TrendRun::commit_order`], then run id): a run outside git, placed
/// by when it was recorded, extends a line of such runs.
#[must_use]
pub fn extend(kept: &History, newer: TrendData) -> Option<History> {
    let last = kept
        .runs
        .last()
        .map(|l| l.commit_order().map(|order| (order, l.id)));
    let in_order = newer.runs.iter().all(|r| {
        let place = r.commit_order().map(|order| (order, r.id));
        match (&last, place) {
            (_, None) | (Some(None), _) => false,
            (None, Some(_)) => true,
            (Some(Some(last)), Some(place)) => *last < place,
        }
    });
    if !in_order {
        return None;
    }
    let offset = kept.runs.len();
    let mut series: std::collections::BTreeMap<(String, String), TrendSeries> = kept
        .series
        .iter()
        .map(|s| {
            let key = (s.benchmark.clone(), s.metric.clone());
            let values = s.points.clone();
            let raw = TrendSeries {
                benchmark: s.benchmark.clone(),
                metric: s.metric.clone(),
                unit: s.unit.clone(),
                direction: s.direction,
                values,
            };
            (key, raw)
        })
        .collect();
    for s in newer.series {
        let moved = s.values.iter().map(|v| TrendValue {
            run: v.run + offset,
            ..*v
        });
        match series.entry((s.benchmark.clone(), s.metric.clone())) {
            std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().values.extend(moved),
            std::collections::btree_map::Entry::Vacant(e) => {
                let values = moved.collect();
                e.insert(TrendSeries { values, ..s });
            }
        }
    }
    let mut runs = kept.runs.clone();
    runs.extend(newer.runs);
    Some(History {
        runs,
        series: series.into_values().map(analyse).collect(),
    })
}

/// Loads the trend of `suite` on the chosen machine, from `cache` when the ledger has no newer
/// run of that suite and machine.
///
/// # Errors
/// [`AppError::NotFound`] for an unknown suite or machine, or a page past the last; ledger
/// errors otherwise.
pub async fn load(
    ledger: &Ledger,
    cache: &TrendCache,
    suite: &str,
    choice: &MachineChoice,
    runs: TrendRuns,
    page: SeriesPage,
) -> Result<Trend, AppError> {
    let machines = ledger.machines(Some(suite)).await?;
    if machines.is_empty() {
        return Err(AppError::NotFound(format!("no suite named {suite:?}")));
    }
    let machine = match choice {
        MachineChoice::All => None,
        MachineChoice::Latest => machines.iter().max_by_key(|m| m.latest_run).cloned(),
        MachineChoice::Fingerprint(prefix) => Some(
            machines
                .iter()
                .find(|m| m.testbed.as_deref() == Some(prefix.as_str()))
                .or_else(|| {
                    machines
                        .iter()
                        .find(|m| m.fingerprint.starts_with(prefix.as_str()))
                })
                .cloned()
                .ok_or_else(|| {
                    AppError::NotFound(format!(
                        "suite {suite:?} has no run on a machine {prefix:?}"
                    ))
                })?,
        ),
    };
    let machine_id = machine.as_ref().map(|m| m.id);
    let drawn_runs = |m: &MachineSummary| match runs {
        TrendRuns::Line => m.line_runs,
        TrendRuns::Everything => m.runs,
    };
    let stamp: LineStamp = machine.as_ref().map_or_else(
        || {
            (
                machines.iter().map(|m| m.latest_run).max().unwrap_or(0),
                machines.iter().map(drawn_runs).sum(),
            )
        },
        |m| (m.latest_run, drawn_runs(m)),
    );
    let line = (
        ledger.project().to_string(),
        suite.to_owned(),
        machine_id,
        runs,
    );
    let history = cache.history(ledger, line, stamp).await?;
    let pages = page.pages(history.series.len());
    if page.page > pages {
        return Err(AppError::NotFound(format!(
            "page {} of the trend of {suite:?}: it has {pages} page(s) of {} series",
            page.page, page.per_page
        )));
    }
    let annotations = ledger.suite_annotations(suite, machine_id).await?;
    Ok(Trend {
        page,
        suite: suite.to_owned(),
        machines,
        machine,
        drawn: runs,
        history,
        annotations,
    })
}

/// Adds the noise floor and the change points to a series: both from the noise model of
/// `bench-run gate` ([`bench_analysis::noise`]) run over the whole series, so the chart marks the
/// same steps the floor leaves out. Levels are the geometric means of each segment's kept
/// values (outliers trimmed).
#[must_use]
pub fn analyse(series: TrendSeries) -> Series {
    let config = CompareConfig::default();
    let points: Vec<HistoryPoint> = series
        .values
        .iter()
        .map(|v| HistoryPoint::new(v.run_id, v.estimate))
        .collect();
    let noise = noise_analysis(&points, &config);
    Series {
        change_points: noise
            .explanation
            .change_points
            .iter()
            .map(|c| ChangePoint {
                index: c.index,
                before: c.before,
                after: c.after,
                shift_pct: c.shift_pct,
            })
            .collect(),
        noise_floor: noise.floor,
        benchmark: series.benchmark,
        metric: series.metric,
        unit: series.unit,
        direction: series.direction,
        points: series.values,
    }
}

/// The commits a change point lies between: the last commit measured at the old level (good)
/// and the first at the new one (bad), full hashes. What `bench-run bisect` narrows down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommitRange {
    /// The commit of the last run before the change.
    pub good: String,
    /// The commit of the first run at the new level.
    pub bad: String,
}

impl CommitRange {
    /// The range of change point `change` of `series` over `runs` (the history's runs); `None`
    /// at the first point, when either run is outside git, or when both are of one commit
    /// (nothing to bisect: the change is not in the code between them).
    #[must_use]
    pub fn of(series: &Series, runs: &[TrendRun], change: &ChangePoint) -> Option<Self> {
        let commit_at = |index: usize| {
            let point = series.points.get(index)?;
            runs.get(point.run)?.git_commit.clone()
        };
        let good = commit_at(change.index.checked_sub(1)?)?;
        let bad = commit_at(change.index)?;
        (good != bad).then_some(Self { good, bad })
    }

    /// The command that finds the commit of a change of `benchmark` in `suite` in this range:
    /// `bench-run bisect --suite SUITE --good GOOD --bad BAD --benchmark '^(?:ID)$'`, every
    /// argument quoted for a POSIX shell (the filter always, in single quotes). `--benchmark`
    /// is a criterion filter, a regex: the id goes in escaped and anchored
    /// ([`bench_report::exact_filter`]), so it selects that benchmark and no other whose id
    /// contains it.
    #[must_use]
    pub fn bisect_command(&self, suite: &str, benchmark: &str) -> String {
        let args = [
            "bench-run",
            "bisect",
            "--suite",
            suite,
            "--good",
            &self.good,
            "--bad",
            &self.bad,
        ]
        .map(str::to_owned);
        format!(
            "{} --benchmark {}",
            bench_report::shell_join(&args),
            shell_single_quote(&bench_report::exact_filter(&[benchmark.to_owned()]))
        )
    }
}

/// `text` as one word of a POSIX shell: in single quotes, each `'` in it written `'\''` (close
/// the quotes, an escaped quote, reopen). Nothing is special inside single quotes, so no
/// benchmark id can expand, split or end the command.
#[must_use]
pub fn shell_single_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn pages_cover_every_series_once() {
        let page = |n| SeriesPage::new(Some(n), Some(50)).unwrap();
        assert_eq!(page(1).range(120), 0..50);
        assert_eq!(page(3).range(120), 100..120);
        assert_eq!(page(4).range(120), 120..120);
        assert_eq!(page(1).pages(120), 3);
        assert_eq!(page(1).pages(0), 1, "an empty trend is one empty page");
        assert_eq!(SeriesPage::default().per_page, SERIES_PER_PAGE);
        assert!(SeriesPage::new(Some(0), None).is_err());
        assert!(SeriesPage::new(None, Some(0)).is_err());
        assert!(SeriesPage::new(None, Some(MAX_SERIES_PER_PAGE + 1)).is_err());
        assert_eq!(
            SeriesPage::new(Some(usize::MAX), Some(MAX_SERIES_PER_PAGE))
                .unwrap()
                .range(10),
            10..10,
            "no overflow on an absurd page"
        );
    }

    fn data(runs: &[(RunId, Option<i64>)], per_run: &[(&str, f64)]) -> TrendData {
        let runs: Vec<TrendRun> = runs
            .iter()
            .map(|&(id, time)| TrendRun {
                id,
                git_commit: Some(format!("c{id}")),
                git_commit_time: time,
                // Recorded a second apart, in id order, as the ledger writes times.
                created_at: format!("2026-12-05T00:00:{:02}.000Z", id % 60),
            })
            .collect();
        let series = per_run
            .iter()
            .map(|&(name, level)| TrendSeries {
                benchmark: name.to_owned(),
                metric: "time".to_owned(),
                unit: "ns".to_owned(),
                direction: Direction::LowerIsBetter,
                values: runs
                    .iter()
                    .enumerate()
                    .map(|(i, r)| TrendValue {
                        run: i,
                        run_id: r.id,
                        estimate: level * if r.id > 6 { 1.5 } else { 1.0 } + r.id as f64,
                        lower: None,
                        upper: None,
                    })
                    .collect(),
            })
            .collect();
        TrendData { runs, series }
    }

    fn whole(data: TrendData) -> History {
        History {
            runs: data.runs,
            series: data.series.into_iter().map(analyse).collect(),
        }
    }

    #[test]
    fn a_history_extended_by_later_runs_is_the_history_read_whole() {
        let first: Vec<_> = (1..=10).map(|id| (id, Some(id * 100))).collect();
        let later: Vec<_> = (11..=13).map(|id| (id, Some(id * 100))).collect();
        let kept = whole(data(&first, &[("a", 10.0), ("b", 20.0)]));
        let newer = data(&later, &[("a", 10.0), ("c", 30.0)]);
        let extended = extend(&kept, newer).unwrap();
        let mut all = data(&first, &[("a", 10.0), ("b", 20.0)]);
        let more = data(&later, &[("a", 10.0), ("c", 30.0)]);
        all.runs.extend(more.runs);
        let a_more = more.series[0].values.iter().map(|v| TrendValue {
            run: v.run + 10,
            ..*v
        });
        all.series[0].values.extend(a_more);
        let c = TrendSeries {
            values: more.series[1]
                .values
                .iter()
                .map(|v| TrendValue {
                    run: v.run + 10,
                    ..*v
                })
                .collect(),
            ..more.series[1].clone()
        };
        all.series.push(c);
        assert_eq!(extended, whole(all));
        assert!(
            !extended.series[0].change_points.is_empty(),
            "the step at run 7"
        );
    }

    #[test]
    fn a_run_of_an_older_commit_is_not_appended_and_one_outside_git_goes_by_its_recording() {
        let first: Vec<_> = (1..=5).map(|id| (id, Some(id * 100))).collect();
        let kept = whole(data(&first, &[("a", 10.0)]));
        assert!(extend(&kept, data(&[(6, Some(250))], &[("a", 10.0)])).is_none());
        assert!(
            extend(&kept, data(&[(6, Some(500))], &[("a", 10.0)])).is_some(),
            "a tie goes by id"
        );
        assert!(
            extend(&kept, data(&[(6, None)], &[("a", 10.0)])).is_some(),
            "outside git, recorded in 2026: after commits of 1970"
        );
        // A line outside git (CI pushes without a checkout): each run after the last.
        let outside: Vec<_> = (1..=5).map(|id| (id, None)).collect();
        let kept = whole(data(&outside, &[("a", 10.0)]));
        assert!(extend(&kept, data(&[(6, None)], &[("a", 10.0)])).is_some());
        assert!(
            extend(&kept, data(&[(6, Some(100))], &[("a", 10.0)])).is_none(),
            "a commit of 1970 goes before runs recorded in 2026"
        );
        let mut odd = data(&[(6, None)], &[("a", 10.0)]);
        odd.runs[0].created_at = "yesterday".to_owned();
        assert!(extend(&kept, odd).is_none(), "no place, no extension");
        let empty = whole(data(&[], &[]));
        assert!(extend(&empty, data(&[(1, Some(1))], &[("a", 1.0)])).is_some());
    }

    /// A run that commits after a run with a larger id (two pushes on PostgreSQL) is not
    /// lost to a kept history: the line's run count says the history misses it, and the line
    /// is read whole rather than extended.
    #[tokio::test]
    async fn a_run_committed_after_a_newer_one_is_not_lost_to_a_kept_history() {
        let ledger = Ledger::in_memory().await.unwrap();
        let run = |value: f64| bench_model::NewRun {
            source: bench_model::RunSource::BenchRun,
            provenance: bench_model::RunProvenance {
                suite: "s".to_owned(),
                machine: bench_model::Machine {
                    fingerprint: "m".to_owned(),
                    ..bench_model::Machine::default()
                },
                ..bench_model::RunProvenance::default()
            },
            measurements: vec![bench_model::Measurement::time_ns("b", value)],
        };
        for value in [1.0, 2.0, 3.0, 4.0] {
            ledger.record_run(&run(value)).await.unwrap();
        }
        let whole = ledger.trend("s", None, TrendRuns::Line).await.unwrap();
        let machine = ledger.machines(Some("s")).await.unwrap()[0].id;
        let line: LineKey = (
            "default".to_owned(),
            "s".to_owned(),
            Some(machine),
            TrendRuns::Line,
        );
        // Kept as a reader saw it while run 3 was still being recorded: runs 1, 2 and 4.
        let mut seen = whole.clone();
        seen.runs.remove(2);
        for series in &mut seen.series {
            series.values.retain(|v| v.run_id != 3);
            for (i, v) in series.values.iter_mut().enumerate() {
                v.run = i;
            }
        }
        let seen = History {
            runs: seen.runs,
            series: seen.series.into_iter().map(analyse).collect(),
        };
        let cache = TrendCache::new(4);
        cache
            .newest
            .put(line.clone(), Arc::new(((4, 3), Arc::new(seen))));
        let history = cache.history(&ledger, line, (4, 4)).await.unwrap();
        assert_eq!(
            history.runs.iter().map(|r| r.id).collect::<Vec<_>>(),
            [1, 2, 3, 4],
            "run 3 is on the line"
        );
    }

    #[test]
    fn a_benchmark_id_is_one_shell_word_whatever_it_holds() {
        let cases = [
            ("parse/small", "'parse/small'"),
            ("it's", r"'it'\''s'"),
            ("$(rm -rf /); `x` \"a b\" *", "'$(rm -rf /); `x` \"a b\" *'"),
            ("''", r"''\'''\'''"),
            ("", "''"),
        ];
        for (i, (id, want)) in cases.iter().enumerate() {
            assert_eq!(shell_single_quote(id), *want, "case {i}");
        }
    }

    #[test]
    fn the_bisect_command_names_the_range_and_quotes_what_needs_it() {
        let range = CommitRange {
            good: "a".repeat(40),
            bad: "b".repeat(40),
        };
        let (good, bad) = (&range.good, &range.bad);
        assert_eq!(
            range.bisect_command("my suite", "g/it's <1>"),
            format!(
                r"bench-run bisect --suite 'my suite' --good {good} --bad {bad} --benchmark '^(?:g/it'\''s <1>)$'"
            )
        );
        assert_eq!(
            range.bisect_command("demo", "a.b(1)"),
            format!(
                r"bench-run bisect --suite demo --good {good} --bad {bad} --benchmark '^(?:a\.b\(1\))$'"
            )
        );
    }
}
