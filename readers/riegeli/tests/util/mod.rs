//! Shared helpers of the integration tests: fixtures, expected records and the Python interpreter.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use sha2::{Digest, Sha256};

/// The crate directory.
pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    crate_dir().join("../..").canonicalize().unwrap()
}

/// The fixtures directory.
pub fn fixtures_dir() -> PathBuf {
    crate_dir().join("tests/fixtures")
}

/// Decompressed bytes of fixture `name` (stored as `NAME.riegeli.zst`).
pub fn fixture(name: &str) -> Vec<u8> {
    let path = fixtures_dir().join(format!("{name}.riegeli.zst"));
    let compressed = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    zstd::decode_all(&compressed[..]).unwrap()
}

/// Expected records of a fixture: bytes, or (length, sha256) for large ones.
#[derive(Debug)]
pub enum Expected {
    Bytes(Vec<Vec<u8>>),
    Digests(Vec<(usize, String)>),
}

impl Expected {
    pub fn len(&self) -> usize {
        match self {
            Self::Bytes(v) => v.len(),
            Self::Digests(v) => v.len(),
        }
    }

    /// Panics with context if `got` is not record `i`.
    pub fn check(&self, i: usize, got: &[u8], context: &str) {
        match self {
            Self::Bytes(v) => assert!(
                v[i] == got,
                "{context}: record {i} differs ({} vs {} bytes)",
                v[i].len(),
                got.len()
            ),
            Self::Digests(v) => {
                assert_eq!(v[i].0, got.len(), "{context}: record {i} length");
                assert_eq!(
                    v[i].1,
                    hex(&Sha256::digest(got)),
                    "{context}: record {i} digest"
                );
            }
        }
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One entry of `expected.json`.
#[derive(Debug)]
pub struct Golden {
    pub name: String,
    pub options: String,
    pub num_records: usize,
    pub writer_options: String,
    pub file_size: u64,
    pub records: Expected,
}

pub fn b64(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

/// Every fixture with its expected records.
pub fn goldens() -> Vec<Golden> {
    let text = std::fs::read_to_string(fixtures_dir().join("expected.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let map = json.as_object().unwrap();
    let records_of = |entry: &serde_json::Value| -> Expected {
        if let Some(list) = entry.get("records_b64") {
            Expected::Bytes(
                list.as_array()
                    .unwrap()
                    .iter()
                    .map(|s| b64(s.as_str().unwrap()))
                    .collect(),
            )
        } else {
            let lens = entry["records_len"].as_array().unwrap();
            let digests = entry["records_sha256"].as_array().unwrap();
            Expected::Digests(
                lens.iter()
                    .zip(digests)
                    .map(|(l, d)| (l.as_u64().unwrap() as usize, d.as_str().unwrap().to_owned()))
                    .collect(),
            )
        }
    };
    let mut out = Vec::new();
    for (name, entry) in map {
        let source = entry
            .get("same_records_as")
            .and_then(|s| s.as_str())
            .map_or(entry, |other| &map[other]);
        out.push(Golden {
            name: name.clone(),
            options: entry["options"].as_str().unwrap().to_owned(),
            num_records: entry["num_records"].as_u64().unwrap() as usize,
            writer_options: entry["writer_options"].as_str().unwrap().to_owned(),
            file_size: entry["file_size"].as_u64().unwrap(),
            records: records_of(source),
        });
    }
    out
}

/// The Python of the pinned venv: `$BENCH_PYTHON`, else `<root>/tools/.venv/bin/python`. `None` (after
/// printing `SKIPPED`) when neither exists outside CI; under CI a missing venv fails the test.
pub fn python(test: &str) -> Option<PathBuf> {
    testkit::venv_python(test)
}

/// Reads `file` with C++ `ArrayRecordReader` (through `tools/riegeli_fixtures.py read`); returns the
/// records read sequentially, the records at `indices`, and the writer options string.
pub fn cpp_read(
    python: &Path,
    file: &Path,
    indices: &[u64],
) -> (Vec<Vec<u8>>, Vec<Vec<u8>>, String) {
    let script = workspace_root().join("tools/riegeli_fixtures.py");
    let idx: Vec<String> = indices.iter().map(u64::to_string).collect();
    let output = Command::new(python)
        .arg(&script)
        .arg("read")
        .arg(file)
        .arg("--indices")
        .arg(idx.join(","))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "C++ reader failed on {}: {}",
        file.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let list = |key: &str| -> Vec<Vec<u8>> {
        json.get(key)
            .and_then(|v| v.as_array())
            .map(|a| a.iter().map(|s| b64(s.as_str().unwrap())).collect())
            .unwrap_or_default()
    };
    (
        list("records_b64"),
        list("random_b64"),
        json["writer_options"].as_str().unwrap_or("").to_owned(),
    )
}

/// A small deterministic PRNG (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn proto(rng: &mut Rng, depth: u32, out: &mut Vec<u8>) {
    for _ in 0..rng.below(7) {
        let field = 1 + rng.below(12);
        match rng.below(10) {
            0..=2 => {
                put_varint(out, field << 3);
                let v = match rng.below(5) {
                    0 => rng.below(4),
                    1 => rng.below(300),
                    2 => u64::MAX,
                    _ => rng.next() >> rng.below(64),
                };
                put_varint(out, v);
            }
            3 => {
                put_varint(out, (field << 3) | 5);
                out.extend_from_slice(&(rng.next() as u32).to_le_bytes());
            }
            4 => {
                put_varint(out, (field << 3) | 1);
                out.extend_from_slice(&rng.next().to_le_bytes());
            }
            5 | 6 => {
                put_varint(out, (field << 3) | 2);
                let n = rng.below(40) as usize;
                put_varint(out, n as u64);
                out.extend((0..n).map(|i| b"abc \x00\xff\x07"[(i + rng.below(7) as usize) % 7]));
            }
            7 | 8 if depth < 4 => {
                let mut sub = Vec::new();
                proto(rng, depth + 1, &mut sub);
                put_varint(out, (field << 3) | 2);
                put_varint(out, sub.len() as u64);
                out.extend_from_slice(&sub);
            }
            _ if depth < 4 => {
                put_varint(out, (field << 3) | 3);
                proto(rng, depth + 1, out);
                put_varint(out, (field << 3) | 4);
            }
            _ => {}
        }
    }
}

/// Proto-like records (varints of all sizes, fixed32/64, strings, submessages, groups) mixed with
/// non-proto and empty records; every `big`-th record carries a large string (crossing blocks).
pub fn records(seed: u64, n: usize, big: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed | 1);
    (0..n)
        .map(|i| {
            let mut r = Vec::new();
            match rng.below(10) {
                0 => {}
                1 => r.extend_from_slice(format!("plain text record {i}").as_bytes()),
                2 => r.extend_from_slice(&[0x08, 0x80, 0x00]),
                3 => r.extend((0..rng.below(50)).map(|_| rng.next() as u8)),
                _ => proto(&mut rng, 0, &mut r),
            }
            if big > 0 && i % big == 0 {
                let pad: Vec<u8> = (0..30_000).map(|k| (k % 61) as u8 + b'0').collect();
                let mut with = vec![0x7a];
                put_varint(&mut with, pad.len() as u64);
                with.extend_from_slice(&pad);
                with.extend_from_slice(&r);
                r = with;
            }
            r
        })
        .collect()
}

/// Records with about 150 distinct fields (more than 64 states: NoOp routing trees).
pub fn many_field_records(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut r = Vec::new();
            for f in (1 + (i % 3) * 50)..(20 + (i % 3) * 50 + i % 31) {
                put_varint(&mut r, (f as u64) << 3);
                put_varint(&mut r, (i * f) as u64);
            }
            r
        })
        .collect()
}

/// The records the interop tests write and read: small and large protos, messages of many fields
/// and empty records.
pub fn interop_records() -> Vec<Vec<u8>> {
    let mut r = records(7, 600, 97);
    r.extend(many_field_records(150));
    r.extend(records(8, 50, 0));
    r
}

/// `records` written by our writer with `options`, into memory.
pub fn write_ours(options: &riegeli_records::WriterOptions, records: &[Vec<u8>]) -> Vec<u8> {
    let mut w = riegeli_records::RecordWriter::new(Vec::new(), options.clone()).unwrap();
    for r in records {
        w.write_record(r).unwrap();
    }
    w.close().unwrap()
}

/// The number of buckets of every transposed data chunk of `file` (uncompressed or zstd), read from the
/// chunks' headers.
pub fn bucket_counts(file: &[u8]) -> Vec<u64> {
    bucket_layouts(file)
        .iter()
        .map(|l| l.bucket_lengths.len() as u64)
        .collect()
}

/// How a transposed chunk's buffers lie in buckets.
#[derive(Debug, PartialEq, Eq)]
pub struct BucketLayout {
    /// Stored (compressed) length of each bucket.
    pub bucket_lengths: Vec<u64>,
    /// Length of each buffer, in order.
    pub buffer_lengths: Vec<u64>,
    /// The buckets' stored bytes.
    pub buckets: Vec<u8>,
}

/// The bucket layout of every transposed data chunk of `file` (uncompressed or zstd).
pub fn bucket_layouts(file: &[u8]) -> Vec<BucketLayout> {
    use riegeli_records::varint::read_varint64;
    use riegeli_records::{ChunkType, CompressionType, RecordReader};
    let mut reader = RecordReader::new(std::io::Cursor::new(file)).unwrap();
    let mut layouts = Vec::new();
    while let Some(info) = reader.read_chunk_info().unwrap() {
        if info.header.chunk_type != ChunkType::Transposed || info.header.num_records == 0 {
            continue;
        }
        let chunk = without_block_headers(file, info.begin, info.end);
        let data = &chunk[40..];
        let mut p = 1;
        let len = read_varint64(data, &mut p).unwrap() as usize;
        let stream = &data[p..p + len];
        let header = match info.compression {
            Some(CompressionType::None) => stream.to_vec(),
            Some(CompressionType::Zstd) => {
                let mut q = 0;
                let size = read_varint64(stream, &mut q).unwrap() as usize;
                zstd::bulk::decompress(&stream[q..], size).unwrap()
            }
            other => panic!("bucket_counts: unsupported compression {other:?}"),
        };
        let mut h = 0;
        let mut next = || read_varint64(&header, &mut h).unwrap();
        let (buckets, buffers) = (next(), next());
        let bucket_lengths: Vec<u64> = (0..buckets).map(|_| next()).collect();
        let buffer_lengths = (0..buffers).map(|_| next()).collect();
        let start = p + len;
        let end = start + bucket_lengths.iter().sum::<u64>() as usize;
        layouts.push(BucketLayout {
            bucket_lengths,
            buffer_lengths,
            buckets: data[start..end].to_vec(),
        });
    }
    layouts
}

/// The bytes of `file[begin..end]` without the block headers among them.
fn without_block_headers(file: &[u8], begin: u64, end: u64) -> Vec<u8> {
    use riegeli_records::block::{BLOCK_HEADER_SIZE, BLOCK_SIZE};
    (begin..end)
        .filter(|pos| pos % BLOCK_SIZE >= BLOCK_HEADER_SIZE)
        .map(|pos| file[pos as usize])
        .collect()
}
