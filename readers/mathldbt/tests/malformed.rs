//! Malformed input: truncation at every byte, bit flips, absurd lengths and
//! one test per validation rule of SPEC.md §9. Every case must give an error
//! (never a panic, a hang, or a large allocation).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests and benches fail loudly"
)]

mod util;

use mathldbt::{
    Compression, DecodeError, DecodeOptions, Decoder, EncodeOptions, Encoder, decode, encode,
};
use util::{RawColumn, RawMessage, all_types, i64s, u32s};

fn samples() -> Vec<(String, Vec<u8>)> {
    let batch = all_types();
    let mut out = Vec::new();
    for (name, options) in [
        ("plain+checksum", EncodeOptions::plain().with_checksum(true)),
        ("plain", EncodeOptions::plain().with_checksum(false)),
        (
            "dict_delta+checksum",
            EncodeOptions::dict_delta().with_checksum(true),
        ),
        (
            "dict_delta",
            EncodeOptions::dict_delta().with_checksum(false),
        ),
    ] {
        out.push((name.to_owned(), encode(&batch, &options).unwrap()));
    }
    let bars = mathldbt::fixture::bars(50);
    out.push((
        "bars dict_delta".to_owned(),
        encode(&bars, &EncodeOptions::dict_delta().with_checksum(false)).unwrap(),
    ));
    out
}

#[test]
fn truncation_at_every_byte_is_an_error() {
    let mut unchecked = Decoder::new(DecodeOptions::default().with_verify_checksum(false));
    for (name, bytes) in samples() {
        assert!(
            decode(&bytes).is_ok(),
            "{name}: the sample itself must decode"
        );
        for cut in 0..bytes.len() {
            let prefix = &bytes[..cut];
            assert!(
                decode(prefix).is_err(),
                "{name}: prefix of {cut} bytes decoded"
            );
            assert!(
                unchecked.decode(prefix).is_err(),
                "{name}: prefix of {cut} bytes decoded without checksum verification"
            );
        }
    }
}

#[test]
fn extension_by_any_byte_is_an_error() {
    for (name, bytes) in samples() {
        for extra in [0u8, 1, 0xFF] {
            let mut longer = bytes.clone();
            longer.push(extra);
            assert!(
                decode(&longer).is_err(),
                "{name}: trailing byte {extra} accepted"
            );
        }
    }
}

#[test]
fn every_bit_flip_is_an_error_with_a_checksum() {
    for (name, bytes) in samples()
        .into_iter()
        .filter(|(n, _)| n.contains("checksum"))
    {
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[i] ^= 1 << bit;
                assert!(
                    decode(&b).is_err(),
                    "{name}: flip of byte {i} bit {bit} decoded"
                );
            }
        }
    }
}

#[test]
fn bit_flips_without_a_checksum_never_panic() {
    // Without a checksum a flip inside a value is undetectable by design;
    // the decoder must still never panic, and whatever it accepts must be a
    // well-formed batch that encodes again.
    let mut decoder = Decoder::new(DecodeOptions::default().with_max_decoded_bytes(1 << 24));
    let mut errors = 0usize;
    let mut total = 0usize;
    for (name, bytes) in samples()
        .into_iter()
        .filter(|(n, _)| !n.contains("checksum"))
    {
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[i] ^= 1 << bit;
                total += 1;
                match decoder.decode(&b) {
                    Err(_) => errors += 1,
                    Ok(batch) => {
                        encode(&batch, &EncodeOptions::plain())
                            .unwrap_or_else(|e| panic!("{name}: byte {i} bit {bit}: {e}"));
                    }
                }
            }
        }
    }
    assert!(
        errors > total / 4,
        "only {errors} of {total} flips were detected"
    );
}

#[test]
fn checksum_can_be_skipped_but_structure_is_still_checked() {
    let bytes = encode(&all_types(), &EncodeOptions::plain().with_checksum(true)).unwrap();
    let mut corrupted = bytes.clone();
    let last = corrupted.len() - 1;
    corrupted[last] ^= 1; // the trailer itself
    assert!(matches!(
        decode(&corrupted),
        Err(DecodeError::ChecksumMismatch { .. })
    ));
    let mut unchecked = Decoder::new(DecodeOptions::default().with_verify_checksum(false));
    assert_eq!(unchecked.decode(&corrupted).unwrap(), all_types());
}

fn i64_col(rows: usize) -> RawColumn {
    RawColumn::new("x", 3, 0, vec![i64s(&vec![7; rows])])
}

