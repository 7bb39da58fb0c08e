//! Golden vectors (SPEC.md §11): exact bytes of small messages, so any
//! change to the wire format fails here first.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests and benches fail loudly"
)]

mod util;

use mathldbt::{
    Bitmap, Column, ColumnValues, ColumnarBatch, DataType, EncodeOptions, Field, Schema, decode,
    encode,
};
use util::{all_types, column, hex, unhex};

fn check(case: &str, batch: &ColumnarBatch, options: EncodeOptions, golden: &str) {
    let bytes = encode(batch, &options).unwrap();
    assert_eq!(
        hex(&bytes),
        hex(&unhex(golden)),
        "{case}: encoder output changed"
    );
    assert_eq!(&decode(&unhex(golden)).unwrap(), batch, "{case}: decode");
}

#[test]
fn empty_batch() {
    check(
        "empty",
        &ColumnarBatch::default(),
        EncodeOptions::plain().with_checksum(false),
        "4d415448 4c444254 0100 0000 00000000 00000000",
    );
}

#[test]
fn rows_without_columns() {
    let batch = ColumnarBatch::try_new_with_rows(Schema::default(), vec![], 5).unwrap();
    check(
        "rows only",
        &batch,
        EncodeOptions::plain().with_checksum(false),
        "4d415448 4c444254 0100 0000 05000000 00000000",
    );
}

#[test]
fn nullable_i64_plain() {
    let col = Column::with_validity(
        ColumnValues::I64(vec![1, 0, -2]),
        Bitmap::from_bools(&[true, false, true]),
    )
    .unwrap();
    let batch = ColumnarBatch::try_new(
        Schema::new(vec![Field::new("x", DataType::I64, true)]),
        vec![col],
    )
    .unwrap();
    check(
        "nullable i64",
        &batch,
        EncodeOptions::plain().with_checksum(false),
        "4d4154484c444254 0100 0000 03000000 01000000
         0100 78 03 00 03 00 01000000
         0100000000000000 1800000000000000
         05
         0100000000000000 0000000000000000 feffffffffffffff",
    );
}

fn dict_delta_bool() -> ColumnarBatch {
    ColumnarBatch::try_new(
        Schema::new(vec![
            Field::new("s", DataType::Utf8, false),
            Field::new("t", DataType::TimestampTzMicros, false),
            Field::new("f", DataType::Bool, true),
        ]),
        vec![
            column(DataType::Utf8, &[Some("b"), Some("a"), Some("b")]),
            column(
                DataType::TimestampTzMicros,
                &[Some("1000"), Some("1001"), Some("999")],
            ),
            column(DataType::Bool, &[Some("true"), None, Some("false")]),
        ],
    )
    .unwrap()
}

#[test]
fn dict_delta_bool_with_checksum() {
    check(
        "dict delta bool",
        &dict_delta_bool(),
        EncodeOptions::dict_delta().with_checksum(true),
        "4d4154484c444254 0100 0100 03000000 03000000
         0100 73 06 01 00 01 00000000 0c00000000000000 0200000000000000 0300000000000000
         0100 74 09 02 00 00 00000000 0400000000000000
         0100 66 01 00 03 00 01000000 0100000000000000 0100000000000000
         000000000100000002000000 6261 000100
         d00f0203
         05 01
         98df2ed062bdada4",
    );
}

#[test]
fn all_types_plain_with_checksum() {
    check(
        "all types plain",
        &all_types(),
        EncodeOptions::plain().with_checksum(true),
        "4d4154484c44425401000100040000000a0000000400626f6f6c010003000100
         0000010000000000000001000000000000000300693332020003000100000001
         0000000000000010000000000000000300693634030003000100000001000000
         0000000020000000000000000300663332040003000100000001000000000000
         0010000000000000000300663634050003000100000001000000000000002000
         0000000000000400757466380600030001000000010000000000000014000000
         000000000c00000000000000060062696e617279070003000100000001000000
         00000000140000000000000005000000000000000a006a736f6e625f74657874
         0800030001000000010000000000000014000000000000001000000000000000
         120074696d657374616d70747a5f6d6963726f73090000000000000020000000
         0000000006006461746533320a00030001000000010000000000000010000000
         000000000d090bf9ffffffffffff7f0000000000000000070000000000000080
         0100000000000000020000000000000000000000000000000d0000c03f000000
         0000000080000050400b039300aa4bdd4d7e59f3f8c21f6ea581000000000000
         00009a9999999999b93f0b000000000600000006000000060000000c00000068
         c3a96c6c6f68c3a96c6c6f0d0000000002000000020000000200000005000000
         000162696e0b00000000070000000900000009000000100000007b2261223a31
         7d5b5d7b2261223a317d00401e18240a060001401e18240a0600ff3f1e18240a
         060000000000000000000d384a000000000000ffffffff0000000053cdb8946e
         39aced",
    );
}

#[test]
fn all_types_dict_delta_no_checksum() {
    check(
        "all types dict delta",
        &all_types(),
        EncodeOptions::dict_delta().with_checksum(false),
        "4d4154484c44425401000000040000000a0000000400626f6f6c010003000100
         0000010000000000000001000000000000000300693332020003000100000001
         0000000000000010000000000000000300693634030003000100000001000000
         0000000020000000000000000300663332040003000100000001000000000000
         0010000000000000000300663634050003000100000001000000000000002000
         000000000000040075746638060103010100000001000000000000000c000000
         0000000006000000000000000400000000000000060062696e61727907000300
         010000000100000000000000140000000000000005000000000000000a006a73
         6f6e625f74657874080103010100000001000000000000000c00000000000000
         09000000000000000400000000000000120074696d657374616d70747a5f6d69
         63726f730902000000000000120000000000000006006461746533320a000300
         01000000010000000000000010000000000000000d090bf9ffffffffffff7f00
         0000000000000007000000000000008001000000000000000200000000000000
         00000000000000000d0000c03f0000000000000080000050400b039300aa4bdd
         4d7e59f3f8c21f6ea58100000000000000009a9999999999b93f0b0000000006
         0000000600000068c3a96c6c6f000100000d0000000002000000020000000200
         000005000000000162696e0b0000000007000000090000007b2261223a317d5b
         5d000100008080f281838985060203fdfff181838985060d384a000000000000
         ffffffff00000000",
    );
}
