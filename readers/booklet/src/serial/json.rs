//! JSON for the `json` and `orjson` serializers (and their zstd variant): [`JsonValue`], which
//! keeps object key order, and the two byte layouts Python booklet writes.
//!
//! * `json` is the standard library's `json.dumps(obj).encode()`: separators `", "` and `": "`,
//!   every character outside printable ASCII escaped (`\u00e9`, surrogate pairs), floats as
//!   Python's `repr` (`1e-07`, `1e+16`), `NaN` / `Infinity` for non-finite floats.
//! * `orjson` is `orjson.dumps(obj, OPT_NON_STR_KEYS | ...)`: compact, raw UTF-8 with only `"`,
//!   `\` and control characters escaped, floats in decimal notation for decimal exponents in
//!   `[-5, 16)` and otherwise `1e-7` / `1e+16`, `null` for non-finite floats, integers limited
//!   to 64 bits.
//!
//! Both reproduce the Python bytes exactly for the values they can hold, which matters for
//! keys: a key is found by the hash of its stored bytes.
//!
//! Parsing ([`JsonValue::parse`]) reads what Python's `json.loads` reads from Python's output:
//! integers up to 128 bits and `NaN` / `Infinity` (module `json_parse`).

use std::fmt::Write as _;

use super::Value;
use super::float_repr::{python_float_repr, shortest_float};
use super::json_parse::JsonValue;

/// How one of the two Python encoders lays out its bytes.
#[derive(Clone, Copy)]
struct Style {
    item_sep: &'static str,
    key_sep: &'static str,
    /// Escape every character outside printable ASCII (`ensure_ascii`).
    ascii: bool,
    float: FloatStyle,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FloatStyle {
    /// `float.__repr__`; `NaN`, `Infinity`.
    Python,
    /// orjson; `null` for non-finite floats.
    Orjson,
}

const PYTHON_JSON: Style = Style {
    item_sep: ", ",
    key_sep: ": ",
    ascii: true,
    float: FloatStyle::Python,
};

const COMPACT_ASCII: Style = Style {
    item_sep: ",",
    key_sep: ":",
    ascii: true,
    float: FloatStyle::Python,
};

const ORJSON: Style = Style {
    item_sep: ",",
    key_sep: ":",
    ascii: false,
    float: FloatStyle::Orjson,
};

impl JsonValue {
    /// Parse JSON text (integers up to 128 bits, Python's `NaN` and `Infinity`, nesting up to
    /// 128 levels).
    pub fn parse(bytes: &[u8]) -> std::result::Result<Self, String> {
        super::json_parse::parse(bytes)
    }

    /// Encode as Python's `json.dumps(obj)` (default arguments) does.
    #[must_use]
    pub fn to_python_json(&self) -> String {
        self.render(PYTHON_JSON)
    }

    /// Encode compactly (`,` and `:` separators, ASCII escapes, Python float repr).
    #[must_use]
    pub fn to_compact_json(&self) -> String {
        self.render(COMPACT_ASCII)
    }

    /// Encode as `orjson.dumps(obj)` does (compact, raw UTF-8, orjson's float layout).
    #[must_use]
    pub fn to_orjson(&self) -> String {
        self.render(ORJSON)
    }

    fn render(&self, style: Style) -> String {
        let mut s = String::new();
        self.write(&mut s, style);
        s
    }

    fn write(&self, out: &mut String, style: Style) {
        match self {
            JsonValue::Null => out.push_str("null"),
            JsonValue::Bool(true) => out.push_str("true"),
            JsonValue::Bool(false) => out.push_str("false"),
            JsonValue::Int(i) => {
                let _ = write!(out, "{i}");
            }
            JsonValue::Float(f) => write_float(*f, style.float, out),
            JsonValue::Str(s) => write_str(s, style.ascii, out),
            JsonValue::Array(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push_str(style.item_sep);
                    }
                    v.write(out, style);
                }
                out.push(']');
            }
            JsonValue::Object(o) => {
                out.push('{');
                for (i, (k, v)) in o.iter().enumerate() {
                    if i > 0 {
                        out.push_str(style.item_sep);
                    }
                    write_str(k, style.ascii, out);
                    out.push_str(style.key_sep);
                    v.write(out, style);
                }
                out.push('}');
            }
        }
    }

    /// The plain value: objects become dicts with string keys.
    #[must_use]
    pub fn into_value(self) -> Value {
        match self {
            JsonValue::Null => Value::None,
            JsonValue::Bool(b) => Value::Bool(b),
            JsonValue::Int(i) => Value::Int(i),
            JsonValue::Float(f) => Value::Float(f),
            JsonValue::Str(s) => Value::Str(s),
            JsonValue::Array(a) => Value::List(a.into_iter().map(JsonValue::into_value).collect()),
            JsonValue::Object(o) => Value::Dict(
                o.into_iter()
                    .map(|(k, v)| (Value::Str(k), v.into_value()))
                    .collect(),
            ),
        }
    }
}

