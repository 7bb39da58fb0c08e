//! [`Value`]: the plain Python values the typed serializers decode to and encode from, and
//! their display as a Python-style `repr` (their plain JSON, [`Value::to_plain_json`], is
//! written by the JSON module, which builds on this one).

use std::fmt::{self, Write as _};

use super::float_repr::python_float_repr;

/// A plain Python value: what the typed serializers (pickle of plain types, msgpack, JSON,
/// str, bytes, the integer codes and their zstd variants) decode to and encode from.
///
/// Dicts keep their order (Python dicts are ordered) and may have any key a format allows;
/// tuples stay tuples where the format has them (pickle) and become lists elsewhere, as in
/// Python.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `None` (pickle `None`, msgpack nil, JSON `null`).
    None,
    /// `bool`.
    Bool(bool),
    /// `int` within the 128-bit range (each format may allow less: msgpack and orjson 64 bits).
    Int(i128),
    /// `float`.
    Float(f64),
    /// `str`.
    Str(String),
    /// `bytes` (a pickled `bytearray` also decodes to this).
    Bytes(Vec<u8>),
    /// `list` (msgpack and JSON arrays decode to lists, as in Python).
    List(Vec<Value>),
    /// `tuple` (pickle only; msgpack and JSON write tuples as arrays).
    Tuple(Vec<Value>),
    /// `dict`, in insertion order.
    Dict(Vec<(Value, Value)>),
}

impl Value {
    /// Python's name for the type (`"NoneType"`, `"int"`, `"dict"`, ...).
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Bytes(_) => "bytes",
            Value::List(_) => "list",
            Value::Tuple(_) => "tuple",
            Value::Dict(_) => "dict",
        }
    }

    /// The value as text, if it is a `str`.
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value as bytes, if it is `bytes`.
    #[must_use]
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// The value as an integer, if it is an `int`.
    #[must_use]
    pub fn as_int(&self) -> Option<i128> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The value of `key` in a dict (the first entry whose key equals it), or None.
    #[must_use]
    pub fn get(&self, key: &Value) -> Option<&Value> {
        match self {
            Value::Dict(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Python-style `repr`: `{'a': [1, 2.5, None, True, b'\x00'], 'b': (1,)}`. Non-printable
    /// characters are escaped as Python does for ASCII and Latin-1 controls; other Unicode
    /// prints as is (Python also escapes some rarer non-printable code points).
    #[must_use]
    pub fn to_repr(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Value {
    /// The Python-style `repr` ([`Value::to_repr`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_repr(self, &mut s);
        f.write_str(&s)
    }
}

fn write_repr(v: &Value, out: &mut String) {
    match v {
        Value::None => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(x) if x.is_nan() => out.push_str("nan"),
        Value::Float(x) if x.is_infinite() => out.push_str(if *x > 0.0 { "inf" } else { "-inf" }),
        Value::Float(x) => python_float_repr(*x, out),
        Value::Str(s) => repr_str(s, out),
        Value::Bytes(b) => repr_bytes(b, out),
        Value::List(items) => repr_seq(items, "[", "]", out),
        Value::Tuple(items) if items.len() == 1 => {
            out.push('(');
            if let Some(item) = items.first() {
                write_repr(item, out);
            }
            out.push_str(",)");
        }
        Value::Tuple(items) => repr_seq(items, "(", ")", out),
        Value::Dict(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(k, out);
                out.push_str(": ");
                write_repr(v, out);
            }
            out.push('}');
        }
    }
}

fn repr_seq(items: &[Value], open: &str, close: &str, out: &mut String) {
    out.push_str(open);
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_repr(v, out);
    }
    out.push_str(close);
}

/// Python picks double quotes when the text has a single quote and no double quote.
fn quote_for(has_single: bool, has_double: bool) -> char {
    if has_single && !has_double { '"' } else { '\'' }
}

fn repr_str(s: &str, out: &mut String) {
    let q = quote_for(s.contains('\''), s.contains('"'));
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            _ if c == q => {
                out.push('\\');
                out.push(c);
            }
            // C0 and C1 controls, DEL, and the few non-printable Latin-1 and line-separator
            // code points Python escapes most often.
            '\0'..='\u{1f}' | '\u{7f}'..='\u{a0}' | '\u{ad}' => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            '\u{2028}' | '\u{2029}' | '\u{feff}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            _ => out.push(c),
        }
    }
    out.push(q);
}

fn repr_bytes(b: &[u8], out: &mut String) {
    let q = quote_for(b.contains(&b'\''), b.contains(&b'"'));
    out.push('b');
    out.push(q);
    for &byte in b {
        match byte {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            _ if char::from(byte) == q => {
                out.push('\\');
                out.push(q);
            }
            0x20..=0x7e => out.push(char::from(byte)),
            _ => {
                let _ = write!(out, "\\x{byte:02x}");
            }
        }
    }
    out.push(q);
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Str(s)
    }
}

impl From<&[u8]> for Value {
    fn from(b: &[u8]) -> Self {
        Value::Bytes(b.to_vec())
    }
}

impl From<Vec<u8>> for Value {
    fn from(b: Vec<u8>) -> Self {
        Value::Bytes(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::Int(i128::from(i))
    }
}

impl From<u64> for Value {
    fn from(i: u64) -> Self {
        Value::Int(i128::from(i))
    }
}

impl From<i32> for Value {
    fn from(i: i32) -> Self {
        Value::Int(i128::from(i))
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Self {
        Value::Float(f)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Python's output: `repr({'a': [1, 2.5, None, True, b'\x00\'"\\', (1,), ()],
    /// 'é\n\x00\x7f': "it's", 2: 'q"\''})`.
    #[test]
    fn repr_matches_python() {
        let v = Value::Dict(vec![
            (
                "a".into(),
                Value::List(vec![
                    1i64.into(),
                    2.5.into(),
                    Value::None,
                    true.into(),
                    Value::Bytes(b"\x00'\"\\".to_vec()),
                    Value::Tuple(vec![1i64.into()]),
                    Value::Tuple(vec![]),
                ]),
            ),
            ("é\n\0\u{7f}".into(), "it's".into()),
            (2i64.into(), "q\"'".into()),
        ]);
        assert_eq!(
            v.to_repr(),
            r#"{'a': [1, 2.5, None, True, b'\x00\'"\\', (1,), ()], 'é\n\x00\x7f': "it's", 2: 'q"\''}"#
        );
    }

    #[test]
    fn plain_json_only_for_json_shaped_values() {
        let v = Value::Dict(vec![(
            "k".into(),
            Value::Tuple(vec![1i64.into(), "x".into()]),
        )]);
        assert_eq!(v.to_plain_json().as_deref(), Some(r#"{"k":[1,"x"]}"#));
        assert_eq!(Value::Bytes(vec![]).to_plain_json(), None);
        assert_eq!(
            Value::Dict(vec![(1i64.into(), Value::None)]).to_plain_json(),
            None
        );
        assert_eq!(Value::Float(f64::NAN).to_plain_json(), None);
    }
}
