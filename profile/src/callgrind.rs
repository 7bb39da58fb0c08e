//! Reading callgrind's output format into exact per-function self instruction counts, and an
//! approximate call tree for a flamegraph.
//!
//! The format (valgrind manual, "Callgrind Format Specification") is a header of `key: value`
//! lines (`events: Ir Dr ...` names the counters, `positions: line` or `instr line` the
//! position columns of a cost line, `summary:`/`totals:` the whole run's counts) and a body:
//!
//! ```text
//! fn=(3) profiled::digest        defines id 3 ("name compression"); `fn=(3)` refers to it
//! 15 6 1                         cost line: positions, then counters; self cost of fn 3
//! cfn=(4) profiled::fnv1a        the function called by the next `calls=` line
//! calls=1 0                      call count, target position
//! 16 55310 16385                 cost of that call: INCLUSIVE, it is not fn 3's own cost
//! ```
//!
//! `fl=`/`fi=`/`fe=`/`ob=` (files, objects) and `cfi=`/`cfl=`/`cob=` change no function, and
//! the line after a `jump=`/`jcnd=` is the jump's source position, no cost of anyone's.
//! Counters left off the end of a cost line are zero.
//!
//! **Self counts are exact**: every instruction callgrind counted is on exactly one cost line
//! outside a call, under the function that executed it; their sum must equal `totals:` (else
//! the file is cut short or corrupt, and reading fails). Callgrind writes `totals:` last, so a
//! file of its making without one is cut short too; other writers may give only `summary:`.
//!
//! **The call tree is approximate.** Callgrind keeps one inclusive cost per caller→callee
//! edge, not whole stacks. Each function's exact self count is spread over its callers in
//! proportion to the inclusive cost of their calls, and so on upwards ([`fold`]): exact for a
//! function with a single chain of callers, an estimate where a function has several (the same
//! assumption as gprof's call graph). A leaf's width in the flamegraph is still its exact self
//! count; only how it splits between call paths is estimated.

use std::collections::HashMap;
use std::path::Path;

use crate::error::ProfileError;
use crate::model::{Profile, folded_frame_name, sorted_costs};
use crate::unit::Unit;

/// Largest callgrind file read (512 MiB); real profiles of one benchmark are kilobytes to a
/// few megabytes.
pub const MAX_CALLGRIND_BYTES: u64 = 512 * 1024 * 1024;

/// Deepest call path [`fold`] builds; a deeper one stops there.
pub const MAX_DEPTH: usize = 256;

/// Most distinct stacks [`fold`] emits for one function; past it paths stop growing.
pub const MAX_STACKS_PER_FUNCTION: usize = 10_000;

/// The event callgrind names executed instructions.
pub const INSTRUCTIONS: &str = "Ir";

/// One callgrind file, reduced to instructions: per function its self count, per
/// caller→callee edge the inclusive count of its calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Callgrind {
    /// Function names; the index is the function's id below.
    pub names: Vec<String>,
    /// Self instructions per function (same index as `names`).
    pub self_counts: Vec<u64>,
    /// Inclusive instructions of calls, by (caller, callee).
    pub calls: HashMap<(usize, usize), u64>,
    /// The file's total (`totals:`, else `summary:`), equal to the sum of the self counts.
    pub total: u64,
}

impl Callgrind {
    fn function(&mut self, by_name: &mut HashMap<String, usize>, name: &str) -> usize {
        if let Some(&id) = by_name.get(name) {
            return id;
        }
        let id = self.names.len();
        self.names.push(name.to_owned());
        self.self_counts.push(0);
        by_name.insert(name.to_owned(), id);
        id
    }

    /// The profile: exact self counts, and folded stacks from [`fold`].
    ///
    /// # Errors
    /// [`ProfileError::NoSamples`] when the file counted no instructions.
    pub fn to_profile(&self, what: &str) -> Result<Profile, ProfileError> {
        if self.total == 0 {
            return Err(ProfileError::NoSamples {
                what: what.to_owned(),
            });
        }
        let functions = sorted_costs(
            self.names
                .iter()
                .cloned()
                .zip(self.self_counts.iter().copied()),
        );
        Ok(Profile {
            unit: Unit::Instructions,
            total: self.total,
            functions,
            folded: fold(self),
        })
    }
}

