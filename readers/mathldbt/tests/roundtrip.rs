//! Round trips: property tests over random schemas and batches (every type,
//! nulls, empty batches, empty and non-ASCII strings, any float bit pattern)
//! for every encoding option and every compression, plus determinism,
//! `decode_into` reuse and encoding from views.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests and benches fail loudly"
)]

mod util;

use mathldbt::{
    BinaryValues, Bitmap, Column, ColumnValues, ColumnarBatch, Compression, DataType,
    DecodeOptions, Decoder, EncodeOptions, Encoder, Field, Schema, Utf8Values, decode, encode,
};
use proptest::prelude::*;

/// Values for one column of `rows` rows; `None` is a null. Null slots are
/// filled with the type's default so that every encoding (including
/// `DictUtf8`, which does not carry null slots) round-trips exactly.
fn column_strategy(data_type: DataType, nullable: bool, rows: usize) -> BoxedStrategy<Column> {
    fn opt<T: std::fmt::Debug + Clone + 'static>(
        s: impl Strategy<Value = T> + 'static,
        nullable: bool,
        rows: usize,
    ) -> BoxedStrategy<Vec<Option<T>>> {
        let null_weight = if nullable { 1 } else { 0 };
        prop::collection::vec(
            prop_oneof![null_weight => Just(None), 3 => s.prop_map(Some)],
            rows,
        )
        .boxed()
    }
    fn build<T: Default + Clone>(v: &[Option<T>], wrap: impl Fn(Vec<T>) -> ColumnValues) -> Column {
        let valid: Vec<bool> = v.iter().map(Option::is_some).collect();
        let vals = v.iter().map(|x| x.clone().unwrap_or_default()).collect();
        Column::with_validity(wrap(vals), Bitmap::from_bools(&valid)).unwrap()
    }
    // Strings: mostly from a small pool (so dictionaries repeat), sometimes
    // arbitrary (non-ASCII, control characters), often empty.
    let text = prop_oneof![
        Just(String::new()),
        prop::sample::select(vec!["a", "b", "héllo", "日本", "AAPL", "{\"k\":[1,2]}"])
            .prop_map(str::to_owned),
        any::<String>(),
    ];
    match data_type {
        DataType::Bool => opt(any::<bool>(), nullable, rows)
            .prop_map(|v| build(&v, ColumnValues::Bool))
            .boxed(),
        DataType::I32 => opt(any::<i32>(), nullable, rows)
            .prop_map(|v| build(&v, ColumnValues::I32))
            .boxed(),
        DataType::Date32 => opt(any::<i32>(), nullable, rows)
            .prop_map(|v| build(&v, ColumnValues::Date32))
            .boxed(),
        DataType::I64 => opt(
            prop_oneof![any::<i64>(), -1000i64..1000, Just(i64::MIN), Just(i64::MAX)],
            nullable,
            rows,
        )
        .prop_map(|v| build(&v, ColumnValues::I64))
        .boxed(),
        DataType::TimestampTzMicros => opt(
            prop_oneof![
                any::<i64>(),
                1_600_000_000_000_000i64..1_800_000_000_000_000
            ],
            nullable,
            rows,
        )
        .prop_map(|v| build(&v, ColumnValues::TimestampTzMicros))
        .boxed(),
        DataType::F32 => opt(any::<u32>().prop_map(f32::from_bits), nullable, rows)
            .prop_map(|v| build(&v, ColumnValues::F32))
            .boxed(),
        DataType::F64 => opt(any::<u64>().prop_map(f64::from_bits), nullable, rows)
            .prop_map(|v| build(&v, ColumnValues::F64))
            .boxed(),
        DataType::Utf8 | DataType::JsonbText => opt(text, nullable, rows)
            .prop_map(move |v| {
                let valid: Vec<bool> = v.iter().map(Option::is_some).collect();
                let vals: Utf8Values = v.iter().map(|x| x.as_deref().unwrap_or("")).collect();
                let vals = if data_type == DataType::Utf8 {
                    ColumnValues::Utf8(vals)
                } else {
                    ColumnValues::JsonbText(vals)
                };
                Column::with_validity(vals, Bitmap::from_bools(&valid)).unwrap()
            })
            .boxed(),
        DataType::Binary => opt(prop::collection::vec(any::<u8>(), 0..6), nullable, rows)
            .prop_map(|v| {
                let valid: Vec<bool> = v.iter().map(Option::is_some).collect();
                let vals: BinaryValues = v.iter().map(|x| x.as_deref().unwrap_or(&[])).collect();
                Column::with_validity(ColumnValues::Binary(vals), Bitmap::from_bools(&valid))
                    .unwrap()
            })
            .boxed(),
    }
}

