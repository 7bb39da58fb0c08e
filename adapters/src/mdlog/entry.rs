//! One entry of a log, read line by line into its fields, notes and results, then checked and
//! made into one run per suite it measured.

use sha2::{Digest, Sha256};

use super::fields::{self, LoggedCommand, MachineLines};
use super::live;
use super::records::{LogRun, MAX_PROBLEMS, SkippedEntry, UnreadableEntry, heading_level, quoted};
use super::results::{self, Bullet, Context, Heading, Pending, Statement};
use super::table;
use crate::LineProblem;
use crate::model::{BuildConfig, GitInfo, Measurement, RunProvenance};

pub(super) enum Outcome {
    Runs(Vec<LogRun>),
    Skipped(SkippedEntry),
    Unreadable(UnreadableEntry),
}

/// Where the lines of an entry go.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Block {
    /// Before any label.
    Top,
    Machine,
    Commands,
    Profile,
    /// Any other label (`Notes:`, `WAN model:`): kept as a note.
    Note,
    /// Under a `Results ...:` label or a heading, with what the label states.
    Results(Statement),
}

/// `- text` with its indentation, or `None`.
fn list_item(line: &str) -> Option<(usize, &str)> {
    let indent: usize = line
        .chars()
        .take_while(|c| matches!(c, ' ' | '\t'))
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum();
    let rest = line.trim_start_matches([' ', '\t']);
    let after = rest.strip_prefix(['-', '*', '+'])?;
    (after.is_empty() || after.starts_with([' ', '\t'])).then(|| (indent, after.trim()))
}

/// An entry being read.
#[derive(Default)]
struct Reader {
    date: Option<(usize, String)>,
    commit: Option<(String, bool)>,
    branch: Option<String>,
    machine: MachineLines,
    commands: Vec<LoggedCommand>,
    profile: Option<String>,
    notes: Vec<String>,
    results: Vec<Pending>,
    /// Results that could not be read (so the entry does not lack results, it has bad ones).
    bad_results: usize,
    problems: Vec<LineProblem>,
}

impl Reader {
    fn problem(&mut self, line: usize, problem: impl Into<String>) {
        self.problems.push(LineProblem {
            line,
            problem: problem.into(),
        });
    }

    /// A `Key: value` line that is not a label.
    fn field(&mut self, line: usize, raw: &str, key: &str, value: &str) {
        let (key, _) = results_key(key);
        match key.as_str() {
            "date" => {
                if let Some((first, _)) = &self.date {
                    let first = *first;
                    self.problem(
                        line,
                        format!("a second date (the first is on line {first})"),
                    );
                    return;
                }
                match fields::date(value) {
                    Ok(date) => self.date = Some((line, date)),
                    Err(p) => self.problem(line, p),
                }
            }
            "commit" | "git commit" | "git" | "revision" => match fields::commit(value) {
                Ok(commit) => self.commit = Some(commit),
                Err(p) => self.problem(line, p),
            },
            "branch" | "git branch" => self.branch = Some(fields::unticked(value).to_owned()),
            _ => self.notes.push(raw.trim_end().to_owned()),
        }
    }
}

/// A label's name in lower case without parentheses (`Command(s)` -> `command`), and what its
/// parentheses state.
fn results_key(label: &str) -> (String, Statement) {
    let main: String = label
        .split('(')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    (main, Statement::of(label))
}

/// The context of a result: the headings above it and the groups it is nested in.
fn context(
    headings: &[Heading],
    groups: &[(usize, Option<String>, Statement)],
    block: Block,
) -> Context {
    let mut context = Context {
        statement: match block {
            Block::Results(statement) => statement,
            _ => Statement::default(),
        },
        ..Context::default()
    };
    for h in headings {
        if h.suite.is_some() {
            context.suite.clone_from(&h.suite);
        }
        context.params.extend(h.param.iter().cloned());
        context.statement = context.statement.with(h.statement);
    }
    for (_, param, statement) in groups {
        context.params.extend(param.iter().cloned());
        context.statement = context.statement.with(*statement);
    }
    context
}

