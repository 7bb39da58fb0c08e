//! Helpers shared by this package's tests, bench and worker: the main crate's benchmark data
//! ([`common`], the same file its benches include, so the records are byte-identical) and the
//! crates.io `riegeli` crate's writer and reader set up as ours are.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmark and test helpers fail loudly"
)]

use std::io::Cursor;

#[path = "../../benches/common/mod.rs"]
pub mod common;

use common::CHUNK_SIZE;

/// The `riegeli` crate's options for a head_to_head configuration name (`simple_zstd_3`, ...):
/// the same codec, level and chunk size as ours.
#[must_use]
pub fn crate_options(name: &str) -> riegeli::WriterOptions {
    use riegeli::CompressionType as C;
    let o = riegeli::WriterOptions::new()
        .chunk_size(CHUNK_SIZE)
        .transpose(name.starts_with("transpose"));
    if name.ends_with("brotli_6") {
        o.compression(C::Brotli).compression_level(6)
    } else if name.ends_with("zstd_3") {
        o.compression(C::Zstd).compression_level(3)
    } else {
        o.compression(C::None)
    }
}

/// The `riegeli` crate's writer, into a fresh buffer like `common::write_ours`.
#[must_use]
pub fn write_crate(name: &str, records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 << 20);
    write_crate_into(name, records, &mut out);
    out
}

/// As [`write_crate`], into `out` (cleared first).
pub fn write_crate_into(name: &str, records: &[Vec<u8>], out: &mut Vec<u8>) -> usize {
    out.clear();
    let mut w = riegeli::RecordWriter::new(&mut *out, crate_options(name)).unwrap();
    for r in records {
        w.write_record(r).unwrap();
    }
    w.close().unwrap();
    out.len()
}

/// The `riegeli` crate's reader; returns the bytes read.
#[must_use]
pub fn read_crate(file: &[u8]) -> usize {
    let mut reader =
        riegeli::RecordReader::new(Cursor::new(file), riegeli::ReaderOptions::new()).unwrap();
    let mut total = 0;
    while let Some(r) = reader.read_record().unwrap() {
        total += r.len();
    }
    total
}
