//! Pickle bytes captured from CPython 3.11 (`pickle.dumps(obj, 5)` unless noted), and hostile
//! input for the decoder.

use super::{decode, encode};
use crate::error::Error;
use crate::serial::{Limits, Value};

fn dec(b: &[u8]) -> crate::error::Result<Value> {
    decode(b, &mut Limits::default().budget(b.len()))
}

fn int(i: i128) -> Value {
    Value::Int(i)
}

fn s(x: &str) -> Value {
    Value::Str(x.to_owned())
}

/// (value, CPython's bytes): the encoder must write exactly these, the decoder read them back.
fn captured() -> Vec<(Value, &'static [u8])> {
    vec![
        (Value::None, b"\x80\x05N."),
        (s("ab"), b"\x80\x05\x95\x06\x00\x00\x00\x00\x00\x00\x00\x8c\x02ab\x94."),
        (int(-1), b"\x80\x05\x95\x06\x00\x00\x00\x00\x00\x00\x00J\xff\xff\xff\xff."),
        (int(255), b"\x80\x05K\xff."),
        (int(256), b"\x80\x05\x95\x04\x00\x00\x00\x00\x00\x00\x00M\x00\x01."),
        (int(65536), b"\x80\x05\x95\x06\x00\x00\x00\x00\x00\x00\x00J\x00\x00\x01\x00."),
        (int(-(1 << 31)), b"\x80\x05\x95\x06\x00\x00\x00\x00\x00\x00\x00J\x00\x00\x00\x80."),
        (int(1 << 31), b"\x80\x05\x95\x08\x00\x00\x00\x00\x00\x00\x00\x8a\x05\x00\x00\x00\x80\x00."),
        (int(-(1 << 31) - 1), b"\x80\x05\x95\x08\x00\x00\x00\x00\x00\x00\x00\x8a\x05\xff\xff\xff\x7f\xff."),
        (int(1 << 63), b"\x80\x05\x95\x0c\x00\x00\x00\x00\x00\x00\x00\x8a\t\x00\x00\x00\x00\x00\x00\x00\x80\x00."),
        (int(-(1 << 63)), b"\x80\x05\x95\x0b\x00\x00\x00\x00\x00\x00\x00\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80."),
        (int(1 << 64), b"\x80\x05\x95\x0c\x00\x00\x00\x00\x00\x00\x00\x8a\t\x00\x00\x00\x00\x00\x00\x00\x00\x01."),
        (Value::Tuple(vec![int(1)]), b"\x80\x05\x95\x05\x00\x00\x00\x00\x00\x00\x00K\x01\x85\x94."),
        (
            Value::Tuple(vec![int(1), int(2), int(3), int(4)]),
            b"\x80\x05\x95\x0c\x00\x00\x00\x00\x00\x00\x00(K\x01K\x02K\x03K\x04t\x94.",
        ),
        (Value::List(vec![int(1)]), b"\x80\x05\x95\x06\x00\x00\x00\x00\x00\x00\x00]\x94K\x01a."),
        (
            Value::List(vec![int(1), int(2)]),
            b"\x80\x05\x95\t\x00\x00\x00\x00\x00\x00\x00]\x94(K\x01K\x02e.",
        ),
        (
            Value::Dict(vec![(s("a"), int(1))]),
            b"\x80\x05\x95\n\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x01a\x94K\x01s.",
        ),
        (
            Value::Dict(vec![(s("a"), int(1)), (s("b"), int(2))]),
            b"\x80\x05\x95\x11\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01a\x94K\x01\x8c\x01b\x94K\x02u.",
        ),
        (Value::Bytes(vec![]), b"\x80\x05\x95\x04\x00\x00\x00\x00\x00\x00\x00C\x00\x94."),
        (Value::Float(1.5), b"\x80\x05\x95\n\x00\x00\x00\x00\x00\x00\x00G?\xf8\x00\x00\x00\x00\x00\x00."),
        (Value::List(vec![]), b"\x80\x05]\x94."),
        (Value::Dict(vec![]), b"\x80\x05}\x94."),
        (Value::Tuple(vec![]), b"\x80\x05)."),
        // CPython shares its one-character and empty str/bytes singletons through the memo.
        (
            Value::Tuple(vec![s("a"), s("a")]),
            b"\x80\x05\x95\t\x00\x00\x00\x00\x00\x00\x00\x8c\x01a\x94h\x00\x86\x94.",
        ),
        (
            Value::Tuple(vec![
                Value::Bytes(b"x".to_vec()),
                Value::Bytes(b"x".to_vec()),
                Value::Bytes(vec![]),
                Value::Bytes(vec![]),
            ]),
            b"\x80\x05\x95\x0f\x00\x00\x00\x00\x00\x00\x00(C\x01x\x94h\x00C\x00\x94h\x01t\x94.",
        ),
        (
            Value::List(vec![s(""), s("")]),
            b"\x80\x05\x95\n\x00\x00\x00\x00\x00\x00\x00]\x94(\x8c\x00\x94h\x01e.",
        ),
        (
            Value::Dict(vec![(s("k"), Value::Tuple(vec![s("é"), s("é")]))]),
            b"\x80\x05\x95\x11\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x01k\x94\x8c\x02\xc3\xa9\x94h\x02\x86\x94s.",
        ),
        (
            Value::List(vec![int(1), Value::Float(2.5), Value::None, int(1 << 70), int(-(1 << 70))]),
            b"\x80\x05\x95'\x00\x00\x00\x00\x00\x00\x00]\x94(K\x01G@\x04\x00\x00\x00\x00\x00\x00N\
              \x8a\t\x00\x00\x00\x00\x00\x00\x00\x00@\x8a\t\x00\x00\x00\x00\x00\x00\x00\x00\xc0e.",
        ),
    ]
}

