//! Number formatting shared by the sentences of the noise model and of the comparison. It sits
//! below both (it imports nothing of this crate), so neither has to import the other for it.

/// A value with about six significant digits, without trailing zeros.
pub(crate) fn num(v: f64) -> String {
    if v != 0.0 && v.is_finite() && (v.abs() < 1e-3 || v.abs() >= 1e12) {
        return format!("{v:.4e}");
    }
    let s = format!("{v:.4}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// A percentage with sign and two decimals.
pub(crate) fn pct_str(v: f64) -> String {
    format!("{v:+.2}%")
}
