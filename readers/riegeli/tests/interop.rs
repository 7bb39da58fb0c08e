//! Interoperability: our files read by C++ riegeli (array-record wheel), and theirs by us; plus our own
//! round trips with every option. The crates.io `riegeli` crate's side is in crates-io-compare/
//! (`tests/crate_interop.rs`), a workspace of its own.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod util;

use std::io::Cursor;

use riegeli_records::{ArrayRecordReader, RecordGroup, RecordReader, RecordWriter, WriterOptions};

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
    // Several buckets per chunk.
    "transpose,zstd:3,chunk_size:20k,bucket_fraction:0.1",
    "transpose,brotli:6,chunk_size:100k,bucket_fraction:0.01,parallelism:2",
    "transpose,snappy,bucket_fraction:0.5",
    "snappy,chunk_size:5k,parallelism:3,final_padding",
    "",
];

fn read_ours(file: &[u8]) -> Vec<Vec<u8>> {
    read_ours_with(file, 0)
}

fn read_ours_with(file: &[u8], threads: usize) -> Vec<Vec<u8>> {
    let mut reader = RecordReader::new(Cursor::new(file)).unwrap();
    reader.set_parallelism(threads);
    let mut out = Vec::new();
    while let Some(r) = reader.read_record().unwrap() {
        out.push(r.to_vec());
    }
    out
}

#[test]
fn roundtrip_every_option() {
    let records = util::interop_records();
    for text in PLAIN_OPTIONS {
        let options = WriterOptions::parse(text).unwrap();
        let file = util::write_ours(&options, &records);
        let got = read_ours(&file);
        assert_eq!(got.len(), records.len(), "{text}");
        for (i, (a, b)) in got.iter().zip(&records).enumerate() {
            assert!(a == b, "{text}: record {i}");
        }
        // Parallel decoding reads the same records.
        assert!(read_ours_with(&file, 2) == records, "{text}: parallel read");
        // Parallel encoding writes the very same bytes.
        let mut parallel = options.clone();
        parallel.parallelism = if options.parallelism == 0 { 2 } else { 0 };
        assert!(
            util::write_ours(&parallel, &records) == file,
            "{text}: parallelism changed the bytes"
        );
    }
}

/// Records handed over in groups (`write_group`) make the very file that writing them one by one
/// makes: groups of exactly a chunk (taken without a copy), smaller, larger and uneven ones, in the
/// ArrayRecord layout and in plain files.
#[test]
fn groups_write_the_same_bytes_as_records() {
    let records = util::interop_records();
    let array_record = [
        "group_size:64,snappy",
        "group_size:1,uncompressed",
        "group_size:7,zstd:3",
        "group_size:64,transpose,brotli:6",
        "group_size:13,brotli:6,pad_to_block_boundary",
    ];
    let cases = PLAIN_OPTIONS
        .iter()
        .map(|t| WriterOptions::parse(t).unwrap())
        .chain(
            array_record
                .iter()
                .map(|t| WriterOptions::parse_array_record(t).unwrap()),
        )
        .chain(std::iter::once({
            // Chunks encoded on background threads: the writer's encoder is swapped for each.
            let mut o = WriterOptions::parse_array_record("group_size:7,zstd:3").unwrap();
            o.parallelism = 2;
            o
        }));
    for options in cases {
        let expected = util::write_ours(&options, &records);
        let per_chunk = RecordWriter::new(Vec::new(), options.clone())
            .unwrap()
            .records_per_chunk();
        let mut sizes = vec![1usize, 5, 100, records.len()];
        if let Some(n) = per_chunk {
            let n = n as usize;
            sizes.extend([n, n - 1, n + 1, 2 * n]);
        }
        for size in sizes {
            let mut w = RecordWriter::new(Vec::new(), options.clone()).unwrap();
            let mut group = RecordGroup::new();
            // Uneven: every third group is one record short.
            let mut i = 0;
            for (k, chunk) in std::iter::from_fn(|| {
                let take = if i % 3 == 2 {
                    size.saturating_sub(1).max(1)
                } else {
                    size
                };
                i += 1;
                Some(take)
            })
            .scan(0usize, |at, take| {
                let start = *at;
                *at = (start + take).min(records.len());
                (start < records.len()).then(|| &records[start..*at])
            })
            .enumerate()
            {
                for r in chunk {
                    group.push(r);
                }
                w.write_group(&mut group).unwrap();
                assert!(
                    group.is_empty(),
                    "{options:?}: group {k} of {size} not emptied"
                );
            }
            assert!(
                w.close().unwrap() == expected,
                "{options:?}: groups of {size} made other bytes"
            );
        }
    }
}

