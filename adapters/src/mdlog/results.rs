//! The results of a log entry: bullets (`- \`name\`: ~14.99 µs`) and tables (`| name | 5.0 µs |`)
//! under the headings and groups that name their parameters, read into [`Pending`] results whose
//! benchmark id is completed once the entry's suite is known.

use std::collections::BTreeMap;

use super::fields::unticked;
use super::records::quoted;
use crate::check_time_ns;
use crate::model::{BenchmarkId, Direction, Estimate, Measurement, Statistic, metric};

/// Largest byte count accepted (1e18, as for times).
const MAX_BYTES: f64 = 1e18;

/// What a label, heading, group or column says about the values under it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Statement {
    /// The values are medians (`median`).
    pub median: bool,
    /// `lower is better` or `higher is better`.
    pub direction: Option<Direction>,
}

impl Statement {
    /// Reads `median`, `lower is better` and `higher is better` anywhere in `text`.
    pub(super) fn of(text: &str) -> Self {
        let text = text.to_ascii_lowercase();
        let direction = if text.contains("higher is better") {
            Some(Direction::HigherIsBetter)
        } else if text.contains("lower is better") {
            Some(Direction::LowerIsBetter)
        } else {
            None
        };
        Self {
            median: text.contains("median"),
            direction,
        }
    }

    /// This statement with `inner`'s facts added (an inner heading refines an outer one).
    pub(super) fn with(self, inner: Self) -> Self {
        Self {
            median: self.median || inner.median,
            direction: inner.direction.or(self.direction),
        }
    }
}

/// Text without its parenthesised parts (`rows = 2,000 (rtt=30ms)` -> `rows = 2,000`), and those
/// parts.
pub(super) fn split_parentheses(text: &str) -> (String, String) {
    let mut main = String::new();
    let mut inside = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                inside.push(' ');
            }
            ')' if depth > 0 => depth -= 1,
            c if depth > 0 => inside.push(c),
            c => main.push(c),
        }
    }
    (main.trim().to_owned(), inside)
}

/// A parameter of the results under a heading or group: `rows = 2,000` and `rows=2,000` give
/// `2000`, as criterion names a benchmark's value (`mathldbt_transport/encode_plain_ws/2000`);
/// text without `=` is kept as it is (without backticks).
pub(super) fn param(text: &str) -> Option<String> {
    let text = unticked(text);
    let value = text.split_once('=').map_or(text, |(_, value)| value).trim();
    if value.is_empty() {
        return None;
    }
    Some(decimal(value).unwrap_or_else(|| value.to_owned()))
}

/// A heading inside an entry (`###` and deeper).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Heading {
    /// Number of `#`.
    pub level: usize,
    /// The suite it names: a heading that is one backticked name (`` ### `json_vs_mathldbt` ``).
    pub suite: Option<String>,
    /// Otherwise its parameter (`### rows = 2,000` -> `2000`).
    pub param: Option<String>,
    /// What its parentheses say (`(median; lower is better)`).
    pub statement: Statement,
}

pub(super) fn heading(level: usize, text: &str) -> Heading {
    let (main, inside) = split_parentheses(text);
    let named = main
        .strip_prefix('`')
        .and_then(|m| m.strip_suffix('`'))
        .filter(|m| !m.is_empty() && !m.contains('`') && !m.contains(char::is_whitespace));
    Heading {
        level,
        suite: named.map(str::to_owned),
        param: if named.is_some() { None } else { param(&main) },
        statement: Statement::of(&inside),
    }
}

