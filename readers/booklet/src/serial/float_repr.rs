//! Float text as Python and orjson write it. It sits below both the JSON encoders and the
//! `repr` of [`Value`](super::Value), so neither imports the other for it.

use std::fmt::Write as _;

/// Python's `float.__repr__`: shortest round-trip digits, scientific notation when the
/// decimal exponent is below -4 or at least 16, at least two exponent digits.
pub(super) fn python_float_repr(f: f64, out: &mut String) {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        shortest_float(f, -4, true, out);
    }
}

/// Shortest round-trip digits of a finite float, in decimal notation for decimal exponents in
/// `[min_exp, 16)` (always with a fractional part) and in scientific notation otherwise, with
/// a sign on the exponent and, if `pad_exp`, at least two exponent digits.
pub(super) fn shortest_float(f: f64, min_exp: i32, pad_exp: bool, out: &mut String) {
    // Rust's `{:e}` gives the shortest round-trip digits: "d.ddde[-]x".
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if f.is_sign_negative() {
        out.push('-');
    }
    if (min_exp..16).contains(&exp) {
        let n = digits.len() as i32;
        if exp < 0 {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        } else if exp + 1 >= n {
            out.push_str(&digits);
            for _ in 0..(exp + 1 - n) {
                out.push('0');
            }
            out.push_str(".0");
        } else {
            let (a, b) = digits.split_at((exp + 1) as usize);
            out.push_str(a);
            out.push('.');
            out.push_str(b);
        }
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let sign = if exp < 0 { '-' } else { '+' };
        if pad_exp {
            let _ = write!(out, "e{sign}{:02}", exp.abs());
        } else {
            let _ = write!(out, "e{sign}{}", exp.abs());
        }
    }
}
