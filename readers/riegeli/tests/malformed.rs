//! Hostile input: truncation, flipped bits, wrong hashes, absurd sizes and mutated chunk contents with
//! valid hashes. Every case must end in records, an error or a reported recovery: never a panic or a hang.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod util;

use std::io::Cursor;
use std::sync::{Arc, Mutex};

use riegeli_records::block::BLOCK_SIZE;
use riegeli_records::{
    ArrayRecordReader, ChunkHeader, ChunkType, RecordReader, RecordWriter, SkippedRegion,
    WriterOptions,
};

fn write(options: &str, records: &[Vec<u8>]) -> Vec<u8> {
    let mut w = RecordWriter::new(Vec::new(), WriterOptions::parse(options).unwrap()).unwrap();
    for r in records {
        w.write_record(r).unwrap();
    }
    w.close().unwrap()
}

/// Reads everything; returns the records and whether an error ended the reading.
fn read_all(file: &[u8], recover: bool) -> (Vec<Vec<u8>>, Option<String>, Vec<SkippedRegion>) {
    read_all_with(file, recover, 0)
}

fn read_all_with(
    file: &[u8],
    recover: bool,
    threads: usize,
) -> (Vec<Vec<u8>>, Option<String>, Vec<SkippedRegion>) {
    let skipped = Arc::new(Mutex::new(Vec::new()));
    let mut reader = RecordReader::new(Cursor::new(file)).unwrap();
    reader.set_parallelism(threads);
    if recover {
        let s = Arc::clone(&skipped);
        reader.set_recovery(move |region| {
            s.lock().unwrap().push(region.clone());
            true
        });
    }
    let mut out = Vec::new();
    let mut error = None;
    loop {
        match reader.read_record() {
            Ok(Some(r)) => out.push(r.to_vec()),
            Ok(None) => break,
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        }
    }
    let skipped = skipped.lock().unwrap().clone();
    (out, error, skipped)
}

/// Whether `got` is a subsequence of `all`.
fn is_subsequence(got: &[Vec<u8>], all: &[Vec<u8>]) -> bool {
    let mut it = all.iter();
    got.iter().all(|g| it.any(|a| a == g))
}

#[test]
fn truncated_at_every_offset() {
    let records = util::records(3, 40, 0);
    for options in [
        "transpose,zstd:3,chunk_size:600",
        "brotli:6,chunk_size:500",
        "snappy",
        "uncompressed",
    ] {
        let file = write(options, &records);
        for cut in 0..file.len() {
            let (got, error, _) = read_all(&file[..cut], false);
            assert!(
                records.starts_with(&got),
                "{options}: cut {cut}: wrong records"
            );
            if (1..64).contains(&cut) {
                assert!(error.is_some(), "{options}: cut {cut} must fail");
            }
            let (got, _, skipped) = read_all(&file[..cut], true);
            assert!(
                records.starts_with(&got),
                "{options}: cut {cut}: wrong records with recovery"
            );
            assert!(
                skipped.iter().all(|r| r.end <= cut as u64),
                "{options}: cut {cut}"
            );
        }
    }
}

#[test]
fn truncated_cpp_fixtures() {
    for name in [
        "transpose_brotli6",
        "cross_blocks_uncompressed",
        "simple_snappy",
    ] {
        let file = util::fixture(name);
        for cut in (0..file.len()).step_by(997) {
            let _ = read_all(&file[..cut], false);
            let _ = read_all(&file[..cut], true);
            let _ = ArrayRecordReader::new(Cursor::new(&file[..cut]));
        }
    }
}

#[test]
fn flipped_bits_are_detected_or_recovered() {
    let records = util::records(4, 60, 0);
    for (options, step) in [
        ("transpose,zstd:3,chunk_size:800", 1),
        ("uncompressed,chunk_size:700", 3),
    ] {
        let file = write(options, &records);
        for pos in (0..file.len()).step_by(step) {
            for bit in [0u8, 5] {
                let mut bad = file.clone();
                bad[pos] ^= 1 << bit;
                let (got, error, _) = read_all(&bad, false);
                // Hashes protect everything but the padding: the records read are always genuine.
                assert!(records.starts_with(&got), "{options}: flip {pos}.{bit}");
                let (got, _, skipped) = read_all(&bad, true);
                assert!(
                    is_subsequence(&got, &records),
                    "{options}: flip {pos}.{bit} with recovery"
                );
                if error.is_some() {
                    assert!(
                        !skipped.is_empty(),
                        "{options}: flip {pos}.{bit}: an error must be a skip"
                    );
                }
            }
        }
    }
}