/// A name as written, without its backticks (`` `encode_zstd_ws` (level=3) `` ->
/// `encode_zstd_ws (level=3)`) and with single spaces.
pub(super) fn name_of(text: &str) -> String {
    text.replace('`', "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A unit a value or a column header may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unit {
    Nanoseconds,
    Microseconds,
    Milliseconds,
    Seconds,
    Bytes,
}

impl Unit {
    pub(super) fn parse(text: &str) -> Option<Self> {
        Some(match text.trim() {
            "ns" => Self::Nanoseconds,
            "µs" | "μs" | "us" => Self::Microseconds,
            "ms" => Self::Milliseconds,
            "s" => Self::Seconds,
            "B" | "bytes" | "byte" => Self::Bytes,
            _ => return None,
        })
    }

    /// Decimal places a value moves to be in the stored unit (ns or bytes).
    const fn shift(self) -> usize {
        match self {
            Self::Nanoseconds | Self::Bytes => 0,
            Self::Microseconds => 3,
            Self::Milliseconds => 6,
            Self::Seconds => 9,
        }
    }

    const fn is_time(self) -> bool {
        !matches!(self, Self::Bytes)
    }
}

/// A column header's name and the unit it gives its cells: `Bytes`, `enc_s`, `t_total_s`,
/// `Time (ms)`.
pub(super) fn header_unit(header: &str) -> (String, Option<Unit>) {
    let header = unticked(header);
    if let Some((name, unit)) = header.strip_suffix(')').and_then(|h| h.rsplit_once('('))
        && let Some(unit) = Unit::parse(unit)
    {
        return (name.trim().to_owned(), Some(unit));
    }
    if let Some((name, unit)) = header.rsplit_once('_')
        && !name.is_empty()
        && let Some(unit) = Unit::parse(unit).filter(|u| u.is_time())
    {
        return (name.to_owned(), Some(unit));
    }
    let unit = (header.eq_ignore_ascii_case("bytes")
        || header.to_ascii_lowercase().ends_with(" bytes"))
    .then_some(Unit::Bytes);
    (header.to_owned(), unit)
}

/// A metric name from a column header: snake case, without a leading `Estimated`
/// (`Estimated t_transfer` and `t_transfer_s` are one metric).
pub(super) fn metric_name(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    let lower = lower.strip_prefix("estimated ").unwrap_or(&lower);
    let mut out = String::new();
    for c in lower.chars() {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_owned()
}

/// A number as a log writes it: digits, optionally in comma-separated groups of three, and an
/// optional fraction. Returned without the commas; `None` for anything else (signs, exponents).
fn decimal(text: &str) -> Option<String> {
    let (int, frac) = match text.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (text, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if frac.is_some_and(|f| !digits(f)) {
        return None;
    }
    let mut groups = int.split(',');
    let first = groups.next()?;
    if !digits(first) || (int.contains(',') && first.len() > 3) {
        return None;
    }
    if !groups.all(|g| g.len() == 3 && digits(g)) {
        return None;
    }
    Some(text.replace(',', ""))
}

/// `number` (digits and an optional fraction) times 10^`shift`, moved in the decimal text so
/// that `14.99 µs` is exactly the double nearest to 14990 ns.
fn scaled(number: &str, shift: usize) -> f64 {
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    let moved = frac.len().min(shift);
    let (into_int, rest) = frac.split_at(moved);
    let text = format!(
        "{int}{into_int}{}.{rest}0",
        "0".repeat(shift.saturating_sub(moved))
    );
    text.parse().unwrap_or(f64::INFINITY)
}

/// A measured value in the stored unit (ns for times, bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Quantity {
    pub value: f64,
    pub time: bool,
    /// Written with `~`.
    pub approximate: bool,
}

/// Whether a cell holds a number (possibly `~`, possibly cut or malformed) rather than text.
pub(super) fn looks_numeric(cell: &str) -> bool {
    cell.trim()
        .trim_start_matches(['~', '≈'])
        .trim_start()
        .starts_with(|c: char| c.is_ascii_digit())
}

/// Reads `~14.99 µs`, `5.0073 µs`, `92,263` (with `default` from the column header) or
/// `0.000688` (likewise).
pub(super) fn quantity(text: &str, default: Option<Unit>) -> Result<Quantity, String> {
    let text = text.trim();
    let (approximate, rest) = match text.strip_prefix(['~', '≈']) {
        Some(rest) => (true, rest.trim_start()),
        None => (false, text),
    };
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(rest.len());
    let (number, unit_text) = rest.split_at(end);
    let digits = decimal(number).ok_or_else(|| format!("{:?} is not a number", quoted(text)))?;
    let unit = match unit_text.trim() {
        "" => default.ok_or_else(|| {
            format!(
                "{:?} has no unit (ns, µs, ms, s or bytes, in the value or its column's header)",
                quoted(text)
            )
        })?,
        u => Unit::parse(u).ok_or_else(|| {
            format!(
                "unknown unit {:?} in {:?} (known: ns, µs, us, ms, s, B, bytes)",
                quoted(u),
                quoted(text)
            )
        })?,
    };
    let value = scaled(&digits, unit.shift());
    if unit.is_time() {
        check_time_ns("", "the time", value).map_err(|e| match e {
            crate::AdapterError::Invalid { reason, .. } => format!("{:?}: {reason}", quoted(text)),
            other => other.to_string(),
        })?;
    } else if !(value.is_finite() && value <= MAX_BYTES) {
        return Err(format!(
            "{:?}: the byte count is absurdly large (> {MAX_BYTES})",
            quoted(text)
        ));
    }
    Ok(Quantity {
        value,
        time: unit.is_time(),
        approximate,
    })
}

/// Where a result stands: the suite a heading named (if any), the parameters of the headings
/// and groups above it, and what they state.
#[derive(Debug, Clone, Default)]
pub(super) struct Context {
    pub suite: Option<String>,
    pub params: Vec<String>,
    pub statement: Statement,
}

/// A result read from a line, waiting for its entry's suite to become a [`Measurement`].
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Pending {
    pub line: usize,
    /// The suite a heading named, if any.
    pub suite: Option<String>,
    /// The benchmark's name parts (`encode_plain_ws`; `MATHLDBT`, `none`).
    pub function: Vec<String>,
    /// Its parameters (`2000`).
    pub params: Vec<String>,
    pub metric: String,
    pub unit: &'static str,
    pub direction: Direction,
    pub value: f64,
    /// `Median` or `ApproximateMedian` when the value is a median.
    pub statistic: Option<Statistic>,
}

impl Pending {
    /// The measurement, in suite `suite`: benchmark `suite/function/params` as criterion names
    /// `group/function/value`.
    pub(super) fn measurement(&self, suite: &str) -> Measurement {
        let function = self.function.join("/");
        let value = (!self.params.is_empty()).then(|| self.params.join("/"));
        let full = match &value {
            Some(value) => format!("{suite}/{function}/{value}"),
            None => format!("{suite}/{function}"),
        };
        Measurement {
            benchmark: BenchmarkId {
                full,
                group: Some(suite.to_owned()),
                function: Some(function),
                value,
            },
            metric: self.metric.clone(),
            unit: self.unit.to_owned(),
            direction: self.direction,
            estimate: Estimate::point(self.value),
            statistics: self
                .statistic
                .map(|s| BTreeMap::from([(s, Estimate::point(self.value))]))
                .unwrap_or_default(),
            throughput: None,
            samples: None,
        }
    }
}

/// The result of one value under `context`; `metric` is `None` for the metric of its unit
/// (`time` or `bytes`).
pub(super) fn pending(
    line: usize,
    context: &Context,
    function: Vec<String>,
    metric: Option<String>,
    statement: Statement,
    q: Quantity,
) -> Result<Pending, String> {
    let statement = context.statement.with(statement);
    let statistic = match (statement.median && q.time, q.approximate) {
        (true, false) => Some(Statistic::Median),
        (true, true) => Some(Statistic::ApproximateMedian),
        (false, false) => None,
        (false, true) => {
            return Err(
                "`~` marks an approximate median, but this value is not a time stated as a \
                 median (say `median` in the results label, the heading or the column)"
                    .to_owned(),
            );
        }
    };
    Ok(Pending {
        line,
        suite: context.suite.clone(),
        function,
        params: context.params.clone(),
        metric: metric.unwrap_or_else(|| if q.time { metric::TIME } else { "bytes" }.to_owned()),
        unit: if q.time { "ns" } else { "bytes" },
        direction: statement.direction.unwrap_or(Direction::LowerIsBetter),
        value: q.value,
        statistic,
    })
}

/// A bullet of a results list.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Bullet {
    /// `- rows=2,000:`: the parameter (and statement) of the bullets nested under it.
    Group {
        param: Option<String>,
        statement: Statement,
    },
    /// `- \`name\` (qualifier): value`.
    Result(Pending),
}

/// Reads a results bullet (the text after `- `).
pub(super) fn bullet(line: usize, text: &str, context: &Context) -> Result<Bullet, String> {
    let text = text.trim();
    if let Some(group) = text.strip_suffix(':') {
        let (main, inside) = split_parentheses(group);
        return Ok(Bullet::Group {
            param: param(&main),
            statement: Statement::of(&inside),
        });
    }
    // The name may hold a `:` inside its backticks; the value follows the first `:` after them.
    let (name, value) = match text.strip_prefix('`').and_then(|t| t.split_once('`')) {
        Some((name, rest)) => {
            let (qualifier, value) = rest.split_once(':').ok_or_else(|| shape(text))?;
            (name_of(&format!("{name} {qualifier}")), value)
        }
        None => {
            let (name, value) = text.rsplit_once(':').ok_or_else(|| shape(text))?;
            (name_of(name), value)
        }
    };
    if name.is_empty() {
        return Err(shape(text));
    }
    let q = quantity(value, None)?;
    pending(line, context, vec![name], None, Statement::default(), q).map(Bullet::Result)
}

fn shape(text: &str) -> String {
    format!(
        "a result reads `NAME: VALUE UNIT` (like - `encode_plain_ws`: ~14.99 µs), or opens a \
         group (like - rows=2,000:), got {:?}",
        quoted(text)
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;

    #[test]
    fn quantities_are_scaled_exactly() {
        type Case<'a> = (&'a str, Option<Unit>, Option<(f64, bool, bool)>);
        let cases: [Case<'_>; 22] = [
            ("~14.99 µs", None, Some((14_990.0, true, true))),
            ("~14.99 μs", None, Some((14_990.0, true, true))),
            ("5.0073 µs", None, Some((5_007.3, true, false))),
            ("4.518 µs ", None, Some((4_518.0, true, false))),
            ("~2.9216 ms", None, Some((2_921_600.0, true, true))),
            ("1.046000 s", None, Some((1_046_000_000.0, true, false))),
            (
                "0.000688",
                Some(Unit::Seconds),
                Some((688_000.0, true, false)),
            ),
            ("92,263", Some(Unit::Bytes), Some((92_263.0, false, false))),
            (
                "12,700,001",
                Some(Unit::Bytes),
                Some((12_700_001.0, false, false)),
            ),
            ("12 ns", None, Some((12.0, true, false))),
            ("3 us", None, Some((3_000.0, true, false))),
            ("7 bytes", None, Some((7.0, false, false))),
            ("12", None, None),
            ("12 parsecs", None, None),
            ("-5 ms", None, None),
            ("1e3 ms", None, None),
            ("1,23 ms", None, None),
            ("1. ms", None, None),
            (".5 ms", None, None),
            ("~", None, None),
            ("2,000,000,000 s", None, None),
            ("1,000,000,000,000,000,000,000", Some(Unit::Bytes), None),
        ];
        for (i, (text, unit, want)) in cases.into_iter().enumerate() {
            let got = quantity(text, unit)
                .ok()
                .map(|q| (q.value, q.time, q.approximate));
            assert_eq!(got, want, "case {i}: {text:?}");
        }
        let huge = format!("{} ns", "9".repeat(400));
        assert!(quantity(&huge, None).unwrap_err().contains("not finite"));
        assert_eq!(scaled("14.99", 3), 14_990.0);
        assert_eq!(scaled("0.000688", 9), 688_000.0);
        assert_eq!(scaled("1", 6), 1e6);
    }

    #[test]
    fn headings_params_and_headers() {
        let h = heading(3, "`mathldbt_transport` (median; lower is better)");
        assert_eq!(h.suite.as_deref(), Some("mathldbt_transport"));
        assert_eq!(h.param, None);
        assert_eq!(
            h.statement,
            Statement {
                median: true,
                direction: Some(Direction::LowerIsBetter)
            }
        );
        let h = heading(4, "rows = 2,000 (rtt=30ms, bandwidth=100Mbit/s)");
        assert_eq!((h.suite, h.param.as_deref()), (None, Some("2000")));
        assert!(!h.statement.median);
        assert_eq!(
            heading(3, "small batch").param.as_deref(),
            Some("small batch")
        );
        assert_eq!(heading(3, "").param, None);
        assert_eq!(param("rows=100,000").as_deref(), Some("100000"));
        assert_eq!(param("level = fast").as_deref(), Some("fast"));
        assert_eq!(
            header_unit("Bytes"),
            ("Bytes".to_owned(), Some(Unit::Bytes))
        );
        assert_eq!(
            header_unit("enc_s"),
            ("enc".to_owned(), Some(Unit::Seconds))
        );
        assert_eq!(
            header_unit("Time (ms)"),
            ("Time".to_owned(), Some(Unit::Milliseconds))
        );
        assert_eq!(header_unit("Payload"), ("Payload".to_owned(), None));
        assert_eq!(header_unit("rows_b"), ("rows_b".to_owned(), None));
        assert_eq!(metric_name("Estimated t_transfer"), "t_transfer");
        assert_eq!(metric_name("t_total"), "t_total");
        assert_eq!(metric_name("Wire size"), "wire_size");
    }

    #[test]
    fn bullets() {
        let median = Context {
            statement: Statement::of("median; lower is better"),
            params: vec!["2000".to_owned()],
            ..Context::default()
        };
        let Bullet::Result(p) =
            bullet(7, "`encode_zstd_ws` (level=3): ~324.16 µs", &median).unwrap()
        else {
            panic!("not a result")
        };
        assert_eq!(p.function, ["encode_zstd_ws (level=3)"]);
        assert_eq!(
            (p.metric.as_str(), p.unit, p.value),
            ("time", "ns", 324_160.0)
        );
        assert_eq!(p.statistic, Some(Statistic::ApproximateMedian));
        assert_eq!(
            p.measurement("s").benchmark.full,
            "s/encode_zstd_ws (level=3)/2000"
        );
        assert_eq!(
            bullet(1, "rows=2,000:", &median).unwrap(),
            Bullet::Group {
                param: Some("2000".to_owned()),
                statement: Statement::default()
            }
        );
        let Bullet::Result(plain) = bullet(1, "decode: 3 ms", &Context::default()).unwrap() else {
            panic!("not a result")
        };
        assert_eq!(
            (plain.function[0].as_str(), plain.statistic),
            ("decode", None)
        );
        for (text, needle) in [
            ("`x`: ~3 ms", "not a time stated as a median"),
            ("`x` 3 ms", "a result reads"),
            ("no value here", "a result reads"),
            (": 3 ms", "a result reads"),
            ("`x`: 3", "has no unit"),
            ("`x`: fast", "is not a number"),
        ] {
            let err = bullet(1, text, &Context::default()).unwrap_err();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }
}
