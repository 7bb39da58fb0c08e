//! Wire bytes of the bars fixture against seed 002's log: the seed's transport estimator
//! tables (2026-02-14, "Wire-size apples-to-apples") list the bytes of a dict+delta MATHLDBT
//! message and of serde_json rows, raw, zstd level 3 and gzip level 6, at 2,000 and 100,000
//! rows. Byte counts are deterministic, so ours must be within 10% of each of them for the
//! two logs to be set side by side.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::cast_precision_loss)]

use mathldbt::baselines::json;
use mathldbt::pipeline::{GZIP_LEVEL, ZSTD_LEVEL, json_gzip, json_zstd};
use mathldbt::{Compression, EncodeOptions, Encoder, fixture};

/// (rows, payload, compression, the seed's bytes), from its table.
const SEED_BYTES: [(usize, &str, &str, usize); 12] = [
    (2_000, "MATHLDBT", "none", 92_263),
    (2_000, "JSON", "none", 254_001),
    (2_000, "MATHLDBT", "zstd", 8_120),
    (2_000, "JSON", "zstd", 10_989),
    (2_000, "MATHLDBT", "gzip", 10_769),
    (2_000, "JSON", "gzip", 26_757),
    (100_000, "MATHLDBT", "none", 4_600_263),
    (100_000, "JSON", "none", 12_700_001),
    (100_000, "MATHLDBT", "zstd", 293_862),
    (100_000, "JSON", "zstd", 582_206),
    (100_000, "MATHLDBT", "gzip", 457_652),
    (100_000, "JSON", "gzip", 1_325_434),
];

/// Largest relative difference from the seed's bytes.
const TOLERANCE: f64 = 0.10;

/// Our bytes for a row of the seed's table, as `transport_pipeline_estimator` counts them.
fn ours(rows: usize, payload: &str, compression: &str) -> usize {
    let batch = fixture::bars(rows);
    match payload {
        "MATHLDBT" => {
            let wire = match compression {
                "none" => Compression::None,
                "zstd" => Compression::Zstd { level: ZSTD_LEVEL },
                _ => Compression::Gzip { level: GZIP_LEVEL },
            };
            Encoder::new(EncodeOptions::dict_delta())
                .encode_compressed(&batch, wire)
                .unwrap()
                .len()
        }
        _ => {
            let mut text = Vec::new();
            json::serialize(&json::bar_rows(&batch).unwrap(), &mut text).unwrap();
            let mut wire = Vec::new();
            match compression {
                "none" => return text.len(),
                "zstd" => json_zstd(&text, &mut wire).unwrap(),
                _ => json_gzip(&text, &mut wire).unwrap(),
            }
            wire.len()
        }
    }
}

#[test]
fn wire_bytes_are_within_ten_percent_of_the_seeds() {
    let mut report = Vec::new();
    let mut off = Vec::new();
    for (i, (rows, payload, compression, seed)) in SEED_BYTES.into_iter().enumerate() {
        let ours = ours(rows, payload, compression);
        let ratio = ours as f64 / seed as f64;
        let line = format!(
            "case {i}: {rows} rows {payload} {compression}: ours {ours}, seed {seed}, ratio {ratio:.3}"
        );
        if (ratio - 1.0).abs() > TOLERANCE {
            off.push(line.clone());
        }
        report.push(line);
    }
    assert!(
        off.is_empty(),
        "off by more than 10%:\n{}\n\nall:\n{}",
        off.join("\n"),
        report.join("\n")
    );
    // The table in the README is printed from here: `cargo test -p mathldbt --test seed_bytes -- --nocapture`.
    println!("{}", report.join("\n"));
}