/// Reads a callgrind file from disk (at most [`MAX_CALLGRIND_BYTES`]) with [`parse`].
///
/// # Errors
/// [`ProfileError::Io`], [`ProfileError::TooLarge`], and those of [`parse`].
pub fn read(path: &Path) -> Result<Callgrind, ProfileError> {
    let what = path.display().to_string();
    let file =
        std::fs::File::open(path).map_err(ProfileError::io(format!("cannot open {what}")))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, MAX_CALLGRIND_BYTES + 1),
        &mut bytes,
    )
    .map_err(ProfileError::io(format!("cannot read {what}")))?;
    if bytes.len() as u64 > MAX_CALLGRIND_BYTES {
        return Err(ProfileError::TooLarge {
            what,
            limit: MAX_CALLGRIND_BYTES,
        });
    }
    let text = String::from_utf8_lossy(&bytes);
    parse(&text, &what)
}

/// What the line after the current one must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Anything.
    Any,
    /// The inclusive cost of a call to this function.
    CallCost(usize),
    /// A jump's source position.
    JumpPosition,
}

/// Parser state that lives across lines.
struct Parser<'a> {
    what: &'a str,
    out: Callgrind,
    by_name: HashMap<String, usize>,
    /// `(id)` → name, for `fn=`/`cfn=`.
    fn_ids: HashMap<u64, String>,
    /// Columns of position before the counters.
    positions: usize,
    /// Which counter is `Ir`, once `events:` was read.
    ir: Option<usize>,
    current: Option<usize>,
    called: Option<usize>,
    expect: Expect,
    totals: Option<u64>,
    summary: Option<u64>,
    self_sum: u64,
    /// Written by callgrind, which always ends its files with `totals:`.
    by_callgrind: bool,
}

/// Parses callgrind output (see the module docs). Only the `Ir` counter is kept.
///
/// # Errors
/// [`ProfileError::Corrupt`] with the line for anything the format does not allow, a name id
/// used before it is defined, a counter past 64 bits, no `events:` line or no `Ir` event, a
/// call without its cost line, and self counts that do not add up to `totals:` (a cut file).
pub fn parse(text: &str, what: &str) -> Result<Callgrind, ProfileError> {
    let mut p = Parser {
        what,
        out: Callgrind::default(),
        by_name: HashMap::new(),
        fn_ids: HashMap::new(),
        positions: 1,
        ir: None,
        current: None,
        called: None,
        expect: Expect::Any,
        totals: None,
        summary: None,
        self_sum: 0,
        by_callgrind: false,
    };
    for (index, line) in text.lines().enumerate() {
        p.line(line.trim_end())
            .map_err(|reason| ProfileError::Corrupt {
                what: what.to_owned(),
                line: index + 1,
                reason,
            })?;
    }
    p.finish()
}