#[test]
fn encodes_as_cpython_and_decodes_back() {
    for (i, (v, want)) in captured().into_iter().enumerate() {
        assert_eq!(encode(&v).unwrap(), want, "case {i}: encode {v}");
        assert_eq!(dec(want).unwrap(), v, "case {i}: decode");
    }
}

#[test]
fn lists_and_dicts_go_in_batches_of_1000() {
    let v = Value::List((0..1001).map(int).collect());
    let b = encode(&v).unwrap();
    // CPython: `pickle.dumps(list(range(1001)), 5)[-20:]`.
    assert_eq!(
        b.get(b.len() - 20..).unwrap(),
        b"\x03M\xe4\x03M\xe5\x03M\xe6\x03M\xe7\x03e(M\xe8\x03e."
    );
    assert_eq!(dec(&b).unwrap(), v);
    let d = Value::Dict((0..2500).map(|i| (int(i), int(-i))).collect());
    assert_eq!(dec(&encode(&d).unwrap()).unwrap(), d);
}

/// Python-written pickles the encoder does not produce: memo sharing of one list object,
/// protocol 0 text opcodes, protocol 2 with `BINPUT`.
#[test]
fn decodes_other_python_pickles() {
    let x = Value::List(vec![int(1)]);
    let cases: [(&[u8], Value); 3] = [
        (
            // x = [1]; pickle.dumps(['a', 'a', x, x], 5)
            b"\x80\x05\x95\x12\x00\x00\x00\x00\x00\x00\x00]\x94(\x8c\x01a\x94h\x01]\x94K\x01ah\x02e.",
            Value::List(vec![s("a"), s("a"), x.clone(), x]),
        ),
        (
            // pickle.dumps([1, 2.5, None, 2**70, True], 0)
            b"(lp0\nI1\naF2.5\naNaL1180591620717411303424L\naI01\na.",
            Value::List(vec![int(1), Value::Float(2.5), Value::None, int(1 << 70), Value::Bool(true)]),
        ),
        (
            // pickle.dumps([1, 2.5, None, (1, 2)], 2)
            b"\x80\x02]q\x00(K\x01G@\x04\x00\x00\x00\x00\x00\x00NK\x01K\x02\x86q\x01e.",
            Value::List(vec![int(1), Value::Float(2.5), Value::None, Value::Tuple(vec![int(1), int(2)])]),
        ),
    ];
    for (i, (b, want)) in cases.into_iter().enumerate() {
        assert_eq!(dec(b).unwrap(), want, "case {i}");
    }
}

