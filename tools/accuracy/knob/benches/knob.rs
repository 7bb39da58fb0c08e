use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn suite(c: &mut Criterion) {
    // Keep the label in the executable (outside any timed code).
    black_box(knob::TRIAL_LABEL);
    c.bench_function("knob", |b| {
        b.iter(|| knob::chain(black_box(7), black_box(knob::knob_work())))
    });
    c.bench_function("control", |b| {
        b.iter(|| knob::chain(black_box(7), black_box(knob::WORK)))
    });
}

criterion_group!(benches, suite);
criterion_main!(benches);
