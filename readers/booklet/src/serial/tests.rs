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

fn s(x: &str) -> Value {
    Value::Str(x.to_owned())
}

fn sample() -> Value {
    Value::Dict(vec![
        (s("int"), Value::Int(-200)),
        (s("big"), Value::Int(1 << 40)),
        (s("float"), Value::Float(0.1)),
        (s("text"), s("é ✓ \u{1f600}")),
        (
            s("list"),
            Value::List(vec![Value::None, Value::Bool(true), s("")]),
        ),
        (
            s("nested"),
            Value::Dict(vec![(s("x"), Value::List(vec![]))]),
        ),
    ])
}

/// Every typed serializer decodes what it encodes; tuples come back as lists except in
/// pickle, as in Python.
#[test]
fn typed_round_trips() {
    let v = sample();
    let with_bytes = Value::List(vec![Value::Bytes(vec![0, 255]), Value::Tuple(vec![s("t")])]);
    use Serializer as S;
    for ser in [
        S::Json,
        S::Orjson,
        S::OrjsonZstd,
        S::Pickle,
        S::PickleZstd,
        S::Msgpack,
        S::MsgpackZstd,
    ] {
        let b = ser.encode(&v).unwrap();
        assert_eq!(ser.decode(&b).unwrap(), v, "{}", ser.name());
    }
    for ser in [S::Pickle, S::PickleZstd] {
        let b = ser.encode(&with_bytes).unwrap();
        assert_eq!(ser.decode(&b).unwrap(), with_bytes, "{}", ser.name());
    }
    let as_lists = Value::List(vec![Value::Bytes(vec![0, 255]), Value::List(vec![s("t")])]);
    for ser in [S::Msgpack, S::MsgpackZstd] {
        let b = ser.encode(&with_bytes).unwrap();
        assert_eq!(ser.decode(&b).unwrap(), as_lists, "{}", ser.name());
    }
    for ser in [S::Json, S::Orjson] {
        assert!(matches!(ser.encode(&with_bytes), Err(Error::Encode { .. })));
    }
    let raw = Value::Bytes(b"hello hello hello".to_vec());
    for ser in [S::None, S::Bytes, S::Zstd] {
        let b = ser.encode(&raw).unwrap();
        assert_eq!(ser.decode(&b).unwrap(), raw, "{}", ser.name());
    }
}

/// Bytes captured from Python: `msgpack.dumps([200, -33, -200, 2**40, 1.0, 'x'*40, b'ab',
/// (1, 2)])` (msgpack 1.2.4) and `zstandard.compress(b'hello hello hello', 1)` (zstandard
/// 0.25, libzstd 1.5.7, as our zstd-sys).
#[test]
fn python_bytes() {
    let mut mp = b"\x98\xcc\xc8\xd0\xdf\xd1\xff8\xcf\x00\x00\x01\x00\x00\x00\x00\x00\xcb?\xf0\x00\x00\x00\x00\x00\x00\xd9(".to_vec();
    mp.extend_from_slice(&[b'x'; 40]);
    mp.extend_from_slice(b"\xc4\x02ab\x92\x01\x02");
    let v = Value::List(vec![
        Value::Int(200),
        Value::Int(-33),
        Value::Int(-200),
        Value::Int(1 << 40),
        Value::Float(1.0),
        s(&"x".repeat(40)),
        Value::Bytes(b"ab".to_vec()),
        Value::Tuple(vec![Value::Int(1), Value::Int(2)]),
    ]);
    assert_eq!(Serializer::Msgpack.encode(&v).unwrap(), mp);
    let z = Serializer::Zstd
        .encode(&Value::Bytes(b"hello hello hello".to_vec()))
        .unwrap();
    let hex: String = z.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, "28b52ffd201189000068656c6c6f2068656c6c6f2068656c6c6f");
}

fn decode_err(ser: Serializer, b: &[u8]) -> String {
    match ser.decode(b) {
        Err(Error::Decode { reason, .. }) => reason,
        other => panic!("{}: expected a decode error, got {other:?}", ser.name()),
    }
}