impl Parser<'_> {
    fn line(&mut self, line: &str) -> Result<(), String> {
        if line.is_empty() || line.starts_with('#') {
            return self.not_expected("an empty line or comment");
        }
        let first = line.as_bytes().first().copied().unwrap_or_default();
        if first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'*') {
            return self.cost_line(line);
        }
        if let Some((key, value)) = line.split_once('=')
            && key.bytes().all(|b| b.is_ascii_lowercase())
        {
            self.not_expected(key)?;
            return self.assignment(key, value);
        }
        if let Some((key, value)) = line.split_once(':') {
            self.not_expected(key)?;
            return self.header(key.trim(), value.trim());
        }
        Err(format!("not a callgrind line: {}", excerpt(line)))
    }

    /// Fails when the previous line needs a cost line and this is something else.
    fn not_expected(&self, what: &str) -> Result<(), String> {
        match self.expect {
            Expect::Any => Ok(()),
            Expect::CallCost(_) => Err(format!("`{what}` where the cost of a call belongs")),
            Expect::JumpPosition => Err(format!("`{what}` where a jump's position belongs")),
        }
    }

    fn header(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "events" => {
                let events: Vec<&str> = value.split_ascii_whitespace().collect();
                self.ir = Some(
                    events
                        .iter()
                        .position(|e| *e == INSTRUCTIONS)
                        .ok_or_else(|| format!("events `{value}` do not count `Ir`"))?,
                );
            }
            "positions" => {
                let names: Vec<&str> = value.split_ascii_whitespace().collect();
                if names.is_empty() || names.iter().any(|n| !matches!(*n, "instr" | "line")) {
                    return Err(format!("unknown positions `{value}`"));
                }
                self.positions = names.len();
            }
            "totals" => {
                let total = self.counter_of(value)?;
                let sum = self.totals.unwrap_or(0).checked_add(total);
                self.totals = Some(sum.ok_or("totals overflow 64 bits")?);
            }
            "summary" => self.summary = Some(self.counter_of(value)?),
            "creator" => self.by_callgrind = value.starts_with("callgrind"),
            // version, creator, pid, cmd, part, thread, desc, event (long names), ...
            _ => {}
        }
        Ok(())
    }

    /// The `Ir` counter of a `summary:`/`totals:` value.
    fn counter_of(&self, value: &str) -> Result<u64, String> {
        let ir = self.ir.ok_or("a total before the `events:` line")?;
        // Unlike a cost line, a total lists every counter: a short one was cut.
        let field = value
            .split_ascii_whitespace()
            .nth(ir)
            .ok_or("a total without its `Ir` count")?;
        parse_number(field)
    }

    fn assignment(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "fn" => {
                let name = self.name(value)?;
                self.current = Some(self.out.function(&mut self.by_name, &name));
                self.called = None;
            }
            "cfn" => {
                let name = self.name(value)?;
                self.called = Some(self.out.function(&mut self.by_name, &name));
            }
            "calls" => {
                if self.current.is_none() {
                    return Err("a call outside any function (no `fn=` before it)".to_owned());
                }
                let callee = self.called.ok_or("`calls=` without a `cfn=` before it")?;
                let mut fields = value.split_ascii_whitespace();
                parse_number(fields.next().unwrap_or_default())?;
                self.expect = Expect::CallCost(callee);
            }
            "jump" | "jcnd" => self.expect = Expect::JumpPosition,
            // Files and objects: they move cost to no other function.
            "ob" | "fl" | "fi" | "fe" | "cob" | "cfi" | "cfl" => {}
            other => return Err(format!("unknown specification `{other}=`")),
        }
        Ok(())
    }

    /// A function name from `(id) name`, `(id)` or `name`.
    fn name(&mut self, value: &str) -> Result<String, String> {
        let value = value.trim();
        // `(below main)` is a name; `(12)` and `(12) name` are ids.
        let Some((id, name)) = value
            .strip_prefix('(')
            .and_then(|rest| rest.split_once(')'))
            .filter(|(id, _)| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
        else {
            return Ok(value.to_owned());
        };
        let id = parse_number(id)?;
        let name = name.trim();
        if name.is_empty() {
            self.fn_ids
                .get(&id)
                .cloned()
                .ok_or_else(|| format!("function id ({id}) used before it is defined"))
        } else {
            self.fn_ids.insert(id, name.to_owned());
            Ok(name.to_owned())
        }
    }

    fn cost_line(&mut self, line: &str) -> Result<(), String> {
        let mut fields = line.split_ascii_whitespace();
        for _ in 0..self.positions {
            let field = fields.next().ok_or("a cost line without its positions")?;
            check_position(field)?;
        }
        let ir = self.ir.ok_or("a cost line before the `events:` line")?;
        let mut instructions = 0;
        for (i, field) in fields.enumerate() {
            let n = parse_number(field)?;
            if i == ir {
                instructions = n;
            }
        }
        match std::mem::replace(&mut self.expect, Expect::Any) {
            Expect::JumpPosition => Ok(()),
            Expect::CallCost(callee) => {
                // Checked when `calls=` was read.
                let caller = self.current.ok_or("a call outside any function")?;
                let edge = self.out.calls.entry((caller, callee)).or_default();
                *edge = edge
                    .checked_add(instructions)
                    .ok_or("call costs overflow 64 bits")?;
                Ok(())
            }
            Expect::Any => {
                let function = self
                    .current
                    .ok_or("a cost line outside any function (no `fn=` before it)")?;
                self.self_sum = self
                    .self_sum
                    .checked_add(instructions)
                    .ok_or("costs overflow 64 bits")?;
                let slot = self
                    .out
                    .self_counts
                    .get_mut(function)
                    .ok_or("internal: unknown function")?;
                *slot += instructions;
                Ok(())
            }
        }
    }

    fn finish(mut self) -> Result<Callgrind, ProfileError> {
        let corrupt = |reason: String| ProfileError::Corrupt {
            what: self.what.to_owned(),
            line: 0,
            reason,
        };
        if self.ir.is_none() {
            return Err(corrupt(
                "no `events:` line naming `Ir`: not callgrind output".to_owned(),
            ));
        }
        if self.expect != Expect::Any {
            return Err(corrupt(
                "the file ends inside a call or jump: it is cut short".to_owned(),
            ));
        }
        if self.by_callgrind && self.totals.is_none() {
            // The costs may all be there, but call records after them may not.
            return Err(corrupt(
                "no `totals:` line, which callgrind writes last: the file is cut short".to_owned(),
            ));
        }
        let total = self.totals.or(self.summary).ok_or_else(|| {
            corrupt("no `totals:` or `summary:` line: the file is cut short".to_owned())
        })?;
        if total != self.self_sum {
            return Err(corrupt(format!(
                "self costs add up to {} instructions but the file's total is {total}: it is \
                 cut short or corrupt",
                self.self_sum
            )));
        }
        self.out.total = total;
        Ok(self.out)
    }
}

