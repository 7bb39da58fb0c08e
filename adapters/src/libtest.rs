//! libtest bench output: what `cargo +nightly bench` prints for `#[bench]` functions.
//!
//! ```text
//!                                                   <- cargo's own progress goes to stderr
//! running 6 tests                                   <- one test run per bench binary
//! test benches::a_plain_test ... ignored            <- tests, ignored and failed ones: skipped
//! test benches::add_two               ... bench:           0.49 ns/iter (+/- 0.92)
//! test benches::checksum_4k           ... bench:       4,500.95 ns/iter (+/- 2,629.82) = 910 MB/s
//! test benches::nested::string_format ... bench:          57.69 ns/iter (+/- 25.70)
//!
//! test result: ok. 0 passed; 0 failed; 2 ignored; 4 measured; 0 filtered out; finished in 11.18s
//! ```
//!
//! Each `bench:` line becomes one [`Measurement`] named by the test's full path
//! (`benches::nested::string_format`), with metric [`metric::TIME`] in `ns`, lower is better:
//!
//! - the headline estimate and [`Statistic::Median`] are the `ns/iter` figure, which is the median
//!   of libtest's 50 per-iteration samples (after it winsorizes them at the 5th and 95th
//!   percentiles);
//! - [`Statistic::Range`] is the `+/-` figure: the largest of those samples minus the smallest.
//!   It is a spread of the samples, not a confidence interval and not a deviation around the
//!   median, so it is stored as a point and the headline estimate has no bounds;
//! - no samples (libtest does not print them) and no throughput (below).
//!
//! Recent nightlies print both figures with two decimals (`1,234.56`); older ones truncated them
//! to integers (`1,234`). Both are read, with or without thousands separators.
//!
//! **MB/s is checked and dropped.** With `b.bytes = N` set, the line ends `= R MB/s`, where libtest
//! computes `R = N * 1000 / median` in integers (decimal megabytes, truncated, the median
//! truncated to whole nanoseconds). The model keeps a throughput as the declared count per
//! iteration ([`Throughput`](crate::model::Throughput)), and `N` is not printed: it cannot be
//! recovered from the rounded rate (`910 MB/s` at `4,500.95 ns/iter` fits any `N` from 4,095 to
//! 4,099). Rather than record a guessed count, the throughput is left out; a rate is still
//! derivable from the time if the count is known elsewhere.
//!
//! **Framing.** A `bench:` line counts only inside a test run, between its `running N tests`
//! line and its `test result:` line, and the number of `bench:` lines read must equal the run's
//! `N measured`. So lines picked out of the output (`grep bench:`), a run cut short or a bench
//! that printed into its own line (`--nocapture`) are errors, not a silently smaller import. The
//! last line must end with a line break, as everything libtest prints does. A capture cut exactly
//! between two test runs cannot be told from the output of fewer bench binaries and parses as
//! such.
//!
//! Also read: the terse format of `cargo bench -q` (a `.` or `i` per finished test, with no line
//! break, may precede a `test` line), terminal colour escapes (`-- --color always`) and CRLF line
//! ends. Anything outside the recognised lines (compiler output, the benchmarks' own prints) is
//! skipped, and need not be UTF-8. A benchmark name reported twice is refused: two bench binaries
//! with a benchmark of the same name must be imported separately. libtest's JSON and JUnit
//! formats (`-Z unstable-options --format json`) are not read.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use super::{AdapterError, check_time_ns};
use crate::model::{BenchmarkId, Direction, Estimate, Measurement, Statistic, metric};

/// What the errors call the input.
const WHAT: &str = "libtest output";

/// Longest piece of input an error message quotes, in characters.
const QUOTED_CHARS: usize = 120;

/// `text`, shortened to [`QUOTED_CHARS`] for an error message.
fn quoted(text: &str) -> String {
    let mut chars = text.chars();
    let mut out: String = chars.by_ref().take(QUOTED_CHARS).collect();
    if chars.next().is_some() {
        out.push_str("...");
    }
    out
}