#[test]
fn msgpack_hostile_input() {
    let m = Serializer::Msgpack;
    // Length fields far beyond the input: array32, map32, bin32, str32, ext32.
    for (i, b) in [
        &b"\xdd\xff\xff\xff\xff\x01"[..],
        b"\xdf\xff\xff\xff\xff\xa1k\x01",
        b"\xc6\xff\xff\xff\xffab",
        b"\xdb\xff\xff\xff\xffab",
        b"\xc9\xff\xff\xff\xff\x01ab",
    ]
    .into_iter()
    .enumerate()
    {
        let _ = decode_err(m, b);
        let _ = i;
    }
    // Nesting beyond the cap, on the test thread's stack.
    let deep = vec![0x91u8; 10_000];
    let _ = decode_err(m, &deep);
    assert!(decode_err(m, b"\x01\x02").contains("extra data"));
    assert!(decode_err(m, b"\x81\x01\x02").contains("neither str nor bytes"));
    assert!(decode_err(m, b"\xd6\xff\x00\x00\x00\x00").contains("extension type -1"));
    assert!(decode_err(m, b"\xa2\xff\xfe").contains("UTF-8"));
    assert!(matches!(
        m.encode(&Value::Dict(vec![(Value::Int(1), Value::None)])),
        Err(Error::Encode { .. })
    ));
    assert!(matches!(
        m.encode(&Value::Int(1 << 64)),
        Err(Error::Encode { .. })
    ));
    // Truncation at every offset, and random corruption, of a real value.
    let good = m.encode(&sample()).unwrap();
    for cut in 0..good.len() {
        assert!(m.decode(&good[..cut]).is_err(), "cut at {cut}");
    }
    let mut rng = fastrand::Rng::with_seed(7);
    for _ in 0..2000 {
        let mut c = good.clone();
        let at = rng.usize(..c.len());
        c[at] = rng.u8(..);
        let _ = m.decode(&c);
    }
}