/// Checks one subposition: a number, `+n`/`-n` (relative to the last), or `*` (the same).
fn check_position(field: &str) -> Result<(), String> {
    let number = field
        .strip_prefix('+')
        .or_else(|| field.strip_prefix('-'))
        .unwrap_or(field);
    if field == "*" {
        return Ok(());
    }
    parse_number(number).map(drop)
}

/// A decimal or `0x` hexadecimal number.
fn parse_number(text: &str) -> Result<u64, String> {
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|_| format!("`{}` is not a 64-bit count", excerpt(text)))
}

/// At most 60 characters of `text`, for a message.
fn excerpt(text: &str) -> String {
    text.chars().take(60).collect()
}

/// A stack under construction: function ids, leaf first.
struct Walk<'a> {
    data: &'a Callgrind,
    /// callee → [(caller, inclusive cost of its calls)].
    callers: &'a HashMap<usize, Vec<(usize, u64)>>,
    /// Functions every counted instruction passes through (see [`fold`]): paths end there.
    spine: &'a [bool],
    /// Below this weight a path stops growing (its weight stays on the partial path).
    min_weight: f64,
    stacks: HashMap<Vec<usize>, f64>,
}

impl Walk<'_> {
    /// Spreads `weight` at the top of `path` over the callers of its last function.
    fn up(&mut self, path: &mut Vec<usize>, weight: f64) {
        let top = path.last().copied().unwrap_or_default();
        let eligible: Vec<(usize, u64)> = self
            .callers
            .get(&top)
            .map(|cs| {
                cs.iter()
                    // A recursive call is already inside its caller's cost.
                    .filter(|(c, cost)| *cost > 0 && !path.contains(c))
                    .copied()
                    .collect()
            })
            .unwrap_or_default();
        let sum: u64 = eligible.iter().map(|(_, c)| c).sum();
        let stop = eligible.is_empty()
            || self.spine.get(top).copied().unwrap_or(false)
            || path.len() >= MAX_DEPTH
            || weight < self.min_weight
            || self.stacks.len() >= MAX_STACKS_PER_FUNCTION;
        if stop {
            *self.stacks.entry(path.clone()).or_default() += weight;
            return;
        }
        for (caller, cost) in eligible {
            path.push(caller);
            self.up(path, weight * ratio(cost, sum));
            path.pop();
        }
    }
}