/// One recognised line.
enum Line<'a> {
    /// `running N tests`: a test run starts.
    Header,
    /// `test NAME ... bench: ...`: the name and the text after `bench:`.
    Bench { name: &'a str, figures: &'a str },
    /// `test result: ...`: the text after `test result:`.
    Summary(&'a str),
    /// Anything else.
    Other,
}

fn classify(line: &str) -> Line<'_> {
    if let Some(rest) = line.strip_prefix("running ")
        && let Some((count, noun)) = rest.split_once(' ')
        && matches!(noun, "test" | "tests")
        && !count.is_empty()
        && count.bytes().all(|b| b.is_ascii_digit())
    {
        return Line::Header;
    }
    // The terse format writes `.`, `i` or `F` per finished test without a line break.
    let line = line.trim_start_matches(['.', 'i', 'F']);
    if let Some(rest) = line.strip_prefix("test result:") {
        return Line::Summary(rest);
    }
    if let Some(rest) = line.strip_prefix("test ")
        && let Some(at) = rest.find("... bench:")
    {
        return Line::Bench {
            name: rest.get(..at).unwrap_or_default().trim(),
            figures: rest.get(at + "... bench:".len()..).unwrap_or_default(),
        };
    }
    Line::Other
}

/// Removes terminal escape sequences (colours, character set selection).
fn strip_escapes(line: &str) -> Cow<'_, str> {
    if !line.contains('\x1b') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // CSI: parameter and intermediate bytes up to one final byte.
            Some('[') => {
                for c in chars.by_ref() {
                    if ('\x40'..='\x7e').contains(&c) {
                        break;
                    }
                }
            }
            // Character set designation: one more character.
            Some('(' | ')' | '*' | '+') => {
                chars.next();
            }
            // Any other escape is two characters long.
            _ => {}
        }
    }
    Cow::Owned(out)
}