/// Chunks above libzstd's 512 KiB job size, compressed by its worker threads (`zstd_workers`, also with
/// `parallelism`): one standard frame per stream, the same bytes for any number of workers, read by us (and
/// by the `riegeli` crate in crates-io-compare/).
#[test]
fn zstd_workers_split_large_chunks() {
    let records: Vec<Vec<u8>> = (0..3000u32)
        .map(|i| {
            let mut r = format!("{{\"id\":{i},\"v\":{}}}", i * 7919 % 1013).into_bytes();
            r.extend((0..400u32).map(|k| b'a' + ((k * 31 + i) % 13) as u8));
            r
        })
        .collect();
    for text in ["zstd:3,chunk_size:2M", "transpose,zstd:1,chunk_size:2M"] {
        let single = util::write_ours(&WriterOptions::parse(text).unwrap(), &records);
        let mut files = Vec::new();
        for threads in 1..=3 {
            let mut options = WriterOptions::parse(text).unwrap();
            options.zstd_workers = threads;
            options.parallelism = 2 - threads % 2;
            files.push(util::write_ours(&options, &records));
        }
        assert!(
            files.iter().all(|f| *f == files[0]),
            "{text}: bytes depend on the workers"
        );
        // Two jobs: libzstd's workers wrote the frame differently than one thread does.
        assert!(single != files[0], "{text}: no workers used");
        for file in [&single, &files[0]] {
            assert!(read_ours(file) == records, "{text}");
        }
    }
}

const ARRAY_RECORD_OPTIONS: &[&str] = &[
    "group_size:1,uncompressed",
    "group_size:64,brotli:6",
    "group_size:100,zstd:3",
    "group_size:37,snappy",
    "group_size:64,transpose,uncompressed",
    "group_size:100,transpose,brotli:6",
    "group_size:250,transpose,zstd:3",
    "group_size:10,transpose,snappy,pad_to_block_boundary:true",
    "group_size:8",
];

#[test]
fn cpp_reads_our_array_record_files() {
    let Some(python) = util::python("cpp_reads_our_array_record_files") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let records = util::interop_records();
    for (k, text) in ARRAY_RECORD_OPTIONS.iter().enumerate() {
        let options = WriterOptions::parse_array_record(text).unwrap();
        let file = util::write_ours(&options, &records);
        assert_eq!(file.len() % 65_536, 0, "{text}");
        let path = dir.path().join(format!("ours_{k}.array_record"));
        std::fs::write(&path, &file).unwrap();
        let indices: Vec<u64> = (0..records.len() as u64).rev().step_by(13).collect();
        let (all, random, writer_options) = util::cpp_read(&python, &path, &indices);
        assert_eq!(all.len(), records.len(), "{text}");
        for (i, (a, b)) in all.iter().zip(&records).enumerate() {
            assert!(a == b, "{text}: C++ read record {i} differently");
        }
        for (&i, r) in indices.iter().zip(&random) {
            assert!(
                *r == records[i as usize],
                "{text}: C++ random access to {i}"
            );
        }
        assert_eq!(writer_options, options.array_record_text(), "{text}");

        // And our own ArrayRecord reader, by index.
        let mut ar = ArrayRecordReader::new(Cursor::new(&file[..])).unwrap();
        assert_eq!(ar.len(), records.len() as u64);
        for &i in &indices {
            assert!(
                ar.get(i).unwrap() == records[i as usize],
                "{text}: get({i})"
            );
        }
    }
}