fn batch_strategy(max_rows: usize, max_cols: usize) -> impl Strategy<Value = ColumnarBatch> {
    let field = (
        prop::sample::select(DataType::ALL.to_vec()),
        any::<bool>(),
        prop_oneof![Just(String::new()), "[a-z]{1,6}", any::<String>()],
    );
    (0..=max_rows, prop::collection::vec(field, 0..=max_cols)).prop_flat_map(|(rows, fields)| {
        let cols: Vec<_> = fields
            .iter()
            .map(|(t, nullable, _)| column_strategy(*t, *nullable, rows))
            .collect();
        (Just(rows), Just(fields), cols).prop_map(|(rows, fields, cols)| {
            let schema = Schema::new(
                fields
                    .into_iter()
                    .map(|(t, nullable, name)| Field::new(name, t, nullable))
                    .collect(),
            );
            ColumnarBatch::try_new_with_rows(schema, cols, rows).unwrap()
        })
    })
}

fn all_options() -> Vec<EncodeOptions> {
    let mut v = Vec::new();
    for dict in [false, true] {
        for delta in [false, true] {
            for checksum in [false, true] {
                v.push(
                    EncodeOptions::plain()
                        .with_dict_utf8(dict)
                        .with_delta_varint_i64(delta)
                        .with_checksum(checksum),
                );
            }
        }
    }
    v
}