/// Which Python encoder a [`Value`] is converted for: they differ in the keys they accept and
/// in how they spell a non-string key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Encoder {
    Json,
    Orjson,
}

impl Value {
    /// Compact JSON for the values JSON can hold as they are: no bytes, string dict keys only,
    /// finite floats; tuples become arrays. `None` for anything else (see [`Value::to_repr`]).
    #[must_use]
    pub fn to_plain_json(&self) -> Option<String> {
        if !self.is_plain_json() {
            return None;
        }
        self.to_json(Encoder::Json)
            .ok()
            .map(|j| j.to_compact_json())
    }

    fn is_plain_json(&self) -> bool {
        match self {
            Value::None | Value::Bool(_) | Value::Int(_) | Value::Str(_) => true,
            Value::Float(f) => f.is_finite(),
            Value::Bytes(_) => false,
            Value::List(items) | Value::Tuple(items) => items.iter().all(Value::is_plain_json),
            Value::Dict(entries) => entries
                .iter()
                .all(|(k, v)| matches!(k, Value::Str(_)) && v.is_plain_json()),
        }
    }

    /// The JSON value Python's `json.dumps` (`Encoder::Json`) or `orjson.dumps` with
    /// `OPT_NON_STR_KEYS` (`Encoder::Orjson`) writes for this value; `Err` names what neither
    /// can hold (bytes, container keys, orjson's integers beyond 64 bits).
    pub(super) fn to_json(&self, enc: Encoder) -> std::result::Result<JsonValue, String> {
        Ok(match self {
            Value::None => JsonValue::Null,
            Value::Bool(b) => JsonValue::Bool(*b),
            Value::Int(i) => {
                if enc == Encoder::Orjson && !(i64::MIN.into()..=u64::MAX.into()).contains(i) {
                    return Err(format!(
                        "integer {i} exceeds the 64-bit range orjson accepts"
                    ));
                }
                JsonValue::Int(*i)
            }
            Value::Float(f) => JsonValue::Float(*f),
            Value::Str(s) => JsonValue::Str(s.clone()),
            Value::Bytes(_) => return Err("bytes are not JSON serializable".into()),
            Value::List(items) | Value::Tuple(items) => JsonValue::Array(
                items
                    .iter()
                    .map(|v| v.to_json(enc))
                    .collect::<std::result::Result<_, _>>()?,
            ),
            Value::Dict(entries) => JsonValue::Object(
                entries
                    .iter()
                    .map(|(k, v)| Ok((json_key(k, enc)?, v.to_json(enc)?)))
                    .collect::<std::result::Result<_, String>>()?,
            ),
        })
    }
}

