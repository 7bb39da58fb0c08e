//! Entries streamed object by object, walked as their [`Shape`] says: strings, nested
//! vectors, packed reals, the members of split collections.
//!
//! Every count read from the file is checked against the bytes left in the entry before
//! anything is allocated for it, and every entry must be consumed exactly: a wrong shape or a
//! corrupted basket is an error naming the branch and the entry, never a panic or a guess.

use super::framing::{Bytes, entry_error, headed_body, split_header, split_string};
use super::specialized;
use crate::basket::BasketData;
use crate::column::{FieldValues, Lists, Strings, Values};
use crate::error::Result;
use crate::layout::{Real, Shape};
use crate::types::LeafType;

/// `TObject::kIsReferenced`: a process id follows `fBits`.
const IS_REFERENCED: u32 = 1 << 4;

/// No items of `shape` (the container its items are appended to).
pub(crate) fn empty(shape: &Shape) -> Values {
    match shape {
        Shape::Num(t) => Values::empty(*t),
        Shape::Real(r) => Values::empty(r.leaf_type()),
        Shape::Text => Values::Text(Strings::default()),
        Shape::List(inner) | Shape::Repeated(inner) => Values::Lists(Box::new(Lists {
            offsets: vec![0],
            items: empty(inner),
        })),
        Shape::Headed(inner) => empty(inner),
        Shape::Array(_, inner) => Values::Lists(Box::new(Lists {
            offsets: vec![0],
            items: empty(inner),
        })),
        Shape::Record { members, .. } => {
            let mut fields = Vec::new();
            record_fields(members, &mut fields);
            Values::Record(fields)
        }
        // A base is only ever a member of a record, whose fields hold its members.
        Shape::Base(members) => {
            let mut fields = Vec::new();
            record_fields(members, &mut fields);
            Values::Record(fields)
        }
        Shape::ObjectId | Shape::ObjectBits => Values::U32(Vec::new()),
    }
}

/// The fields of a record's members: a base class's members are the record's own.
fn record_fields(members: &[(String, Shape)], fields: &mut Vec<FieldValues>) {
    for (name, shape) in members {
        match shape {
            Shape::Base(base) => record_fields(base, fields),
            _ => fields.push(FieldValues {
                name: name.clone(),
                len: 1,
                values: empty(shape),
            }),
        }
    }
}

/// Reads `members` into `fields` (made by [`record_fields`]); returns the fields used.
fn push_members(
    members: &[(String, Shape)],
    r: &mut Bytes<'_>,
    fields: &mut [FieldValues],
) -> std::result::Result<usize, String> {
    let mut used = 0;
    for (_, member) in members {
        let rest = fields.get_mut(used..).unwrap_or_default();
        match member {
            Shape::Base(base) => {
                let mut sub = Bytes {
                    data: headed_body(r)?,
                };
                used += push_members(base, &mut sub, rest)?;
                if !sub.data.is_empty() {
                    return Err(format!("{} bytes left in a base class", sub.data.len()));
                }
            }
            _ => {
                let field = rest
                    .first_mut()
                    .ok_or_else(|| "fewer fields than members".to_string())?;
                push_item(member, r, &mut field.values)?;
                used += 1;
            }
        }
    }
    Ok(used)
}

