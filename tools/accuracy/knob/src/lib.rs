//! Work for the accuracy experiment, with a slowdown knob in the code.
//!
//! `chain` is a chain of dependent xorshift-multiplies: its time and its instruction count are both
//! proportional to `n`, so `SLOWDOWN_PERMILLE` extra work per thousand is that much extra time
//! and that many extra instructions, whatever the machine.

/// Extra work of the `knob` benchmark, per thousand. The accuracy script rewrites this line.
pub const SLOWDOWN_PERMILLE: u64 = 0;

/// A label baked into the bench executable. The script rewrites it (always 8 characters) in
/// A/A trials, so that base and head are different executables running the same hot code: a
/// change elsewhere in the program, as in a pull request that does not touch the benchmark.
pub const TRIAL_LABEL: &str = "base-000";

/// Iterations of the `knob` and `control` benchmarks before the knob.
pub const WORK: u64 = 20_000;

/// Iterations of the `knob` benchmark: `WORK` plus the knob's share.
#[must_use]
pub const fn knob_work() -> u64 {
    WORK + WORK * SLOWDOWN_PERMILLE / 1000
}

/// `n` dependent xorshift-multiply steps: each waits for the previous one, and the shift
/// keeps the compiler from folding steps together (a linear recurrence it could).
#[must_use]
pub fn chain(seed: u64, n: u64) -> u64 {
    let mut x = seed;
    for _ in 0..n {
        x = (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    }
    x
}
