//! Entries as JSON text, the way `root-tool dump` writes them: numbers in their shortest
//! round-trip form (non-finite floats as `null`), strings quoted (invalid UTF-8 replaced),
//! lists as arrays, leaf-list records as objects.

use std::fmt::Write as _;

use crate::column::{Column, Values};

/// Appends item `i` of `values` (`{:?}` of floats is their shortest round-trip text).
///
/// # Panics
/// If `i` is not an item of `values`.
pub fn write_value(out: &mut String, values: &Values, i: usize) {
    macro_rules! int {
        ($v:expr) => {{
            let _ = write!(out, "{}", $v[i]);
        }};
    }
    macro_rules! float {
        ($v:expr) => {{
            let x = $v[i];
            if x.is_finite() {
                let _ = write!(out, "{x:?}");
            } else {
                out.push_str("null");
            }
        }};
    }
    match values {
        Values::Bool(v) => out.push_str(if v[i] { "true" } else { "false" }),
        Values::I8(v) => int!(v),
        Values::U8(v) => int!(v),
        Values::I16(v) => int!(v),
        Values::U16(v) => int!(v),
        Values::I32(v) => int!(v),
        Values::U32(v) => int!(v),
        Values::I64(v) => int!(v),
        Values::U64(v) => int!(v),
        Values::F32(v) => float!(v),
        Values::F64(v) => float!(v),
        Values::Text(s) => out.push_str(&quoted(&s.get_str(i).unwrap_or_default())),
        Values::Lists(l) => {
            write_items(
                out,
                &l.items,
                l.offsets[i] as usize,
                l.offsets[i + 1] as usize,
            );
        }
        Values::Record(fields) => {
            out.push('{');
            for (k, f) in fields.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                out.push_str(&quoted(&f.name));
                out.push(':');
                if f.len == 1 {
                    write_value(out, &f.values, i);
                } else {
                    write_items(out, &f.values, i * f.len, (i + 1) * f.len);
                }
            }
            out.push('}');
        }
    }
}

/// Items `a..b` as a JSON array.
fn write_items(out: &mut String, values: &Values, a: usize, b: usize) {
    out.push('[');
    for i in a..b {
        if i > a {
            out.push(',');
        }
        write_value(out, values, i);
    }
    out.push(']');
}

/// Appends entry `j` of `col`: a value, or an array of its values joined by `sep` (`,` for
/// JSON; root-tool's CSV uses a space).
///
/// # Panics
/// If `j` is not an entry of `col`.
pub fn write_entry(out: &mut String, col: &Column, j: usize, sep: char) {
    let (a, b, array) = match &col.offsets {
        Some(o) => (o[j] as usize, o[j + 1] as usize, true),
        None => {
            let per = col.layout.fixed_len().unwrap_or(1);
            (j * per, (j + 1) * per, per > 1)
        }
    };
    if !array {
        write_value(out, &col.values, a);
        return;
    }
    out.push('[');
    for i in a..b {
        if i > a {
            out.push(sep);
        }
        write_value(out, &col.values, i);
    }
    out.push(']');
}

/// `s` as a JSON string literal.
#[must_use]
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped() {
        assert_eq!(quoted("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
    }
}