/// Reads one entry (its heading line first).
pub(super) fn entry(lines: &[(usize, &str)]) -> Outcome {
    let Some(&(line, heading)) = lines.first() else {
        return Outcome::Runs(Vec::new());
    };
    let title = heading_level(heading).map_or("", |h| h.1).to_owned();
    let mut r = Reader::default();
    let mut block = Block::Top;
    let mut headings: Vec<Heading> = Vec::new();
    let mut groups: Vec<(usize, Option<String>, Statement)> = Vec::new();
    let mut table_rows: Vec<(usize, &str)> = Vec::new();
    let flush = |r: &mut Reader, rows: &mut Vec<(usize, &str)>, ctx: Context| {
        if rows.is_empty() {
            return;
        }
        match table::read(rows, &ctx) {
            Ok(found) => r.results.extend(found),
            Err(problems) => {
                r.bad_results += problems.len();
                r.problems.extend(problems);
            }
        }
        rows.clear();
    };
    for &(number, raw) in lines.get(1..).unwrap_or_default() {
        let text = raw.trim();
        if text.starts_with('|') {
            table_rows.push((number, raw));
            continue;
        }
        flush(&mut r, &mut table_rows, context(&headings, &[], block));
        if text.is_empty() {
            continue;
        }
        if let Some((level, heading)) = heading_level(text) {
            headings.retain(|h| h.level < level);
            headings.push(results::heading(level, heading));
            groups.clear();
            block = Block::Results(match block {
                Block::Results(statement) => statement,
                _ => Statement::default(),
            });
            continue;
        }
        if let Some((indent, item)) = list_item(raw) {
            match block {
                Block::Top | Block::Note => r.notes.push(raw.trim_end().to_owned()),
                Block::Machine => {
                    if let Err(p) = r.machine.read(item) {
                        r.problem(number, p);
                    }
                }
                Block::Commands => match fields::command(item) {
                    Ok(command) => r.commands.push(command),
                    Err(p) => r.problem(number, p),
                },
                Block::Profile => {
                    if r.profile.is_none() {
                        r.profile = item
                            .split(|c: char| !c.is_alphanumeric())
                            .find(|w| !w.is_empty())
                            .map(str::to_ascii_lowercase);
                    }
                    r.notes.push(raw.trim_end().to_owned());
                }
                Block::Results(_) => {
                    groups.retain(|g| g.0 < indent);
                    match results::bullet(number, item, &context(&headings, &groups, block)) {
                        Ok(Bullet::Group { param, statement }) => {
                            groups.push((indent, param, statement));
                        }
                        Ok(Bullet::Result(pending)) => r.results.push(pending),
                        Err(p) => {
                            r.bad_results += 1;
                            r.problem(number, p);
                        }
                    }
                }
            }
            continue;
        }
        if let Some(label) = text.strip_suffix(':') {
            let (key, statement) = results_key(label);
            groups.clear();
            block = match key.as_str() {
                "date" => {
                    r.problem(number, "the date is empty");
                    Block::Top
                }
                "machine" => Block::Machine,
                "command" | "commands" => Block::Commands,
                "profile" => {
                    r.notes.push(text.to_owned());
                    Block::Profile
                }
                k if k.starts_with("result") => Block::Results(statement),
                _ => {
                    r.notes.push(text.to_owned());
                    Block::Note
                }
            };
            continue;
        }
        match text.split_once(':') {
            Some((key, value)) if key.len() <= 40 && !key.contains('`') => {
                r.field(number, raw, key, value);
            }
            _ => r.notes.push(raw.trim_end().to_owned()),
        }
    }
    flush(&mut r, &mut table_rows, context(&headings, &[], block));
    // The log's own template: named so, with neither a date nor a result filled in (its
    // placeholders are not read as problems; an entry about a `template_render` benchmark is
    // read like any other).
    if title.to_ascii_lowercase().contains("template") && r.date.is_none() && r.results.is_empty() {
        return Outcome::Skipped(SkippedEntry {
            line,
            title,
            reason: "a template, not a measured entry".to_owned(),
        });
    }
    finish(line, title, lines, r)
}

/// Checks an entry read whole and makes its runs.
fn finish(line: usize, title: String, lines: &[(usize, &str)], mut r: Reader) -> Outcome {
    let missing: Vec<&str> = [
        (
            r.date.is_none(),
            "its date (`Date (UTC): 2026-02-14T17:26:18Z`)",
        ),
        (r.machine.cpu.is_none(), "a `- CPU:` line under `Machine:`"),
        (r.machine.os.is_none(), "a `- OS:` line under `Machine:`"),
        (
            r.machine.rust.is_none(),
            "a `- Rust:` line under `Machine:`",
        ),
        (r.commands.is_empty(), "a command under `Command(s):`"),
        (
            r.results.is_empty() && r.bad_results == 0,
            "results (a list under `Results:`, or a table)",
        ),
    ]
    .into_iter()
    .filter_map(|(missing, what)| missing.then_some(what))
    .collect();
    if !missing.is_empty() {
        r.problem(line, format!("the entry lacks {}", missing.join(", ")));
    }
    let toolchain = match r.machine.rust.as_deref().map(fields::toolchain) {
        Some(Ok(t)) => Some(t),
        Some(Err(p)) => {
            r.problem(line, p);
            None
        }
        None => None,
    };
    let runs = suites(&title, &mut r);
    let (Some((_, recorded_at)), Some(cpu), Some(os), Some(toolchain), true) = (
        r.date.clone(),
        r.machine.cpu.clone(),
        r.machine.os.clone(),
        toolchain,
        r.problems.is_empty(),
    ) else {
        let count = r.problems.len();
        let mut problems = r.problems;
        problems.truncate(MAX_PROBLEMS);
        if count > MAX_PROBLEMS {
            problems.push(LineProblem {
                line,
                problem: format!(
                    "... and {} more problems in this entry",
                    count - MAX_PROBLEMS
                ),
            });
        }
        return Outcome::Unreadable(UnreadableEntry {
            line,
            title,
            problems,
        });
    };
    let machine = fields::machine(&cpu, &os);
    let text = entry_text(lines);
    let notes = r.notes.join("\n");
    Outcome::Runs(
        runs.into_iter()
            .map(|(suite, measurements)| {
                let commands: Vec<&LoggedCommand> = commands_of(&r.commands, &suite);
                let argv: Vec<String> = commands.iter().flat_map(|c| c.argv.clone()).collect();
                let (features, feature_flags) = fields::features(&argv);
                let cargo_command = match commands.as_slice() {
                    [] => None,
                    [one] => Some(one.argv.clone()),
                    several => Some(vec![
                        "sh".to_owned(),
                        "-c".to_owned(),
                        several
                            .iter()
                            .map(|c| c.text.as_str())
                            .collect::<Vec<_>>()
                            .join("; "),
                    ]),
                };
                let mut hasher = Sha256::new();
                hasher.update(format!("bench-run markdown-log entry\n{suite}\n{text}"));
                LogRun {
                    line,
                    title: title.clone(),
                    recorded_at: recorded_at.clone(),
                    provenance: RunProvenance {
                        suite,
                        cargo_command,
                        machine: machine.clone(),
                        toolchain: Some(toolchain.clone()),
                        build: BuildConfig {
                            profile: r.profile.clone().unwrap_or_else(|| "unknown".to_owned()),
                            features,
                            feature_flags,
                            rustflags: None,
                        },
                        git: GitInfo {
                            commit: r.commit.as_ref().map(|c| c.0.clone()),
                            branch: r.branch.clone(),
                            dirty: r.commit.as_ref().is_some_and(|c| c.1),
                            commit_time: None,
                            summary: None,
                        },
                        ..RunProvenance::default()
                    },
                    measurements,
                    notes: notes.clone(),
                    content_sha256: fields::hex(&hasher.finalize()),
                }
            })
            .collect(),
    )
}

