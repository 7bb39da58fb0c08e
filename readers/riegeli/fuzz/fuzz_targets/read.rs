//! Fuzz target for the Riegeli/records reader.
//!
//! Run from `readers/riegeli/fuzz` with `cargo +nightly fuzz run read`. Seed the corpus with the
//! decompressed golden files (`zstd -d ../tests/fixtures/*.zst`) and small files written by
//! `riegeli-tool write`. Hash checks make random bytes fail early, so the target also re-hashes: it
//! treats the input as one chunk's data and wraps it in a file with valid headers, which sends the
//! mutations into the simple and transposed chunk decoders.

#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use riegeli_records::{ArrayRecordReader, ChunkHeader, ChunkType, RecordReader, RecordWriter, WriterOptions};

fn drain(file: &[u8], recover: bool) {
    let Ok(mut reader) = RecordReader::new(Cursor::new(file)) else { return };
    if recover {
        reader.set_recovery(|_| true);
    }
    while let Ok(Some(_)) = reader.read_record() {}
}

fuzz_target!(|data: &[u8]| {
    // The input as a whole file, plain and with recovery, and as an ArrayRecord file.
    drain(data, false);
    drain(data, true);
    if let Ok(mut ar) = ArrayRecordReader::new(Cursor::new(data)) {
        for i in 0..ar.len().min(64) {
            let _ = ar.get(i);
        }
    }
    // The input as the data of a simple / transposed chunk with valid hashes.
    let Some((&selector, body)) = data.split_first() else { return };
    let Ok(writer) = RecordWriter::new(Vec::new(), WriterOptions::default()) else { return };
    let Ok(mut file) = writer.close() else { return };
    let chunk_type = if selector & 1 == 0 { ChunkType::Simple } else { ChunkType::Transposed };
    let num_records = u64::from(selector >> 1);
    let decoded = body.len() as u64 * u64::from(selector % 7 + 1);
    let header = ChunkHeader::new(chunk_type, body, num_records, decoded);
    file.extend_from_slice(&header.encode());
    if body.len() < 60_000 {
        file.extend_from_slice(body);
        file.resize(header.chunk_end(64) as usize, 0);
        drain(&file, false);
    }
});
