//! `head_to_head_crate`: seed 004's 12 head_to_head cells (6 configurations x small 100 B / large
//! 10 KiB records, 10,000 records each): our `riegeli` package against the crates.io `riegeli`
//! crate 0.2.1, in the same process, interleaved per cell. Ids read `<config>_<size>/<impl>_<op>`
//! with impl `ours` or `riegeli_crate` and op `write` or `read`, as the main crate's
//! `head_to_head` had them before the crate moved here; throughput is the record bytes. Both
//! write 1 MiB chunks with the same codec and level. `*_write_reuse` write into one output buffer
//! per implementation, cleared and reused between iterations, so that the kernel's page faults on
//! a fresh buffer do not hide the writers' own cost.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benches fail loudly"
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use riegeli_crates_io_compare::common::{
    HEAD_TO_HEAD_CONFIGS, HEAD_TO_HEAD_SIZES, NUM_RECORDS, configure, json_record, options,
    read_ours, write_ours, write_ours_into,
};
use riegeli_crates_io_compare::{read_crate, write_crate, write_crate_into};

fn bench(c: &mut Criterion) {
    for (size_name, size) in HEAD_TO_HEAD_SIZES {
        let records: Vec<Vec<u8>> = (0..NUM_RECORDS).map(|i| json_record(i, size)).collect();
        let bytes: usize = records.iter().map(Vec::len).sum();
        for (name, cpp) in HEAD_TO_HEAD_CONFIGS {
            let opts = options(cpp);
            let ours = write_ours(&opts, &records);
            let theirs = write_crate(name, &records);
            // Each reads the other's file too: the comparison is between compatible implementations.
            assert_eq!(read_ours(&theirs), bytes);
            assert_eq!(read_crate(&ours), bytes);
            let mut group = c.benchmark_group(format!("{name}_{size_name}"));
            configure(&mut group);
            group.throughput(Throughput::Bytes(bytes as u64));
            group.bench_function("ours_write", |b| {
                b.iter(|| black_box(write_ours(&opts, &records).len()));
            });
            group.bench_function("riegeli_crate_write", |b| {
                b.iter(|| black_box(write_crate(name, &records).len()));
            });
            let mut sink = Vec::with_capacity(16 << 20);
            group.bench_function("ours_write_reuse", |b| {
                b.iter(|| black_box(write_ours_into(&opts, &records, &mut sink)));
            });
            let mut sink = Vec::with_capacity(16 << 20);
            group.bench_function("riegeli_crate_write_reuse", |b| {
                b.iter(|| black_box(write_crate_into(name, &records, &mut sink)));
            });
            group.bench_function("ours_read", |b| b.iter(|| black_box(read_ours(&ours))));
            group.bench_function("riegeli_crate_read", |b| {
                b.iter(|| black_box(read_crate(&theirs)));
            });
            group.finish();
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
