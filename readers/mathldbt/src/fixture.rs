//! The benchmark fixture: a deterministic batch of price "bars".
//!
//! Shared by the benches, the tools and the tests so that every number is
//! measured on the same bytes. Columns:
//!
//! | name     | type                | nulls |
//! |----------|---------------------|-------|
//! | `ts`     | `TimestampTzMicros` | no    |
//! | `symbol` | `Utf8` (8 symbols)  | no    |
//! | `open`   | `F64`               | no    |
//! | `high`   | `F64`               | no    |
//! | `low`    | `F64`               | no    |
//! | `close`  | `F64`               | no    |
//! | `volume` | `I64`               | ~1.6% |
//!
//! Timestamps start at 2023-11-14T22:13:20Z and advance 1 to 3 seconds per
//! row; each symbol follows its own random walk, rounded to cents. The
//! generator is a fixed-seed SplitMix64, so `bars(n)` is the same on every
//! machine and every run.

use crate::model::{Bitmap, Column, ColumnValues, ColumnarBatch, Field, Schema, Utf8Values};
use crate::types::DataType;

/// The symbols rows draw from.
pub const SYMBOLS: [&str; 8] = [
    "AAPL", "MSFT", "GOOG", "AMZN", "NVDA", "META", "TSLA", "BRK.B",
];

/// Timestamp of the first row, in microseconds since the Unix epoch.
pub const START_MICROS: i64 = 1_700_000_000_000_000;

const SEED: u64 = 0x4D41_5448_4C44_4254; // "MATHLDBT"

/// SplitMix64: tiny, fast, and fully determined by its seed.
#[derive(Clone, Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn cents(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The schema of [`bars`].
#[must_use]
pub fn bars_schema() -> Schema {
    Schema::new(vec![
        Field::new("ts", DataType::TimestampTzMicros, false),
        Field::new("symbol", DataType::Utf8, false),
        Field::new("open", DataType::F64, false),
        Field::new("high", DataType::F64, false),
        Field::new("low", DataType::F64, false),
        Field::new("close", DataType::F64, false),
        Field::new("volume", DataType::I64, true),
    ])
}

/// `rows` deterministic price bars (see the module docs).
#[must_use]
pub fn bars(rows: usize) -> ColumnarBatch {
    let mut rng = SplitMix64(SEED);
    let mut last_close: [f64; SYMBOLS.len()] =
        [190.0, 370.0, 135.0, 145.0, 480.0, 330.0, 240.0, 360.0];
    let mut ts = Vec::with_capacity(rows);
    let mut symbol = Utf8Values::with_capacity(rows, rows * 5);
    let (mut open, mut high, mut low, mut close) = (
        Vec::with_capacity(rows),
        Vec::with_capacity(rows),
        Vec::with_capacity(rows),
        Vec::with_capacity(rows),
    );
    let mut volume = Vec::with_capacity(rows);
    let mut valid = Vec::with_capacity(rows);
    let mut t = START_MICROS;
    for _ in 0..rows {
        t += 1_000_000 * (1 + (rng.next_u64() % 3) as i64);
        ts.push(t);
        let s = (rng.next_u64() % SYMBOLS.len() as u64) as usize;
        symbol.push(SYMBOLS.get(s).copied().unwrap_or("AAPL"));
        let prev = last_close.get(s).copied().unwrap_or(100.0);
        let o = cents(prev);
        let c = cents(o * (1.0 + (rng.next_f64() - 0.5) * 0.004));
        let h = cents(o.max(c) * (1.0 + rng.next_f64() * 0.001));
        let l = cents(o.min(c) * (1.0 - rng.next_f64() * 0.001));
        if let Some(slot) = last_close.get_mut(s) {
            *slot = c;
        }
        open.push(o);
        high.push(h);
        low.push(l);
        close.push(c);
        let is_null = rng.next_u64().is_multiple_of(64);
        valid.push(!is_null);
        volume.push(if is_null {
            0
        } else {
            100 * (1 + (rng.next_u64() % 5_000) as i64)
        });
    }
    let volume = Column::with_validity(ColumnValues::I64(volume), Bitmap::from_bools(&valid))
        .unwrap_or_else(|_| Column::new_empty(DataType::I64));
    let columns = vec![
        Column::new(ColumnValues::TimestampTzMicros(ts)),
        Column::new(ColumnValues::Utf8(symbol)),
        Column::new(ColumnValues::F64(open)),
        Column::new(ColumnValues::F64(high)),
        Column::new(ColumnValues::F64(low)),
        Column::new(ColumnValues::F64(close)),
        volume,
    ];
    // Every column has `rows` values of the declared types, and only the
    // nullable `volume` has nulls, so this cannot fail.
    ColumnarBatch::try_new_with_rows(bars_schema(), columns, rows).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_is_deterministic_and_well_formed() {
        let a = bars(1000);
        assert_eq!(a, bars(1000));
        assert_eq!(a.num_rows(), 1000);
        assert_eq!(a.num_columns(), 7);
        let nulls = a.column(6).unwrap().null_count();
        assert!(nulls > 0 && nulls < 50, "nulls={nulls}");
        assert_eq!(bars(0).num_rows(), 0);
        assert_eq!(bars(0).num_columns(), 7);
    }
}