/// A collection of objects streamed member-wise (ROOT's default for an STL collection of
/// objects written whole): the element class's version (for version 0 its checksum), the
/// number of elements `n`, then for each member of the class the `n` elements' values of that
/// member. Read into the same columns as a collection streamed object by object.
fn push_member_wise(
    shape: &Shape,
    r: &mut Bytes<'_>,
    out: &mut Values,
) -> std::result::Result<(), String> {
    let not_read = || format!("a member-wise streamed {}", shape.describe());
    let Shape::List(item) = shape else {
        return Err(not_read());
    };
    let record = match &**item {
        Shape::Headed(inner) => &**inner,
        other => other,
    };
    let Shape::Record { members, .. } = record else {
        return Err(not_read());
    };
    if members.iter().any(|(_, m)| matches!(m, Shape::Base(_))) {
        return Err(format!(
            "{}: member-wise collections of classes with base classes are not read yet",
            not_read()
        ));
    }
    if r.take(2)? == [0, 0] {
        r.take(4)?; // a foreign class's checksum
    }
    let n = r.u32()? as usize;
    // At least a byte per item, so that a class of members that may be empty cannot make a
    // count of billions into a loop of billions.
    let per_item: usize = members.iter().map(|(_, m)| m.min_size()).sum();
    if n.saturating_mul(per_item.max(1)) > r.data.len() {
        return Err(format!("a list of {n} items in {} bytes", r.data.len()));
    }
    let Values::Lists(lists) = out else {
        return Err(mismatch(shape));
    };
    let Values::Record(fields) = &mut lists.items else {
        return Err(mismatch(shape));
    };
    if fields.len() != members.len() {
        return Err(mismatch(shape));
    }
    for ((_, member), field) in members.iter().zip(fields.iter_mut()) {
        for _ in 0..n {
            push_item(member, r, &mut field.values)?;
        }
    }
    lists.offsets.push(lists.items.len() as u64);
    Ok(())
}

/// Appends one item per entry of entries `a..b` of `basket` to `out` (made by [`empty`]).
pub(crate) fn decode_entries(
    basket: &BasketData,
    branch: &str,
    shape: &Shape,
    a: usize,
    b: usize,
    out: &mut Values,
) -> Result<()> {
    let bad = |j, d| entry_error(branch, j, d);
    if b > basket.entries() || a > b {
        return Err(bad(a, format!("entries {a}..{b} outside the basket")));
    }
    // The commonest shapes have loops of their own; on anything unusual they stop, and the
    // generic walk starts over (it reads what they do not, or says what is wrong).
    if out.is_empty() {
        match specialized::decode(basket, shape, a, b, out) {
            Some(Ok(())) => return Ok(()),
            Some(Err(_)) => *out = empty(shape),
            None => {}
        }
    }
    generic(basket, branch, shape, a, b, out)
}

/// [`decode_entries`] item by item, as the shape says (`pub(super)` for the tests on ROOT's own
/// baskets, in roots_baskets.rs).
pub(super) fn generic(
    basket: &BasketData,
    branch: &str,
    shape: &Shape,
    a: usize,
    b: usize,
    out: &mut Values,
) -> Result<()> {
    let bad = |j, d| entry_error(branch, j, d);
    let data = basket.data();
    for j in a..b {
        let entry = match basket.offsets() {
            Some(offsets) => {
                let (s, e) = (offsets[j] as usize, offsets[j + 1] as usize);
                data.get(s..e)
                    .ok_or_else(|| bad(j, format!("bytes {s}..{e} outside the basket")))?
            }
            None => {
                let size = shape
                    .fixed_size()
                    .ok_or_else(|| bad(j, "variable-size entries without offsets".into()))?;
                if data.len() != basket.entries() * size {
                    return Err(bad(
                        j,
                        format!(
                            "{} bytes for {} entries of {size}",
                            data.len(),
                            basket.entries()
                        ),
                    ));
                }
                &data[j * size..(j + 1) * size]
            }
        };
        let mut r = Bytes { data: entry };
        match (shape, out as &mut Values) {
            // A char* leaf writes nothing at all for an empty string.
            (Shape::Text, Values::Text(strings)) if entry.is_empty() => strings.push(b""),
            (_, out) => push_item(shape, &mut r, out).map_err(|d| bad(j, d))?,
        }
        if !r.data.is_empty() {
            return Err(bad(
                j,
                format!("{} bytes left after the {}", r.data.len(), shape.describe()),
            ));
        }
    }
    Ok(())
}

