//! The transport pipeline estimate behind `transport_pipeline_estimator`
//! (features `baselines`, `compression-zstd`, `compression-gzip`).
//!
//! For each payload (MATHLDBT, JSON rows, Arrow IPC) and compression, it
//! encodes the bars fixture, decodes it back (checking the result equals the
//! input, so every row is lossless), times both, and models the transfer over
//! a link of round-trip time `rtt_ms` and bandwidth `mbit` Mbit/s:
//!
//! ```text
//! t_transfer_s = rtt_ms / 1000 + bytes * 8 / (mbit * 1e6)
//! t_total_s    = enc_s + t_transfer_s + dec_s
//! ```
//!
//! Times are the minimum over `repeat` warm runs in the current process:
//! good for a quick comparison, not a substitute for the criterion suites.

use std::io::{Read, Write};
use std::time::Instant;

use crate::baselines::{BaselineError, arrow, json};
use crate::{ColumnarBatch, Compression, DecodeOptions, Decoder, EncodeOptions, Encoder, fixture};

/// zstd level used for every zstd row.
pub const ZSTD_LEVEL: i32 = 3;
/// gzip level used for every gzip row.
pub const GZIP_LEVEL: u32 = 6;

/// Inputs of an estimate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PipelineConfig {
    /// Rows of the bars fixture.
    pub rows: usize,
    /// Round-trip time in milliseconds.
    pub rtt_ms: f64,
    /// Bandwidth in Mbit/s.
    pub mbit: f64,
    /// MATHLDBT encoding options.
    pub options: EncodeOptions,
    /// Timed runs per measurement (the minimum is kept).
    pub repeat: usize,
}

/// One row of the estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct PipelineRow {
    /// `MATHLDBT`, `JSON` or `Arrow IPC`.
    pub payload: &'static str,
    /// `none`, `zstd`, `gzip`.
    pub compression: &'static str,
    /// Compression level, when compressed.
    pub level: Option<i64>,
    /// Wire bytes.
    pub bytes: usize,
    /// Encode (and compress) seconds.
    pub enc_s: f64,
    /// (Decompress and) decode seconds.
    pub dec_s: f64,
    /// Modelled transfer seconds.
    pub t_transfer_s: f64,
    /// `enc_s + t_transfer_s + dec_s`.
    pub t_total_s: f64,
}

impl PipelineRow {
    /// `none`, `zstd (level=3)`, ...
    #[must_use]
    pub fn compression_label(&self) -> String {
        match self.level {
            Some(l) => format!("{} (level={l})", self.compression),
            None => self.compression.to_owned(),
        }
    }

    /// Benchmark name used in BMF output, e.g. `mathldbt_zstd/100000`.
    #[must_use]
    pub fn bench_name(&self, rows: usize) -> String {
        let payload = self.payload.to_ascii_lowercase().replace(' ', "_");
        format!("transport_pipeline/{payload}_{}/{rows}", self.compression)
    }
}

/// The modelled transfer time of `bytes` over the link.
#[must_use]
pub fn transfer_seconds(bytes: usize, rtt_ms: f64, mbit: f64) -> f64 {
    rtt_ms / 1000.0 + (bytes as f64 * 8.0) / (mbit * 1e6)
}