#[test]
fn recovery_skips_a_damaged_block_header_and_a_damaged_chunk() {
    // 1 KiB records in 10 KiB chunks: about 30 chunks per 64 KiB block.
    let records: Vec<Vec<u8>> = (0..400u32).map(|i| vec![i as u8; 1024]).collect();
    let file = write("uncompressed,chunk_size:10k", &records);
    assert!(file.len() as u64 > 4 * BLOCK_SIZE);

    // A damaged block header: the chunk it interrupts is lost, reading resumes at the next chunk.
    let mut bad = file.clone();
    bad[2 * BLOCK_SIZE as usize + 3] ^= 0x40;
    let (_, error, _) = read_all(&bad, false);
    assert!(
        error.unwrap().contains("block header"),
        "no error without recovery"
    );
    let (got, error, skipped) = read_all(&bad, true);
    assert!(error.is_none());
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(
        skipped[0].begin < 2 * BLOCK_SIZE && skipped[0].end > 2 * BLOCK_SIZE,
        "{skipped:?}"
    );
    assert!(is_subsequence(&got, &records));
    // As C++: the next chunk is found through the next good block header, so up to a block is lost.
    assert!(
        got.len() >= records.len() - 80,
        "lost {} records",
        records.len() - got.len()
    );
    assert_eq!(got.last(), records.last());

    // Damaged chunk data: exactly that chunk's records are lost.
    let mut bad = file.clone();
    bad[3 * BLOCK_SIZE as usize + 5000] ^= 1;
    let (got, _, skipped) = read_all(&bad, true);
    assert_eq!(skipped.len(), 1);
    assert!(
        skipped[0].message.contains("hash"),
        "{}",
        skipped[0].message
    );
    assert!(
        skipped[0].len() > 9_000 && skipped[0].len() < 11_000,
        "{skipped:?}"
    );
    let lost = records.len() - got.len();
    assert!((9..=10).contains(&lost), "lost {lost}");

    // The callback can stop the reading.
    let mut reader = RecordReader::new(Cursor::new(&bad[..])).unwrap();
    reader.set_recovery(|_| false);
    let mut result = Ok(None);
    for _ in 0..=records.len() {
        result = reader.read_record().map(|r| r.map(<[u8]>::to_vec));
        if !matches!(result, Ok(Some(_))) {
            break;
        }
    }
    assert!(result.is_err());
}

/// A file with one chunk of arbitrary contents (with valid hashes) after the signature.
fn file_with_chunk(chunk_type: ChunkType, data: &[u8], num_records: u64, decoded: u64) -> Vec<u8> {
    let mut file = write("uncompressed", &[]);
    assert_eq!(file.len(), 64);
    let header = ChunkHeader::new(chunk_type, data, num_records, decoded);
    file.extend_from_slice(&header.encode());
    file.extend_from_slice(data);
    let end = header.chunk_end(64);
    assert!(end < BLOCK_SIZE);
    file.resize(end as usize, 0);
    file
}

#[test]
fn absurd_sizes_with_valid_hashes() {
    let cases: Vec<(ChunkType, Vec<u8>, u64, u64)> = vec![
        (ChunkType::Simple, vec![0, 1, 5, b'a'], 1, 1),
        (ChunkType::Simple, vec![0, 1, 1, b'a'], 100, 1),
        (ChunkType::Simple, vec![0, 1, 1, b'a'], 1, u64::MAX),
        (ChunkType::Simple, vec![b'z', 1, 1], 1, 1 << 40),
        (
            ChunkType::Simple,
            vec![
                b'z', 0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0,
            ],
            1,
            1,
        ),
        (ChunkType::Simple, vec![b'q', 0], 0, 0),
        (ChunkType::Transposed, vec![0, 3, 0xff, 0xff, 0x0f], 1, 1),
        (
            ChunkType::Transposed,
            vec![0, 5, 0, 0, 1, 0, 0, 0],
            5,
            1 << 50,
        ),
        (ChunkType::Transposed, vec![b's', 0x20, 0xff], 1, 1),
        (ChunkType::Unknown(b'x'), vec![1, 2, 3], 3, 3),
    ];
    for (i, (t, data, n, decoded)) in cases.into_iter().enumerate() {
        let file = file_with_chunk(t, &data, n, decoded);
        let (got, error, _) = read_all(&file, false);
        assert!(
            got.is_empty() && error.is_some(),
            "case {i}: {got:?} {error:?}"
        );
        let (_, error, skipped) = read_all(&file, true);
        assert!(error.is_none() && skipped.len() == 1, "case {i}");
    }
    // Implausible num_records in the header: the chunk end (>= num_records) is past the file.
    let file = file_with_chunk(ChunkType::Simple, &[0, 1, 1, b'a'], 1, 1);
    let mut header = ChunkHeader::decode(file[64..104].try_into().unwrap()).unwrap();
    header.num_records = (1 << 56) - 1;
    let mut bad = file.clone();
    bad[64..104].copy_from_slice(&header.encode());
    assert!(read_all(&bad, false).1.unwrap().contains("truncated"));
}

