//! Where did the time go: the profile of one benchmark, and what changed between two.
//!
//! Two kinds of profile, one shape ([`Profile`]: a unit, a total, per-function self counts,
//! folded stacks):
//!
//! * **Wall time** of a criterion benchmark: [`capture_criterion`] runs its bench executable
//!   under `perf record -e cpu-clock --call-graph dwarf` in criterion's `--profile-time` mode
//!   and folds `perf script` output with inferno ([`perf`] says why these options).
//! * **Instructions** of a gungraun benchmark: [`capture_gungraun`] runs it (gungraun runs it
//!   under callgrind) and reads callgrind's output files ([`callgrind`]).
//!
//! Then [`diff`] lists the functions whose self cost changed most, and [`flamegraph_svg`] /
//! [`diff_flamegraph_svg`] draw them with inferno.
//!
//! ```no_run
//! use std::path::Path;
//! use bench_profile::{PerfOptions, capture_criterion, diff, profile_diff_flamegraph_svg};
//!
//! # fn main() -> Result<(), bench_profile::ProfileError> {
//! let scratch = Path::new("/tmp/profile-scratch");
//! let options = PerfOptions::default();
//! let base = capture_criterion(Path::new("base/wall-1a2b"), "digest", scratch, &options)?;
//! let head = capture_criterion(Path::new("head/wall-3c4d"), "digest", scratch, &options)?;
//! for change in diff(&base, &head)?.iter().take(5) {
//!     println!(
//!         "{:>6.1}% -> {:>6.1}%  {}",
//!         change.base_share * 100.0,
//!         change.head_share * 100.0,
//!         change.name
//!     );
//! }
//! let svg = profile_diff_flamegraph_svg(&base, &head, "digest: base -> head")?;
//! # let _ = svg;
//! # Ok(())
//! # }
//! ```
//!
//! # Method
//!
//! **Why `cpu-clock`.** It is a software event on the kernel's timer: present on every Linux
//! machine, virtual ones included, where hardware counters (`cycles`) often are not, and a
//! sample is taken wherever the thread is running, so sample counts are proportional to time
//! on the CPU. Time the benchmark spends off the CPU (blocked) is not sampled; a criterion
//! routine rarely blocks.
//!
//! **Why normalized shares for perf.** Two runs take different numbers of samples (the
//! profile time, the machine's load, lost samples), so raw counts are not comparable. A
//! function's self samples divided by the run's total estimate the fraction of the
//! benchmark's time spent in it, and that fraction is what [`diff`] compares: a function new
//! in head appears as 0% → x%, and everything else shrinks in proportion. A share from n
//! samples carries a binomial error of about √(p(1−p)/n): at 5000 samples, ±0.4 points for a
//! 10% share (one standard error), so changes of a point or less are noise.
//!
//! **Why callgrind self counts are exact.** Callgrind executes the program on a synthetic CPU
//! and counts each instruction as it runs, under the function that runs it: no sampling and
//! no timer, so the same executable with the same input gives the same counts on every run.
//! A function's self count is the sum of its cost lines outside calls; the cost line after a
//! `calls=` line is the callee's inclusive cost and belongs to the callee. Only the call
//! *tree* drawn from callgrind is estimated ([`callgrind`] explains how).
//!
//! # Glossary
//!
//! * **self count**: samples whose innermost frame is the function, or instructions it
//!   executed itself, callees excluded.
//! * **share**: a self count divided by the profile's total.
//! * **folded stacks**: one line per distinct stack, `outer;...;inner count`, the input of a
//!   flamegraph.

#![deny(missing_docs)]

pub mod callgrind;
pub mod diff;
mod error;
pub mod gungraun;
mod model;
pub mod perf;
pub mod render;
mod unit;

pub use diff::{FunctionChange, diff};
pub use error::ProfileError;
pub use gungraun::{GungraunOptions, capture_gungraun};
pub use model::{FunctionCost, MAX_FOLDED_BYTES, Profile};
pub use perf::{CallGraph, PerfOptions, capture_criterion};
pub use render::{
    DiffScale, diff_flamegraph_svg, flamegraph_svg, profile_diff_flamegraph_svg,
    profile_flamegraph_svg,
};
pub use unit::Unit;
