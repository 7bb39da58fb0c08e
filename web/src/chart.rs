//! Trend charts as inline SVG: plotters draws the axes, the confidence band and the median
//! line; a small overlay adds what plotters cannot: hover titles on every point (commit and
//! value), dashed change-point markers and annotation markers, each with its own `<title>`.
//!
//! ```text
//!  value ▲        ┊ change point (+12%)       ┆ annotation
//!        │   ░░░░░┊░░░░░░░░░░░░░░░░░░░░░░░░░░░┆░░░░  confidence band (lower..upper)
//!        │ ●─●─●──┊─●──●─●─●──●─●─●─●─●─●──●──●─●  headline estimate (median), one dot per run
//!        └────────┴───────────────────────────────▶ runs in commit order
//!          #12 · 01-02 03:04    #14 · 01-02 09:30     run and when it was recorded
//! ```
//!
//! The x axis names each run by its id and the time it was recorded (UTC), and its title says
//! so: several runs of one commit share a commit date but not a recording time. Values are
//! scaled for reading by [`bench_model::format::value`] (ns/µs/ms/s, B/KiB/MiB, K/M
//! ops/s); a log-scale y axis is labelled at the ticks [`crate::ticks`] picks. Every piece of
//! text that comes from the ledger is escaped here, because the SVG is inserted into pages
//! unescaped.

use crate::ticks::{self, Base};
use crate::trend::Series;
use crate::view;
use bench_model::format;
use bench_store::TrendRun;
use plotters::coord::combinators::BindKeyPoints;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::prelude::*;
use std::fmt::Write as _;
use std::ops::Range;

/// Width of a chart, in pixels (the SVG scales down with the page).
pub const WIDTH: u32 = 1100;
/// Height of a chart, in pixels.
pub const HEIGHT: u32 = 300;

const LINE: RGBColor = RGBColor(0x1f, 0x5f, 0xa8);
const CHANGE: &str = "#b03a2e";
const NOTE: &str = "#7d3c98";

/// The title of the x axis: what its labels name.
pub const X_AXIS_TITLE: &str = "run # · recorded (UTC); runs in commit order";

/// Drawing failed (plotters' errors, flattened to text).
#[derive(Debug, thiserror::Error)]
#[error("cannot draw chart: {0}")]
pub struct ChartError(String);

fn chart_error(e: impl std::fmt::Display) -> ChartError {
    ChartError(e.to_string())
}

/// A rendered chart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chart {
    /// The `<svg>` element, safe to insert into HTML as is.
    pub svg: String,
    /// Whether the y axis is logarithmic (a log scale was asked for and every value is
    /// positive).
    pub log_scale: bool,
}

/// An annotation to mark: the index of the annotated point and the note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Note<'a> {
    /// Index of the annotated run in the series.
    pub index: usize,
    /// The text.
    pub text: &'a str,
}

/// Escapes text for XML content and attribute values (with the numeric entities askama uses,
/// so escaped text reads the same in charts and pages).
#[must_use]
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&#38;"),
            '<' => out.push_str("&#60;"),
            '>' => out.push_str("&#62;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Per-run text shared by every chart of a page, computed once per run rather than once per
/// point.
#[derive(Debug, Clone, Default)]
pub struct RunLabels {
    /// Hover prefix, escaped:
    /// `run #12 · abc1234567 committed 2026-01-02 · recorded 2026-01-03 04:05`.
    hover: Vec<String>,
    /// Axis label: the run and when it was recorded, `#12 · 01-03 04:05` (`#12 · 2026-01-03`
    /// when the runs were recorded over more than one year).
    axis: Vec<String>,
}

impl RunLabels {
    /// Labels of `runs` (in the order the series' `run` indices refer to).
    #[must_use]
    pub fn new(runs: &[TrendRun]) -> Self {
        let year = |r: &TrendRun| r.created_at.get(..4).map(str::to_owned);
        let one_year = runs.first().is_none_or(|first| {
            let first = year(first);
            runs.iter().all(|r| year(r) == first)
        });
        let mut hover = Vec::with_capacity(runs.len());
        let mut axis = Vec::with_capacity(runs.len());
        for r in runs {
            let recorded = view::datetime(&r.created_at);
            let commit = view::short_commit(r.git_commit.as_deref(), false);
            let text = match (commit.is_empty(), r.git_commit_time) {
                (true, _) => format!("run #{} · recorded {recorded}", r.id),
                (false, None) => format!("run #{} · {commit} · recorded {recorded}", r.id),
                (false, Some(t)) => format!(
                    "run #{} · {commit} committed {} · recorded {recorded}",
                    r.id,
                    view::date(t)
                ),
            };
            hover.push(escape(&text));
            axis.push(format!(
                "#{} · {}",
                r.id,
                recorded_label(&r.created_at, !one_year)
            ));
        }
        Self { hover, axis }
    }

    fn hover(&self, run: usize) -> &str {
        self.hover.get(run).map_or("", String::as_str)
    }
}

/// `2026-01-02T03:04:05.000Z` as `01-02 03:04`, or as `2026-01-02` `with_year` (as it is, if
/// it is not that shape).
fn recorded_label(created_at: &str, with_year: bool) -> String {
    let short = if with_year {
        created_at.get(..10)
    } else {
        created_at.get(5..16)
    };
    short.map_or_else(|| created_at.to_owned(), |s| s.replace('T', " "))
}

/// The x label of the point at `x` (a point index): its run's axis label.
fn x_label(series: &Series, labels: &RunLabels, x: f64) -> String {
    let rounded = x.round();
    if (x - rounded).abs() > 1e-6 || rounded < 0.0 {
        return String::new();
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "rounded, non-negative and bounded by the number of points"
    )]
    let index = rounded as usize;
    series
        .points
        .get(index)
        .and_then(|p| labels.axis.get(p.run))
        .cloned()
        .unwrap_or_default()
}

