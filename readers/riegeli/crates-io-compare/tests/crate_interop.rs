//! The crates.io `riegeli` crate (0.2.1) against our `riegeli` package: each reads the other's files,
//! plain and transposed, with metadata, and files whose large chunks libzstd's workers compressed.
//! Moved here from the main crate's tests/interop.rs when the package took the name `riegeli`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../tests/util/mod.rs"]
mod util;

use std::io::Cursor;

use riegeli_records::{RecordReader, WriterOptions};

/// The main crate's `PLAIN_OPTIONS` (tests/interop.rs): every writer option, for the crate to read.
const PLAIN_OPTIONS: &[&str] = &[
    "uncompressed",
    "brotli:6",
    "zstd:3",
    "snappy",
    "transpose,uncompressed",
    "transpose,brotli:6",
    "transpose,zstd:3",
    "transpose,snappy",
    "zstd:1,chunk_size:10k",
    "transpose,brotli:0,chunk_size:100000",
    "uncompressed,chunk_size:1M,final_padding",
    "transpose,zstd:-3,window_log:16,chunk_size:3000",
    "brotli:9,window_log:25",
    "snappy:2,chunk_size:200k,pad_to_block_boundary",
    "transpose,zstd:3,chunk_size:20k,parallelism:2",
    // Many uncompressed transposed chunks: their buffers are reused from chunk to chunk.
    "transpose,uncompressed,chunk_size:4k",
    "snappy,chunk_size:5k,parallelism:3,final_padding",
    "",
];

fn read_ours(file: &[u8]) -> Vec<Vec<u8>> {
    let mut reader = RecordReader::new(Cursor::new(file)).unwrap();
    let mut out = Vec::new();
    while let Some(r) = reader.read_record().unwrap() {
        out.push(r.to_vec());
    }
    out
}

/// Every record of `file` as the `riegeli` crate reads it.
fn read_crate(file: &[u8], context: &str) -> Vec<Vec<u8>> {
    let mut reader =
        riegeli::RecordReader::new(Cursor::new(file), riegeli::ReaderOptions::new()).unwrap();
    let mut out = Vec::new();
    while let Some(r) = reader
        .read_record()
        .unwrap_or_else(|e| panic!("{context}: record {}: {e}", out.len()))
    {
        out.push(r.to_vec());
    }
    out
}

#[test]
fn riegeli_crate_reads_our_plain_files() {
    let records = util::interop_records();
    for text in PLAIN_OPTIONS {
        let file = util::write_ours(&WriterOptions::parse(text).unwrap(), &records);
        let mut reader =
            riegeli::RecordReader::new(Cursor::new(&file[..]), riegeli::ReaderOptions::new())
                .unwrap();
        let mut i = 0;
        while let Some(r) = reader
            .read_record()
            .unwrap_or_else(|e| panic!("{text}: record {i}: {e}"))
        {
            assert!(r == records[i], "{text}: record {i}");
            i += 1;
        }
        assert_eq!(i, records.len(), "{text}");
    }
}

#[test]
fn we_read_riegeli_crate_files() {
    use riegeli::{CompressionType as C, WriterOptions as O};
    let records = util::interop_records();
    let configs = [
        O::new().compression(C::None),
        O::new().compression(C::Brotli).compression_level(6),
        O::new().compression(C::Zstd).compression_level(3),
        O::new().compression(C::Snappy),
        O::new().compression(C::None).transpose(true),
        O::new()
            .compression(C::Zstd)
            .transpose(true)
            .chunk_size(20_000),
        O::new().compression(C::Brotli).transpose(true),
    ];
    for (k, options) in configs.into_iter().enumerate() {
        let mut file = Vec::new();
        let mut w = riegeli::RecordWriter::new(&mut file, options).unwrap();
        for r in &records {
            w.write_record(r).unwrap();
        }
        w.close().unwrap();
        assert_eq!(read_ours(&file), records, "config {k}");
    }
}

