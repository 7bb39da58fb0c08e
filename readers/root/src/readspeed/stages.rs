//! [`Stages`]: where a readspeed run's time went, basket by basket and stage by stage.

use std::time::Instant;

/// Where the timed part's time went, stage by stage, summed over the worker threads
/// (thread-seconds): asked for with [`super::Config::stages`]. Each basket's stages are timed apart,
/// five clock reads a basket (about 0.2 µs on the machine this was written on), so the stages
/// add up to a little more than an untimed read takes. On several threads, a big basket split
/// over the pool is charged whole to the thread that took it, while the other threads help
/// with it or take other baskets (charged to them too): there the stages can add up to more
/// than the CPU time; on one thread they do not.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stages {
    /// Reading basket records from the files (nothing in the modes that preload them).
    pub read_s: f64,
    /// Decompressing them, key and basket headers included.
    pub decompress_s: f64,
    /// Reading and checking each basket's entry-offset table.
    pub index_s: f64,
    /// Handing the entries out as the mode does: decoding them (checking the strings,
    /// converting the numbers) in the full read; finding or copying them in the floors.
    pub decode_s: f64,
}

impl Stages {
    /// Each stage by its name, in the order of the work.
    #[must_use]
    pub fn named(&self) -> [(&'static str, f64); 4] {
        [
            ("read", self.read_s),
            ("decompress", self.decompress_s),
            ("index", self.index_s),
            ("decode", self.decode_s),
        ]
    }

    /// Their sum.
    #[must_use]
    pub fn total_s(&self) -> f64 {
        self.named().iter().map(|(_, t)| t).sum()
    }

    /// The sum of the clocks' stages.
    pub(super) fn of<'a>(clocks: impl Iterator<Item = &'a StageClock>) -> Self {
        let mut sum = Self::default();
        for c in clocks {
            sum.read_s += c.spent.read_s;
            sum.decompress_s += c.spent.decompress_s;
            sum.index_s += c.spent.index_s;
            sum.decode_s += c.spent.decode_s;
        }
        sum
    }
}

/// One thread's clock for [`Stages`]: each lap is charged to a stage.
pub(super) struct StageClock {
    last: Instant,
    spent: Stages,
}

impl StageClock {
    pub(super) fn new() -> Self {
        Self {
            last: Instant::now(),
            spent: Stages::default(),
        }
    }
}

/// Starts a lap of `clock` (at a basket's start), when stages are timed.
pub(super) fn restart(clock: &mut Option<StageClock>) {
    if let Some(c) = clock {
        c.last = Instant::now();
    }
}

/// Charges the time since the last lap of `clock` to `stage`, when stages are timed.
pub(super) fn lap(clock: &mut Option<StageClock>, stage: fn(&mut Stages) -> &mut f64) {
    if let Some(c) = clock {
        let now = Instant::now();
        *stage(&mut c.spent) += (now - c.last).as_secs_f64();
        c.last = now;
    }
}