/// A number as libtest prints it: digits, optionally in comma-separated groups of three, and an
/// optional fraction (`0.49`, `1,234`, `4,500.95`, `1234`). No sign, exponent or words.
fn parse_number(text: &str) -> Option<f64> {
    let (int, frac) = match text.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (text, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(frac) = frac
        && !digits(frac)
    {
        return None;
    }
    let mut groups = int.split(',');
    let first = groups.next()?;
    let grouped = int.contains(',');
    if !digits(first) || (grouped && first.len() > 3) {
        return None;
    }
    if !groups.all(|g| g.len() == 3 && digits(g)) {
        return None;
    }
    let plain: String = text.chars().filter(|&c| c != ',').collect();
    plain.parse().ok()
}

/// The figures after `bench:`: `MEDIAN ns/iter (+/- RANGE)`, optionally `= R MB/s`.
fn parse_figures(what: &str, figures: &str) -> Result<(f64, f64), AdapterError> {
    let expected = || {
        AdapterError::invalid(
            what,
            format!(
                "expected `N ns/iter (+/- N)`, optionally followed by `= N MB/s`, got {:?}",
                quoted(figures.trim())
            ),
        )
    };
    let tokens: Vec<&str> = figures.split_whitespace().take(8).collect();
    let (median, range, rate) = match tokens.as_slice() {
        [median, "ns/iter", "(+/-", range] => (*median, *range, None),
        [median, "ns/iter", "(+/-", range, "=", rate, "MB/s"] => (*median, *range, Some(*rate)),
        _ => return Err(expected()),
    };
    let range = range.strip_suffix(')').ok_or_else(expected)?;
    let number = |name: &str, text: &str| {
        parse_number(text).ok_or_else(|| {
            AdapterError::invalid(what, format!("{name} {:?} is not a number", quoted(text)))
        })
    };
    let median = check_time_ns(what, "ns/iter", number("ns/iter", median)?)?;
    let range = check_time_ns(what, "+/- range", number("+/- range", range)?)?;
    if let Some(rate) = rate {
        // Checked so that a garbled line is not half read; not stored (see the module docs).
        let rate = number("MB/s", rate)?;
        if !rate.is_finite() {
            return Err(AdapterError::invalid(
                what,
                format!("MB/s is not finite ({rate})"),
            ));
        }
    }
    Ok((median, range))
}

/// The `N measured` count of a `test result:` line.
fn measured(what: &str, summary: &str) -> Result<usize, AdapterError> {
    summary
        .split(';')
        .find_map(|part| part.trim().strip_suffix(" measured"))
        .and_then(|before| before.split_whitespace().last())
        .and_then(|count| count.parse().ok())
        .ok_or_else(|| {
            AdapterError::invalid(what, "`test result:` line without an `N measured` count")
        })
}

fn measurement(name: &str, median: f64, range: f64) -> Measurement {
    Measurement {
        benchmark: BenchmarkId::named(name),
        metric: metric::TIME.to_owned(),
        unit: "ns".to_owned(),
        direction: Direction::LowerIsBetter,
        estimate: Estimate::point(median),
        statistics: BTreeMap::from([
            (Statistic::Median, Estimate::point(median)),
            (Statistic::Range, Estimate::point(range)),
        ]),
        throughput: None,
        samples: None,
    }
}

/// A test run being read: where it started and how many `bench:` lines it has had.
struct Run {
    line: usize,
    benchmarks: usize,
}

/// Parses the stdout of `cargo +nightly bench` (libtest's `#[bench]` harness), keeping the order
/// of the benchmarks.
///
/// # Errors
/// [`AdapterError::Empty`] when no benchmark was measured; [`AdapterError::Invalid`] naming the
/// line for a `bench:` line that cannot be read (not UTF-8, empty name, figures not in libtest's
/// shape, a time that is absurd or does not fit a float), a benchmark reported twice, a `bench:`
/// line outside a test run, a test run without its `test result:` line or whose `N measured`
/// differs from its `bench:` lines, and a last line without a line break (a cut).
pub fn parse(bytes: &[u8]) -> Result<Vec<Measurement>, AdapterError> {
    let mut measurements = Vec::new();
    let mut line_of: HashMap<String, usize> = HashMap::new();
    let mut run: Option<Run> = None;
    let pieces: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let last = pieces.len().saturating_sub(1);
    for (index, raw) in pieces.into_iter().enumerate() {
        let number = index + 1;
        let what = format!("{WHAT}, line {number}");
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if index == last && !raw.trim_ascii().is_empty() {
            return Err(AdapterError::invalid(
                what,
                "the last line has no line break: the output is cut short",
            ));
        }
        let text = match std::str::from_utf8(raw) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => {
                let lossy = String::from_utf8_lossy(raw);
                if matches!(classify(&strip_escapes(&lossy)), Line::Other) {
                    continue;
                }
                return Err(AdapterError::invalid(what, "not UTF-8"));
            }
        };
        let text = strip_escapes(&text);
        match classify(&text) {
            Line::Other => {}
            Line::Header => {
                if let Some(open) = run {
                    return Err(AdapterError::invalid(
                        what,
                        format!(
                            "a test run starts here, but the one started on line {} has no \
                             `test result:` line: is the output cut short, or two outputs mixed?",
                            open.line
                        ),
                    ));
                }
                run = Some(Run {
                    line: number,
                    benchmarks: 0,
                });
            }
            Line::Bench { name, figures } => {
                let Some(open) = run.as_mut() else {
                    return Err(AdapterError::invalid(
                        what,
                        "benchmark line outside a test run (no `running N tests` line before \
                         it): import the whole output of cargo bench, not lines picked from it",
                    ));
                };
                open.benchmarks += 1;
                if name.is_empty() {
                    return Err(AdapterError::invalid(what, "benchmark name is empty"));
                }
                let what = format!("{what} (`{}`)", quoted(name));
                if let Some(first) = line_of.insert(name.to_owned(), number) {
                    return Err(AdapterError::invalid(
                        what,
                        format!(
                            "benchmark already reported on line {first}: import the output of \
                             each bench binary on its own (cargo bench --bench NAME)"
                        ),
                    ));
                }
                let (median, range) = parse_figures(&what, figures)?;
                measurements.push(measurement(name, median, range));
            }
            Line::Summary(summary) => {
                let Some(open) = run.take() else {
                    return Err(AdapterError::invalid(
                        what,
                        "`test result:` line without a `running N tests` line before it: is \
                         the start of the output missing?",
                    ));
                };
                let count = measured(&what, summary)?;
                if count != open.benchmarks {
                    return Err(AdapterError::invalid(
                        what,
                        format!(
                            "the test run started on line {} reports {count} measured, but {} \
                             benchmark lines were read: did a benchmark print into its line \
                             (--nocapture)?",
                            open.line, open.benchmarks
                        ),
                    ));
                }
            }
        }
    }
    if let Some(open) = run {
        return Err(AdapterError::invalid(
            format!("{WHAT}, line {}", open.line),
            "the test run started here has no `test result:` line: the output is cut short",
        ));
    }
    if measurements.is_empty() {
        return Err(AdapterError::Empty {
            what: WHAT.to_owned(),
        });
    }
    Ok(measurements)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;
    use std::path::Path;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("testdata/libtest")
                .join(name),
        )
        .unwrap()
    }

    const CAPTURES: [&str; 3] = ["basic.txt", "quiet.txt", "color.txt"];

    /// (name, ns/iter, +/-) of every benchmark of a capture, in order.
    type Expected = [(&'static str, f64, f64); 5];

    /// The values of the committed captures (update after regenerating with make.sh).
    fn expected(file: &str) -> Expected {
        match file {
            "basic.txt" => [
                ("benches::add_two", 0.49, 0.92),
                ("benches::checksum_4k", 4_500.95, 2_629.82),
                ("benches::nested::string_format", 57.69, 25.70),
                ("benches::sort_10k", 117_355.22, 72_559.53),
                ("vec_push_1k", 993.71, 366.51),
            ],
            "quiet.txt" => [
                ("benches::add_two", 0.70, 0.43),
                ("benches::checksum_4k", 4_766.25, 690.40),
                ("benches::nested::string_format", 56.62, 14.78),
                ("benches::sort_10k", 127_663.67, 60_160.03),
                ("vec_push_1k", 989.78, 437.89),
            ],
            "color.txt" => [
                ("benches::add_two", 0.70, 0.31),
                ("benches::checksum_4k", 4_697.63, 2_070.69),
                ("benches::nested::string_format", 59.99, 11.86),
                ("benches::sort_10k", 122_041.63, 38_714.59),
                ("vec_push_1k", 1_030.10, 296.86),
            ],
            other => panic!("no expectations for {other}"),
        }
    }

    #[test]
    fn real_captures() {
        for file in CAPTURES {
            let parsed = parse(&fixture(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
            let expected = expected(file);
            assert_eq!(parsed.len(), expected.len(), "{file}");
            for (m, (name, median, range)) in parsed.iter().zip(expected) {
                let ctx = format!("{file}: {name}");
                assert_eq!(m.benchmark, BenchmarkId::named(name), "{ctx}");
                assert_eq!(
                    (m.metric.as_str(), m.unit.as_str()),
                    ("time", "ns"),
                    "{ctx}"
                );
                assert_eq!(m.direction, Direction::LowerIsBetter, "{ctx}");
                assert_eq!(m.estimate, Estimate::point(median), "{ctx}");
                assert_eq!(
                    m.statistics,
                    BTreeMap::from([
                        (Statistic::Median, Estimate::point(median)),
                        (Statistic::Range, Estimate::point(range)),
                    ]),
                    "{ctx}"
                );
                assert!(m.throughput.is_none(), "{ctx}");
                assert!(m.samples.is_none(), "{ctx}");
            }
        }
    }

    #[test]
    fn the_captures_hold_what_the_tests_rely_on() {
        let basic = String::from_utf8(fixture("basic.txt")).unwrap();
        assert_eq!(basic.matches("running ").count(), 2, "two bench binaries");
        assert!(basic.contains(" MB/s\n"), "a benchmark with b.bytes");
        assert!(basic.contains(" ... ignored\n"), "an ignored test");
        let quiet = String::from_utf8(fixture("quiet.txt")).unwrap();
        assert!(quiet.contains("\nitest "), "terse markers before a line");
        let color = String::from_utf8(fixture("color.txt")).unwrap();
        assert!(color.contains("\x1b[36mbench"), "colour escapes");
    }

    /// A cut inside a test run or its `test result:` line is an error; a cut between two test
    /// runs leaves the output of fewer bench binaries: exactly the benchmarks of the complete runs.
    #[test]
    fn truncation_at_every_byte() {
        for file in CAPTURES {
            let bytes = fixture(file);
            let full = parse(&bytes).unwrap();
            // Ends of the `test result:` lines, line break included.
            let ends: Vec<usize> = bytes
                .windows(b"\ntest result:".len())
                .enumerate()
                .filter(|(_, w)| *w == b"\ntest result:")
                .map(|(at, _)| {
                    at + 1 + bytes[at + 1..].iter().position(|&b| b == b'\n').unwrap() + 1
                })
                .collect();
            assert_eq!(ends.len(), 2, "{file}");
            let first_run = parse(&bytes[..ends[0]]).unwrap();
            assert_eq!(first_run[..], full[..4], "{file}");
            for len in 0..bytes.len() {
                let prefix = &bytes[..len];
                // Between runs: after a complete run, with only blank lines since.
                let complete = ends.iter().rev().find(|&&end| end <= len);
                let between = complete
                    .is_some_and(|&end| bytes[end..len].iter().all(u8::is_ascii_whitespace));
                match (parse(prefix), complete) {
                    (Ok(parsed), Some(&end)) if between => {
                        let whole = parse(&bytes[..end]).unwrap();
                        assert_eq!(parsed, whole, "{file}: length {len}");
                    }
                    (Ok(_), _) => panic!("{file}: length {len} parsed though cut inside a run"),
                    (Err(e), _) => {
                        assert!(!between, "{file}: length {len} between runs failed: {e}")
                    }
                }
            }
        }
    }

    fn run(lines: &str) -> String {
        let n = lines.lines().filter(|l| l.contains("... bench:")).count();
        format!(
            "\nrunning {n} tests\n{lines}\ntest result: ok. 0 passed; 0 failed; 0 ignored; \
             {n} measured; 0 filtered out; finished in 0.01s\n\n"
        )
    }

    #[test]
    fn hostile_inputs_are_errors() {
        let bench = |figures: &str| run(&format!("test b ... bench: {figures}\n"));
        let cases: Vec<(Vec<u8>, &str)> =
            vec![
            (b"".to_vec(), "no benchmarks"),
            (b"\xff\xfe\x00garbage\n\n".to_vec(), "no benchmarks"),
            (b"{\"type\":\"bench\",\"name\":\"b\",\"median\":1.0}\n".to_vec(), "no benchmarks"),
            (
                b"running 1 test\ntest a ... ignored\n\ntest result: ok. 0 passed; 0 failed; 1 \
                  ignored; 0 measured; 0 filtered out\n"
                    .to_vec(),
                "no benchmarks",
            ),
            (
                b"test b ... bench: 1 ns/iter (+/- 0)\n".to_vec(),
                "line 1: benchmark line outside a test run",
            ),
            (
                b"running 1 test\ntest b ... bench: 1 ns/iter (+/- 0)\n".to_vec(),
                "line 1: the test run started here has no `test result:` line",
            ),
            (
                b"running 1 test\nrunning 1 test\n".to_vec(),
                "line 2: a test run starts here, but the one started on line 1",
            ),
            (
                b"test result: ok. 1 measured\n".to_vec(),
                "without a `running N tests` line",
            ),
            (
                b"running 1 test\ntest b ... bench: 1 ns/iter (+/- 0)\ntest result: ok. 1 \
                  measured"
                    .to_vec(),
                "line 3: the last line has no line break: the output is cut short",
            ),
            (
                b"running 1 test\ntest b ... bench: 1 ns/iter (+/- 0)\ntest result: ok.\n"
                    .to_vec(),
                "without an `N measured` count",
            ),
            (
                b"running 2 tests\ntest b ... bench: 1 ns/iter (+/- 0)\ntest c ... bench: 2 \
                  ns/iter (+/- 0)\ntest result: ok. 1 measured\n"
                    .to_vec(),
                "reports 1 measured, but 2 benchmark lines were read",
            ),
            (
                b"running 1 test\ntest b ... printed\nbench: 1 ns/iter (+/- 0)\ntest result: ok. \
                  1 measured\n"
                    .to_vec(),
                "reports 1 measured, but 0 benchmark lines",
            ),
            (
                run("test b ... bench: 1 ns/iter (+/- 0)\ntest b ... bench: 2 ns/iter (+/- 0)\n")
                    .into_bytes(),
                "line 4 (`b`): benchmark already reported on line 3",
            ),
            (
                run("test  ... bench: 1 ns/iter (+/- 0)\n").into_bytes(),
                "benchmark name is empty",
            ),
            (
                [
                    b"running 1 test\ntest b\xff ... bench: 1 ns/iter (+/- 0)\n".as_slice(),
                    b"test result: ok. 1 measured\n",
                ]
                .concat(),
                "line 2: not UTF-8",
            ),
            (bench("").into_bytes(), "expected `N ns/iter (+/- N)`"),
            (bench("1 ns/iter").into_bytes(), "expected"),
            (bench("1 us/iter (+/- 0)").into_bytes(), "expected"),
            (bench("1 ns/iter (+/- 0").into_bytes(), "expected"),
            (bench("1 ns/iter (+/- 0) extra").into_bytes(), "expected"),
            (bench("1 ns/iter (+/- 0) = 5 GB/s").into_bytes(), "expected"),
            (bench("1 ns/iter (+/- 0) = 5 MB/s extra").into_bytes(), "expected"),
            (bench("abc ns/iter (+/- 0)").into_bytes(), "ns/iter \"abc\" is not a number"),
            (bench("-5 ns/iter (+/- 0)").into_bytes(), "is not a number"),
            (bench("NaN ns/iter (+/- 0)").into_bytes(), "is not a number"),
            (bench("inf ns/iter (+/- 0)").into_bytes(), "is not a number"),
            (bench("1e3 ns/iter (+/- 0)").into_bytes(), "is not a number"),
            (bench("1.5.5 ns/iter (+/- 0)").into_bytes(), "is not a number"),
            (bench("1. ns/iter (+/- 0)").into_bytes(), "is not a number"),
            (bench(".5 ns/iter (+/- 0)").into_bytes(), "is not a number"),
            (bench("1,2345 ns/iter (+/- 0)").into_bytes(), "is not a number"),
            (bench("1234,567 ns/iter (+/- 0)").into_bytes(), "is not a number"),
            (bench(",123 ns/iter (+/- 0)").into_bytes(), "is not a number"),
            (bench("1 ns/iter (+/- x)").into_bytes(), "+/- range \"x\" is not a number"),
            (bench("1 ns/iter (+/- 0) = x MB/s").into_bytes(), "MB/s \"x\" is not a number"),
            (
                bench("2,000,000,000,000,000,000 ns/iter (+/- 0)").into_bytes(),
                "ns/iter is absurdly large",
            ),
            (
                bench("1 ns/iter (+/- 1,000,000,000,001,000,000)").into_bytes(),
                "+/- range is absurdly large",
            ),
            (
                bench(&format!("{} ns/iter (+/- 0)", "9".repeat(400))).into_bytes(),
                "ns/iter is not finite",
            ),
            (
                bench(&format!("1 ns/iter (+/- 0) = {} MB/s", "9".repeat(400))).into_bytes(),
                "MB/s is not finite",
            ),
        ];
        for (i, (bytes, needle)) in cases.into_iter().enumerate() {
            match parse(&bytes) {
                Ok(m) => panic!("case {i}: parsed {m:?}, expected {needle:?}"),
                Err(err) => assert!(
                    err.to_string().contains(needle),
                    "case {i}: expected {needle:?} in {err}"
                ),
            }
        }
    }

    #[test]
    fn tolerated_variations() {
        // Older nightlies: integers, a singular `running 1 test`, a summary without `filtered
        // out` or `finished in`; CRLF line ends; compiler output and a failed test around it;
        // a benchmark that never called `b.iter` (0 ns/iter); separators omitted; MB/s dropped.
        let text = "   Compiling foo v0.1.0\r\nwarning: unused variable: `x`\r\n\r\n\
                    running 1 test\r\n\
                    test bench_foo ... bench:       1,234 ns/iter (+/- 56) = 1234 MB/s\r\n\r\n\
                    test result: ok. 0 passed; 0 failed; 0 ignored; 1 measured\r\n\
                    running 4 tests\n\
                    test tests::a ... FAILED\n\
                    test tests::bar ... bench:          12.50 ns/iter (+/- 0.30)\n\
                    ..Ftest tests::empty ... bench:           0 ns/iter (+/- 0)\n\
                    test tests::plain ... bench: 1234567.5 ns/iter (+/- 1000000)\n\n\
                    failures:\n\n---- tests::a stdout ----\ntest x ... ok\nrunning on\n\n\
                    test result: FAILED. 0 passed; 1 failed; 0 ignored; 3 measured; 0 filtered \
                    out; finished in 1.00s\n";
        let m = parse(text.as_bytes()).unwrap();
        let got: Vec<(&str, f64, f64)> = m
            .iter()
            .map(|m| {
                (
                    m.benchmark.full.as_str(),
                    m.estimate.point,
                    m.statistics[&Statistic::Range].point,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("bench_foo", 1234.0, 56.0),
                ("tests::bar", 12.5, 0.3),
                ("tests::empty", 0.0, 0.0),
                ("tests::plain", 1_234_567.5, 1_000_000.0),
            ]
        );
    }

    #[test]
    fn numbers_and_escapes() {
        let cases: [(&str, Option<f64>); 12] = [
            ("0", Some(0.0)),
            ("0.49", Some(0.49)),
            ("1,234", Some(1234.0)),
            ("4,500.95", Some(4500.95)),
            ("1,000,000", Some(1e6)),
            ("1234", Some(1234.0)),
            ("", None),
            ("1,23", None),
            ("1,234,56", None),
            ("1.2,3", None),
            ("+1", None),
            ("0x10", None),
        ];
        for (text, value) in cases {
            assert_eq!(parse_number(text), value, "{text:?}");
        }
        assert_eq!(
            strip_escapes("a \x1b[36mbench\x1b(B\x1b[m: \x1b[1;32mok\x1b[0m\x1b7."),
            "a bench: ok."
        );
        assert_eq!(strip_escapes("\x1b[36"), "");
        assert_eq!(strip_escapes("\x1b"), "");
    }

    #[test]
    fn many_benchmarks_are_bounded_by_the_input() {
        let lines: String = (0..100_000)
            .map(|i| format!("test b{i} ... bench: {i} ns/iter (+/- 1)\n"))
            .collect();
        let m = parse(run(&lines).as_bytes()).unwrap();
        assert_eq!(m.len(), 100_000);
        assert_eq!(m[99_999].estimate.point, 99_999.0);
    }
}