fn all_compressions() -> Vec<Compression> {
    vec![
        Compression::None,
        Compression::Zstd { level: 1 },
        Compression::ZSTD_DEFAULT,
        Compression::Gzip { level: 1 },
        Compression::GZIP_DEFAULT,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_encoding_round_trips(batch in batch_strategy(40, 6)) {
        for options in all_options() {
            let bytes = encode(&batch, &options).unwrap();
            prop_assert_eq!(&decode(&bytes).unwrap(), &batch, "{:?}", options);
            // Deterministic, and stable under re-encoding.
            prop_assert_eq!(&encode(&batch, &options).unwrap(), &bytes);
            let again = encode(&decode(&bytes).unwrap(), &options).unwrap();
            prop_assert_eq!(&again, &bytes);
            // The structural summary agrees.
            let info = mathldbt::inspect(&bytes).unwrap();
            prop_assert_eq!(info.num_rows as usize, batch.num_rows());
            prop_assert_eq!(info.columns.len(), batch.num_columns());
            prop_assert_eq!(info.total_len, bytes.len());
        }
    }

    #[test]
    fn every_compression_round_trips(batch in batch_strategy(30, 4)) {
        let mut decoder = Decoder::new(DecodeOptions::default());
        for options in [EncodeOptions::plain(), EncodeOptions::dict_delta()] {
            let mut encoder = Encoder::new(options);
            let raw = encoder.encode(&batch).unwrap().to_vec();
            for compression in all_compressions() {
                let wire = encoder.encode_compressed(&batch, compression).unwrap().to_vec();
                prop_assert_eq!(
                    &decoder.decode_compressed(&wire, raw.len()).unwrap(),
                    &batch,
                    "{:?} {:?}", options, compression
                );
                if !raw.is_empty() {
                    prop_assert!(
                        decoder.decode_compressed(&wire, raw.len() - 1).is_err(),
                        "limit one below the size must fail: {:?}", compression
                    );
                }
            }
        }
    }

    #[test]
    fn decode_into_reuses_a_batch_across_shapes(
        batches in prop::collection::vec(batch_strategy(20, 5), 1..6)
    ) {
        let mut encoder = Encoder::new(EncodeOptions::dict_delta());
        let mut decoder = Decoder::new(DecodeOptions::default());
        let mut target = ColumnarBatch::default();
        for (i, batch) in batches.iter().enumerate() {
            let bytes = encoder.encode(batch).unwrap();
            decoder.decode_into(bytes, &mut target).unwrap();
            prop_assert_eq!(&target, batch, "batch {}", i);
        }
    }

    #[test]
    fn views_encode_like_owned_batches(batch in batch_strategy(30, 5)) {
        for options in [EncodeOptions::plain(), EncodeOptions::dict_delta()] {
            let mut encoder = Encoder::new(options);
            let owned = encoder.encode(&batch).unwrap().to_vec();
            let from_view = encoder.encode_view(&batch.view()).unwrap().to_vec();
            prop_assert_eq!(&owned, &from_view);
            prop_assert_eq!(&batch.view().to_batch().unwrap(), &batch);
        }
    }
}

#[test]
fn empty_batches_of_every_type() {
    for t in DataType::ALL {
        for nullable in [false, true] {
            let batch = ColumnarBatch::try_new(
                Schema::new(vec![Field::new("c", t, nullable)]),
                vec![Column::new_empty(t)],
            )
            .unwrap();
            for options in all_options() {
                let bytes = encode(&batch, &options).unwrap();
                assert_eq!(decode(&bytes).unwrap(), batch, "{t} {options:?}");
            }
        }
    }
}

#[test]
fn plain_preserves_null_slot_placeholders() {
    let batch = ColumnarBatch::try_new(
        Schema::new(vec![
            Field::new("i", DataType::I64, true),
            Field::new("s", DataType::Utf8, true),
        ]),
        vec![
            Column::with_validity(
                ColumnValues::I64(vec![1, 42, 3]),
                Bitmap::from_bools(&[true, false, true]),
            )
            .unwrap(),
            Column::with_validity(
                ColumnValues::Utf8(["x", "hidden", "z"].into_iter().collect()),
                Bitmap::from_bools(&[true, false, true]),
            )
            .unwrap(),
        ],
    )
    .unwrap();
    let back = decode(&encode(&batch, &EncodeOptions::plain()).unwrap()).unwrap();
    assert_eq!(back, batch);
    // DictUtf8 does not carry null slots: the hidden value decodes as "".
    let back = decode(&encode(&batch, &EncodeOptions::dict_delta()).unwrap()).unwrap();
    let ColumnValues::Utf8(s) = back.column(1).unwrap().values() else {
        panic!("utf8")
    };
    assert_eq!(s.iter().collect::<Vec<_>>(), ["x", "", "z"]);
    assert!(back.column(1).unwrap().is_null(1));
}

#[test]
fn floats_are_bit_exact() {
    let specials = [
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7FF0_0000_0000_0001),
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
        5e-324,
    ];
    let batch = ColumnarBatch::try_new(
        Schema::new(vec![Field::new("f", DataType::F64, false)]),
        vec![Column::new(ColumnValues::F64(specials.to_vec()))],
    )
    .unwrap();
    let back = decode(&encode(&batch, &EncodeOptions::plain()).unwrap()).unwrap();
    let ColumnValues::F64(v) = back.column(0).unwrap().values() else {
        panic!("f64")
    };
    for (a, b) in v.iter().zip(specials) {
        assert_eq!(a.to_bits(), b.to_bits());
    }
}

#[test]
fn warm_encoder_and_decoder_do_not_grow() {
    // Capacity, not an allocator hook: after one call, repeated calls on the
    // same batch keep the same buffers (same pointer and capacity).
    let batch = mathldbt::fixture::bars(5_000);
    let mut encoder = Encoder::new(EncodeOptions::dict_delta());
    let mut decoder = Decoder::new(DecodeOptions::default());
    let mut target = ColumnarBatch::default();
    let first = encoder.encode(&batch).unwrap().as_ptr();
    let bytes = encoder.encode(&batch).unwrap().to_vec();
    assert_eq!(encoder.encode(&batch).unwrap().as_ptr(), first);
    decoder.decode_into(&bytes, &mut target).unwrap();
    let ptrs = |b: &ColumnarBatch| -> Vec<usize> {
        b.columns()
            .iter()
            .map(|c| match c.values() {
                ColumnValues::F64(v) => v.as_ptr() as usize,
                ColumnValues::I64(v) | ColumnValues::TimestampTzMicros(v) => v.as_ptr() as usize,
                ColumnValues::Utf8(v) => v.data().as_ptr() as usize,
                _ => 0,
            })
            .collect()
    };
    let before = ptrs(&target);
    for _ in 0..3 {
        decoder.decode_into(&bytes, &mut target).unwrap();
    }
    assert_eq!(ptrs(&target), before);
    assert_eq!(target, batch);
}