#[test]
fn metadata_written_by_the_riegeli_crate() {
    // A serialized RecordsMetadata: file_comment (1) = "hello", record_type_name (2) = "pkg.Rec".
    let metadata = b"\x0a\x05hello\x12\x07pkg.Rec".to_vec();
    for compression in [
        riegeli::CompressionType::None,
        riegeli::CompressionType::Zstd,
    ] {
        let mut file = Vec::new();
        let options = riegeli::WriterOptions::new()
            .compression(compression)
            .set_serialized_metadata(metadata.clone());
        let mut w = riegeli::RecordWriter::new(&mut file, options).unwrap();
        w.write_record(b"record").unwrap();
        w.close().unwrap();
        let mut reader = RecordReader::new(Cursor::new(&file[..])).unwrap();
        assert_eq!(
            reader.read_serialized_metadata().unwrap(),
            Some(metadata.clone())
        );
        assert_eq!(reader.read_record().unwrap(), Some(&b"record"[..]));
        assert_eq!(reader.read_record().unwrap(), None);
    }
    let plain = util::write_ours(&WriterOptions::parse("zstd:3").unwrap(), &[b"x".to_vec()]);
    let mut reader = RecordReader::new(Cursor::new(&plain[..])).unwrap();
    assert_eq!(reader.read_serialized_metadata().unwrap(), None);
}

/// Chunks above libzstd's 512 KiB job size, compressed by its worker threads (`zstd_workers`):
/// the crate reads the standard frames our writer makes of them.
#[test]
fn riegeli_crate_reads_zstd_worker_chunks() {
    let records: Vec<Vec<u8>> = (0..3000u32)
        .map(|i| {
            let mut r = format!("{{\"id\":{i},\"v\":{}}}", i * 7919 % 1013).into_bytes();
            r.extend((0..400u32).map(|k| b'a' + ((k * 31 + i) % 13) as u8));
            r
        })
        .collect();
    for text in ["zstd:3,chunk_size:2M", "transpose,zstd:1,chunk_size:2M"] {
        for threads in 0..=2u32 {
            let mut options = WriterOptions::parse(text).unwrap();
            options.zstd_workers = threads;
            let file = util::write_ours(&options, &records);
            assert!(read_ours(&file) == records, "{text}");
            assert!(
                read_crate(&file, text) == records,
                "{text}, {threads} workers: riegeli crate"
            );
        }
    }
}

#[test]
fn riegeli_crate_reads_our_metadata() {
    let metadata = riegeli_records::RecordsMetadata {
        file_comment: Some("written by riegeli-records".into()),
        record_type_name: Some("pkg.Rec".into()),
        file_descriptors: vec![b"\x0a\x09rec.proto\x12\x03pkg".to_vec()],
        record_writer_options: Some("transpose,zstd:3".into()),
        num_records: Some(3),
    }
    .serialize();
    let records = [b"\x08\x01".to_vec(), b"text".to_vec(), Vec::new()];
    for text in ["uncompressed", "zstd:3", "transpose,brotli:6", "snappy"] {
        let mut options = WriterOptions::parse(text).unwrap();
        options.metadata = Some(metadata.clone());
        let file = util::write_ours(&options, &records);
        let mut theirs =
            riegeli::RecordReader::new(Cursor::new(&file[..]), riegeli::ReaderOptions::new())
                .unwrap();
        assert_eq!(
            theirs.read_serialized_metadata().unwrap(),
            Some(metadata.clone()),
            "{text}: riegeli crate"
        );
        assert!(theirs.read_metadata().unwrap().is_some(), "{text}: parsed");
        let mut n = 0;
        while let Some(r) = theirs.read_record().unwrap() {
            assert!(r == records[n], "{text}: record {n}");
            n += 1;
        }
        assert_eq!(n, records.len(), "{text}");
    }
}