fn decode_reason(b: &[u8]) -> String {
    match dec(b) {
        Err(Error::Decode { serializer, reason }) => {
            assert_eq!(serializer, "pickle");
            reason
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
}

#[test]
fn refuses_what_is_not_a_plain_value() {
    let cases: [(&[u8], &str); 4] = [
        // pickle.dumps({1, 2}, 5)
        (b"\x80\x05\x95\t\x00\x00\x00\x00\x00\x00\x00\x8f\x94(K\x01K\x02\x90.", "set"),
        // pickle.dumps(datetime.date(2020, 1, 2), 5)
        (
            b"\x80\x05\x95 \x00\x00\x00\x00\x00\x00\x00\x8c\x08datetime\x94\x8c\x04date\x94\x93\x94C\x04\x07\xe4\x01\x02\x94\x85\x94R\x94.",
            "global",
        ),
        (b"\x80\x06N.", "protocol 6"),
        (b"\x80\x05\xffN.", "unknown opcode 0xff"),
    ];
    for (i, (b, needle)) in cases.into_iter().enumerate() {
        let r = decode_reason(b);
        assert!(r.contains(needle), "case {i}: {r}");
    }
}

#[test]
fn truncation_at_every_offset_is_an_error() {
    for (i, (_, b)) in captured().into_iter().enumerate() {
        for cut in 0..b.len() {
            assert!(
                matches!(dec(&b[..cut]), Err(Error::Decode { .. })),
                "case {i} cut at {cut}"
            );
        }
    }
}

#[test]
fn corrupted_bytes_never_panic() {
    let mut rng = fastrand::Rng::with_seed(3);
    for (i, (_, b)) in captured().into_iter().enumerate() {
        for _ in 0..300 {
            let mut c = b.to_vec();
            for _ in 0..rng.usize(1..4) {
                let at = rng.usize(..c.len());
                c[at] = rng.u8(..);
            }
            // Any result but a panic, a hang or a huge allocation.
            let _ = dec(&c);
        }
        let _ = i;
    }
}

#[test]
fn absurd_lengths_are_errors_without_allocating() {
    let cases: [&[u8]; 5] = [
        // BINUNICODE8 / BINBYTES8 / BYTEARRAY8 claiming 2^64 - 1 bytes.
        b"\x80\x05\x8d\xff\xff\xff\xff\xff\xff\xff\xffab.",
        b"\x80\x05\x8e\xff\xff\xff\xff\xff\xff\xff\x7fab.",
        b"\x80\x05\x96\x00\x00\x00\x00\x00\x00\x00\x40ab.",
        // BINUNICODE claiming 4 GiB - 1, LONG4 claiming 2 GiB - 1.
        b"\x80\x05X\xff\xff\xff\xffab.",
        b"\x80\x05\x8b\xff\xff\xff\x7f\x01.",
    ];
    for (i, b) in cases.into_iter().enumerate() {
        let r = decode_reason(b);
        assert!(r.contains("truncated"), "case {i}: {r}");
    }
    assert!(decode_reason(b"\x80\x05\x8b\xff\xff\xff\xff.").contains("negative"));
}

#[test]
fn shared_references_are_charged_per_copy() {
    // A list of two references to the previous list, 60 levels deep: 2^60 nodes from about
    // 500 bytes. The decode budget stops it.
    let mut b = b"\x80\x05]\x94".to_vec();
    for level in 0u32..60 {
        b.extend_from_slice(b"(j");
        b.extend_from_slice(&level.to_le_bytes());
        b.push(b'j');
        b.extend_from_slice(&level.to_le_bytes());
        b.extend_from_slice(b"l\x94");
    }
    b.push(b'.');
    assert!(matches!(
        dec(&b),
        Err(Error::DecodeLimit {
            serializer: "pickle",
            ..
        })
    ));
    // The same through DUP: a tuple of the same object twice, 64 times over.
    let mut b = b"\x80\x05N".to_vec();
    for _ in 0..64 {
        b.extend_from_slice(b"2\x86");
    }
    b.push(b'.');
    assert!(matches!(dec(&b), Err(Error::DecodeLimit { .. })));
    // A small budget refuses even a modest expansion.
    let mut b = b"\x80\x05]\x94".to_vec();
    for level in 0u32..12 {
        b.extend_from_slice(b"(j");
        b.extend_from_slice(&level.to_le_bytes());
        b.push(b'j');
        b.extend_from_slice(&level.to_le_bytes());
        b.extend_from_slice(b"l\x94");
    }
    b.push(b'.');
    assert!(dec(&b).is_ok(), "4096 leaves fit the default budget");
    let tight = Limits { max_bytes: 10_000 };
    assert!(matches!(
        decode(&b, &mut tight.budget(b.len())),
        Err(Error::DecodeLimit { limit: 10_000, .. })
    ));
}

#[test]
fn deep_nesting_and_self_reference_are_errors() {
    // 5000 nested lists: refused at depth 256, without overflowing the test thread's stack.
    let mut b = b"\x80\x05".to_vec();
    b.extend(std::iter::repeat_n(b']', 5000));
    b.extend(std::iter::repeat_n(b'a', 4999));
    b.push(b'.');
    assert!(decode_reason(&b).contains("deeper than 256"));
    // 256 levels decode (on the test thread's 2 MiB stack, unoptimized), and encode back.
    let mut b = b"\x80\x05".to_vec();
    b.extend(std::iter::repeat_n(b']', 257));
    b.extend(std::iter::repeat_n(b'a', 256));
    b.push(b'.');
    // Half the default test stack, to keep a margin.
    let deep = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let v = dec(&b).unwrap();
            let deeper = Value::List(vec![v.clone()]);
            assert!(matches!(encode(&deeper), Err(Error::Encode { .. })));
            assert!(v.to_repr().starts_with("[[[[") && v.to_plain_json().is_some());
            dec(&encode(&v).unwrap()).unwrap() == v
        })
        .unwrap();
    assert!(deep.join().unwrap(), "deep value round-trips");
    // l = []; l.append(l); pickle.dumps(l, 5)
    let r = decode_reason(b"\x80\x05\x95\x06\x00\x00\x00\x00\x00\x00\x00]\x94h\x00a.");
    assert!(r.contains("holds itself"), "{r}");
    // Encoding refuses what CPython cannot load back.
    let deep = (0..300).fold(Value::None, |v, _| Value::List(vec![v]));
    assert!(matches!(encode(&deep), Err(Error::Encode { .. })));
    let unhashable = Value::Dict(vec![(Value::List(vec![]), Value::None)]);
    assert!(matches!(encode(&unhashable), Err(Error::Encode { .. })));
}

#[test]
fn stack_and_memo_errors() {
    let cases: [(&[u8], &str); 6] = [
        (b"\x80\x05.", "underflow"),
        (b"\x80\x05K\x01K\x02a.", "not a list"),
        (b"\x80\x05h\x07.", "never stored"),
        (b"\x80\x05(K\x01K\x02K\x03d.", "odd number"),
        (b"\x80\x05t.", "MARK"),
        (b"\x80\x05N(a.", "underflow"),
    ];
    for (i, (b, needle)) in cases.into_iter().enumerate() {
        let r = decode_reason(b);
        assert!(r.contains(needle), "case {i}: {r}");
    }
    // LONG1 wider than 128 bits: fine when the high bytes only extend the sign.
    let mut b = b"\x80\x05\x8a\x12".to_vec();
    b.extend_from_slice(&[0xff; 18]);
    b.push(b'.');
    assert_eq!(dec(&b).unwrap(), int(-1));
    let mut b = b"\x80\x05\x8a\x12".to_vec();
    b.extend_from_slice(&[0; 17]);
    b.extend_from_slice(&[1, b'.']);
    assert!(decode_reason(&b).contains("128 bits"));
}
