//! The benchmark fixture: a deterministic batch of price "bars" shaped like
//! seed 002's, so that its wire bytes can be set beside the seed's log.
//!
//! Shared by the benches, the tools and the tests so that every number is
//! measured on the same bytes. Columns, none nullable and none null:
//!
//! | name     | type   | values                                                  |
//! |----------|--------|---------------------------------------------------------|
//! | `pair`   | `Utf8` | `BTCUSDT` on even rows, `ETHUSDT` on odd rows           |
//! | `tf`     | `Utf8` | `1m` on every row (the bars' timeframe)                 |
//! | `e_ms`   | `I64`  | bar end in ms since the epoch: 1,700,000,000,000 + 60,000 per row |
//! | `open`   | `F64`  | `base + 0.10`, where `base = 10,000 + 0.25 * row`      |
//! | `high`   | `F64`  | `base + 0.20`                                           |
//! | `low`    | `F64`  | `base + 0.05`                                           |
//! | `close`  | `F64`  | `base + 0.15`                                           |
//! | `volume` | `F64`  | `100 + row % 10`                                        |
//!
//! This is the data seed 002's benchmarks and estimator measured (one-minute
//! bars of two pairs, a steady price ramp): the seed's byte counts, such as
//! 293,862 zstd bytes at 100,000 rows, are for this shape, and a fixture of
//! random walks compresses about five times worse. Every value is a function
//! of its row, so `bars(n)` is the same on every machine and every run, and
//! `bars(n)` is the first `n` rows of `bars(m)` for `m > n`.

use crate::model::{Column, ColumnValues, ColumnarBatch, Field, Schema, Utf8Values};
use crate::types::DataType;

/// The pairs rows alternate between.
pub const PAIRS: [&str; 2] = ["BTCUSDT", "ETHUSDT"];

/// The timeframe of every bar.
pub const TIMEFRAME: &str = "1m";

/// End of the first bar, in milliseconds since the Unix epoch.
pub const START_MS: i64 = 1_700_000_000_000;

/// One bar per minute.
pub const STEP_MS: i64 = 60_000;

/// The schema of [`bars`].
#[must_use]
pub fn bars_schema() -> Schema {
    let f64_field = |name| Field::new(name, DataType::F64, false);
    Schema::new(vec![
        Field::new("pair", DataType::Utf8, false),
        Field::new("tf", DataType::Utf8, false),
        Field::new("e_ms", DataType::I64, false),
        f64_field("open"),
        f64_field("high"),
        f64_field("low"),
        f64_field("close"),
        f64_field("volume"),
    ])
}

/// `rows` deterministic price bars (see the module docs).
#[must_use]
pub fn bars(rows: usize) -> ColumnarBatch {
    let longest = PAIRS.iter().map(|p| p.len()).max().unwrap_or_default();
    let mut pair = Utf8Values::with_capacity(rows, rows * longest);
    let mut tf = Utf8Values::with_capacity(rows, rows * TIMEFRAME.len());
    let mut e_ms = Vec::with_capacity(rows);
    let mut prices: [Vec<f64>; 4] = std::array::from_fn(|_| Vec::with_capacity(rows));
    let mut volume = Vec::with_capacity(rows);
    let mut end = START_MS;
    for row in 0..rows {
        pair.push(PAIRS.get(row % PAIRS.len()).copied().unwrap_or_default());
        tf.push(TIMEFRAME);
        e_ms.push(end);
        end += STEP_MS;
        // Rows stay far below 2^53, so the ramp is exact before the offsets.
        let base = 10_000.0 + 0.25 * row as f64;
        for (column, offset) in prices.iter_mut().zip([0.10, 0.20, 0.05, 0.15]) {
            column.push(base + offset);
        }
        volume.push(100.0 + (row % 10) as f64);
    }
    let [open, high, low, close] = prices;
    let columns = vec![
        Column::new(ColumnValues::Utf8(pair)),
        Column::new(ColumnValues::Utf8(tf)),
        Column::new(ColumnValues::I64(e_ms)),
        Column::new(ColumnValues::F64(open)),
        Column::new(ColumnValues::F64(high)),
        Column::new(ColumnValues::F64(low)),
        Column::new(ColumnValues::F64(close)),
        Column::new(ColumnValues::F64(volume)),
    ];
    // Every column has `rows` values of the declared types and no nulls, so
    // this cannot fail.
    ColumnarBatch::try_new_with_rows(bars_schema(), columns, rows).unwrap_or_default()
}

#[cfg(test)]
#[allow(
    clippy::float_cmp,
    clippy::panic,
    reason = "exact values of a deterministic fixture"
)]
mod tests {
    use super::*;

    #[test]
    fn bars_is_deterministic_and_well_formed() {
        let a = bars(1000);
        assert_eq!(a, bars(1000));
        assert_eq!(a.num_rows(), 1000);
        assert_eq!(a.num_columns(), 8);
        assert!((0..8).all(|c| a.column(c).unwrap().null_count() == 0));
        assert_eq!(bars(0).num_rows(), 0);
        assert_eq!(bars(0).num_columns(), 8);
    }

    #[test]
    fn rows_follow_the_seed_pattern() {
        let b = bars(12);
        let ColumnValues::Utf8(pair) = b.column(0).unwrap().values() else {
            panic!("pair is utf8");
        };
        assert_eq!(pair.get(0), Some("BTCUSDT"));
        assert_eq!(pair.get(11), Some("ETHUSDT"));
        let ColumnValues::I64(e_ms) = b.column(2).unwrap().values() else {
            panic!("e_ms is i64");
        };
        assert_eq!(e_ms.get(3), Some(&(START_MS + 3 * STEP_MS)));
        let ColumnValues::F64(close) = b.column(6).unwrap().values() else {
            panic!("close is f64");
        };
        assert_eq!(close.get(4).copied(), Some(10_001.0 + 0.15));
        let ColumnValues::F64(volume) = b.column(7).unwrap().values() else {
            panic!("volume is f64");
        };
        assert_eq!(volume.get(11).copied(), Some(101.0));
        let longer = bars(9);
        let ColumnValues::F64(longer_close) = longer.column(6).unwrap().values() else {
            panic!("close is f64");
        };
        // A shorter fixture is a prefix of a longer one.
        assert_eq!(longer_close.as_slice(), close.get(..9).unwrap());
    }
}