#[test]
fn mutated_transposed_chunks_with_valid_hashes() {
    // Real transposed chunks with random byte changes, hashes recomputed: exercises the decoder's checks.
    let records = util::records(9, 30, 0);
    let mut rng = util::Rng(12345);
    for options in [
        "transpose,uncompressed",
        "transpose,snappy",
        "transpose,zstd:1",
    ] {
        let file = write(options, &records);
        let chunk = ChunkHeader::decode(file[64..104].try_into().unwrap()).unwrap();
        let data = &file[104..104 + chunk.data_size as usize];
        let mut ok = 0;
        for _ in 0..1500 {
            let mut d = data.to_vec();
            for _ in 0..1 + rng.below(3) {
                let p = rng.below(d.len() as u64) as usize;
                d[p] = rng.next() as u8;
            }
            let f = file_with_chunk(
                ChunkType::Transposed,
                &d,
                chunk.num_records,
                chunk.decoded_data_size,
            );
            let (got, error, _) = read_all(&f, false);
            if error.is_none() {
                assert_eq!(got.len() as u64, chunk.num_records);
                ok += 1;
            }
        }
        assert!(ok < 1500, "{options}: mutations never detected");
    }
}

#[test]
fn seek_to_every_record_position() {
    let records = util::records(5, 300, 40);
    for options in [
        "transpose,zstd:3,chunk_size:5000",
        "uncompressed,chunk_size:3000",
        "snappy",
    ] {
        let file = write(options, &records);
        let mut reader = RecordReader::new(Cursor::new(&file[..])).unwrap();
        let mut positions = Vec::new();
        loop {
            let pos = reader.position();
            if reader.read_record().unwrap().is_none() {
                break;
            }
            positions.push(pos);
        }
        assert_eq!(positions.len(), records.len());
        for i in (0..records.len()).rev().step_by(7) {
            reader.seek(positions[i]).unwrap();
            assert!(
                reader.read_record().unwrap().unwrap() == records[i],
                "{options}: seek {i}"
            );
            reader.seek_numeric(positions[i].numeric()).unwrap();
            assert_eq!(reader.position(), positions[i], "{options}: numeric {i}");
            assert!(
                reader.read_record().unwrap().unwrap() == records[i],
                "{options}: numeric {i}"
            );
        }
        // Seeking with read-ahead decoding in flight.
        reader.set_parallelism(2);
        reader.seek(positions[0]).unwrap();
        assert!(reader.read_record().unwrap().unwrap() == records[0]);
        for i in (0..records.len()).step_by(53) {
            reader.seek(positions[i]).unwrap();
            assert!(
                reader.read_record().unwrap().unwrap() == records[i],
                "{options}: parallel seek {i}"
            );
            assert!(
                reader.read_record().unwrap().map(<[u8]>::to_vec) == records.get(i + 1).cloned()
            );
        }
        reader.seek_numeric(file.len() as u64 + 10).unwrap();
        assert!(reader.read_record().unwrap().is_none());
    }
}

#[test]
fn array_record_hostile_footers() {
    let records = util::records(6, 50, 0);
    let mut w = RecordWriter::new(
        Vec::new(),
        WriterOptions::parse_array_record("group_size:8,zstd:3").unwrap(),
    )
    .unwrap();
    for r in &records {
        w.write_record(r).unwrap();
    }
    let file = w.close().unwrap();
    // Every byte of the postscript region and the footer, flipped: an error or the right records.
    let footer_offset = ArrayRecordReader::new(Cursor::new(&file[..]))
        .unwrap()
        .footer_offset() as usize;
    for pos in (footer_offset..file.len()).step_by(61).chain(0..200) {
        let mut bad = file.clone();
        bad[pos] ^= 0x10;
        if let Ok(mut ar) = ArrayRecordReader::new(Cursor::new(&bad[..])) {
            for i in 0..ar.len() {
                if let Ok(r) = ar.get(i) {
                    assert!(r == records[i as usize], "flip {pos}: record {i}");
                }
            }
        }
    }
    assert!(ArrayRecordReader::new(Cursor::new(&file[..65_536])).is_err());
    assert!(ArrayRecordReader::new(Cursor::new(&[][..])).is_err());
}
