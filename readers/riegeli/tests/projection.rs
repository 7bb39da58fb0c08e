//! Field projection (`RecordReader::set_field_projection`): projected reads of transposed files,
//! ours and C++-written fixtures, equal the full records filtered by the same paths with the
//! independent wire-format filter below; simple chunks come whole; hostile projections and
//! damaged chunks give errors, not panics.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod util;

use std::io::Cursor;

use riegeli_records::{FieldProjection, RecordReader, RecordWriter, WriterOptions};

// ---- An independent filter, straight from the proto wire format. ----

/// A canonical varint (C++ riegeli takes a record with an overlong one for a non-proto record).
fn varint(data: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..70).step_by(7) {
        let b = *data.get(*pos)?;
        *pos += 1;
        if (shift == 63 && b > 1) || (shift > 0 && b == 0) {
            return None;
        }
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// One field: tag, wire type, the tag's bytes and the value's bytes (length prefix included).
struct WireField<'a> {
    number: u64,
    wire: u64,
    tag: &'a [u8],
    value: &'a [u8],
    /// The payload of a length-delimited field, or a group's contents.
    payload: &'a [u8],
    /// A group's end tag.
    end: &'a [u8],
}

/// The fields of `data` if it is a message of varint, fixed and length-delimited fields and groups.
fn fields(data: &[u8]) -> Option<Vec<WireField<'_>>> {
    let (fields, pos) = fields_until(data, 0, None)?;
    (pos == data.len()).then_some(fields)
}

/// Fields from `pos` to the end of `data`, or to the end tag of group `group`; returns where the
/// fields end (before that end tag).
fn fields_until(
    data: &[u8],
    mut pos: usize,
    group: Option<u64>,
) -> Option<(Vec<WireField<'_>>, usize)> {
    let mut out = Vec::new();
    loop {
        if pos == data.len() {
            return group.is_none().then_some((out, pos));
        }
        let start = pos;
        let tag = varint(data, &mut pos)?;
        let (number, wire) = (tag >> 3, tag & 7);
        if number == 0 {
            return None;
        }
        let tag_end = pos;
        let mut payload: &[u8] = &[];
        let mut end: &[u8] = &[];
        match wire {
            4 if group == Some(number) => return Some((out, start)),
            3 => {
                let (_, inner_end) = fields_until(data, pos, Some(number))?;
                payload = &data[pos..inner_end];
                let mut p = inner_end;
                varint(data, &mut p)?;
                end = &data[inner_end..p];
                pos = p;
            }
            0 => {
                varint(data, &mut pos)?;
            }
            1 => pos = pos.checked_add(8).filter(|&p| p <= data.len())?,
            5 => pos = pos.checked_add(4).filter(|&p| p <= data.len())?,
            2 => {
                let len = usize::try_from(varint(data, &mut pos)?).ok()?;
                let body = pos;
                pos = pos.checked_add(len).filter(|&p| p <= data.len())?;
                payload = &data[body..pos];
            }
            _ => return None,
        }
        out.push(WireField {
            number,
            wire,
            tag: &data[start..tag_end],
            value: &data[tag_end..pos],
            payload,
            end,
        });
    }
}

/// `message` projected on `paths` (field numbers; a trailing 0 keeps presence only), for messages
/// whose length-delimited fields on a path are submessages.
fn filter(message: &[u8], paths: &[Vec<u32>]) -> Vec<u8> {
    if fields(message).is_none() {
        return message.to_vec();
    }
    filter_fields(message, paths)
}

/// [`filter`] of a message known to parse.
fn filter_fields(message: &[u8], paths: &[Vec<u32>]) -> Vec<u8> {
    let Some(fields) = fields(message) else {
        return message.to_vec();
    };
    let mut out = Vec::new();
    for f in fields {
        let n = f.number as u32;
        let whole = paths.iter().any(|p| p[..] == [n]);
        let inner: Vec<Vec<u32>> = paths
            .iter()
            .filter(|p| p.len() > 1 && p[0] == n && p[1..] != [0])
            .map(|p| p[1..].to_vec())
            .collect();
        let exists = paths.iter().any(|p| p[..] == [n, 0]);
        if whole || (!inner.is_empty() && f.wire != 2 && f.wire != 3) {
            out.extend_from_slice(f.tag);
            out.extend_from_slice(f.value);
        } else if (!inner.is_empty() || exists) && f.wire == 3 {
            // A group: its tags around the kept fields (none for presence only).
            out.extend_from_slice(f.tag);
            out.extend_from_slice(&filter_fields(f.payload, &inner));
            out.extend_from_slice(f.end);
        } else if !inner.is_empty() {
            let sub = filter(f.payload, &inner);
            out.extend_from_slice(f.tag);
            put_varint(&mut out, sub.len() as u64);
            out.extend_from_slice(&sub);
        } else if exists {
            out.extend_from_slice(f.tag);
            match f.wire {
                1 => out.extend_from_slice(&[0; 8]),
                5 => out.extend_from_slice(&[0; 4]),
                _ => out.push(0),
            }
        }
    }
    out
}