/// An estimate failed: a codec errored or a round trip was not lossless.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// A MATHLDBT encode failed.
    #[error(transparent)]
    Encode(#[from] crate::EncodeError),
    /// A MATHLDBT decode failed.
    #[error(transparent)]
    Decode(#[from] crate::DecodeError),
    /// A baseline failed.
    #[error(transparent)]
    Baseline(#[from] BaselineError),
    /// A compressor failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A decoded payload differs from the input.
    #[error("{payload} {compression}: decoded data differs from the input")]
    NotLossless {
        /// Payload.
        payload: &'static str,
        /// Compression.
        compression: &'static str,
    },
}

fn min_time<T>(
    repeat: usize,
    mut f: impl FnMut() -> Result<T, PipelineError>,
) -> Result<(f64, T), PipelineError> {
    let mut out = f()?; // warm-up
    let mut best = f64::INFINITY;
    for _ in 0..repeat.max(1) {
        let start = Instant::now();
        out = f()?;
        best = best.min(start.elapsed().as_secs_f64());
    }
    Ok((best, out))
}

fn row(
    config: &PipelineConfig,
    payload: &'static str,
    compression: &'static str,
    level: Option<i64>,
    bytes: usize,
    enc_s: f64,
    dec_s: f64,
) -> PipelineRow {
    let t_transfer_s = transfer_seconds(bytes, config.rtt_ms, config.mbit);
    PipelineRow {
        payload,
        compression,
        level,
        bytes,
        enc_s,
        dec_s,
        t_transfer_s,
        t_total_s: enc_s + t_transfer_s + dec_s,
    }
}

fn check(ok: bool, payload: &'static str, compression: &'static str) -> Result<(), PipelineError> {
    if ok {
        Ok(())
    } else {
        Err(PipelineError::NotLossless {
            payload,
            compression,
        })
    }
}

/// Runs the estimate: MATHLDBT none/zstd/gzip, JSON none/zstd/gzip, Arrow
/// IPC none/zstd, in that order.
///
/// # Errors
/// When a codec fails or a round trip is not lossless.
pub fn run(config: &PipelineConfig) -> Result<Vec<PipelineRow>, PipelineError> {
    let batch = fixture::bars(config.rows);
    let mut rows = Vec::new();
    mathldbt_rows(config, &batch, &mut rows)?;
    json_rows(config, &batch, &mut rows)?;
    arrow_rows(config, &batch, &mut rows)?;
    Ok(rows)
}

fn mathldbt_rows(
    config: &PipelineConfig,
    batch: &ColumnarBatch,
    rows: &mut Vec<PipelineRow>,
) -> Result<(), PipelineError> {
    let mut encoder = Encoder::new(config.options);
    let mut decoder = Decoder::new(DecodeOptions::default());
    let mut out = ColumnarBatch::default();
    for (compression, name, level) in [
        (Compression::None, "none", None),
        (
            Compression::Zstd { level: ZSTD_LEVEL },
            "zstd",
            Some(i64::from(ZSTD_LEVEL)),
        ),
        (
            Compression::Gzip { level: GZIP_LEVEL },
            "gzip",
            Some(i64::from(GZIP_LEVEL)),
        ),
    ] {
        let (enc_s, _) = min_time(config.repeat, || {
            Ok(encoder.encode_compressed(batch, compression)?.len())
        })?;
        let wire = encoder.encode_compressed(batch, compression)?.to_vec();
        let limit = wire.len().saturating_mul(64).max(1 << 20);
        let (dec_s, ()) = min_time(config.repeat, || {
            Ok(decoder.decode_compressed_into(&wire, limit, &mut out)?)
        })?;
        check(&out == batch, "MATHLDBT", name)?;
        rows.push(row(
            config,
            "MATHLDBT",
            name,
            level,
            wire.len(),
            enc_s,
            dec_s,
        ));
    }
    Ok(())
}

fn json_rows(
    config: &PipelineConfig,
    batch: &ColumnarBatch,
    rows: &mut Vec<PipelineRow>,
) -> Result<(), PipelineError> {
    let bars = json::bar_rows(batch)?;
    let mut text = Vec::new();

    // none
    let (enc_s, ()) = min_time(config.repeat, || Ok(json::serialize(&bars, &mut text)?))?;
    let (dec_s, back) = min_time(config.repeat, || Ok(json::deserialize(&text)?))?;
    check(back == bars, "JSON", "none")?;
    rows.push(row(config, "JSON", "none", None, text.len(), enc_s, dec_s));

    // zstd
    let mut wire = Vec::new();
    let (enc_s, ()) = min_time(config.repeat, || {
        json::serialize(&bars, &mut text)?;
        Ok(json_zstd(&text, &mut wire)?)
    })?;
    let mut plain = Vec::new();
    let (dec_s, back) = min_time(config.repeat, || {
        plain.clear();
        plain.reserve(text.len());
        zstd::stream::read::Decoder::new(wire.as_slice())?.read_to_end(&mut plain)?;
        Ok(json::deserialize(&plain)?)
    })?;
    check(back == bars, "JSON", "zstd")?;
    rows.push(row(
        config,
        "JSON",
        "zstd",
        Some(i64::from(ZSTD_LEVEL)),
        wire.len(),
        enc_s,
        dec_s,
    ));

    // gzip
    let (enc_s, ()) = min_time(config.repeat, || {
        json::serialize(&bars, &mut text)?;
        Ok(json_gzip(&text, &mut wire)?)
    })?;
    let (dec_s, back) = min_time(config.repeat, || {
        plain.clear();
        flate2::read::GzDecoder::new(wire.as_slice()).read_to_end(&mut plain)?;
        Ok(json::deserialize(&plain)?)
    })?;
    check(back == bars, "JSON", "gzip")?;
    rows.push(row(
        config,
        "JSON",
        "gzip",
        Some(i64::from(GZIP_LEVEL)),
        wire.len(),
        enc_s,
        dec_s,
    ));
    Ok(())
}

/// Compresses JSON text into `out` (cleared first) at [`ZSTD_LEVEL`], as one
/// stream whose size is not declared up front: the way seed 002's estimator
/// compressed its JSON, so that the two count comparable bytes (told the
/// size, zstd tunes itself to small inputs and writes a different frame).
///
/// # Errors
/// When zstd fails.
pub fn json_zstd(text: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    out.clear();
    let mut z = zstd::stream::write::Encoder::new(&mut *out, ZSTD_LEVEL)?;
    z.write_all(text)?;
    z.finish()?;
    Ok(())
}

/// Compresses JSON text into `out` (cleared first) as one gzip member at
/// [`GZIP_LEVEL`].
///
/// # Errors
/// When the compressor fails.
pub fn json_gzip(text: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    out.clear();
    let mut gz = flate2::write::GzEncoder::new(&mut *out, flate2::Compression::new(GZIP_LEVEL));
    gz.write_all(text)?;
    gz.finish()?;
    Ok(())
}

fn arrow_rows(
    config: &PipelineConfig,
    batch: &ColumnarBatch,
    rows: &mut Vec<PipelineRow>,
) -> Result<(), PipelineError> {
    let rb = arrow::to_record_batch(batch)?;
    let mut ipc = Vec::new();
    for (level, name) in [(None, "none"), (Some(ZSTD_LEVEL), "zstd")] {
        let (enc_s, ()) = min_time(config.repeat, || {
            Ok(arrow::encode_ipc(&rb, level, &mut ipc)?)
        })?;
        let (dec_s, back) = min_time(config.repeat, || Ok(arrow::decode_ipc(&ipc)?))?;
        check(back == rb, "Arrow IPC", name)?;
        rows.push(row(
            config,
            "Arrow IPC",
            name,
            level.map(i64::from),
            ipc.len(),
            enc_s,
            dec_s,
        ));
    }
    Ok(())
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Renders the rows as the Markdown table of seed 002.
#[must_use]
pub fn render_table(config: &PipelineConfig, rows: &[PipelineRow]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "### rows = {} (rtt={}ms, bandwidth={}Mbit/s)\n",
        thousands(config.rows),
        config.rtt_ms,
        config.mbit
    );
    let header = [
        "Payload",
        "Compression",
        "Bytes",
        "enc_s",
        "dec_s",
        "t_transfer_s",
        "t_total_s",
    ];
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            [
                r.payload.to_owned(),
                r.compression_label(),
                thousands(r.bytes),
                format!("{:.6}", r.enc_s),
                format!("{:.6}", r.dec_s),
                format!("{:.6}", r.t_transfer_s),
                format!("{:.6}", r.t_total_s),
            ]
        })
        .collect();
    let widths: Vec<usize> = (0..7)
        .map(|i| {
            cells
                .iter()
                .map(|c| c.get(i).map_or(0, String::len))
                .chain(std::iter::once(header.get(i).map_or(0, |h| h.len())))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |s: &mut String, items: &[String]| {
        s.push('|');
        for (i, (item, w)) in items.iter().zip(&widths).enumerate() {
            if i == 0 {
                let _ = write!(s, " {item:<w$} |");
            } else {
                let _ = write!(s, " {item:>w$} |");
            }
        }
        s.push('\n');
    };
    line(&mut s, &header.map(str::to_owned));
    s.push('|');
    for (i, w) in widths.iter().enumerate() {
        let dashes = "-".repeat(*w);
        if i == 0 {
            let _ = write!(s, " {dashes} |");
        } else {
            let _ = write!(s, " {}: |", "-".repeat(w.saturating_sub(1)));
        }
    }
    s.push('\n');
    for c in &cells {
        line(&mut s, c);
    }
    s
}

/// Renders the rows as Bencher Metric Format JSON: one benchmark per row,
/// named `transport_pipeline/<payload>_<compression>/<rows>`, with measures
/// `bytes` (unit `bytes`) and `enc_s`, `dec_s`, `t_transfer_s`, `t_total_s`
/// (unit `s`). The units are stated because a ledger cannot tell them from
/// the names, and a history imported in other units is converted to these.
#[must_use]
pub fn render_bmf(config: &PipelineConfig, rows: &[PipelineRow]) -> String {
    let mut map = serde_json::Map::new();
    for r in rows {
        let seconds = |v: f64| serde_json::json!({ "value": v, "unit": "s" });
        map.insert(
            r.bench_name(config.rows),
            serde_json::json!({
                "bytes": { "value": r.bytes as f64, "unit": "bytes" },
                "enc_s": seconds(r.enc_s),
                "dec_s": seconds(r.dec_s),
                "t_transfer_s": seconds(r.t_transfer_s),
                "t_total_s": seconds(r.t_total_s),
            }),
        );
    }
    serde_json::to_string_pretty(&serde_json::Value::Object(map)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> PipelineConfig {
        PipelineConfig {
            rows: 200,
            rtt_ms: 30.0,
            mbit: 100.0,
            options: EncodeOptions::dict_delta(),
            repeat: 1,
        }
    }

    #[test]
    fn transfer_model_matches_the_seed() {
        // Seed 002: 4,600,263 bytes at 30 ms / 100 Mbit/s -> 0.398021 s.
        let t = transfer_seconds(4_600_263, 30.0, 100.0);
        assert!((t - 0.398_021_04).abs() < 1e-8, "{t}");
        assert!((transfer_seconds(0, 30.0, 100.0) - 0.03).abs() < 1e-12);
    }

    #[test]
    fn estimate_has_every_row_and_renders() {
        let c = config();
        let rows = run(&c).unwrap();
        let names: Vec<(&str, &str)> = rows.iter().map(|r| (r.payload, r.compression)).collect();
        assert_eq!(
            names,
            [
                ("MATHLDBT", "none"),
                ("MATHLDBT", "zstd"),
                ("MATHLDBT", "gzip"),
                ("JSON", "none"),
                ("JSON", "zstd"),
                ("JSON", "gzip"),
                ("Arrow IPC", "none"),
                ("Arrow IPC", "zstd"),
            ]
        );
        for r in &rows {
            assert!(r.bytes > 0 && r.t_total_s >= r.t_transfer_s, "{r:?}");
        }
        let table = render_table(&c, &rows);
        assert!(table.contains("| MATHLDBT  |           none |"), "{table}");
        assert!(table.contains("zstd (level=3)"));
        let bmf: serde_json::Value = serde_json::from_str(&render_bmf(&c, &rows)).unwrap();
        let v = &bmf["transport_pipeline/mathldbt_zstd/200"]["bytes"]["value"];
        assert_eq!(v.as_f64(), Some(rows[1].bytes as f64));
        assert!(bmf["transport_pipeline/arrow_ipc_none/200"]["t_total_s"]["value"].is_f64());
        assert_eq!(
            bmf["transport_pipeline/json_gzip/200"]["dec_s"]["unit"],
            "s"
        );
        assert_eq!(
            bmf["transport_pipeline/json_gzip/200"]["bytes"]["unit"],
            "bytes"
        );
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(12_700_001), "12,700,001");
    }
}
