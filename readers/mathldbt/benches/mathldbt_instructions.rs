//! `mathldbt_instructions`: MATHLDBT encode and decode of the deterministic bars batch
//! (`mathldbt::fixture::bars`, as `mathldbt_transport` builds it), counted in instructions.
//!
//! A gungraun suite: each benchmark runs once under valgrind's Callgrind and reports exact counts
//! (instructions, estimated cycles, L1/LL/RAM hits), which are the same on every run of the same
//! binary. It needs valgrind and `gungraun-runner` at the version of the `gungraun` dev-dependency;
//! `bench-run --suite mathldbt_instructions` runs and records it.
//!
//! Ids read `codec/<operation>/<encoding>_<rows>`, at the two sizes of `mathldbt_transport` (2,000
//! and 100,000 rows). Setup (building the batch, encoding the message,
//! one warm-up call so buffers are sized, as in criterion's warm-up) is not counted, nor is freeing
//! the inputs: every benchmark returns them.
//!
//! | function | what is counted |
//! |---|---|
//! | `encode` | one `Encoder::encode` on a warm encoder |
//! | `decode` | one `Decoder::decode` of the message into a new batch, warm decoder |
//! | `decode_into` | one `Decoder::decode_into` a reused batch, warm decoder |
//!
//! Encodings: `plain` (plain column encodings) and `dict_delta` (`DictUtf8` + `DeltaVarintI64`).
//! Compressed messages are left to the wall-time suite: their counts would be mostly the
//! compressor's.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and benches fail loudly"
)]
#![allow(
    missing_docs,
    reason = "gungraun's macros generate public items without docs"
)]

use std::hint::black_box;

use gungraun::prelude::*;
use mathldbt::{ColumnarBatch, DecodeOptions, Decoder, EncodeOptions, Encoder, fixture};

/// A warm encoder and the batch it encodes.
fn encoder(options: EncodeOptions, rows: usize) -> (Encoder, ColumnarBatch) {
    let batch = fixture::bars(rows);
    let mut encoder = Encoder::new(options);
    encoder.encode(&batch).expect("encode");
    (encoder, batch)
}

/// A warm decoder, the message and a batch it has already decoded into.
fn decoder(options: EncodeOptions, rows: usize) -> (Decoder, Vec<u8>, ColumnarBatch) {
    let batch = fixture::bars(rows);
    let message = Encoder::new(options)
        .encode(&batch)
        .expect("encode")
        .to_vec();
    let mut decoder = Decoder::new(DecodeOptions::default());
    let mut out = ColumnarBatch::default();
    decoder.decode_into(&message, &mut out).expect("decode");
    (decoder, message, out)
}

#[library_benchmark]
#[bench::plain_2000(args = (EncodeOptions::plain(), 2_000), setup = encoder)]
#[bench::dict_delta_2000(args = (EncodeOptions::dict_delta(), 2_000), setup = encoder)]
#[bench::plain_100000(args = (EncodeOptions::plain(), 100_000), setup = encoder)]
#[bench::dict_delta_100000(args = (EncodeOptions::dict_delta(), 100_000), setup = encoder)]
fn encode((mut encoder, batch): (Encoder, ColumnarBatch)) -> (Encoder, ColumnarBatch) {
    black_box(encoder.encode(black_box(&batch)).expect("encode").len());
    (encoder, batch)
}

#[library_benchmark]
#[bench::plain_2000(args = (EncodeOptions::plain(), 2_000), setup = decoder)]
#[bench::dict_delta_2000(args = (EncodeOptions::dict_delta(), 2_000), setup = decoder)]
#[bench::plain_100000(args = (EncodeOptions::plain(), 100_000), setup = decoder)]
#[bench::dict_delta_100000(args = (EncodeOptions::dict_delta(), 100_000), setup = decoder)]
fn decode(
    (mut decoder, message, previous): (Decoder, Vec<u8>, ColumnarBatch),
) -> (Decoder, Vec<u8>, ColumnarBatch, ColumnarBatch) {
    let batch = decoder.decode(black_box(&message)).expect("decode");
    (decoder, message, previous, black_box(batch))
}

#[library_benchmark]
#[bench::plain_2000(args = (EncodeOptions::plain(), 2_000), setup = decoder)]
#[bench::dict_delta_2000(args = (EncodeOptions::dict_delta(), 2_000), setup = decoder)]
#[bench::plain_100000(args = (EncodeOptions::plain(), 100_000), setup = decoder)]
#[bench::dict_delta_100000(args = (EncodeOptions::dict_delta(), 100_000), setup = decoder)]
fn decode_into(
    (mut decoder, message, mut out): (Decoder, Vec<u8>, ColumnarBatch),
) -> (Decoder, Vec<u8>, ColumnarBatch) {
    decoder
        .decode_into(black_box(&message), &mut out)
        .expect("decode");
    black_box(out.num_rows());
    (decoder, message, out)
}

library_benchmark_group!(name = codec, benchmarks = [encode, decode, decode_into]);

main!(library_benchmark_groups = codec);