fn projection_text(paths: &[Vec<u32>]) -> String {
    paths
        .iter()
        .map(|p| p.iter().map(u32::to_string).collect::<Vec<_>>().join("."))
        .collect::<Vec<_>>()
        .join(",")
}

fn read_all(file: &[u8], projection: Option<&str>, threads: usize) -> Vec<Vec<u8>> {
    let mut reader = RecordReader::new(Cursor::new(file)).unwrap();
    reader.set_parallelism(threads);
    if let Some(p) = projection {
        reader
            .set_field_projection(FieldProjection::parse(p).unwrap())
            .unwrap();
    }
    let mut out = Vec::new();
    while let Some(r) = reader.read_record().unwrap() {
        out.push(r.to_vec());
    }
    out
}

fn write(options: &str, records: &[Vec<u8>]) -> Vec<u8> {
    let mut w = RecordWriter::new(Vec::new(), WriterOptions::parse(options).unwrap()).unwrap();
    for r in records {
        w.write_record(r).unwrap();
    }
    w.close().unwrap()
}

// ---- Records whose submessages and strings cannot be mistaken for each other. ----

/// A string value no parser takes for a message: its first byte is a tag of wire type 7.
fn text(i: usize, len: usize) -> Vec<u8> {
    let mut s = vec![0x07];
    s.extend((0..len).map(|k| b"abcdefgh"[(i + k) % 8]));
    s
}

fn field(out: &mut Vec<u8>, number: u64, wire: u64, value: &[u8]) {
    put_varint(out, (number << 3) | wire);
    if wire == 2 {
        put_varint(out, value.len() as u64);
    }
    out.extend_from_slice(value);
}

/// Field 1 varint (inline-sized and not), 2 string, 3 submessage {1 varint, 2 string, 4 submessage
/// {5 fixed32}}, 6 fixed64, 7 repeated varint; fields sometimes missing.
fn nested_records(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut r = Vec::new();
            let mut v = Vec::new();
            put_varint(&mut v, if i % 3 == 0 { 2 } else { (i * 7919) as u64 });
            field(&mut r, 1, 0, &v);
            if i % 5 != 1 {
                field(&mut r, 2, 2, &text(i, 20 + i % 50));
            }
            if i % 4 != 2 {
                let mut sub = Vec::new();
                let mut v = Vec::new();
                put_varint(&mut v, (i * 31) as u64);
                field(&mut sub, 1, 0, &v);
                field(&mut sub, 2, 2, &text(i + 3, i % 30));
                if i % 3 != 0 {
                    let mut inner = Vec::new();
                    field(&mut inner, 5, 5, &(i as u32).to_le_bytes());
                    field(&mut sub, 4, 2, &inner);
                }
                field(&mut r, 3, 2, &sub);
            }
            field(&mut r, 6, 1, &(i as u64 * 3).to_le_bytes());
            for k in 0..i % 3 {
                let mut v = Vec::new();
                put_varint(&mut v, (k * 1000) as u64);
                field(&mut r, 7, 0, &v);
            }
            r
        })
        .collect()
}

const PROJECTIONS: &[&[&[u32]]] = &[
    &[&[1]],
    &[&[2]],
    &[&[3]],
    &[&[3, 1]],
    &[&[3, 4, 5]],
    &[&[3, 4, 0]],
    &[&[3, 2], &[6]],
    &[&[1, 0], &[2, 0], &[3, 0], &[6, 0], &[7, 0]],
    &[&[7], &[3, 1], &[3, 0]],
    &[&[9]],
    &[&[3, 9, 9]],
    &[&[1, 2]],
];