fn push_item(
    shape: &Shape,
    r: &mut Bytes<'_>,
    out: &mut Values,
) -> std::result::Result<(), String> {
    match shape {
        Shape::Num(t) => push_number(*t, r.take(t.size())?, out),
        Shape::Real(real) => push_real(*real, r.take(real.size())?, out),
        Shape::Text => {
            let (s, rest) = split_string(r.data)?;
            r.data = rest;
            match out {
                Values::Text(strings) => strings.push(s),
                _ => return Err(mismatch(shape)),
            }
            Ok(())
        }
        Shape::List(inner) => {
            let n = r.u32()? as usize;
            // A count that cannot fit in the bytes left is corruption, not an allocation.
            if n.saturating_mul(inner.min_size()) > r.data.len() {
                return Err(format!("a list of {n} items in {} bytes", r.data.len()));
            }
            let Values::Lists(lists) = out else {
                return Err(mismatch(shape));
            };
            for _ in 0..n {
                push_item(inner, r, &mut lists.items)?;
            }
            lists.offsets.push(lists.items.len() as u64);
            Ok(())
        }
        Shape::Headed(inner) => {
            let (body, member_wise) = split_header(r)?;
            let mut sub = Bytes { data: body };
            if member_wise {
                push_member_wise(inner, &mut sub, out)?;
            } else {
                push_item(inner, &mut sub, out)?;
            }
            if sub.data.is_empty() {
                Ok(())
            } else {
                Err(format!("{} bytes left in an object", sub.data.len()))
            }
        }
        Shape::Array(n, inner) => {
            let Values::Lists(lists) = out else {
                return Err(mismatch(shape));
            };
            for _ in 0..*n {
                push_item(inner, r, &mut lists.items)?;
            }
            lists.offsets.push(lists.items.len() as u64);
            Ok(())
        }
        Shape::Record { members, .. } | Shape::Base(members) => {
            let Values::Record(fields) = out else {
                return Err(mismatch(shape));
            };
            push_members(members, r, fields).map(|_| ())
        }
        Shape::ObjectId => {
            r.take(2)?; // TObject's version
            let id = r.u32()?;
            push_number(LeafType::U32, &id.to_be_bytes(), out)
        }
        Shape::ObjectBits => {
            let bits = r.u32()?;
            if bits & IS_REFERENCED != 0 {
                r.take(2)?; // the process id of the reference
            }
            push_number(LeafType::U32, &bits.to_be_bytes(), out)
        }
        Shape::Repeated(inner) => {
            let Values::Lists(lists) = out else {
                return Err(mismatch(shape));
            };
            // Every item takes at least one byte, so this ends.
            if inner.min_size() == 0 {
                return Err(format!("{} cannot repeat", inner.describe()));
            }
            while !r.data.is_empty() {
                push_item(inner, r, &mut lists.items)?;
            }
            lists.offsets.push(lists.items.len() as u64);
            Ok(())
        }
    }
}

fn mismatch(shape: &Shape) -> String {
    format!("values of another kind than {}", shape.describe())
}

fn push_number(t: LeafType, b: &[u8], out: &mut Values) -> std::result::Result<(), String> {
    macro_rules! push {
        ($v:ident, $ty:ty) => {{
            if let Values::$v(v) = out
                && let Ok(arr) = b.try_into()
            {
                v.push(<$ty>::from_be_bytes(arr));
                return Ok(());
            }
        }};
    }
    match t {
        LeafType::Bool => {
            if let (Values::Bool(v), [x]) = (&mut *out, b) {
                v.push(*x != 0);
                return Ok(());
            }
        }
        LeafType::I8 => push!(I8, i8),
        LeafType::U8 => push!(U8, u8),
        LeafType::I16 => push!(I16, i16),
        LeafType::U16 => push!(U16, u16),
        LeafType::I32 => push!(I32, i32),
        LeafType::U32 => push!(U32, u32),
        LeafType::I64 => push!(I64, i64),
        LeafType::U64 => push!(U64, u64),
        LeafType::F32 => push!(F32, f32),
        LeafType::F64 => push!(F64, f64),
    }
    Err(mismatch(&Shape::Num(t)))
}

