//! Unit tests of the serializer layer: pinned codes, byte layouts captured from Python, and
//! hostile input for every decoder.

use super::*;

#[test]
fn codes_are_pinned() {
    let pinned = [
        (Serializer::None, 1),
        (Serializer::Str, 2),
        (Serializer::Pickle, 3),
        (Serializer::Json, 4),
        (Serializer::Orjson, 5),
        (Serializer::Uint8, 14),
        (Serializer::PickleZstd, 16),
        (Serializer::OrjsonZstd, 17),
        (Serializer::Zstd, 27),
        (Serializer::Msgpack, 30),
        (Serializer::MsgpackZstd, 31),
        (Serializer::Bytes, 32),
    ];
    for (i, (s, c)) in pinned.into_iter().enumerate() {
        assert_eq!(s.code(), c, "case {i}");
        assert_eq!(Serializer::from_code(c), Some(s), "case {i}");
    }
    for (i, s) in Serializer::ALL.iter().enumerate() {
        assert_eq!(usize::from(s.code()), i);
        assert_eq!(Serializer::from_name(s.name()), Some(*s));
    }
    assert_eq!(Serializer::from_code(33), None);
}

#[test]
fn int_codecs() {
    assert_eq!(
        Serializer::Int2.decode(&[0xfe, 0xff]).unwrap(),
        Value::Int(-2)
    );
    assert_eq!(
        Serializer::Uint2.decode(&[0xfe, 0xff]).unwrap(),
        Value::Int(65534)
    );
    assert_eq!(
        Serializer::Int5.decode(&[0, 0, 0, 0, 0x80]).unwrap(),
        Value::Int(-(1 << 39))
    );
    assert_eq!(
        Serializer::Uint8.decode(&[0xff; 8]).unwrap(),
        Value::Int(i128::from(u64::MAX))
    );
    assert!(matches!(
        Serializer::Int4.decode(&[1]),
        Err(Error::Decode { .. })
    ));
    assert_eq!(
        Serializer::Int2.encode(&Value::Int(-2)).unwrap(),
        vec![0xfe, 0xff]
    );
    assert!(matches!(
        Serializer::Uint1.encode(&Value::Int(256)),
        Err(Error::Encode { .. })
    ));
    assert!(matches!(
        Serializer::Uint1.encode(&Value::Str("1".into())),
        Err(Error::Encode { .. })
    ));
}