/// Lowest and highest value to show, bounds included.
fn extent(series: &Series) -> Option<(f64, f64)> {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for p in &series.points {
        for v in [Some(p.estimate), p.lower, p.upper].into_iter().flatten() {
            if v.is_finite() {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    (lo <= hi).then_some((lo, hi))
}

fn linear_range(lo: f64, hi: f64) -> Range<f64> {
    let span = if hi > lo {
        hi - lo
    } else if hi == 0.0 {
        1.0
    } else {
        hi.abs() * 0.1
    };
    let bottom = lo - 0.08 * span;
    // Values that cannot be negative (times, sizes) keep a non-negative axis.
    let bottom = if lo >= 0.0 { bottom.max(0.0) } else { bottom };
    bottom..hi + 0.08 * span
}

fn log_range(lo: f64, hi: f64) -> Range<f64> {
    if hi > lo {
        lo / 1.08..hi * 1.08
    } else {
        lo / 1.5..hi * 1.5
    }
}

/// Pixel geometry of a drawn chart, for the overlay.
struct Geometry {
    /// Pixel position of every point.
    points: Vec<(i32, i32)>,
    /// Pixel x of the boundary before each index (`x(index - 0.5)`).
    boundaries: Vec<i32>,
    /// Top and bottom of the plotting area.
    top: i32,
    bottom: i32,
}

fn draw<YS>(
    svg: &mut String,
    series: &Series,
    labels: &RunLabels,
    y_spec: YS,
) -> Result<Geometry, ChartError>
where
    YS: AsRangedCoord<Value = f64>,
    YS::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    #[expect(clippy::cast_precision_loss, reason = "run counts are far below 2^52")]
    let n = series.points.len() as f64;
    let root = SVGBackend::with_string(svg, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(chart_error)?;
    let mut chart = ChartBuilder::on(&root)
        .margin_top(12)
        .margin_right(18)
        .margin_bottom(4)
        .margin_left(4)
        .x_label_area_size(50)
        .y_label_area_size(82)
        .build_cartesian_2d(-0.5..(n - 0.5).max(0.5), y_spec)
        .map_err(chart_error)?;
    let unit = series.unit.as_str();
    let y_fmt = |v: &f64| ticks::label(*v, unit);
    let x_fmt = |x: &f64| x_label(series, labels, *x);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(6)
        .y_labels(6)
        .max_light_lines(1)
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
        .axis_style(RGBColor(0x88, 0x88, 0x88))
        .label_style(
            ("sans-serif", 15)
                .into_font()
                .color(&RGBColor(0x33, 0x33, 0x33)),
        )
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .x_desc(X_AXIS_TITLE)
        .axis_desc_style(
            ("sans-serif", 15)
                .into_font()
                .color(&RGBColor(0x5b, 0x65, 0x76)),
        )
        .draw()
        .map_err(chart_error)?;

    // The confidence band: one polygon per stretch of consecutive points that have bounds.
    let mut stretch: Vec<(f64, f64, f64)> = Vec::new();
    let mut stretches = Vec::new();
    for (i, p) in series.points.iter().enumerate() {
        #[expect(clippy::cast_precision_loss, reason = "run counts are far below 2^52")]
        let x = i as f64;
        match (p.lower, p.upper) {
            (Some(lo), Some(hi)) if lo.is_finite() && hi.is_finite() => stretch.push((x, lo, hi)),
            _ => stretches.push(std::mem::take(&mut stretch)),
        }
    }
    stretches.push(stretch);
    for s in stretches.iter().filter(|s| s.len() >= 2) {
        let outline: Vec<(f64, f64)> = s
            .iter()
            .map(|&(x, _, hi)| (x, hi))
            .chain(s.iter().rev().map(|&(x, lo, _)| (x, lo)))
            .collect();
        chart
            .draw_series(std::iter::once(Polygon::new(
                outline,
                LINE.mix(0.16).filled(),
            )))
            .map_err(chart_error)?;
    }

    #[expect(clippy::cast_precision_loss, reason = "run counts are far below 2^52")]
    let line: Vec<(f64, f64)> = series
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| (i as f64, p.estimate))
        .collect();
    chart
        .draw_series(LineSeries::new(line.iter().copied(), LINE.stroke_width(2)))
        .map_err(chart_error)?;

    let (_, y_pixels) = chart.plotting_area().get_pixel_range();
    let y_mid = line.first().map_or(0.0, |p| p.1);
    #[expect(clippy::cast_precision_loss, reason = "run counts are far below 2^52")]
    let boundaries = (0..series.points.len())
        .map(|i| chart.backend_coord(&(i as f64 - 0.5, y_mid)).0)
        .collect();
    let geometry = Geometry {
        points: line.iter().map(|p| chart.backend_coord(p)).collect(),
        boundaries,
        top: y_pixels.start,
        bottom: y_pixels.end,
    };
    root.present().map_err(chart_error)?;
    Ok(geometry)
}

/// Renders the trend chart of `series`, whose points refer to the runs `labels` was made from.
/// `id` must be unique in the page (it names the chart's title for screen readers); `notes`
/// mark annotated points.
///
/// # Errors
/// When plotters fails to draw (it does not for finite data).
pub fn render(
    series: &Series,
    labels: &RunLabels,
    notes: &[Note<'_>],
    id: &str,
    log_scale: bool,
) -> Result<Chart, ChartError> {
    let mut body = String::with_capacity(8 * 1024 + series.points.len() * 160);
    let Some((lo, hi)) = extent(series) else {
        return Ok(Chart {
            svg: String::new(),
            log_scale: false,
        });
    };
    let log_scale = log_scale && lo > 0.0;
    let geometry = if log_scale {
        let r = log_range(lo, hi);
        let ticks = ticks::log_ticks(r.start, r.end, Base::of_unit(&series.unit));
        draw(
            &mut body,
            series,
            labels,
            r.log_scale().with_key_points(ticks),
        )?
    } else {
        draw(&mut body, series, labels, linear_range(lo, hi))?
    };

    let mut overlay = String::with_capacity(series.points.len() * 140 + 256);
    overlay.push_str("<g class=\"marks\">\n");
    for cp in &series.change_points {
        let Some(&x) = geometry.boundaries.get(cp.index) else {
            continue;
        };
        let run = series
            .points
            .get(cp.index)
            .map_or("", |p| labels.hover(p.run));
        // `run` is escaped already.
        let title = format!(
            "Change point at {run}: {} ({} → {})",
            format::pct(cp.shift_pct),
            escape(&format::value(cp.before, &series.unit)),
            escape(&format::value(cp.after, &series.unit))
        );
        let _ = writeln!(
            overlay,
            "<line class=\"change-point\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{CHANGE}\" \
             stroke-width=\"2\" stroke-dasharray=\"6 4\"><title>{}</title></line>",
            geometry.top, geometry.bottom, title
        );
    }
    for note in notes {
        let Some(&(x, _)) = geometry.points.get(note.index) else {
            continue;
        };
        let run = series.points.get(note.index).map_or(0, |p| p.run_id);
        let _ = writeln!(
            overlay,
            "<line class=\"annotation\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{NOTE}\" \
             stroke-width=\"1.5\" stroke-dasharray=\"2 3\"><title>Note on run #{run}: {}</title></line>",
            geometry.top,
            geometry.bottom,
            escape(note.text)
        );
    }
    let radius = if series.points.len() > 200 { 2 } else { 3 };
    let _ = writeln!(
        overlay,
        "<g class=\"points\" fill=\"#{:02x}{:02x}{:02x}\">",
        LINE.0, LINE.1, LINE.2
    );
    for (p, &(x, y)) in series.points.iter().zip(&geometry.points) {
        let _ = writeln!(
            overlay,
            "<circle cx=\"{x}\" cy=\"{y}\" r=\"{radius}\"><title>{} · {}</title></circle>",
            labels.hover(p.run),
            escape(&format::value(p.estimate, &series.unit))
        );
    }
    overlay.push_str("</g>\n</g>\n");

    let first = series.points.first();
    let last = series.points.last();
    let title = format!("Trend of {} [{}]", series.benchmark, series.metric);
    let desc = format!(
        "{} runs; latest {}; {} change point(s){}.",
        series.points.len(),
        last.map_or_else(String::new, |p| format::value(p.estimate, &series.unit)),
        series.change_points.len(),
        match (first, last) {
            (Some(a), Some(b)) if series.points.len() > 1 =>
                format!("; first {}", format::value(a.estimate, &series.unit))
                    + &format!(" (run #{} to run #{})", a.run_id, b.run_id),
            _ => String::new(),
        }
    );
    let header = format!(
        "<title id=\"{id}-title\">{}</title>\n<desc id=\"{id}-desc\">{}</desc>\n",
        escape(&title),
        escape(&desc)
    );

    let mut svg = String::with_capacity(body.len() + overlay.len() + header.len() + 128);
    let open_end = body.find('>').map_or(0, |i| i + 1);
    let close = body.rfind("</svg>").unwrap_or(body.len());
    let (open, rest) = body.split_at(open_end);
    let (inner, tail) = rest.split_at(close.saturating_sub(open_end));
    svg.push_str(&open.replacen(
        "<svg ",
        &format!(
            "<svg id=\"{id}\" class=\"chart\" role=\"img\" aria-labelledby=\"{id}-title {id}-desc\" "
        ),
        1,
    ));
    svg.push('\n');
    svg.push_str(&header);
    svg.push_str(inner);
    svg.push_str(&overlay);
    svg.push_str(tail);
    Ok(Chart { svg, log_scale })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_analysis::changepoint::ChangePoint;
    use bench_analysis::compare::{NoiseFloor, NoiseSource};
    use bench_model::Direction;
    use bench_store::TrendValue;

    fn runs(n: usize) -> Vec<TrendRun> {
        (0..n)
            .map(|i| TrendRun {
                id: i64::try_from(i).unwrap_or(0) + 1,
                git_commit: Some(format!("{i:02x}{}", "ab".repeat(19))),
                git_commit_time: Some(1_767_323_045 + i64::try_from(i).unwrap_or(0) * 3600),
                created_at: "2026-01-02T03:04:05.000Z".to_owned(),
            })
            .collect()
    }

    fn series(values: &[f64]) -> Series {
        Series {
            benchmark: "<b>&\"name\"".to_owned(),
            metric: "time".to_owned(),
            unit: "ns".to_owned(),
            direction: Direction::LowerIsBetter,
            points: values
                .iter()
                .enumerate()
                .map(|(i, &v)| TrendValue {
                    run: i,
                    run_id: i64::try_from(i).unwrap_or(0) + 1,
                    estimate: v,
                    lower: Some(v * 0.98),
                    upper: Some(v * 1.02),
                })
                .collect(),
            change_points: vec![ChangePoint {
                index: 2,
                before: 1000.0,
                after: 2000.0,
                shift_pct: 100.0,
            }],
            noise_floor: NoiseFloor {
                pct: 2.0,
                source: NoiseSource::Default { n_deltas: 0 },
            },
        }
    }

    #[test]
    fn renders_points_marks_and_escapes_text() -> Result<(), ChartError> {
        let s = series(&[1000.0, 1010.0, 2000.0, 2010.0]);
        let labels = RunLabels::new(&runs(4));
        let notes = [Note {
            index: 1,
            text: "<script>alert(1)</script>",
        }];
        let chart = render(&s, &labels, &notes, "chart-0", false)?;
        let svg = &chart.svg;
        assert!(
            svg.starts_with("<svg id=\"chart-0\" class=\"chart\" role=\"img\""),
            "{svg}"
        );
        assert!(svg.contains("width=\"1100\"") && svg.contains("height=\"300\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<circle").count(), 4);
        assert_eq!(svg.matches("class=\"change-point\"").count(), 1);
        assert!(
            svg.contains(
                "Change point at run #3 · 02abababab committed 2026-01-02 · recorded 2026-01-02 \
                 03:04: +100.00%"
            ),
            "{svg}"
        );
        assert!(svg.contains("&#60;script&#62;alert(1)&#60;/script&#62;"));
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("Trend of &#60;b&#62;&#38;&#34;name&#34;"));
        assert!(svg.contains(
            "<title>run #1 · 00abababab committed 2026-01-02 · recorded 2026-01-02 03:04 · \
             1.000 µs</title>"
        ));
        assert!(svg.contains("µs"), "y labels are scaled");
        assert!(!chart.log_scale);
        Ok(())
    }

    /// The text of every `<text>` element plotters drew (axis labels and titles).
    fn svg_texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..];
                Some(body[..body.find("</text>")?].trim().to_owned())
            })
            .collect()
    }

    /// Issue 24: the x axis labelled commit dates, so the runs of one commit all read the same
    /// day. It names each run and when it was recorded, and its title says so.
    #[test]
    fn x_axis_names_runs_of_one_commit_apart() -> Result<(), ChartError> {
        let mut same_commit = runs(3);
        for (r, at) in same_commit.iter_mut().zip(["03:04", "09:30", "17:45"]) {
            r.git_commit = Some("ab".repeat(20));
            r.git_commit_time = Some(1_767_323_045);
            r.created_at = format!("2026-01-02T{at}:00.000Z");
        }
        let mut one = series(&[1000.0, 1010.0, 1005.0]);
        one.change_points.clear();
        let svg = render(&one, &RunLabels::new(&same_commit), &[], "c", false)?.svg;
        let texts = svg_texts(&svg);
        for label in ["#1 · 01-02 03:04", "#2 · 01-02 09:30", "#3 · 01-02 17:45"] {
            assert_eq!(
                texts.iter().filter(|t| *t == label).count(),
                1,
                "{label} in {texts:?}"
            );
        }
        assert!(texts.iter().any(|t| t == X_AXIS_TITLE), "{texts:?}");
        assert!(svg.contains("recorded 2026-01-02 09:30 · 1.010 µs</title>"));

        // Recorded over two years: the date with the year.
        same_commit[0].created_at = "2025-12-31T23:59:00.000Z".to_owned();
        let svg = render(&one, &RunLabels::new(&same_commit), &[], "c", false)?.svg;
        let texts = svg_texts(&svg);
        assert!(texts.iter().any(|t| t == "#1 · 2025-12-31"), "{texts:?}");
        assert!(texts.iter().any(|t| t == "#3 · 2026-01-02"), "{texts:?}");
        Ok(())
    }

    /// Issue 24: log-scale charts had almost no y labels. They are labelled at the ticks
    /// `ticks::log_ticks` picks, in human units.
    #[test]
    fn log_axis_is_labelled_at_readable_ticks() -> Result<(), ChartError> {
        let labels = RunLabels::new(&runs(4));
        let mut narrow = series(&[1000.0, 1200.0, 1800.0, 2000.0]);
        narrow.change_points.clear();
        let chart = render(&narrow, &labels, &[], "c", true)?;
        assert!(chart.log_scale);
        let texts = svg_texts(&chart.svg);
        for label in ["1 µs", "1.4 µs", "2 µs"] {
            assert!(texts.iter().any(|t| t == label), "{label} in {texts:?}");
        }

        let mut wide = series(&[10.0, 1e3, 1e5, 1e7]);
        wide.change_points.clear();
        let texts = svg_texts(&render(&wide, &labels, &[], "c", true)?.svg);
        let y: Vec<&String> = texts.iter().filter(|t| !t.starts_with('#')).collect();
        for label in [
            "10 ns", "100 ns", "1 µs", "10 µs", "100 µs", "1 ms", "10 ms",
        ] {
            assert!(y.iter().any(|t| *t == label), "{label} in {y:?}");
        }
        Ok(())
    }

    #[test]
    fn log_scale_only_for_positive_values() -> Result<(), ChartError> {
        let labels = RunLabels::new(&runs(3));
        assert!(render(&series(&[1.0, 10.0, 100.0]), &labels, &[], "c", true)?.log_scale);
        let mut zero = series(&[0.0, 10.0, 100.0]);
        zero.change_points.clear();
        assert!(!render(&zero, &labels, &[], "c", true)?.log_scale);
        Ok(())
    }

    #[test]
    fn single_point_and_empty_series() -> Result<(), ChartError> {
        let labels = RunLabels::new(&runs(1));
        let mut one = series(&[5.0]);
        one.change_points.clear();
        let chart = render(&one, &labels, &[], "c", false)?;
        assert_eq!(chart.svg.matches("<circle").count(), 1);
        let mut none = series(&[]);
        none.change_points.clear();
        assert!(render(&none, &labels, &[], "c", false)?.svg.is_empty());
        Ok(())
    }
}
