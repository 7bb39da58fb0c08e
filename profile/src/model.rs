//! The profile of one benchmark: what was counted, the total, each function's self count, and
//! folded stacks for a flamegraph.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::error::ProfileError;
use crate::unit::Unit;

/// Largest folded-stack text [`Profile::from_folded`] accepts (256 MiB). Real profiles of one
/// benchmark fold to a few megabytes; the cap keeps a hostile input from exhausting memory.
pub const MAX_FOLDED_BYTES: usize = 256 * 1024 * 1024;

/// One function's self count: samples whose leaf frame it was, or instructions it executed
/// itself (not in its callees).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCost {
    /// The (demangled) symbol name.
    pub name: String,
    /// Its self count, in the profile's unit.
    pub self_count: u64,
}

/// The profile of one benchmark.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// What the counts count.
    pub unit: Unit,
    /// All samples, or all instructions executed: the sum of the self counts.
    pub total: u64,
    /// Self count per function, largest first (ties by name).
    pub functions: Vec<FunctionCost>,
    /// Folded stacks (`root;caller;callee count` per line), the input of a flamegraph.
    pub folded: String,
}

impl Profile {
    /// A profile whose self counts are the leaf frames of `folded`: a sample's leaf is the
    /// function the CPU was in.
    ///
    /// # Errors
    /// [`ProfileError::Corrupt`] for a line without a count, [`ProfileError::TooLarge`] past
    /// [`MAX_FOLDED_BYTES`], [`ProfileError::NoSamples`] when nothing was counted.
    pub fn from_folded(unit: Unit, folded: String, what: &str) -> Result<Self, ProfileError> {
        if folded.len() > MAX_FOLDED_BYTES {
            return Err(ProfileError::TooLarge {
                what: what.to_owned(),
                limit: MAX_FOLDED_BYTES as u64,
            });
        }
        let mut counts: HashMap<&str, u64> = HashMap::new();
        let mut total = 0u64;
        for (index, line) in folded.lines().enumerate() {
            let corrupt = |reason: &str| ProfileError::Corrupt {
                what: what.to_owned(),
                line: index + 1,
                reason: reason.to_owned(),
            };
            if line.trim().is_empty() {
                continue;
            }
            let (stack, count) = parse_folded_line(line).ok_or_else(|| {
                corrupt("a folded stack line is `frame;frame;... count` with a whole count")
            })?;
            let leaf = split_frames(stack).last().copied().unwrap_or(stack);
            let slot = counts.entry(leaf).or_default();
            *slot = slot
                .checked_add(count)
                .ok_or_else(|| corrupt("counts overflow 64 bits"))?;
            total = total
                .checked_add(count)
                .ok_or_else(|| corrupt("counts overflow 64 bits"))?;
        }
        if total == 0 {
            return Err(ProfileError::NoSamples {
                what: what.to_owned(),
            });
        }
        let functions = sorted_costs(counts.into_iter().map(|(n, c)| (n.to_owned(), c)));
        Ok(Self {
            unit,
            total,
            functions,
            folded,
        })
    }

    /// The self count of function `name` (0 when it never appears).
    #[must_use]
    pub fn self_count(&self, name: &str) -> u64 {
        self.functions
            .iter()
            .find(|f| f.name == name)
            .map_or(0, |f| f.self_count)
    }

    /// `count` as a share of this profile's total, in 0..=1.
    #[must_use]
    pub fn share(&self, count: u64) -> f64 {
        share(count, self.total)
    }
}

/// `count / total` as a float, 0 for an empty total.
#[expect(
    clippy::cast_precision_loss,
    reason = "a share is a ratio for display and ranking; 2^53 instructions is plenty"
)]
pub(crate) fn share(count: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        count as f64 / total as f64
    }
}

/// Per-function counts sorted largest first, ties by name (so output is deterministic).
pub(crate) fn sorted_costs(counts: impl Iterator<Item = (String, u64)>) -> Vec<FunctionCost> {
    let mut functions: Vec<FunctionCost> = counts
        .filter(|(_, c)| *c > 0)
        .map(|(name, self_count)| FunctionCost { name, self_count })
        .collect();
    functions.sort_by(|a, b| {
        b.self_count
            .cmp(&a.self_count)
            .then_with(|| a.name.cmp(&b.name))
    });
    functions
}

/// `stack count` of one folded line; `None` without a whole count after the last space.
pub(crate) fn parse_folded_line(line: &str) -> Option<(&str, u64)> {
    let (stack, count) = line.trim_end().rsplit_once(' ')?;
    let stack = stack.trim_end();
    if stack.is_empty() {
        return None;
    }
    Some((stack, count.parse().ok()?))
}

/// The frames of a folded stack. A `;` followed by a space is part of a name (Rust's
/// `[u8; 8]`), not a separator: frame names never start with a space.
pub(crate) fn split_frames(stack: &str) -> Vec<&str> {
    let mut frames = Vec::new();
    let mut start = 0;
    let bytes = stack.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b';' && bytes.get(i + 1) != Some(&b' ') {
            frames.push(stack.get(start..i).unwrap_or_default());
            start = i + 1;
        }
    }
    frames.push(stack.get(start..).unwrap_or_default());
    frames
}

/// A frame name made safe for a folded line: no line breaks, and no `;` that would split it
/// (a `;` followed by a space is kept, see [`split_frames`]).
pub(crate) fn folded_frame_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\r' => out.push(' '),
            ';' if chars.peek() != Some(&' ') => out.push(','),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn self_counts_are_leaf_frames() {
        let folded = "bench;main;digest;fnv1a 30\nbench;main;digest 5\nbench;main;fnv1a 10\n\
                      bench;<[u8; 8] as Hash>::hash 2\n"
            .to_owned();
        let p = Profile::from_folded(Unit::Samples, folded, "t").unwrap();
        assert_eq!(p.total, 47);
        assert_eq!(p.self_count("fnv1a"), 40);
        assert_eq!(p.self_count("digest"), 5);
        assert_eq!(p.self_count("<[u8; 8] as Hash>::hash"), 2);
        assert_eq!(p.self_count("main"), 0);
        assert_eq!(p.functions.first().unwrap().name, "fnv1a");
        assert!((p.share(40) - 40.0 / 47.0).abs() < 1e-12);
    }

    #[test]
    fn bad_folded_lines_are_errors() {
        let cases = [
            ("a;b 1\nno count here\n", Some(2)),
            ("a;b -3\n", Some(1)),
            (" 7\n", Some(1)),
            ("a 18446744073709551615\nb 1\n", Some(2)),
            ("", None),
            ("a 0\n", None),
        ];
        for (i, (text, line)) in cases.into_iter().enumerate() {
            let err = Profile::from_folded(Unit::Samples, text.to_owned(), "t").unwrap_err();
            match (line, err) {
                (Some(want), ProfileError::Corrupt { line, .. }) => {
                    assert_eq!(line, want, "case {i}");
                }
                (None, ProfileError::NoSamples { .. }) => {}
                (_, other) => panic!("case {i}: {other}"),
            }
        }
    }

    #[test]
    fn frames_split_only_at_separators() {
        assert_eq!(split_frames("a;b;c"), ["a", "b", "c"]);
        assert_eq!(split_frames("a;[u8; 8]::f"), ["a", "[u8; 8]::f"]);
        assert_eq!(split_frames("solo"), ["solo"]);
        assert_eq!(folded_frame_name("x;y\nz; w"), "x,y z; w");
    }
}