#[expect(
    clippy::cast_precision_loss,
    reason = "a split of one function's count between its callers"
)]
fn ratio(part: u64, whole: u64) -> f64 {
    part as f64 / whole as f64
}

/// Folded stacks for a flamegraph from self counts and call edges (see the module docs). Each
/// function's stacks add up exactly to its self count (largest-remainder rounding), so a
/// flamegraph's total equals `total`.
///
/// Stacks start at the deepest *spine* function on their path: one with no self count whose
/// calls carry the whole total, so that every counted instruction runs beneath it. Under
/// gungraun that is the benchmark's wrapper; the frames above it (the runner's loop, `main`,
/// the process's start-up) are outside the counted region, add nothing, and callgrind records
/// some of them twice (`(below main)` called from both the loader's entry and
/// `__libc_start_main`), which would split every stack in two.
#[must_use]
pub fn fold(data: &Callgrind) -> String {
    let mut callers: HashMap<usize, Vec<(usize, u64)>> = HashMap::new();
    let mut outgoing = vec![0u64; data.names.len()];
    for (&(caller, callee), &cost) in &data.calls {
        callers.entry(callee).or_default().push((caller, cost));
        if caller != callee
            && let Some(out) = outgoing.get_mut(caller)
        {
            *out = out.saturating_add(cost);
        }
    }
    let spine: Vec<bool> = data
        .self_counts
        .iter()
        .zip(&outgoing)
        .map(|(&own, &out)| own == 0 && out >= data.total)
        .collect();
    for list in callers.values_mut() {
        list.sort_unstable();
    }
    let mut lines: Vec<(String, u64)> = Vec::new();
    for (function, &count) in data.self_counts.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let mut walk = Walk {
            data,
            callers: &callers,
            spine: &spine,
            min_weight: weight_of(count) * 1e-4,
            stacks: HashMap::new(),
        };
        walk.up(&mut vec![function], weight_of(count));
        for (path, n) in round_to_total(walk.stacks, count) {
            let frames: Vec<String> = path
                .iter()
                .rev()
                .map(|&f| folded_frame_name(walk.data.names.get(f).map_or("?", String::as_str)))
                .collect();
            lines.push((frames.join(";"), n));
        }
    }
    lines.sort();
    let mut out = String::new();
    for (stack, n) in lines {
        out.push_str(&stack);
        out.push(' ');
        out.push_str(&n.to_string());
        out.push('\n');
    }
    out
}

#[expect(clippy::cast_precision_loss, reason = "a weight to split, not a count")]
fn weight_of(count: u64) -> f64 {
    count as f64
}

