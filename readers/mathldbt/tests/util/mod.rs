//! Shared helpers for the integration tests.
#![allow(dead_code, reason = "each test binary uses a different subset")]

use mathldbt::{
    BinaryValues, Bitmap, Column, ColumnValues, ColumnarBatch, DataType, Field, Schema, Utf8Values,
};

/// Lower-case hex without separators.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Parses hex, ignoring whitespace.
pub fn unhex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

/// A column of `data_type` from optional values given as strings of a
/// simple form, for readable hand-written tests. Null slots hold defaults.
pub fn column(data_type: DataType, values: &[Option<&str>]) -> Column {
    let valid: Vec<bool> = values.iter().map(Option::is_some).collect();
    fn s<'a>(v: &Option<&'a str>) -> &'a str {
        v.unwrap_or_default()
    }
    let num = |v: &Option<&str>| v.map_or(0i64, |x| x.parse().unwrap());
    let vals = match data_type {
        DataType::Bool => ColumnValues::Bool(values.iter().map(|v| s(v) == "true").collect()),
        DataType::I32 => ColumnValues::I32(values.iter().map(|v| num(v) as i32).collect()),
        DataType::Date32 => ColumnValues::Date32(values.iter().map(|v| num(v) as i32).collect()),
        DataType::I64 => ColumnValues::I64(values.iter().map(num).collect()),
        DataType::TimestampTzMicros => {
            ColumnValues::TimestampTzMicros(values.iter().map(num).collect())
        }
        DataType::F32 => ColumnValues::F32(
            values
                .iter()
                .map(|v| v.map_or(0.0, |x| x.parse().unwrap()))
                .collect(),
        ),
        DataType::F64 => ColumnValues::F64(
            values
                .iter()
                .map(|v| v.map_or(0.0, |x| x.parse().unwrap()))
                .collect(),
        ),
        DataType::Utf8 => ColumnValues::Utf8(values.iter().map(s).collect::<Utf8Values>()),
        DataType::JsonbText => {
            ColumnValues::JsonbText(values.iter().map(s).collect::<Utf8Values>())
        }
        DataType::Binary => ColumnValues::Binary(
            values
                .iter()
                .map(|v| s(v).as_bytes())
                .collect::<BinaryValues>(),
        ),
    };
    Column::with_validity(vals, Bitmap::from_bools(&valid)).unwrap()
}

/// A small batch with every type, nulls, an empty string and non-ASCII
/// text.
pub fn all_types() -> ColumnarBatch {
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    let rows: [[Option<&str>; 4]; 10] = [
        [Some("true"), None, Some("false"), Some("true")],
        [Some("-7"), Some("2147483647"), None, Some("0")],
        [Some("-9223372036854775808"), Some("1"), Some("2"), None],
        [Some("1.5"), None, Some("-0.0"), Some("3.25")],
        [Some("2.5e300"), Some("-1e-300"), None, Some("0.1")],
        [Some("héllo"), Some(""), None, Some("héllo")],
        [Some("\u{0}\u{1}"), None, Some(""), Some("bin")],
        [Some("{\"a\":1}"), Some("[]"), None, Some("{\"a\":1}")],
        [
            Some("1700000000000000"),
            Some("1700000000000001"),
            Some("1699999999999999"),
            Some("0"),
        ],
        [Some("19000"), None, Some("-1"), Some("0")],
    ];
    for (t, vals) in DataType::ALL.iter().zip(rows.iter()) {
        let nullable = vals.iter().any(Option::is_none);
        fields.push(Field::new(t.name(), *t, nullable));
        columns.push(column(*t, vals));
    }
    ColumnarBatch::try_new(Schema::new(fields), columns).unwrap()
}

/// An independent, spec-only writer of raw messages (SPEC.md §3–§8), used
/// to build both valid messages and messages that break one rule.
#[derive(Clone, Debug)]
pub struct RawMessage {
    pub version: u16,
    pub flags: u16,
    pub rows: u32,
    pub columns: Vec<RawColumn>,
    /// `Some(n)` overrides the column count in the header.
    pub column_count: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct RawColumn {
    pub name: Vec<u8>,
    pub type_id: u8,
    pub encoding_id: u8,
    pub flags: u8,
    pub param: u8,
    pub null_count: u32,
    pub buffers: Vec<Vec<u8>>,
    /// `Some(v)` overrides the declared buffer lengths.
    pub lens: Option<Vec<u64>>,
}

impl RawColumn {
    pub fn new(name: &str, type_id: u8, encoding_id: u8, buffers: Vec<Vec<u8>>) -> Self {
        Self {
            name: name.as_bytes().to_vec(),
            type_id,
            encoding_id,
            flags: 0,
            param: 0,
            null_count: 0,
            buffers,
            lens: None,
        }
    }
}

impl RawMessage {
    pub fn new(rows: u32, columns: Vec<RawColumn>) -> Self {
        Self {
            version: 1,
            flags: 0,
            rows,
            columns,
            column_count: None,
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = b"MATHLDBT".to_vec();
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&self.flags.to_le_bytes());
        out.extend_from_slice(&self.rows.to_le_bytes());
        let n = self.column_count.unwrap_or(self.columns.len() as u32);
        out.extend_from_slice(&n.to_le_bytes());
        for c in &self.columns {
            out.extend_from_slice(&(c.name.len() as u16).to_le_bytes());
            out.extend_from_slice(&c.name);
            out.extend_from_slice(&[c.type_id, c.encoding_id, c.flags, c.param]);
            out.extend_from_slice(&c.null_count.to_le_bytes());
            let lens: Vec<u64> = c
                .lens
                .clone()
                .unwrap_or_else(|| c.buffers.iter().map(|b| b.len() as u64).collect());
            for l in lens {
                out.extend_from_slice(&l.to_le_bytes());
            }
        }
        for c in &self.columns {
            for b in &c.buffers {
                out.extend_from_slice(b);
            }
        }
        if self.flags & 1 != 0 {
            let sum = xxhash_rust::xxh3::xxh3_64(&out);
            out.extend_from_slice(&sum.to_le_bytes());
        }
        out
    }
}

pub fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn i64s(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
