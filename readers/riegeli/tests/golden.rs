//! Files written by C++ riegeli (array-record 0.8.6, `tools/riegeli_fixtures.py`) read identically.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod util;

use std::io::Cursor;

use riegeli_records::{ArrayRecordReader, ChunkType, RecordReader};

#[test]
fn every_fixture_reads_as_cpp_wrote_it() {
    let goldens = util::goldens();
    assert!(goldens.len() >= 20, "fixtures missing");
    for g in &goldens {
        let bytes = util::fixture(&g.name);
        assert_eq!(bytes.len() as u64, g.file_size, "{}", g.name);
        assert_eq!(g.records.len(), g.num_records, "{}", g.name);

        // Plain Riegeli reading: the data records, then the footer records, then 3 postscript records.
        let mut reader = RecordReader::new(Cursor::new(&bytes[..])).unwrap();
        let mut n = 0;
        while n < g.num_records {
            let rec = reader
                .read_record()
                .unwrap_or_else(|e| panic!("{}: {e}", g.name));
            let rec = rec.unwrap_or_else(|| panic!("{}: only {n} records", g.name));
            g.records.check(n, rec, &g.name);
            n += 1;
        }
        let mut tail = 0;
        while reader.read_record().unwrap().is_some() {
            tail += 1;
        }
        assert!(
            tail >= 4,
            "{}: footer and postscript records missing",
            g.name
        );

        // ArrayRecord: sequential and random access by index.
        let mut ar = ArrayRecordReader::new(Cursor::new(&bytes[..]))
            .unwrap_or_else(|e| panic!("{}: {e}", g.name));
        assert_eq!(ar.len() as usize, g.num_records, "{}", g.name);
        assert_eq!(ar.writer_options(), g.writer_options, "{}", g.name);
        let mut i = 0;
        ar.for_each(|r| {
            g.records.check(i, r, &g.name);
            i += 1;
        })
        .unwrap();
        assert_eq!(i, g.num_records, "{}", g.name);
        for k in (0..g.num_records).rev().step_by(7) {
            let r = ar.get(k as u64).unwrap();
            g.records.check(k, r, &format!("{} get({k})", g.name));
        }
        assert!(ar.get(g.num_records as u64).is_err());
    }
}

#[test]
fn chunk_types_and_block_crossings() {
    let bytes = util::fixture("cross_blocks_uncompressed");
    let mut reader = RecordReader::new(Cursor::new(&bytes[..])).unwrap();
    let mut crossing = 0;
    let mut types = Vec::new();
    while let Some(info) = reader.read_chunk_info().unwrap() {
        types.push(info.header.chunk_type);
        if info.begin / 65_536 != (info.end - 1) / 65_536 {
            crossing += 1;
        }
    }
    assert_eq!(types[0], ChunkType::FileSignature);
    assert!(types.contains(&ChunkType::Padding));
    assert!(
        crossing >= 3,
        "only {crossing} chunks cross a block boundary"
    );
}