/// Whole counts for fractional `weights` that add up to exactly `total`: floors, then one
/// more for the largest remainders.
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "weights are non-negative and at most `total`"
)]
fn round_to_total(weights: HashMap<Vec<usize>, f64>, total: u64) -> Vec<(Vec<usize>, u64)> {
    let mut items: Vec<(Vec<usize>, u64, f64)> = weights
        .into_iter()
        .map(|(path, w)| {
            let floor = w.floor();
            (path, floor as u64, w - floor)
        })
        .collect();
    let assigned: u64 = items.iter().map(|(_, n, _)| n).sum();
    let mut left = total.saturating_sub(assigned);
    items.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    for item in &mut items {
        if left == 0 {
            break;
        }
        item.1 += 1;
        left -= 1;
    }
    items
        .into_iter()
        .filter(|(_, n, _)| *n > 0)
        .map(|(p, n, _)| (p, n))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn testdata(name: &str) -> String {
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("testdata/callgrind")
                .join(name),
        )
        .unwrap()
    }

    fn self_of(data: &Callgrind, name: &str) -> u64 {
        let id = data.names.iter().position(|n| n == name).unwrap();
        data.self_counts[id]
    }

    #[test]
    fn call_costs_are_not_self_costs() {
        let text = "events: Ir Dr\nsummary: 120 9\n\
                    fn=(1) main\n3 10 1\ncfn=(2) work\ncalls=2 7\n4 100 8\n5 5\n\
                    fn=(2)\n7 100 8\ntotals: 115 9\n";
        let data = parse(text, "t").unwrap();
        assert_eq!(self_of(&data, "main"), 15);
        assert_eq!(self_of(&data, "work"), 100);
        assert_eq!(data.total, 115);
        assert_eq!(data.calls.get(&(0, 1)), Some(&100));
        let profile = data.to_profile("t").unwrap();
        assert_eq!(profile.folded, "main 15\nmain;work 100\n");
        assert_eq!(profile.total, 115);
    }

    #[test]
    fn gungraun_output_gives_exact_self_counts() {
        let data = parse(&testdata("gungraun_digest.out"), "gungraun_digest.out").unwrap();
        assert_eq!(data.total, 133_188);
        assert_eq!(self_of(&data, "profiled::fnv1a"), 55_310);
        assert_eq!(self_of(&data, "profiled::rotate_sum"), 77_838);
        assert_eq!(self_of(&data, "profiled::digest"), 15);
        let profile = data.to_profile("t").unwrap();
        assert_eq!(
            profile.functions.first().unwrap().name,
            "profiled::rotate_sum"
        );
        // Stacks start at the gungraun wrapper of the benchmark: every counted instruction
        // runs beneath it, and callgrind's records above it (start-up, `(below main)` with two
        // callers) would split the graph for nothing.
        let leaf = profile
            .folded
            .lines()
            .find(|l| l.contains("profiled::fnv1a "))
            .unwrap();
        assert_eq!(
            leaf,
            "instructions::digest::__gungraun_wrapper_id_mod_kib16::kib16;\
             instructions::digest::__gungraun_wrapper_mod::digest;profiled::digest;\
             profiled::fnv1a 55310",
            "{}",
            profile.folded
        );
        // The folded stacks carry every instruction exactly once.
        let folded = Profile::from_folded(Unit::Instructions, profile.folded.clone(), "f");
        assert_eq!(folded.unwrap().functions, profile.functions);
    }

    #[test]
    fn compressed_output_of_callgrind_itself() {
        // valgrind --tool=callgrind with its defaults: name compression, relative positions,
        // `positions: line`, and a program with recursion and a function called from two
        // places (see testdata/callgrind/README.md).
        let data = parse(&testdata("compressed.out"), "compressed.out").unwrap();
        assert!(data.total > 0);
        assert!(
            data.names.iter().any(|n| n.contains("recurse")),
            "{:?}",
            data.names
        );
        let profile = data.to_profile("compressed.out").unwrap();
        let from_folded =
            Profile::from_folded(Unit::Instructions, profile.folded.clone(), "f").unwrap();
        assert_eq!(from_folded.total, profile.total);
        assert_eq!(from_folded.functions, profile.functions);
    }

    #[test]
    fn split_between_callers_follows_inclusive_costs() {
        let text = "events: Ir\n\
                    fn=a\n1 1\ncfn=leaf\ncalls=1 1\n1 30\n\
                    fn=b\n1 1\ncfn=leaf\ncalls=1 1\n1 10\n\
                    fn=leaf\n1 40\ntotals: 42\n";
        let profile = parse(text, "t").unwrap().to_profile("t").unwrap();
        assert_eq!(profile.folded, "a 1\na;leaf 30\nb 1\nb;leaf 10\n");
    }

    #[test]
    fn recursion_terminates_and_keeps_counts() {
        let text = "events: Ir\n\
                    fn=(1) r\n1 5\ncfn=(1)\ncalls=3 1\n1 50\ncfn=(2) s\ncalls=1 1\n1 7\n\
                    fn=(2)\n1 7\ncfn=(1)\ncalls=1 1\n1 20\ntotals: 12\n";
        let profile = parse(text, "t").unwrap().to_profile("t").unwrap();
        let sum: u64 = profile
            .folded
            .lines()
            .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
            .sum();
        assert_eq!(sum, 12, "{}", profile.folded);
    }

    #[test]
    fn hostile_input_is_an_error_with_its_line() {
        let good = testdata("gungraun_digest.out");
        let cut_at = good.find("\nfn=profiled::fnv1a").unwrap();
        let cases: Vec<(&str, String, usize)> = vec![
            ("cut in the body", good[..cut_at].to_owned(), 0),
            (
                "cut after calls=",
                "events: Ir\nfn=a\ncfn=b\ncalls=1 0\n".to_owned(),
                0,
            ),
            ("no events", "fn=a\n1 2\n".to_owned(), 2),
            ("no Ir", "events: Dr\n".to_owned(), 1),
            ("undefined id", "events: Ir\nfn=(7)\n".to_owned(), 2),
            ("cost outside fn", "events: Ir\n1 5\n".to_owned(), 2),
            (
                "calls without cfn",
                "events: Ir\nfn=a\ncalls=1 0\n".to_owned(),
                3,
            ),
            (
                "call cost missing",
                "events: Ir\nfn=a\ncfn=b\ncalls=1 0\nfn=c\n".to_owned(),
                5,
            ),
            (
                "overflow",
                "events: Ir\nfn=a\n1 99999999999999999999\n".to_owned(),
                3,
            ),
            (
                "sum overflow",
                "events: Ir\nfn=a\n1 18446744073709551615\n1 1\n".to_owned(),
                4,
            ),
            ("bad position", "events: Ir\nfn=a\n+x 1\n".to_owned(), 3),
            ("garbage", "\u{0}\u{1}binary\n".to_owned(), 1),
            ("unknown spec", "events: Ir\nzz=1\n".to_owned(), 2),
            (
                "totals mismatch",
                "events: Ir\nfn=a\n1 5\ntotals: 6\n".to_owned(),
                0,
            ),
            ("empty", String::new(), 0),
        ];
        for (name, text, want_line) in cases {
            match parse(&text, name) {
                Err(ProfileError::Corrupt { line, .. }) => {
                    assert_eq!(line, want_line, "{name}");
                }
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn every_cut_of_a_real_file_is_an_error_or_complete() {
        // A callgrind file cut anywhere must fail cleanly, unless only its last line break
        // was lost.
        for name in ["gungraun_digest.out", "compressed.out"] {
            let text = testdata(name);
            let full = parse(&text, name).unwrap();
            // Every byte of the small file; around every line break of the larger one (a
            // debug build parses 10 KB ten thousand times slowly).
            let cuts: Vec<usize> = if text.len() < 4096 {
                (0..text.len()).collect()
            } else {
                text.match_indices('\n')
                    .flat_map(|(i, _)| [i.saturating_sub(1), i, i + 1])
                    .collect()
            };
            for cut in cuts.into_iter().filter(|&i| text.is_char_boundary(i)) {
                match parse(&text[..cut], name) {
                    Err(ProfileError::Corrupt { .. }) => {}
                    Ok(data) => assert_eq!(data.self_counts, full.self_counts, "{name} cut {cut}"),
                    Err(other) => panic!("{name} cut at {cut}: {other}"),
                }
            }
        }
    }

    #[test]
    fn flipped_bytes_never_panic() {
        let text = testdata("gungraun_digest.out").into_bytes();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..2000 {
            // xorshift: a fixed sequence, so a failure reproduces.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut bytes = text.clone();
            let at = usize::try_from(state % bytes.len() as u64).unwrap();
            bytes[at] = (state >> 32) as u8;
            let _ = parse(&String::from_utf8_lossy(&bytes), "flipped");
        }
    }

    #[test]
    fn hex_positions_and_omitted_counters() {
        let text = "positions: instr line\nevents: Dr Ir\n\
                    fn=a\n0x4005d0 3 9\n+2 * 1 4\n-1 +1\njump=1 +3 *\n+3 *\ntotals: 10 4\n";
        let data = parse(text, "t").unwrap();
        assert_eq!(self_of(&data, "a"), 4);
    }

    #[test]
    fn rounding_keeps_the_total() {
        let weights: HashMap<Vec<usize>, f64> = [
            (vec![0], 1.0 / 3.0 * 10.0),
            (vec![1], 1.0 / 3.0 * 10.0),
            (vec![2], 10.0 / 3.0),
        ]
        .into_iter()
        .collect();
        let rounded = round_to_total(weights, 10);
        assert_eq!(rounded.iter().map(|(_, n)| n).sum::<u64>(), 10);
    }
}
