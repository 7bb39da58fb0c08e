//! Data and configurations shared by the `throughput` and `head_to_head` suites (and by
//! crates-io-compare/, which includes this file). The C++ anchor (`tools/riegeli_cpp_bench.py`)
//! generates byte-identical records.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::io::{BufReader, Cursor, Read, Seek};
use std::path::Path;
use std::time::Duration;

use criterion::BenchmarkGroup;
use criterion::measurement::WallTime;
use riegeli_records::{RecordReader, RecordWriter, WriterOptions};

#[cfg(target_os = "linux")]
pub mod flamegraph;

/// Records per benchmark iteration (seed 004).
pub const NUM_RECORDS: usize = 10_000;

/// Every configuration writes chunks of this size (the C++ default for compressed files and the
/// `riegeli` crate's default), so that all implementations compress the same amount per chunk.
pub const CHUNK_SIZE: u64 = 1 << 20;

/// Seed 004's `throughput` matrix: (name, C++ options).
pub const THROUGHPUT_CONFIGS: [(&str, &str); 8] = [
    ("simple_none", "uncompressed"),
    ("simple_brotli_6", "brotli:6"),
    ("simple_zstd_3", "zstd:3"),
    ("simple_snappy", "snappy"),
    ("transpose_none", "transpose,uncompressed"),
    ("transpose_brotli_6", "transpose,brotli:6"),
    ("transpose_zstd_3", "transpose,zstd:3"),
    ("transpose_snappy", "transpose,snappy"),
];

/// Seed 004's `head_to_head` configurations (each with small and large records).
pub const HEAD_TO_HEAD_CONFIGS: [(&str, &str); 6] = [
    ("simple_none", "uncompressed"),
    ("simple_brotli_6", "brotli:6"),
    ("simple_zstd_3", "zstd:3"),
    ("transpose_none", "transpose,uncompressed"),
    ("transpose_brotli_6", "transpose,brotli:6"),
    ("transpose_zstd_3", "transpose,zstd:3"),
];

/// Record sizes of `head_to_head`: small 100 B, large 10 KiB.
pub const HEAD_TO_HEAD_SIZES: [(&str, usize); 2] = [("small", 100), ("large", 10 * 1024)];

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

const TEXT: &[u8] = b"The quick brown fox jumps over the lazy dog. ";

/// Seed 004's proto-like record: field 1 = varint index, field 2 = padding with a repeating pattern,
/// `size` bytes in all.
pub fn proto_record(i: usize, size: usize) -> Vec<u8> {
    let mut head = vec![0x08];
    put_varint(&mut head, i as u64);
    head.push(0x12);
    let mut len = size - head.len() - 1;
    if len >= 128 {
        len = size - head.len() - 2;
    }
    put_varint(&mut head, len as u64);
    head.extend((0..len).map(|k| TEXT[(k + i) % TEXT.len()]));
    head
}

/// `head_to_head`'s record: a JSON-like text prefix, then low-entropy binary padding (16 byte values),
/// `size` bytes in all.
pub fn json_record(i: usize, size: usize) -> Vec<u8> {
    let mut r = format!(
        "{{\"id\":{i},\"name\":\"record-{i}\",\"value\":{}}}",
        (i * 7919) % 100_003
    )
    .into_bytes();
    let mut k = 0u64;
    while r.len() < size {
        let x = ((i as u64)
            .wrapping_mul(2_654_435_761)
            .wrapping_add(k.wrapping_mul(40_503)))
            & 0xffff_ffff;
        r.push((((x >> 13) & 0x0f) as u8) | 0x40);
        k += 1;
    }
    r.truncate(size);
    r
}

pub fn options(cpp: &str) -> WriterOptions {
    WriterOptions::parse(&format!("{cpp},chunk_size:{CHUNK_SIZE}")).unwrap()
}

pub fn write_ours(options: &WriterOptions, records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 << 20);
    write_ours_into(options, records, &mut out);
    out
}

/// As [`write_ours`], into `out` (cleared first): a sink reused between iterations keeps its
/// pages, so the time is the writer's own and not the kernel's first-touch faults on a fresh
/// buffer.
pub fn write_ours_into(options: &WriterOptions, records: &[Vec<u8>], out: &mut Vec<u8>) -> usize {
    out.clear();
    let mut w = RecordWriter::new(&mut *out, options.clone()).unwrap();
    for r in records {
        w.write_record(r).unwrap();
    }
    w.close().unwrap();
    out.len()
}

/// A directory for the files of the `*_file` benchmarks: in `/dev/shm` when there is one, where
/// C++'s anchor (`tools/riegeli_cpp_bench.py`, `tools/riegeli_cpp_worker.py`) writes its files.
pub fn scratch_dir() -> std::io::Result<tempfile::TempDir> {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        tempfile::tempdir_in(shm)
    } else {
        tempfile::tempdir()
    }
}

/// One complete file at `path`, created or truncated as C++'s anchor does, and written
/// unbuffered (the writer hands the file whole blocks). Returns the file's length. This is the
/// write to compare with C++'s: the kernel allocates a file's pages inside `write`, which costs
/// less than the first-touch page faults of a fresh `Vec` (simple_none_large in run #82: 88 ms
/// into a file, 110 ms into a fresh `Vec`).
pub fn write_ours_file(options: &WriterOptions, records: &[Vec<u8>], path: &Path) -> u64 {
    let mut w = RecordWriter::new(File::create(path).unwrap(), options.clone()).unwrap();
    for r in records {
        w.write_record(r).unwrap();
    }
    w.close().unwrap().metadata().unwrap().len()
}

/// Reads every record of the file at `path` through a `BufReader` (one copy out of the page
/// cache, as C++'s reader makes); returns the bytes read.
pub fn read_ours_file(path: &Path) -> usize {
    read_ours_from(BufReader::new(File::open(path).unwrap()), 0)
}