/// The commands of `suite`: those naming it as their target; if none does, those naming no
/// target (a plain `cargo bench`).
fn commands_of<'a>(commands: &'a [LoggedCommand], suite: &str) -> Vec<&'a LoggedCommand> {
    let named: Vec<&LoggedCommand> = commands
        .iter()
        .filter(|c| c.target.as_deref() == Some(suite))
        .collect();
    if named.is_empty() {
        commands.iter().filter(|c| c.target.is_none()).collect()
    } else {
        named
    }
}

/// The entry's results by suite, in order of first appearance; records a problem for a result
/// whose suite cannot be told and for a result given twice.
fn suites(title: &str, r: &mut Reader) -> Vec<(String, Vec<Measurement>)> {
    let mut targets: Vec<&str> = Vec::new();
    for c in &r.commands {
        if let Some(t) = c.target.as_deref()
            && !targets.contains(&t)
        {
            targets.push(t);
        }
    }
    // No command names a target (`cargo bench`): the title's backticked name, if any.
    let titled = title
        .split('`')
        .nth(1)
        .filter(|name| !name.is_empty() && !name.contains(char::is_whitespace));
    let default = match targets.as_slice() {
        [one] => Some((*one).to_owned()),
        [] => titled.map(str::to_owned),
        _ => None,
    };
    let mut runs: Vec<(String, Vec<Measurement>)> = Vec::new();
    let mut seen: std::collections::HashMap<(String, String), usize> =
        std::collections::HashMap::new();
    let mut problems = Vec::new();
    for p in &r.results {
        let Some(suite) = p.suite.clone().or_else(|| default.clone()) else {
            problems.push(LineProblem {
                line: p.line,
                problem: if targets.len() > 1 {
                    format!(
                        "the entry's commands measure several targets ({}): put each one's \
                         results under a heading naming it (### `{}`)",
                        targets.join(", "),
                        targets.first().copied().unwrap_or_default()
                    )
                } else {
                    "cannot tell which suite this result belongs to: no command names a \
                     --bench or --bin target, and neither the title nor a heading names one"
                        .to_owned()
                },
            });
            continue;
        };
        // Under the live suite's id, so that a result given twice is caught as the live id.
        let m = live::joined(&suite, p.measurement(&suite));
        let key = (m.benchmark.full.clone(), m.metric.clone());
        if let Some(first) = seen.insert(key, p.line) {
            problems.push(LineProblem {
                line: p.line,
                problem: format!(
                    "benchmark `{}` metric `{}` is given twice (first on line {first})",
                    quoted(&m.benchmark.full),
                    m.metric
                ),
            });
            continue;
        }
        match runs.iter_mut().find(|(s, _)| *s == suite) {
            Some((_, ms)) => ms.push(m),
            None => runs.push((suite, vec![m])),
        }
    }
    r.problems.extend(problems);
    runs
}

/// The entry's text as hashed: its lines without trailing blanks, up to its last non-blank one.
fn entry_text(lines: &[(usize, &str)]) -> String {
    let mut text: Vec<&str> = lines.iter().map(|(_, l)| l.trim_end()).collect();
    while text.last().is_some_and(|l| l.is_empty()) {
        text.pop();
    }
    text.join("\n")
}
