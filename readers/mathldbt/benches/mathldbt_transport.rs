//! `mathldbt_transport`: MATHLDBT encode and decode on the deterministic
//! bars batch (`mathldbt::fixture::bars`), at 2,000 and 100,000 rows.
//!
//! Ids read `mathldbt_transport/<benchmark>/<rows>`. Every benchmark's
//! throughput is the size of the batch's plain MATHLDBT message, so
//! throughput ratios are speed ratios.
//!
//! | benchmark | what is timed |
//! |---|---|
//! | `encode_plain_ws` | warm `Encoder`, plain encodings |
//! | `encode_dict_delta_ws` | warm `Encoder`, `DictUtf8` + `DeltaVarintI64` |
//! | `encode_fast_path_plain_ws` | warm `Encoder::encode_view` of a `ColumnarBatchView` over the batch's buffers, plain |
//! | `encode_fast_path_dict_delta_ws` | as `encode_fast_path_plain_ws`, dict+delta |
//! | `decode_plain_ws` | warm `Decoder::decode` of the plain message into a new batch |
//! | `decode_into_plain_ws` | warm `Decoder::decode_into` a reused batch |
//! | `decode_dict_delta_ws` | as `decode_plain_ws`, dict+delta message |
//! | `decode_into_dict_delta_ws` | as `decode_into_plain_ws`, dict+delta message |
//! | `encode_zstd_ws` | dict+delta encode + zstd level 3 (reused context) |
//! | `decode_zstd_ws` | zstd decompress (reused context) + decode into a new batch |
//! | `encode_gzip_ws` | dict+delta encode + gzip level 6 (reused deflate state) |
//! | `decode_gzip_ws` | gzip inflate (reused state) + decode into a new batch |
//!
//! The fast-path pair is seed 002's "Fast-path encode" (its
//! `encode_mathldbt_v1_fast_path_into_with_workspace`, the seed's own
//! `encode_view`), which its log sets beside "Owned encode", that is
//! `encode_plain_ws` and `encode_dict_delta_ws`. The view is built outside
//! the timed loop, as a caller holding its own buffers would.
//!
//! The compressed benchmarks need the `compression-zstd` /
//! `compression-gzip` features, which are on by default.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests and benches fail loudly"
)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mathldbt::{ColumnarBatch, DecodeOptions, Decoder, EncodeOptions, Encoder, fixture};

mod common;
use common::ROWS;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("mathldbt_transport");
    for rows in ROWS {
        common::configure_sampling(&mut group, rows);
        let batch = fixture::bars(rows);
        let mut plain = Encoder::new(EncodeOptions::plain());
        let mut dict_delta = Encoder::new(EncodeOptions::dict_delta());
        let plain_msg = plain.encode(&batch).expect("encode").to_vec();
        let dd_msg = dict_delta.encode(&batch).expect("encode").to_vec();
        group.throughput(Throughput::Bytes(plain_msg.len() as u64));

        group.bench_with_input(
            BenchmarkId::new("encode_plain_ws", rows),
            &batch,
            |b, batch| {
                b.iter(|| black_box(plain.encode(batch).expect("encode").len()));
            },
        );
        group.bench_with_input(
            BenchmarkId::new("encode_dict_delta_ws", rows),
            &batch,
            |b, batch| b.iter(|| black_box(dict_delta.encode(batch).expect("encode").len())),
        );
        let view = batch.view();
        for (name, encoder) in [
            ("encode_fast_path_plain_ws", &mut plain),
            ("encode_fast_path_dict_delta_ws", &mut dict_delta),
        ] {
            group.bench_with_input(BenchmarkId::new(name, rows), &view, |b, view| {
                b.iter(|| black_box(encoder.encode_view(view).expect("encode").len()));
            });
        }

        let mut decoder = Decoder::new(DecodeOptions::default());
        for (name, into_name, msg) in [
            ("decode_plain_ws", "decode_into_plain_ws", &plain_msg),
            ("decode_dict_delta_ws", "decode_into_dict_delta_ws", &dd_msg),
        ] {
            group.bench_with_input(BenchmarkId::new(name, rows), msg, |b, m| {
                b.iter(|| black_box(decoder.decode(m).expect("decode")));
            });
            let mut out = ColumnarBatch::default();
            group.bench_with_input(BenchmarkId::new(into_name, rows), msg, |b, m| {
                b.iter(|| {
                    decoder.decode_into(m, &mut out).expect("decode");
                    black_box(out.num_rows())
                });
            });
        }

        #[cfg(feature = "compression-zstd")]
        compressed(
            &mut group,
            rows,
            &batch,
            mathldbt::Compression::ZSTD_DEFAULT,
            ("encode_zstd_ws", "decode_zstd_ws"),
        );
        #[cfg(feature = "compression-gzip")]
        compressed(
            &mut group,
            rows,
            &batch,
            mathldbt::Compression::GZIP_DEFAULT,
            ("encode_gzip_ws", "decode_gzip_ws"),
        );
    }
    group.finish();
}

#[cfg(any(feature = "compression-zstd", feature = "compression-gzip"))]
fn compressed(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    rows: usize,
    batch: &ColumnarBatch,
    compression: mathldbt::Compression,
    (encode_name, decode_name): (&str, &str),
) {
    // Compression dominates these; flat sampling keeps gzip's run short.
    group.sampling_mode(criterion::SamplingMode::Flat);
    let mut encoder = Encoder::new(EncodeOptions::dict_delta());
    let wire = encoder
        .encode_compressed(batch, compression)
        .expect("encode")
        .to_vec();
    group.bench_with_input(BenchmarkId::new(encode_name, rows), batch, |b, batch| {
        b.iter(|| {
            black_box(
                encoder
                    .encode_compressed(batch, compression)
                    .expect("encode")
                    .len(),
            )
        });
    });
    let mut decoder = Decoder::new(DecodeOptions::default());
    group.bench_with_input(BenchmarkId::new(decode_name, rows), &wire, |b, w| {
        b.iter(|| black_box(decoder.decode_compressed(w, 1 << 30).expect("decode")));
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