fn push_real(real: Real, b: &[u8], out: &mut Values) -> std::result::Result<(), String> {
    let v = real.decode(b);
    match out {
        Values::F64(values) if real.double => values.push(v),
        Values::F32(values) if !real.double => values.push(v as f32),
        _ => return Err(mismatch(&Shape::Real(real))),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::float_cmp)]
    use super::*;

    fn decode(shape: &Shape, entries: &[&[u8]]) -> Result<Values> {
        let basket = BasketData::entries_for_test(entries);
        let mut out = empty(shape);
        decode_entries(&basket, "b", shape, 0, entries.len(), &mut out)?;
        Ok(out)
    }

    fn headed(body: &[u8]) -> Vec<u8> {
        let mut v = (0x4000_0000u32 | (body.len() as u32 + 2))
            .to_be_bytes()
            .to_vec();
        v.extend([0, 10]);
        v.extend(body);
        v
    }

    #[test]
    fn strings_short_and_long() {
        let long = vec![b'y'; 300];
        let mut e2 = vec![255];
        e2.extend(300u32.to_be_bytes());
        e2.extend(&long);
        let out = decode(&Shape::Text, &[b"\x02s1", b"\x00", &e2]).unwrap();
        let Values::Text(s) = out else { panic!() };
        assert_eq!(s.get(0).unwrap(), b"s1");
        assert_eq!(s.get(1).unwrap(), b"");
        assert_eq!(s.get(2).unwrap(), &long[..]);
    }

    #[test]
    fn vectors_of_vectors_and_of_strings() {
        // vector<vector<int>>: [[100], [200, 201]]
        let mut body = 2u32.to_be_bytes().to_vec();
        body.extend(1u32.to_be_bytes());
        body.extend(100i32.to_be_bytes());
        body.extend(2u32.to_be_bytes());
        body.extend(200i32.to_be_bytes());
        body.extend(201i32.to_be_bytes());
        let shape = Shape::headed(Shape::list(Shape::list(Shape::Num(LeafType::I32))));
        let out = decode(&shape, &[&headed(&body), &headed(&0u32.to_be_bytes())]).unwrap();
        let Values::Lists(outer) = out else { panic!() };
        assert_eq!(outer.offsets, vec![0, 2, 2]);
        let Values::Lists(inner) = &outer.items else {
            panic!()
        };
        assert_eq!(inner.offsets, vec![0, 1, 3]);
        assert_eq!(inner.items, Values::I32(vec![100, 200, 201]));

        // A string member of a split collection: a header, then strings to the end.
        let shape = Shape::headed(Shape::repeated(Shape::Text));
        let out = decode(&shape, &[&headed(b"\x02p0\x02p1"), &headed(b"")]).unwrap();
        let Values::Lists(l) = out else { panic!() };
        assert_eq!(l.offsets, vec![0, 2, 2]);
    }

    #[test]
    fn base_class_members_are_the_records_own_fields() {
        let shape = Shape::Record {
            class: "Derived".into(),
            members: vec![
                (
                    "@Base".into(),
                    Shape::Base(vec![("x".into(), Shape::Num(LeafType::I32))]),
                ),
                ("y".into(), Shape::Num(LeafType::F32)),
            ],
        };
        let mut entry = headed(&7i32.to_be_bytes());
        entry.extend(2.5f32.to_be_bytes());
        let Values::Record(fields) = decode(&shape, &[&entry]).unwrap() else {
            panic!()
        };
        assert_eq!(fields.len(), 2);
        assert_eq!(
            (fields[0].name.as_str(), &fields[0].values),
            ("x", &Values::I32(vec![7]))
        );
        assert_eq!(fields[1].values, Values::F32(vec![2.5]));
        // A foreign class (version 0) carries its checksum after the version.
        let mut foreign = (0x4000_0000u32 | 10).to_be_bytes().to_vec();
        foreign.extend([0, 0, 0xde, 0xad, 0xbe, 0xef]);
        foreign.extend(7i32.to_be_bytes());
        foreign.extend(2.5f32.to_be_bytes());
        assert!(decode(&shape, &[&foreign]).is_ok());
        // A collection streamed member-wise (version flag 0x4000) is refused, not misread.
        let mut memberwise = (0x4000_0000u32 | 6).to_be_bytes().to_vec();
        memberwise.extend([0x40, 0x09, 0, 0, 0, 0]);
        let list = Shape::headed(Shape::list(Shape::Num(LeafType::I32)));
        let err = decode(&list, &[&memberwise]).unwrap_err().to_string();
        assert!(err.contains("member-wise"), "{err}");
    }

    /// A `vector<P>` of a two-member class streamed member-wise: the collection's header with
    /// the member-wise bit, the class version (0: a checksum follows), the count, every `x`,
    /// then every `y`; read as the objects. A class with a base class, and a count past the
    /// bytes, are errors.
    #[test]
    fn member_wise_collections_read_as_their_objects() {
        let record = Shape::Record {
            class: "P".into(),
            members: vec![
                ("x".into(), Shape::Num(LeafType::I32)),
                ("y".into(), Shape::Num(LeafType::F32)),
            ],
        };
        let shape = Shape::headed(Shape::list(record));
        let member_wise = |body: &[u8]| {
            let mut v = (0x4000_0000u32 | (body.len() as u32 + 2))
                .to_be_bytes()
                .to_vec();
            v.extend([0x40, 0x0a]);
            v.extend(body);
            v
        };
        let mut body = vec![0, 0, 0xde, 0xad, 0xbe, 0xef];
        body.extend(2u32.to_be_bytes());
        body.extend(7i32.to_be_bytes());
        body.extend(8i32.to_be_bytes());
        body.extend(0.5f32.to_be_bytes());
        body.extend(1.5f32.to_be_bytes());
        let mut empty_body = vec![0, 3];
        empty_body.extend(0u32.to_be_bytes());
        let out = decode(&shape, &[&member_wise(&body), &member_wise(&empty_body)]).unwrap();
        let Values::Lists(lists) = out else { panic!() };
        assert_eq!(lists.offsets, vec![0, 2, 2]);
        let Values::Record(fields) = &lists.items else {
            panic!()
        };
        assert_eq!(fields[0].values, Values::I32(vec![7, 8]));
        assert_eq!(fields[1].values, Values::F32(vec![0.5, 1.5]));

        // A count past the bytes left.
        let mut lying = vec![0, 3];
        lying.extend(1000u32.to_be_bytes());
        lying.extend([0; 8]);
        let err = decode(&shape, &[&member_wise(&lying)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("a list of 1000 items"), "{err}");
        // A class with a base class is refused, naming member-wise.
        let derived = Shape::headed(Shape::list(Shape::Record {
            class: "D".into(),
            members: vec![(
                "@Base".into(),
                Shape::Base(vec![("x".into(), Shape::Num(LeafType::I32))]),
            )],
        }));
        let err = decode(&derived, &[&member_wise(&empty_body)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("member-wise"), "{err}");
    }

    #[test]
    fn absurd_counts_and_leftovers_are_errors() {
        let shape = Shape::headed(Shape::list(Shape::Num(LeafType::F64)));
        // Claims 2^31 doubles in 4 bytes.
        let mut body = 0x8000_0000u32.to_be_bytes().to_vec();
        body.extend([0; 4]);
        let err = decode(&shape, &[&headed(&body)]).unwrap_err().to_string();
        assert!(err.contains("a list of 2147483648 items"), "{err}");
        // One byte too many in the entry.
        let mut entry = headed(&0u32.to_be_bytes());
        entry.push(7);
        let err = decode(&shape, &[&entry]).unwrap_err().to_string();
        assert!(err.contains("1 bytes left"), "{err}");
        // A header without the byte-count flag.
        let err = decode(&shape, &[&[0, 0, 0, 6, 0, 10, 0, 0, 0, 0]])
            .unwrap_err()
            .to_string();
        assert!(err.contains("without a byte count"), "{err}");
        // A string longer than its entry.
        assert!(decode(&Shape::Text, &[b"\x09abc"]).is_err());
    }

    #[test]
    fn every_truncation_and_bit_flip_is_an_error_or_a_value_never_a_panic() {
        let mut body = 3u32.to_be_bytes().to_vec();
        for k in 0..3u8 {
            body.extend([2, b'a', b'0' + k]);
        }
        let good = headed(&body);
        let shape = Shape::headed(Shape::list(Shape::Text));
        assert!(decode(&shape, &[&good]).is_ok());
        for cut in 0..good.len() {
            assert!(decode(&shape, &[&good[..cut]]).is_err(), "cut at {cut}");
        }
        for i in 0..good.len() {
            for bit in 0..8 {
                let mut flipped = good.clone();
                flipped[i] ^= 1 << bit;
                let _ = decode(&shape, &[&flipped]);
            }
        }
    }

    /// The specialized loops on lengths around their fast paths' edges (empty, 16, 32, 33 and
    /// 254 bytes or values, the 4-byte length form from 255): the generic walk's values.
    #[test]
    fn specialized_loops_equal_the_generic_walk_at_every_length() {
        use crate::decode::framing::streamed_string as string;
        let lengths = [0, 1, 15, 16, 17, 31, 32, 33, 100, 254, 255, 256, 300];
        let char_star: Vec<Vec<u8>> = lengths
            .iter()
            .map(|&n| if n == 0 { vec![] } else { string(n) })
            .collect();
        let std_string: Vec<Vec<u8>> = lengths.iter().map(|&n| headed(&string(n))).collect();
        let vector_of_strings: Vec<Vec<u8>> = lengths
            .iter()
            .map(|&n| {
                let mut body = ((n % 4) as u32).to_be_bytes().to_vec();
                (0..n % 4).for_each(|k| body.extend(string(n + k)));
                headed(&body)
            })
            .collect();
        let vector_of_vectors: Vec<Vec<u8>> = lengths
            .iter()
            .map(|&n| {
                let mut body = ((n % 3) as u32).to_be_bytes().to_vec();
                for k in 0..n % 3 {
                    body.extend(((n / 4 + k) as u32).to_be_bytes());
                    (0..n / 4 + k).for_each(|i| body.extend((i as f32 * 0.5).to_be_bytes()));
                }
                headed(&body)
            })
            .collect();
        let cases = [
            (Shape::Text, char_star),
            (Shape::headed(Shape::Text), std_string),
            (Shape::headed(Shape::list(Shape::Text)), vector_of_strings),
            (
                Shape::headed(Shape::list(Shape::list(Shape::Num(LeafType::F32)))),
                vector_of_vectors,
            ),
        ];
        for (shape, entries) in &cases {
            let entries: Vec<&[u8]> = entries.iter().map(Vec::as_slice).collect();
            let basket = BasketData::entries_for_test(&entries);
            let n = entries.len();
            for (a, b) in [(0, n), (0, 1), (2, 9), (n - 1, n)] {
                let mut slow = empty(shape);
                generic(&basket, "b", shape, a, b, &mut slow).unwrap();
                let mut fast = empty(shape);
                let done = specialized::decode(&basket, shape, a, b, &mut fast);
                assert!(matches!(done, Some(Ok(()))), "{shape:?} {a}..{b}: {done:?}");
                assert_eq!(fast, slow, "{shape:?} {a}..{b}");
            }
        }
    }
}
