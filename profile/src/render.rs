//! SVG flamegraphs of folded stacks, drawn by inferno (a port of Brendan Gregg's FlameGraph).
//! inferno writes every frame name through an XML writer, so a symbol such as
//! `<script>&"` arrives in the SVG as text, escaped, never as markup.

use crate::error::ProfileError;
use crate::model::Profile;
use crate::unit::Unit;

/// How a differential flamegraph compares base with head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffScale {
    /// Scale base to head's total first: colours show changes of share (perf samples, whose
    /// totals depend on run length).
    Shares,
    /// Compare counts as they are (exact instruction counts).
    Absolute,
}

fn options(title: &str, count_name: &str) -> inferno::flamegraph::Options<'static> {
    let mut options = inferno::flamegraph::Options::default();
    title.clone_into(&mut options.title);
    count_name.clone_into(&mut options.count_name);
    // Colours from a hash of the name: the same function has the same colour in every graph.
    options.hash = true;
    options.deterministic = true;
    options
}

/// An SVG flamegraph of `folded` stacks; `count_name` names a unit of width (`samples`,
/// `instructions`).
///
/// # Errors
/// [`ProfileError::NoSamples`] when `folded` holds no stack.
pub fn flamegraph_svg(folded: &str, title: &str, count_name: &str) -> Result<String, ProfileError> {
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options(title, count_name), folded.lines(), &mut svg)
        .map_err(|e| draw_error(title, e))?;
    into_string(svg)
}

/// A differential flamegraph: head's stacks, each frame coloured by its change from base (red
/// grew, blue shrank). A frame only base has is not drawn, since widths are head's; the
/// function list of [`crate::diff`] names it.
///
/// # Errors
/// [`ProfileError::NoSamples`] when head holds no stack.
pub fn diff_flamegraph_svg(
    base_folded: &str,
    head_folded: &str,
    title: &str,
    count_name: &str,
    scale: DiffScale,
) -> Result<String, ProfileError> {
    let differential = inferno::differential::Options {
        normalize: scale == DiffScale::Shares,
        ..inferno::differential::Options::default()
    };
    let mut both = Vec::new();
    inferno::differential::from_readers(
        differential,
        base_folded.as_bytes(),
        head_folded.as_bytes(),
        &mut both,
    )
    .map_err(ProfileError::io("folding base and head together"))?;
    let mut svg = Vec::new();
    inferno::flamegraph::from_reader(&mut options(title, count_name), both.as_slice(), &mut svg)
        .map_err(|e| draw_error(title, e))?;
    into_string(svg)
}

/// [`flamegraph_svg`] of a profile, its unit naming the widths.
///
/// # Errors
/// As [`flamegraph_svg`].
pub fn profile_flamegraph_svg(profile: &Profile, title: &str) -> Result<String, ProfileError> {
    flamegraph_svg(&profile.folded, title, profile.unit.as_str())
}

/// [`diff_flamegraph_svg`] of two profiles: shares for samples, absolute counts for
/// instructions.
///
/// # Errors
/// [`ProfileError::UnitMismatch`], and as [`diff_flamegraph_svg`].
pub fn profile_diff_flamegraph_svg(
    base: &Profile,
    head: &Profile,
    title: &str,
) -> Result<String, ProfileError> {
    if base.unit != head.unit {
        return Err(ProfileError::UnitMismatch {
            base: base.unit,
            head: head.unit,
        });
    }
    let scale = match head.unit {
        Unit::Samples => DiffScale::Shares,
        Unit::Instructions => DiffScale::Absolute,
    };
    diff_flamegraph_svg(&base.folded, &head.folded, title, head.unit.as_str(), scale)
}

fn draw_error(title: &str, error: std::io::Error) -> ProfileError {
    if error.kind() == std::io::ErrorKind::InvalidData {
        ProfileError::NoSamples {
            what: format!("the stacks of flamegraph `{title}`"),
        }
    } else {
        ProfileError::io(format!("drawing flamegraph `{title}`"))(error)
    }
}

fn into_string(svg: Vec<u8>) -> Result<String, ProfileError> {
    String::from_utf8(svg).map_err(|_| ProfileError::Corrupt {
        what: "flamegraph".to_owned(),
        line: 0,
        reason: "the SVG is not UTF-8".to_owned(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_are_escaped() {
        let folded = "bench;<script>alert(1)</script>&\";evil 10\nbench;ok 5\n";
        let svg = flamegraph_svg(folded, "t <b>&", "samples").unwrap();
        assert!(svg.starts_with("<?xml"), "{}", &svg[..80]);
        assert!(!svg.contains("<script>alert"), "raw markup in the SVG");
        assert!(
            svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;&amp;"),
            "escaped name"
        );
        assert!(!svg.contains("<b>&"), "title escaped");
        // Still well-formed: outside the script's CDATA, every `&` starts an entity.
        let markup: String = svg
            .split("<![CDATA[")
            .enumerate()
            .map(|(i, part)| {
                if i == 0 {
                    part
                } else {
                    part.split_once("]]>").unwrap().1
                }
            })
            .collect();
        for (i, _) in markup.match_indices('&') {
            let rest = &markup[i..];
            assert!(
                ["&lt;", "&gt;", "&amp;", "&quot;", "&apos;", "&#"]
                    .iter()
                    .any(|e| rest.starts_with(e)),
                "bare & at {i}: {}",
                &rest[..rest.len().min(20)]
            );
        }
    }

    #[test]
    fn differential_graph_marks_growth() {
        let base = "m;a 50\nm;b 50\n";
        let head = "m;a 50\nm;b 50\nm;slow_checksum_added_in_head 100\n";
        let svg = diff_flamegraph_svg(base, head, "diff", "samples", DiffScale::Shares).unwrap();
        assert!(svg.contains("slow_checksum_added_in_head"));
        // inferno labels a differential frame with its change in percent.
        let title = svg
            .split("<title>")
            .find(|t| t.starts_with("slow_checksum_added_in_head"))
            .unwrap();
        assert!(title.contains('+'), "{title}");
        let absolute =
            diff_flamegraph_svg(base, head, "diff", "instructions", DiffScale::Absolute).unwrap();
        assert!(absolute.contains("instructions"));
    }

    #[test]
    fn nothing_to_draw_is_an_error() {
        assert!(matches!(
            flamegraph_svg("", "t", "samples"),
            Err(ProfileError::NoSamples { .. })
        ));
        assert!(matches!(
            diff_flamegraph_svg("a 1\n", "", "t", "samples", DiffScale::Shares),
            Err(ProfileError::NoSamples { .. })
        ));
    }
}
