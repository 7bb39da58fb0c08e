//! The permanent wire codes (SPEC.md §3, §4, §5). Changing any of these
//! breaks every message ever written.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests and benches fail loudly"
)]

use mathldbt::format::{
    COLUMN_HAS_VALIDITY, COLUMN_NULLABLE, FLAG_CHECKSUM, HEADER_LEN, MAGIC, TRAILER_LEN, VERSION,
};
use mathldbt::{DataType, Encoding};

#[test]
fn type_codes_are_pinned() {
    let expected = [
        (DataType::Bool, 1, "bool"),
        (DataType::I32, 2, "i32"),
        (DataType::I64, 3, "i64"),
        (DataType::F32, 4, "f32"),
        (DataType::F64, 5, "f64"),
        (DataType::Utf8, 6, "utf8"),
        (DataType::Binary, 7, "binary"),
        (DataType::JsonbText, 8, "jsonb_text"),
        (DataType::TimestampTzMicros, 9, "timestamptz_micros"),
        (DataType::Date32, 10, "date32"),
    ];
    assert_eq!(DataType::ALL.len(), expected.len());
    for (i, (t, code, name)) in expected.into_iter().enumerate() {
        assert_eq!(t.code(), code, "case {i}");
        assert_eq!(DataType::from_code(code), Some(t), "case {i}");
        assert_eq!(t.name(), name, "case {i}");
    }
    for code in [0u8, 11, 12, 255] {
        assert_eq!(DataType::from_code(code), None, "code {code}");
    }
}

#[test]
fn encoding_codes_are_pinned() {
    let expected = [
        (Encoding::Plain, 0, "plain"),
        (Encoding::DictUtf8, 1, "dict_utf8"),
        (Encoding::DeltaVarintI64, 2, "delta_varint_i64"),
    ];
    assert_eq!(Encoding::ALL.len(), expected.len());
    for (i, (e, code, name)) in expected.into_iter().enumerate() {
        assert_eq!(e.code(), code, "case {i}");
        assert_eq!(Encoding::from_code(code), Some(e), "case {i}");
        assert_eq!(e.name(), name, "case {i}");
    }
    assert_eq!(Encoding::from_code(3), None);
}

#[test]
fn encoding_type_matrix() {
    for t in DataType::ALL {
        assert!(Encoding::Plain.supports(t), "{t}");
        assert_eq!(
            Encoding::DictUtf8.supports(t),
            matches!(t, DataType::Utf8 | DataType::JsonbText),
            "{t}"
        );
        assert_eq!(
            Encoding::DeltaVarintI64.supports(t),
            matches!(t, DataType::I64 | DataType::TimestampTzMicros),
            "{t}"
        );
    }
}

#[test]
fn header_constants_are_pinned() {
    assert_eq!(&MAGIC, b"MATHLDBT");
    assert_eq!(VERSION, 1);
    assert_eq!(HEADER_LEN, 20);
    assert_eq!(TRAILER_LEN, 8);
    assert_eq!(FLAG_CHECKSUM, 1);
    assert_eq!(COLUMN_NULLABLE, 1);
    assert_eq!(COLUMN_HAS_VALIDITY, 2);
}