/// Reads every record; returns the bytes read (so the work cannot be optimised away).
pub fn read_ours(file: &[u8]) -> usize {
    read_ours_with(file, 0)
}

/// As [`read_ours`], decoding on `threads` background threads.
pub fn read_ours_with(file: &[u8], threads: usize) -> usize {
    read_ours_from(Cursor::new(file), threads)
}

/// As [`read_ours_with`], from any source (a buffered file, say).
pub fn read_ours_from(src: impl Read + Seek, threads: usize) -> usize {
    let mut reader = RecordReader::new(src).unwrap();
    reader.set_parallelism(threads);
    let mut total = 0;
    while let Some(r) = reader.read_record().unwrap() {
        total += r.len();
    }
    total
}

/// Reads every record with `projection` (transposed chunks decode only its fields); returns the
/// bytes read.
pub fn read_ours_projected(file: &[u8], projection: &riegeli_records::FieldProjection) -> usize {
    let mut reader = RecordReader::new(Cursor::new(file)).unwrap();
    reader.set_field_projection(projection.clone()).unwrap();
    let mut total = 0;
    while let Some(r) = reader.read_record().unwrap() {
        total += r.len();
    }
    total
}

/// The two streams of each simple chunk our writer makes from `records`, uncompressed: the
/// record sizes as varints and the records' bytes. The grouping is the writer's: a chunk takes
/// records while their lengths plus 8 bytes each fit in [`CHUNK_SIZE`].
pub fn simple_chunk_streams(records: &[Vec<u8>]) -> Vec<[Vec<u8>; 2]> {
    let mut chunks = Vec::new();
    let mut chunk: [Vec<u8>; 2] = Default::default();
    let (mut count, mut cost) = (0, 0);
    for r in records {
        let c = r.len() as u64 + 8;
        if count > 0 && cost + c > CHUNK_SIZE {
            chunks.push(std::mem::take(&mut chunk));
            (count, cost) = (0, 0);
        }
        put_varint(&mut chunk[0], r.len() as u64);
        chunk[1].extend_from_slice(r);
        (count, cost) = (count + 1, cost + c);
        if cost + 8 > CHUNK_SIZE {
            chunks.push(std::mem::take(&mut chunk));
            (count, cost) = (0, 0);
        }
    }
    if count > 0 {
        chunks.push(chunk);
    }
    chunks
}

/// `(records, decoded bytes)` of each simple chunk of `file`, to check that
/// [`simple_chunk_streams`] groups records as the writer that made `file` did.
pub fn simple_chunk_shapes(file: &[u8]) -> Vec<(u64, u64)> {
    let mut reader = RecordReader::new(Cursor::new(file)).unwrap();
    let mut shapes = Vec::new();
    while let Some(c) = reader.read_chunk_info().unwrap() {
        if c.header.chunk_type == riegeli_records::ChunkType::Simple {
            shapes.push((c.header.num_records, c.header.decoded_data_size));
        }
    }
    shapes
}

/// The least a simple-chunk `zstd:3` writer or reader built on libzstd has to do: compress, or
/// decompress, each chunk's two streams at level 3 with a reused context into a reused buffer,
/// and nothing else (no record copies, hashes, headers, framing or sink). Its time divided into
/// the `riegeli` crate's is the largest speedup over the crate any such implementation can show.
pub struct ZstdOnly {
    streams: Vec<[Vec<u8>; 2]>,
    frames: Vec<Vec<u8>>,
    compressor: zstd::bulk::Compressor<'static>,
    decompressor: zstd::bulk::Decompressor<'static>,
    out: Vec<u8>,
}

impl ZstdOnly {
    /// Our writer's libzstd parameters (level 3, content size, no checksum) on `records`' chunks.
    pub fn new(records: &[Vec<u8>]) -> Self {
        let streams = simple_chunk_streams(records);
        let mut compressor = zstd::bulk::Compressor::new(3).unwrap();
        compressor.include_checksum(false).unwrap();
        compressor.include_contentsize(true).unwrap();
        let frames = streams
            .iter()
            .flatten()
            .map(|s| compressor.compress(s).unwrap())
            .collect();
        let largest = streams.iter().flatten().map(Vec::len).max().unwrap_or(0);
        let mut floor = ZstdOnly {
            streams,
            frames,
            compressor,
            decompressor: zstd::bulk::Decompressor::new().unwrap(),
            out: Vec::with_capacity(zstd::zstd_safe::compress_bound(largest)),
        };
        let raw: usize = floor.streams.iter().flatten().map(Vec::len).sum();
        assert_eq!(floor.read(), raw, "zstd round trip");
        floor
    }

    /// `(records, decoded bytes)` of each chunk, as [`simple_chunk_shapes`] gives them.
    pub fn shapes(&self) -> Vec<(u64, u64)> {
        self.streams
            .iter()
            .map(|[sizes, values]| {
                let records = sizes.iter().filter(|&&b| b < 0x80).count() as u64;
                (records, values.len() as u64)
            })
            .collect()
    }

    /// Compresses every stream; returns the compressed bytes.
    pub fn write(&mut self) -> usize {
        let mut total = 0;
        for s in self.streams.iter().flatten() {
            self.out.clear();
            total += self
                .compressor
                .compress_to_buffer(s, &mut self.out)
                .unwrap();
        }
        total
    }

    /// Decompresses every stream; returns the decompressed bytes.
    pub fn read(&mut self) -> usize {
        let mut total = 0;
        for f in &self.frames {
            self.out.clear();
            total += self
                .decompressor
                .decompress_to_buffer(f, &mut self.out)
                .unwrap();
        }
        total
    }
}

pub fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
}
