//! The quarantine list: benchmarks whose verdicts are shown but never fail the gate (pure).
//!
//! A team keeps the benchmarks it knows cannot be gated yet (too noisy, bimodal: see the flags
//! of [`crate::noise`]) in a file in the repository, `.bench-quarantine` at the workspace root
//! ([`QUARANTINE_FILE`]) or any file given with `--quarantine FILE`. The format:
//!
//! ```text
//! # Benchmarks that never fail the gate (one pattern per line, `*` wildcards).
//! decode/large_*        # bimodal since the allocator change
//! interleaved/*
//! ```
//!
//! - one pattern per line, matched against the whole benchmark full id with
//!   [`crate::compare::pattern_matches`] (`*` matches any run of characters, `/` included);
//! - a line whose first non-blank character is `#` is a comment, and so is everything after a
//!   `#` that follows a blank (space or tab), so each pattern can say why it is there;
//! - blank lines are ignored, and so is surrounding whitespace.
//!
//! Quarantine differs from `--ignore`: an ignored row gets the verdict `ignored` and leaves
//! the comparison (no p-value in the family, not in the geomean); a quarantined row is
//! compared as usual and its verdict shown, marked quarantined, but it never fails the gate.

/// The quarantine file read from the workspace root when it exists.
pub const QUARANTINE_FILE: &str = ".bench-quarantine";

/// The patterns of a quarantine file, in file order. See the module docs for the format.
#[must_use]
pub fn parse(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            if line.starts_with('#') {
                return None;
            }
            // A trailing comment starts at the first `#` preceded by a blank.
            let end = line
                .char_indices()
                .find(|&(i, c)| {
                    c == '#'
                        && line
                            .get(..i)
                            .is_some_and(|before| before.ends_with([' ', '\t']))
                })
                .map_or(line.len(), |(i, _)| i);
            let pattern = line.get(..end).unwrap_or(line).trim();
            (!pattern.is_empty()).then(|| pattern.to_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_comments_and_blank_lines() {
        let text = "# known noisy\n\ndecode/large_*   # bimodal since #123\n  interleaved/*  \n\
                    \t# indented comment\nsum#1\nwith\ttab\t# note\n\r\nlast";
        assert_eq!(
            parse(text),
            [
                "decode/large_*",
                "interleaved/*",
                "sum#1",
                "with\ttab",
                "last"
            ]
        );
    }

    #[test]
    fn empty_and_comment_only_files() {
        assert!(parse("").is_empty());
        assert!(parse("# nothing\n   \n#\n").is_empty());
    }

    #[test]
    fn windows_line_endings() {
        assert_eq!(parse("a/*\r\nb\r\n"), ["a/*", "b"]);
    }
}