#[test]
fn empty_files() {
    let file = util::write_ours(&WriterOptions::parse("zstd:3").unwrap(), &[]);
    assert_eq!(file.len(), 64);
    assert!(read_ours(&file).is_empty());
    let ar = util::write_ours(
        &WriterOptions::parse_array_record("group_size:4").unwrap(),
        &[],
    );
    let reader = ArrayRecordReader::new(Cursor::new(&ar[..])).unwrap();
    assert!(reader.is_empty());
}

#[test]
fn metadata_we_write_is_read_by_cpp() {
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
        let mut reader = RecordReader::new(Cursor::new(&file[..])).unwrap();
        assert_eq!(
            reader.read_serialized_metadata().unwrap(),
            Some(metadata.clone()),
            "{text}"
        );
        assert!(read_ours(&file) == records, "{text}");
    }
    // C++ ArrayRecordReader reads an ArrayRecord file that starts with our metadata chunk (the wheel
    // exposes no metadata accessor, so this checks that the chunk is well-formed where C++ meets it).
    let Some(python) = util::python("metadata_we_write_is_read_by_cpp") else {
        return;
    };
    let mut options = WriterOptions::parse_array_record("group_size:2,zstd:3").unwrap();
    options.metadata = Some(metadata.clone());
    let file = util::write_ours(&options, &records);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metadata.array_record");
    std::fs::write(&path, &file).unwrap();
    let (all, random, _) = util::cpp_read(&python, &path, &[2, 0]);
    assert!(all == records, "C++ read the records");
    assert!(random == [records[2].clone(), records[0].clone()]);
    let mut reader = RecordReader::new(Cursor::new(&file[..])).unwrap();
    assert_eq!(reader.read_serialized_metadata().unwrap(), Some(metadata));
}

/// With the default `bucket_fraction` (one bucket per chunk) transposed files are byte for byte those
/// this crate wrote before it split buckets (the digest was taken then).
#[test]
fn default_bucket_fraction_keeps_the_bytes() {
    use sha2::{Digest, Sha256};
    let records = util::interop_records();
    let mut digest = Sha256::new();
    for text in PLAIN_OPTIONS
        .iter()
        .filter(|t| t.contains("transpose") && !t.contains("bucket_fraction"))
    {
        digest.update(util::write_ours(
            &WriterOptions::parse(text).unwrap(),
            &records,
        ));
    }
    assert_eq!(
        util::hex(&digest.finalize()),
        "e0684c96585008ae17564d525543c62d2a4d1377a5851e47cb20439f5fb0c52f"
    );
}

/// A `bucket_fraction` below 1 splits transposed chunks into several buckets (one when 1, or when
/// uncompressed, as C++), and the records read back the same.
#[test]
fn bucket_fraction_splits_chunks_into_buckets() {
    let records = util::interop_records();
    for (text, more_than_one) in [
        ("transpose,zstd:3,chunk_size:20k", false),
        (
            "transpose,uncompressed,chunk_size:20k,bucket_fraction:0.1",
            false,
        ),
        ("transpose,zstd:3,chunk_size:20k,bucket_fraction:0.5", true),
        ("transpose,zstd:3,chunk_size:20k,bucket_fraction:0.1", true),
        ("transpose,zstd:3,chunk_size:20k,bucket_fraction:0.01", true),
        ("transpose,zstd:3,bucket_fraction:0", true),
    ] {
        let file = util::write_ours(&WriterOptions::parse(text).unwrap(), &records);
        let counts = util::bucket_counts(&file);
        assert!(!counts.is_empty(), "{text}");
        let max = counts.iter().copied().max().unwrap_or(0);
        assert_eq!(max > 1, more_than_one, "{text}: buckets {counts:?}");
        assert!(read_ours(&file) == records, "{text}");
    }
}