#[test]
fn zstd_hostile_input() {
    let tight = Limits { max_bytes: 1 << 20 };
    // 64 MiB of zeros compress to a few KiB: a frame that declares its size is refused before
    // anything is allocated...
    let zeros = vec![0u8; 64 << 20];
    let bomb = zstd::bulk::compress(&zeros, 1).unwrap();
    assert!(bomb.len() < 64 << 10);
    for ser in [
        Serializer::Zstd,
        Serializer::PickleZstd,
        Serializer::MsgpackZstd,
    ] {
        assert!(
            matches!(
                ser.decode_with(&bomb, &tight),
                Err(Error::DecodeLimit { limit, .. }) if limit == 1 << 20
            ),
            "{}",
            ser.name()
        );
    }
    // ...and one that does not (a streaming frame) is cut off at the budget.
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
    std::io::Write::write_all(&mut enc, &zeros[..8 << 20]).unwrap();
    let streamed = enc.finish().unwrap();
    assert_eq!(
        zstd::zstd_safe::get_frame_content_size(&streamed).ok(),
        Some(None),
        "a frame without a content size"
    );
    assert!(matches!(
        Serializer::Zstd.decode_with(&streamed, &tight),
        Err(Error::DecodeLimit { .. })
    ));
    assert_eq!(
        Serializer::Zstd.decode(&streamed).unwrap(),
        Value::Bytes(zeros[..8 << 20].to_vec())
    );
    // Corruption and truncation are decode errors.
    let good = Serializer::PickleZstd.encode(&sample()).unwrap();
    for cut in 0..good.len() {
        assert!(
            Serializer::PickleZstd.decode(&good[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    let _ = decode_err(Serializer::Zstd, b"not a zstd frame");
}

#[test]
fn numpy_arrays_are_lists_of_integers() {
    use Serializer as S;
    let ints = |v: &[i128]| Value::List(v.iter().map(|&i| Value::Int(i)).collect());
    for (ser, w) in [
        (S::NumpyInt1, 1),
        (S::NumpyInt2, 2),
        (S::NumpyInt4, 4),
        (S::NumpyInt8, 8),
        (S::NumpyInt2Zstd, 2),
        (S::NumpyInt4Zstd, 4),
        (S::NumpyInt8Zstd, 8),
    ] {
        assert!(ser.is_supported(), "{}", ser.name());
        let (lo, hi) = (-(1i128 << (8 * w - 1)), (1i128 << (8 * w - 1)) - 1);
        let v = ints(&[0, 1, -1, lo, hi, 7]);
        let bytes = ser.encode(&v).unwrap();
        assert_eq!(ser.decode(&bytes).unwrap(), v, "{}", ser.name());
        assert_eq!(
            ser.decode(&ser.encode(&ints(&[])).unwrap()).unwrap(),
            ints(&[])
        );
        if !ser.name().ends_with("zstd") {
            // Little-endian, one after the other: -1 is all ones.
            assert_eq!(bytes.len(), 6 * w);
            assert!(bytes[2 * w..3 * w].iter().all(|&b| b == 0xff));
            // Not a whole number of integers.
            if w > 1 {
                assert!(decode_err(ser, &bytes[..w + 1]).contains("not whole"));
            }
        }
        // Beyond the width (numpy would wrap it), or not integers: refused.
        assert!(matches!(
            ser.encode(&ints(&[hi + 1])),
            Err(Error::Encode { .. })
        ));
        assert!(matches!(
            ser.encode(&Value::Int(1)),
            Err(Error::Encode { .. })
        ));
        let floats = Value::List(vec![Value::Float(1.5)]);
        assert!(matches!(ser.encode(&floats), Err(Error::Encode { .. })));
    }
    // A tuple encodes as the list it decodes to.
    let t = Value::Tuple(vec![Value::Int(3), Value::Int(-4)]);
    assert_eq!(
        S::NumpyInt4
            .decode(&S::NumpyInt4.encode(&t).unwrap())
            .unwrap(),
        ints(&[3, -4])
    );
}

#[test]
fn unsupported_serializers_are_named() {
    for ser in [
        Serializer::Custom,
        Serializer::PdZstd,
        Serializer::GpdZstd,
        Serializer::Wkb,
        Serializer::WkbZstd,
    ] {
        assert!(!ser.is_supported());
        let e = ser.decode(b"\x00").unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(e, Error::UnsupportedSerializer { code, .. } if code == ser.code()),
            "{msg}"
        );
        assert!(msg.contains(ser.name()), "{msg}");
        assert!(matches!(
            ser.encode(&Value::None),
            Err(Error::UnsupportedSerializer { .. })
        ));
    }
}

/// The property of the `decode_value` fuzz target, on mutations of real encodings: decoding
/// any bytes gives a value or an error, and a decoded value re-encodes stably.
#[test]
fn mutated_encodings_decode_or_fail_cleanly() {
    let mut rng = fastrand::Rng::with_seed(11);
    let limits = Limits { max_bytes: 1 << 20 };
    for ser in Serializer::ALL.into_iter().filter(|s| s.is_supported()) {
        let seed = match ser.encode(&sample()) {
            Ok(b) => b,
            Err(_) => ser
                .encode(&Value::Int(1))
                .or_else(|_| ser.encode(&s("text")))
                .or_else(|_| ser.encode(&Value::Bytes(b"bytes".to_vec())))
                .or_else(|_| ser.encode(&Value::List(vec![Value::Int(1), Value::Int(-100)])))
                .unwrap(),
        };
        for _ in 0..500 {
            let mut b = seed.clone();
            match rng.u32(0..3) {
                0 => {
                    let at = rng.usize(..b.len());
                    b[at] = rng.u8(..);
                }
                1 => b.truncate(rng.usize(..b.len())),
                _ => b.insert(rng.usize(..=b.len()), rng.u8(..)),
            }
            if let Ok(v) = ser.decode_with(&b, &limits)
                && let Ok(again) = ser.encode(&v)
            {
                let back = ser.decode(&again).unwrap();
                assert_eq!(ser.encode(&back).unwrap(), again, "{}", ser.name());
            }
        }
    }
}
