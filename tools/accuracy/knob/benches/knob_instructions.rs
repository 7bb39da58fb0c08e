//! The knob crate counted in instructions (gungraun under valgrind): one run of `knob` and of
//! `control`, as the criterion suite times them.

#![allow(missing_docs, reason = "gungraun's macros generate public items without docs")]

use gungraun::prelude::*;
use std::hint::black_box;

#[library_benchmark]
fn knob() -> u64 {
    black_box(::knob::TRIAL_LABEL);
    ::knob::chain(black_box(7), black_box(::knob::knob_work()))
}

#[library_benchmark]
fn control() -> u64 {
    ::knob::chain(black_box(7), black_box(::knob::WORK))
}

library_benchmark_group!(name = work, benchmarks = [knob, control]);

main!(library_benchmark_groups = work);
