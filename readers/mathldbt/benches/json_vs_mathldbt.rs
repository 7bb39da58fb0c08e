//! `json_vs_mathldbt`: MATHLDBT against serde_json rows and Arrow IPC on the
//! same deterministic bars batch (`mathldbt::fixture::bars`), at 2,000 and
//! 100,000 rows.
//!
//! Ids read `json_vs_mathldbt/<benchmark>/<rows>`. Every benchmark's
//! throughput is the size of the batch's plain MATHLDBT message (about the
//! raw columnar size), the same for all of them, so throughput ratios are
//! speed ratios.
//!
//! * `mathldbt_encode_ws` / `mathldbt_decode_ws`: seed 002's pair, as the
//!   seed measured it: `EncodeOptions::dict_delta()` with a warm `Encoder`,
//!   and a warm `Decoder::decode` of that message into a new batch.
//! * `mathldbt_encode_plain_ws` / `mathldbt_decode_into_plain_ws`: ours, the
//!   codec's fastest steady state: plain encodings with a warm `Encoder`, and
//!   `Decoder::decode_into` a warm batch. Neither competitor has an
//!   equivalent of reusing the output.
//! * `json_serialize` / `json_deserialize`: `Vec<BarRow>` <-> JSON array
//!   (field names on every row), output buffer reused.
//! * `arrow_ipc_encode` / `arrow_ipc_decode`: one `RecordBatch` through
//!   `StreamWriter` / `StreamReader` (which validates, by default).
//!
//! Building the rows and the `RecordBatch` happens outside the timed loop.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests and benches fail loudly"
)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mathldbt::baselines::{arrow, json};
use mathldbt::{ColumnarBatch, DecodeOptions, Decoder, EncodeOptions, Encoder, fixture};

mod common;
use common::ROWS;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("json_vs_mathldbt");
    for rows in ROWS {
        common::configure_sampling(&mut group, rows);
        let batch = fixture::bars(rows);
        let mut plain = Encoder::new(EncodeOptions::plain());
        let plain_msg = plain.encode(&batch).expect("encode").to_vec();
        group.throughput(Throughput::Bytes(plain_msg.len() as u64));
        let mut dict_delta = Encoder::new(EncodeOptions::dict_delta());
        let dd_msg = dict_delta.encode(&batch).expect("encode").to_vec();

        group.bench_with_input(
            BenchmarkId::new("mathldbt_encode_ws", rows),
            &batch,
            |b, batch| {
                b.iter(|| black_box(dict_delta.encode(batch).expect("encode").len()));
            },
        );
        let mut decoder = Decoder::new(DecodeOptions::default());
        group.bench_with_input(
            BenchmarkId::new("mathldbt_decode_ws", rows),
            &dd_msg,
            |b, m| {
                b.iter(|| black_box(decoder.decode(m).expect("decode")));
            },
        );
        group.bench_with_input(
            BenchmarkId::new("mathldbt_encode_plain_ws", rows),
            &batch,
            |b, batch| {
                b.iter(|| black_box(plain.encode(batch).expect("encode").len()));
            },
        );
        let mut out = ColumnarBatch::default();
        group.bench_with_input(
            BenchmarkId::new("mathldbt_decode_into_plain_ws", rows),
            &plain_msg,
            |b, m| {
                b.iter(|| {
                    decoder.decode_into(m, &mut out).expect("decode");
                    black_box(out.num_rows())
                });
            },
        );

        let bars = json::bar_rows(&batch).expect("rows");
        let mut text = Vec::new();
        json::serialize(&bars, &mut text).expect("json");
        group.bench_with_input(
            BenchmarkId::new("json_serialize", rows),
            &bars,
            |b, bars| {
                b.iter(|| {
                    json::serialize(bars, &mut text).expect("json");
                    black_box(text.len())
                });
            },
        );
        json::serialize(&bars, &mut text).expect("json");
        group.bench_with_input(BenchmarkId::new("json_deserialize", rows), &text, |b, t| {
            b.iter(|| black_box(json::deserialize(t).expect("json")));
        });

        let rb = arrow::to_record_batch(&batch).expect("arrow");
        let mut ipc = Vec::new();
        group.bench_with_input(BenchmarkId::new("arrow_ipc_encode", rows), &rb, |b, rb| {
            b.iter(|| {
                arrow::encode_ipc(rb, None, &mut ipc).expect("ipc");
                black_box(ipc.len())
            });
        });
        arrow::encode_ipc(&rb, None, &mut ipc).expect("ipc");
        group.bench_with_input(
            BenchmarkId::new("arrow_ipc_decode", rows),
            &ipc,
            |b, ipc| {
                b.iter(|| black_box(arrow::decode_ipc(ipc).expect("ipc")));
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