fn paths(p: &[&[u32]]) -> Vec<Vec<u32>> {
    p.iter().map(|x| x.to_vec()).collect()
}

#[test]
fn projected_reads_of_our_transposed_files_equal_the_filtered_records() {
    let records = nested_records(700);
    for options in [
        "transpose,uncompressed",
        "transpose,zstd:3",
        "transpose,brotli:6,chunk_size:5000",
        "transpose,snappy,chunk_size:20k",
        // Several buckets per chunk: the projection skips some.
        "transpose,zstd:3,chunk_size:20k,bucket_fraction:0.1",
        "transpose,zstd:1,bucket_fraction:0",
        "transpose,brotli:6,chunk_size:5000,bucket_fraction:0.01",
    ] {
        let file = write(options, &records);
        assert!(read_all(&file, None, 0) == records, "{options}: full read");
        if options.contains("zstd") && options.contains("bucket_fraction") {
            let counts = util::bucket_counts(&file);
            assert!(counts.iter().all(|&n| n > 1), "{options}: {counts:?}");
        }
        for (k, p) in PROJECTIONS.iter().enumerate() {
            let paths = paths(p);
            let text = projection_text(&paths);
            let expected: Vec<Vec<u8>> = records.iter().map(|r| filter(r, &paths)).collect();
            for threads in [0, 2] {
                let got = read_all(&file, Some(&text), threads);
                assert_eq!(got.len(), expected.len(), "{options}: case {k} ({text})");
                for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                    assert!(
                        g == e,
                        "{options}: case {k} ({text}), {threads} threads, record {i}"
                    );
                }
            }
        }
    }
}