/// C++ `ArrayRecordReader` reads our chunks of several buckets.
#[test]
fn cpp_reads_our_multi_bucket_files() {
    let Some(python) = util::python("cpp_reads_our_multi_bucket_files") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let records = util::interop_records();
    for (k, (text, fraction)) in [
        ("group_size:250,transpose,zstd:3", 0.001),
        ("group_size:100,transpose,brotli:6", 0.01),
        ("group_size:64,transpose,snappy", 0.0),
    ]
    .into_iter()
    .enumerate()
    {
        let mut options = WriterOptions::parse_array_record(text).unwrap();
        options.bucket_fraction = fraction;
        let file = util::write_ours(&options, &records);
        if text.contains("zstd") {
            assert!(util::bucket_counts(&file).iter().any(|&n| n > 1), "{text}");
        }
        let path = dir.path().join(format!("buckets_{k}.array_record"));
        std::fs::write(&path, &file).unwrap();
        let (all, _, _) = util::cpp_read(&python, &path, &[]);
        assert!(
            all == records,
            "{text} bucket_fraction {fraction}: C++ read"
        );
    }
}

/// With the same bucket size, our chunks have C++'s buckets byte for byte: the same buffers in C++'s
/// order, split at the same places, compressed alike. The states differ (ours is a simpler machine), so
/// the files do not.
#[test]
fn bucket_layout_matches_cpp() {
    let Some(python) = util::python("bucket_layout_matches_cpp") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let records = util::interop_records();
    let records_path = dir.path().join("records.bin");
    let mut framed = Vec::new();
    for r in &records {
        framed.extend_from_slice(&(r.len() as u32).to_le_bytes());
        framed.extend_from_slice(r);
    }
    std::fs::write(&records_path, framed).unwrap();
    let cpp_path = dir.path().join("cpp.array_record");
    let script = r"
import struct, sys
from array_record.python.array_record_module import ArrayRecordWriter
data = open(sys.argv[1], 'rb').read()
w = ArrayRecordWriter(sys.argv[2], sys.argv[3])
p = 0
while p < len(data):
    (n,) = struct.unpack_from('<I', data, p)
    w.write(data[p + 4:p + 4 + n])
    p += 4 + n
w.close()
";
    let cpp_options = "group_size:250,transpose,zstd:3,transpose_bucket_size:1024";
    let status = std::process::Command::new(&python)
        .arg("-c")
        .arg(script)
        .arg(&records_path)
        .arg(&cpp_path)
        .arg(cpp_options)
        .status()
        .unwrap();
    assert!(status.success(), "C++ writer failed");
    let cpp = util::bucket_layouts(&std::fs::read(&cpp_path).unwrap());

    // The chunk size is 1 MiB, so 1/1024 of it is C++'s 1024 bytes.
    let mut options = WriterOptions::parse_array_record("group_size:250,transpose,zstd:3").unwrap();
    options.bucket_fraction = 1.0 / 1024.0;
    assert_eq!(options.bucket_size(), Some(1024));
    let ours = util::bucket_layouts(&util::write_ours(&options, &records));
    assert_eq!(ours.len(), cpp.len());
    for (i, (a, b)) in ours.iter().zip(&cpp).enumerate() {
        assert!(a.bucket_lengths.len() > 1, "chunk {i}: one bucket");
        assert_eq!(a.buffer_lengths, b.buffer_lengths, "chunk {i}: buffers");
        assert_eq!(a.bucket_lengths, b.bucket_lengths, "chunk {i}: buckets");
        assert!(a.buckets == b.buckets, "chunk {i}: bucket bytes");
    }
}