/// A dict key as the Python encoders spell it: `json` turns int, float, bool and None keys into
/// strings; orjson does the same under `OPT_NON_STR_KEYS`, each with its own float layout.
fn json_key(k: &Value, enc: Encoder) -> std::result::Result<String, String> {
    Ok(match k {
        Value::Str(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => if *b { "true" } else { "false" }.to_owned(),
        Value::None => "null".to_owned(),
        Value::Float(f) => {
            let mut s = String::new();
            match enc {
                // `json` writes float keys with `float.__repr__`, non-finite ones included.
                Encoder::Json => python_float_repr(*f, &mut s),
                Encoder::Orjson => write_float(*f, FloatStyle::Orjson, &mut s),
            }
            s
        }
        other => {
            return Err(format!(
                "dict keys must be str, int, float, bool or None for JSON, not {}",
                other.type_name()
            ));
        }
    })
}

/// A JSON string: Python's `ensure_ascii` escapes everything outside printable ASCII as
/// `\uXXXX` (UTF-16 units); orjson escapes only `"`, `\` and control characters.
fn write_str(s: &str, ascii: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ if !ascii && c >= ' ' => out.push(c),
            _ => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

fn write_float(f: f64, style: FloatStyle, out: &mut String) {
    match style {
        FloatStyle::Python => python_float_repr(f, out),
        FloatStyle::Orjson if !f.is_finite() => out.push_str("null"),
        FloatStyle::Orjson => shortest_float(f, -5, false, out),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn python_float_repr_cases() {
        let cases = [
            (3.25, "3.25"),
            (1e-7, "1e-07"),
            (1.5e16, "1.5e+16"),
            (1.0 / 3.0, "0.3333333333333333"),
            (2.0, "2.0"),
            (-0.5, "-0.5"),
            (0.0001, "0.0001"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (123.456, "123.456"),
            (-0.0, "-0.0"),
            (1e100, "1e+100"),
            (5e-324, "5e-324"),
        ];
        for (i, (f, want)) in cases.into_iter().enumerate() {
            let mut s = String::new();
            python_float_repr(f, &mut s);
            assert_eq!(s, want, "case {i}");
        }
    }

    /// Captured from orjson 3.13.0: `orjson.dumps(f)`.
    #[test]
    fn orjson_float_cases() {
        let cases = [
            (1.0, "1.0"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.2345678901234568e16, "1.2345678901234568e+16"),
            (1e-5, "0.00001"),
            (1.234e-5, "0.00001234"),
            (1e-6, "1e-6"),
            (1.5e-7, "1.5e-7"),
            (-0.0, "-0.0"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (1.23e-100, "1.23e-100"),
            (f64::NAN, "null"),
            (f64::NEG_INFINITY, "null"),
        ];
        for (i, (f, want)) in cases.into_iter().enumerate() {
            let mut s = String::new();
            write_float(f, FloatStyle::Orjson, &mut s);
            assert_eq!(s, want, "case {i}");
        }
    }

    #[test]
    fn layouts() {
        let v =
            JsonValue::parse(br#"{"b": 1, "a": [true, null, "\u00e9\ud83d\ude00\u007f\u001f"]}"#)
                .unwrap();
        assert_eq!(
            v.to_python_json(),
            r#"{"b": 1, "a": [true, null, "\u00e9\ud83d\ude00\u007f\u001f"]}"#
        );
        assert_eq!(
            v.to_compact_json(),
            r#"{"b":1,"a":[true,null,"\u00e9\ud83d\ude00\u007f\u001f"]}"#
        );
        // Captured from orjson 3.13.0.
        assert_eq!(
            v.to_orjson(),
            "{\"b\":1,\"a\":[true,null,\"é😀\u{7f}\\u001f\"]}"
        );
    }

    /// Captured from Python: `json.dumps({1: 2, None: 4, 1.5: 5})` and orjson with
    /// `OPT_NON_STR_KEYS`.
    #[test]
    fn non_string_keys() {
        let v = Value::Dict(vec![
            (Value::Int(1), Value::Int(2)),
            (Value::None, Value::Int(4)),
            (Value::Float(1.5), Value::Int(5)),
            (Value::Bool(false), Value::Int(6)),
        ]);
        assert_eq!(
            v.to_json(Encoder::Json).unwrap().to_python_json(),
            r#"{"1": 2, "null": 4, "1.5": 5, "false": 6}"#
        );
        assert_eq!(
            v.to_json(Encoder::Orjson).unwrap().to_orjson(),
            r#"{"1":2,"null":4,"1.5":5,"false":6}"#
        );
        let bad = Value::Dict(vec![(Value::Tuple(vec![]), Value::None)]);
        assert!(bad.to_json(Encoder::Json).is_err());
        assert!(Value::Bytes(vec![1]).to_json(Encoder::Json).is_err());
        assert!(Value::Int(1 << 70).to_json(Encoder::Orjson).is_err());
        assert!(Value::Int(1 << 70).to_json(Encoder::Json).is_ok());
    }
}