fn dict_col(entries: &[&str], indices: Vec<u8>) -> RawColumn {
    let mut offsets = vec![0u32];
    let mut data = Vec::new();
    for e in entries {
        data.extend_from_slice(e.as_bytes());
        offsets.push(data.len() as u32);
    }
    let mut c = RawColumn::new("s", 6, 1, vec![u32s(&offsets), data, indices]);
    c.param = 1;
    c
}

/// Each case: a message that breaks exactly one rule, and a predicate on
/// the error.
#[test]
fn every_validation_rule_is_enforced() {
    type Check = fn(&DecodeError) -> bool;
    let mut cases: Vec<(&str, Vec<u8>, Check)> = Vec::new();

    // Sanity: the raw writer's valid messages decode.
    assert!(decode(&RawMessage::new(3, vec![i64_col(3)]).to_bytes()).is_ok());
    assert!(
        decode(&RawMessage::new(3, vec![dict_col(&["a", "b"], vec![0, 1, 0])]).to_bytes()).is_ok()
    );

    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    let mut bad_magic = m.to_bytes();
    bad_magic[0] = b'N';
    cases.push(("magic", bad_magic, |e| {
        matches!(e, DecodeError::BadMagic { .. })
    }));
    m.version = 2;
    cases.push(("version", m.to_bytes(), |e| {
        matches!(e, DecodeError::UnsupportedVersion { version: 2 })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    m.flags = 2;
    cases.push(("reserved header flag", m.to_bytes(), |e| {
        matches!(e, DecodeError::UnknownFlags { .. })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    m.column_count = Some(u32::MAX);
    cases.push(("absurd column count", m.to_bytes(), |e| {
        matches!(e, DecodeError::TooManyColumns { .. })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    m.columns[0].name = vec![0xFF, 0xFE];
    cases.push(("name not utf8", m.to_bytes(), |e| {
        matches!(e, DecodeError::InvalidName { .. })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    m.columns[0].type_id = 11;
    cases.push(("unknown type", m.to_bytes(), |e| {
        matches!(e, DecodeError::UnknownType { code: 11, .. })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    m.columns[0].type_id = 0;
    cases.push(("type 0", m.to_bytes(), |e| {
        matches!(e, DecodeError::UnknownType { code: 0, .. })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    m.columns[0].encoding_id = 3;
    cases.push(("unknown encoding", m.to_bytes(), |e| {
        matches!(e, DecodeError::UnknownEncoding { code: 3, .. })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    m.columns[0].encoding_id = 1;
    cases.push(("dict on i64", m.to_bytes(), |e| {
        matches!(e, DecodeError::EncodingNotAllowed { .. })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    m.columns[0].flags = 4;
    cases.push(("reserved column flag", m.to_bytes(), |e| {
        matches!(e, DecodeError::InvalidDescriptor { .. })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    m.columns[0].flags = 2;
    m.columns[0].null_count = 1;
    m.columns[0].buffers.insert(0, vec![0b101]);
    cases.push(("validity without nullable", m.to_bytes(), |e| {
        matches!(e, DecodeError::InvalidDescriptor { .. })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    m.columns[0].flags = 3;
    m.columns[0].null_count = 0;
    m.columns[0].buffers.insert(0, vec![0b111]);
    cases.push(("validity without nulls", m.to_bytes(), |e| {
        matches!(e, DecodeError::InvalidDescriptor { .. })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    m.columns[0].flags = 3;
    m.columns[0].null_count = 2;
    m.columns[0].buffers.insert(0, vec![0b101]);
    cases.push(("null count disagrees with bitmap", m.to_bytes(), |e| {
        matches!(e, DecodeError::NullCount { .. })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    m.columns[0].flags = 3;
    m.columns[0].null_count = 4;
    m.columns[0].buffers.insert(0, vec![0b000]);
    cases.push(("null count above rows", m.to_bytes(), |e| {
        matches!(e, DecodeError::NullCount { .. })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    m.columns[0].flags = 3;
    m.columns[0].null_count = 1;
    m.columns[0].buffers.insert(0, vec![0b1000_0101]);
    cases.push(("validity padding bits", m.to_bytes(), |e| {
        matches!(e, DecodeError::NonZeroPadding { .. })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    m.columns[0].param = 1;
    cases.push(("param outside dict", m.to_bytes(), |e| {
        matches!(e, DecodeError::InvalidDescriptor { .. })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(2)]);
    cases.push(("short values buffer", m.to_bytes(), |e| {
        matches!(e, DecodeError::BufferLength { .. })
    }));
    m.columns[0].lens = Some(vec![u64::MAX]);
    cases.push(("absurd buffer length", m.to_bytes(), |e| {
        matches!(e, DecodeError::BufferLength { .. })
    }));
    let mut m = RawMessage::new(u32::MAX, vec![i64_col(3)]);
    m.columns[0].lens = Some(vec![8 * u64::from(u32::MAX)]);
    // Declared buffers longer than the input: reported as truncation.
    cases.push(("absurd row count", m.to_bytes(), |e| {
        matches!(e, DecodeError::Truncated { .. })
    }));
    let mut m = RawMessage::new(3, vec![i64_col(3)]);
    m.columns[0].buffers[0].push(0);
    m.columns[0].lens = Some(vec![24]);
    cases.push(("slack after buffers", m.to_bytes(), |e| {
        matches!(e, DecodeError::BufferTotal { .. })
    }));
    let m = RawMessage::new(3, vec![RawColumn::new("b", 1, 0, vec![vec![0b1111_1000]])]);
    cases.push(("bool padding bits", m.to_bytes(), |e| {
        matches!(e, DecodeError::NonZeroPadding { .. })
    }));

    // Var-length plain.
    let var = |offsets: &[u32], data: &[u8]| {
        RawMessage::new(
            (offsets.len() - 1) as u32,
            vec![RawColumn::new(
                "s",
                6,
                0,
                vec![u32s(offsets), data.to_vec()],
            )],
        )
        .to_bytes()
    };
    cases.push(("offsets not from 0", var(&[1, 2, 3], b"abc"), |e| {
        matches!(e, DecodeError::InvalidOffsets { .. })
    }));
    cases.push(("offsets decrease", var(&[0, 2, 1, 3], b"abc"), |e| {
        matches!(e, DecodeError::InvalidOffsets { .. })
    }));
    cases.push(("offsets short of data", var(&[0, 1, 2], b"abc"), |e| {
        matches!(e, DecodeError::InvalidOffsets { .. })
    }));
    cases.push(("invalid utf8", var(&[0, 1, 2], b"a\xff"), |e| {
        matches!(e, DecodeError::InvalidUtf8 { .. })
    }));
    cases.push((
        "offset inside a character",
        var(&[0, 1, 3], "é!".as_bytes()),
        |e| matches!(e, DecodeError::InvalidOffsets { .. }),
    ));
    let mut m = RawMessage::new(
        2,
        vec![RawColumn::new(
            "s",
            6,
            0,
            vec![u32s(&[0, 1, 2]), b"ab".to_vec()],
        )],
    );
    m.columns[0].lens = Some(vec![8, 2]);
    cases.push(("offsets buffer too short", m.to_bytes(), |e| {
        matches!(e, DecodeError::BufferLength { .. })
    }));

    // Dictionaries.
    let dict = |c: RawColumn| RawMessage::new(3, vec![c]).to_bytes();
    cases.push((
        "dict index out of range",
        dict(dict_col(&["a", "b"], vec![0, 1, 2])),
        |e| matches!(e, DecodeError::DictIndex { .. }),
    ));
    cases.push((
        "dict not first-appearance",
        dict(dict_col(&["a", "b"], vec![1, 0, 0])),
        |e| matches!(e, DecodeError::DictIndex { .. }),
    ));
    cases.push((
        "dict entry unused",
        dict(dict_col(&["a", "b"], vec![0, 0, 0])),
        |e| matches!(e, DecodeError::DictUnused { .. }),
    ));
    cases.push((
        "dict duplicate",
        dict(dict_col(&["a", "a"], vec![0, 1, 0])),
        |e| matches!(e, DecodeError::DictDuplicate { .. }),
    ));
    let mut c = dict_col(&["a", "b"], vec![0, 0, 1, 0, 1, 0]);
    c.param = 2;
    cases.push(("dict width not minimal", dict(c), |e| {
        matches!(e, DecodeError::InvalidDescriptor { .. })
    }));
    let mut c = dict_col(&["a"], vec![0, 1, 0]);
    c.flags = 3;
    c.null_count = 1;
    c.buffers.insert(0, vec![0b101]);
    cases.push(("dict null row with index", dict(c), |e| {
        matches!(e, DecodeError::DictIndex { .. })
    }));
    let c = dict_col(&["a", "b", "c", "d"], vec![0, 1, 2]);
    cases.push(("dict larger than rows", dict(c), |e| {
        matches!(e, DecodeError::BufferLength { .. })
    }));
    let mut c = dict_col(&["a"], vec![0, 0, 0]);
    c.buffers[0] = vec![0, 0];
    cases.push(("dict offsets not multiple of 4", dict(c), |e| {
        matches!(e, DecodeError::BufferLength { .. })
    }));
    let mut c = dict_col(&["a"], vec![0, 0, 0]);
    c.buffers[1] = vec![0xC3];
    cases.push(("dict data not utf8", dict(c), |e| {
        matches!(e, DecodeError::InvalidUtf8 { .. })
    }));

    // Delta varints.
    let delta = |rows: u32, bytes: Vec<u8>, nulls: bool| {
        let mut c = RawColumn::new("t", 9, 2, vec![bytes]);
        if nulls {
            c.flags = 3;
            c.null_count = 1;
            c.buffers.insert(0, vec![0b10]);
        }
        RawMessage::new(rows, vec![c]).to_bytes()
    };
    assert!(decode(&delta(2, vec![2, 2], false)).is_ok());
    cases.push(("delta with nulls", delta(2, vec![2, 2], true), |e| {
        matches!(e, DecodeError::InvalidDescriptor { .. })
    }));
    cases.push((
        "delta overlong varint",
        delta(2, vec![0x82, 0x00, 2], false),
        |e| matches!(e, DecodeError::Varint { .. }),
    ));
    cases.push((
        "delta truncated varint",
        delta(2, vec![2, 0x82], false),
        |e| matches!(e, DecodeError::Varint { .. }),
    ));
    let mut overflow = vec![0xFF; 9];
    overflow.push(0x02);
    overflow.push(0);
    cases.push(("delta varint overflow", delta(2, overflow, false), |e| {
        matches!(e, DecodeError::Varint { .. })
    }));
    cases.push((
        "delta bytes left over",
        delta(2, vec![2, 2, 2], false),
        |e| matches!(e, DecodeError::Varint { .. }),
    ));
    cases.push(
        ("delta buffer too short", delta(3, vec![2, 2], false), |e| {
            matches!(e, DecodeError::BufferLength { .. })
        }),
    );

    for (i, (name, bytes, check)) in cases.iter().enumerate() {
        match decode(bytes) {
            Ok(b) => panic!("case {i} ({name}): decoded {b:?}"),
            Err(e) => assert!(check(&e), "case {i} ({name}): unexpected error {e:?}"),
        }
        // Also with a checksum: the structural error must still surface.
        let mut with_sum = bytes.clone();
        if with_sum.starts_with(b"MATHLDBT") && with_sum.len() >= 20 && with_sum[10] == 0 {
            with_sum[10] = 1;
            let sum = xxhash_rust::xxh3::xxh3_64(&with_sum);
            with_sum.extend_from_slice(&sum.to_le_bytes());
            assert!(
                decode(&with_sum).is_err(),
                "case {i} ({name}) with checksum"
            );
        }
    }
}

#[test]
fn dictionary_expansion_is_bounded_before_allocating() {
    // One 1,000-byte entry referenced by 100,000 one-byte indices: 100 KB of
    // input that would expand to 100 MB.
    let big = "x".repeat(1000);
    let rows = 100_000;
    let mut c = dict_col(&[big.as_str()], vec![0; rows]);
    c.param = 1;
    let bytes = RawMessage::new(rows as u32, vec![c]).to_bytes();
    let mut strict = Decoder::new(DecodeOptions::default().with_max_decoded_bytes(10 << 20));
    assert!(matches!(
        strict.decode(&bytes),
        Err(DecodeError::LimitExceeded { .. })
    ));
    let mut generous = Decoder::new(DecodeOptions::default().with_max_decoded_bytes(200 << 20));
    assert_eq!(generous.decode(&bytes).unwrap().num_rows(), rows);
}

#[test]
fn decompression_bombs_are_refused() {
    // 8 MiB of a highly compressible message.
    let batch = mathldbt::ColumnarBatch::try_new(
        mathldbt::Schema::new(vec![mathldbt::Field::new(
            "z",
            mathldbt::DataType::I64,
            false,
        )]),
        vec![mathldbt::Column::new(mathldbt::ColumnValues::I64(
            vec![0; 1 << 20],
        ))],
    )
    .unwrap();
    let mut encoder = Encoder::new(EncodeOptions::plain());
    let raw_len = encoder.encode(&batch).unwrap().len();
    let mut decoder = Decoder::new(DecodeOptions::default());
    for c in [Compression::ZSTD_DEFAULT, Compression::GZIP_DEFAULT] {
        let wire = encoder.encode_compressed(&batch, c).unwrap().to_vec();
        assert!(wire.len() < raw_len / 100, "{c:?}: {}", wire.len());
        assert!(matches!(
            decoder.decode_compressed(&wire, 1 << 20),
            Err(DecodeError::UncompressedTooLarge { .. })
        ));
        assert_eq!(decoder.decode_compressed(&wire, raw_len).unwrap(), batch);
        // Trailing bytes after the frame / member.
        let mut trailing = wire.clone();
        trailing.push(0);
        assert!(
            decoder.decode_compressed(&trailing, raw_len).is_err(),
            "{c:?}"
        );
        // Truncated frames.
        for cut in [1, 4, 10, wire.len() / 2, wire.len() - 1] {
            assert!(
                decoder.decode_compressed(&wire[..cut], raw_len).is_err(),
                "{c:?} {cut}"
            );
        }
    }
    // A raw message over the limit.
    let raw = encoder.encode(&batch).unwrap().to_vec();
    assert!(matches!(
        decoder.decode_compressed(&raw, raw.len() - 1),
        Err(DecodeError::UncompressedTooLarge { .. })
    ));
    // Neither raw nor a known compressor.
    assert!(matches!(
        decoder.decode_compressed(b"PK\x03\x04", 100),
        Err(DecodeError::UnknownWireFormat { .. })
    ));
}

#[test]
fn zstd_frame_without_content_size_is_bounded() {
    use std::io::Write;
    let raw = encode(&mathldbt::fixture::bars(2000), &EncodeOptions::plain()).unwrap();
    // A streaming compressor that does not record the size.
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    enc.include_contentsize(false).unwrap();
    enc.write_all(&raw).unwrap();
    let wire = enc.finish().unwrap();
    let mut decoder = Decoder::new(DecodeOptions::default());
    assert_eq!(
        decoder.decode_compressed(&wire, raw.len()).unwrap(),
        mathldbt::fixture::bars(2000)
    );
    assert!(matches!(
        decoder.decode_compressed(&wire, raw.len() - 1),
        Err(DecodeError::UncompressedTooLarge { .. })
    ));
}

#[test]
fn corruption_is_reported_as_a_checksum_mismatch() {
    let bytes = encode(
        &all_types(),
        &EncodeOptions::dict_delta().with_checksum(true),
    )
    .unwrap();
    // Byte 22 is in the first descriptor's name; byte 40-ish is a type or
    // encoding code, the last buffer bytes are values.
    for i in [8, 22, 24, 25, 26, 40, bytes.len() - 12] {
        let mut b = bytes.clone();
        b[i] ^= 0x41;
        match decode(&b) {
            Err(DecodeError::ChecksumMismatch { .. } | DecodeError::UnsupportedVersion { .. }) => {}
            other => panic!("byte {i}: {other:?}"),
        }
    }
    // Missing bytes are reported as truncation, not as a mismatch.
    assert!(matches!(
        decode(&bytes[..bytes.len() - 20]),
        Err(DecodeError::Truncated { .. })
    ));
}

#[test]
fn limits_at_the_extremes_do_not_overflow() {
    let batch = mathldbt::fixture::bars(100);
    let mut encoder = Encoder::new(EncodeOptions::dict_delta());
    let mut decoder = Decoder::new(DecodeOptions::default().with_max_decoded_bytes(u64::MAX));
    for c in [
        Compression::None,
        Compression::ZSTD_DEFAULT,
        Compression::GZIP_DEFAULT,
    ] {
        let wire = encoder.encode_compressed(&batch, c).unwrap().to_vec();
        assert_eq!(
            decoder.decode_compressed(&wire, usize::MAX).unwrap(),
            batch,
            "{c:?}"
        );
        assert!(decoder.decode_compressed(&wire, 0).is_err(), "{c:?}");
    }
    let mut none = Decoder::new(DecodeOptions::default().with_max_decoded_bytes(0));
    assert!(matches!(
        none.decode(encoder.encode(&batch).unwrap()),
        Err(DecodeError::LimitExceeded { .. })
    ));
}