/// C++-written transposed fixtures (multiple buckets among them): the projected read equals our
/// full read, which tests/golden.rs checks against C++'s, filtered on top-level fields. Non-proto
/// records pass whole, as C++ returns them.
#[test]
fn projected_reads_of_cpp_transposed_files_equal_the_filtered_records() {
    let projections: &[&[&[u32]]] = &[&[&[1]], &[&[2], &[5, 0]], &[&[3, 0], &[7]], &[&[1, 0]]];
    let mut checked = 0;
    for golden in util::goldens() {
        if !golden.options.contains("transpose") || golden.num_records == 0 {
            continue;
        }
        let file = util::fixture(&golden.name);
        let full = read_all(&file, None, 0);
        for (k, p) in projections.iter().enumerate() {
            let paths = paths(p);
            let text = projection_text(&paths);
            let got = read_all(&file, Some(&text), 0);
            assert_eq!(got.len(), full.len(), "{}: case {k}", golden.name);
            for (i, (g, r)) in got.iter().zip(&full).enumerate() {
                // The ArrayRecord footer's records follow, in simple chunks: whole.
                let e = if i < golden.num_records {
                    filter(r, &paths)
                } else {
                    r.clone()
                };
                assert!(
                    g == &e,
                    "{}: case {k} ({text}), record {i}: {:02x?} != {:02x?} (full {:02x?})",
                    golden.name,
                    &g[..g.len().min(64)],
                    &e[..e.len().min(64)],
                    &r[..r.len().min(64)]
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} fixture projections checked");
}

#[test]
fn simple_chunks_come_whole_as_in_cpp() {
    let records = nested_records(50);
    for options in ["uncompressed", "zstd:3"] {
        let file = write(options, &records);
        assert!(read_all(&file, Some("1"), 0) == records, "{options}");
    }
}

#[test]
fn projection_set_mid_file_applies_from_the_next_record() {
    let records = nested_records(300);
    let file = write("transpose,zstd:3,chunk_size:3000", &records);
    let mut reader = RecordReader::new(Cursor::new(&file[..])).unwrap();
    let mut got = Vec::new();
    for _ in 0..100 {
        got.push(reader.read_record().unwrap().unwrap().to_vec());
    }
    reader
        .set_field_projection(FieldProjection::parse("6").unwrap())
        .unwrap();
    while let Some(r) = reader.read_record().unwrap() {
        got.push(r.to_vec());
    }
    let expected: Vec<Vec<u8>> = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if i < 100 {
                r.clone()
            } else {
                filter(r, &[vec![6]])
            }
        })
        .collect();
    assert!(got == expected);
}

#[test]
fn absurd_projections_are_errors() {
    for text in [
        "",
        "0",
        "1.0.1",
        "536870912",
        "18446744073709551616",
        "1..2",
        "a",
        "1,",
    ] {
        assert!(FieldProjection::parse(text).is_err(), "{text:?}");
    }
    // Deep paths of numbers no record has: nothing is kept, and nothing breaks.
    let deep = vec!["536870911"; 100].join(".");
    let records = nested_records(20);
    let file = write("transpose,zstd:3", &records);
    let got = read_all(&file, Some(&deep), 0);
    assert!(got.iter().all(Vec::is_empty));
}

/// Every truncation and some bit flips of a transposed file read with a projection: errors or
/// records, never a panic (hashes catch most damage; recovery reads on past it).
#[test]
fn damaged_transposed_chunks_with_a_projection_fail_cleanly() {
    let records = nested_records(60);
    let file = write("transpose,zstd:3,chunk_size:2000", &records);
    let projection = FieldProjection::parse("3.4.5,2.0").unwrap();
    let read = |bytes: &[u8], recover: bool| {
        let mut reader = RecordReader::new(Cursor::new(bytes)).unwrap();
        if recover {
            reader.set_recovery(|_| true);
        }
        reader.set_field_projection(projection.clone()).unwrap();
        let mut n = 0;
        while let Ok(Some(_)) = reader.read_record() {
            n += 1;
        }
        n
    };
    for len in (0..file.len()).step_by(7) {
        assert!(read(&file[..len], len % 2 == 0) <= records.len());
    }
    for at in (64..file.len()).step_by(101) {
        let mut bad = file.clone();
        bad[at] ^= 0x10;
        assert!(read(&bad, true) <= records.len());
    }
}

/// One transposed chunk of arbitrary contents, with valid hashes, after the signature.
fn file_with_transposed_chunk(data: &[u8], num_records: u64, decoded: u64) -> Vec<u8> {
    use riegeli_records::{ChunkHeader, ChunkType};
    let mut file = write("uncompressed", &[]);
    let header = ChunkHeader::new(ChunkType::Transposed, data, num_records, decoded);
    file.extend_from_slice(&header.encode());
    file.extend_from_slice(data);
    file.resize(header.chunk_end(64) as usize, 0);
    file
}

/// Real transposed chunks (ours, and C++'s with several buckets) with random byte changes and
/// their hashes recomputed, read with projections: the projected decoder's own checks meet the
/// damage, and give errors or records, never a panic, a hang or a huge allocation.
#[test]
fn mutated_transposed_chunks_with_valid_hashes_and_a_projection() {
    use riegeli_records::ChunkHeader;
    let ours = write("transpose,zstd:1", &util::records(9, 30, 0));
    let cpp = util::fixture("transpose_bucket_auto");
    let mut rng = util::Rng(777);
    for (name, file) in [("ours", ours), ("transpose_bucket_auto", cpp)] {
        let chunk = ChunkHeader::decode(file[64..104].try_into().unwrap()).unwrap();
        let data = &file[104..104 + chunk.data_size as usize];
        if data.len() + 104 > 65_536 {
            // Only chunks inside the first block are rewritten here (no block headers inside).
            continue;
        }
        let mut failed = 0;
        for k in 0..600 {
            let mut d = data.to_vec();
            for _ in 0..1 + rng.below(3) {
                let p = rng.below(d.len() as u64) as usize;
                d[p] = rng.next() as u8;
            }
            let f = file_with_transposed_chunk(&d, chunk.num_records, chunk.decoded_data_size);
            let projection = ["1", "2.0", "3.1,5", "4.4.4"][k % 4];
            let mut reader = RecordReader::new(Cursor::new(&f[..])).unwrap();
            reader
                .set_field_projection(FieldProjection::parse(projection).unwrap())
                .unwrap();
            let mut n = 0u64;
            loop {
                match reader.read_record() {
                    Ok(Some(r)) => {
                        assert!(r.len() as u64 <= chunk.decoded_data_size, "{name}");
                        n += 1;
                    }
                    Ok(None) => {
                        assert_eq!(n, chunk.num_records, "{name}");
                        break;
                    }
                    Err(_) => {
                        failed += 1;
                        break;
                    }
                }
            }
        }
        assert!(failed > 0, "{name}: mutations never detected");
    }
}
