//! Writer options in C++ riegeli's text syntax.
//!
//! ```text
//! options ::= option? ("," option?)*
//! option  ::= "default" | "transpose" (":" ("true"|"false"))?
//!           | "uncompressed" | "brotli" (":" 0..=11)? | "zstd" (":" -131072..=22)? | "snappy" (":" 1..=2)?
//!           | "window_log" ":" ("auto" | 10..=31) | "chunk_size" ":" SIZE | "bucket_fraction" ":" 0..=1
//!           | "padding" (":" SIZE)? | "initial_padding" (":" SIZE)? | "final_padding" (":" SIZE)?
//!           | "pad_to_block_boundary" (":" ("true"|"false"|"initially"))? | "parallelism" ":" N
//! SIZE    ::= a number with an optional suffix B, k/K (2^10), M (2^20), G (2^30), T (2^40)
//! ```
//!
//! With the ArrayRecord layout ([`WriterOptions::parse_array_record`]) the syntax is array_record's:
//! `group_size:N`, `transpose[:B]`, `transpose_bucket_size:N|auto`, a codec, `window_log:N`,
//! `pad_to_block_boundary:true|false`, `max_parallelism:N|auto`, `saturation_delay_ms:N`; the default codec
//! there is `zstd:3` with `window_log:20`.

use crate::compression::{CompressionOptions, CompressionType};
use crate::error::{Error, Result};

/// Options of the ArrayRecord layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayRecordOptions {
    /// Records per data chunk (every chunk but the last holds exactly this many).
    pub group_size: u64,
    /// Bucket size of transposed chunks (`None`: auto); informative for our encoder.
    pub transpose_bucket_size: Option<u64>,
    /// Pad every data chunk to a 64 KiB block boundary.
    pub pad_to_block_boundary: bool,
}

impl Default for ArrayRecordOptions {
    fn default() -> Self {
        Self {
            group_size: 1,
            transpose_bucket_size: Some(256),
            pad_to_block_boundary: false,
        }
    }
}

/// Options of [`crate::RecordWriter`].
#[derive(Debug, Clone, PartialEq)]
pub struct WriterOptions {
    /// Codec of every chunk.
    pub compression: CompressionOptions,
    /// Write transposed chunks.
    pub transpose: bool,
    /// Target chunk size in bytes (each record counts its size + 8); `None`: 1 MiB compressed, 4 KiB not.
    pub chunk_size: Option<u64>,
    /// Bucket size of transposed compressed chunks as a fraction of the chunk size: below 1, buffers are
    /// split into buckets compressed apart, which a projection can skip (see [`Self::bucket_size`]).
    pub bucket_fraction: f64,
    /// Pad to a multiple of this at `flush` and `close` (1: none).
    pub final_padding: u64,
    /// Pad to a multiple of this when starting at a non-zero position (1: none).
    pub initial_padding: u64,
    /// Write the ArrayRecord layout (footer index and postscript).
    pub array_record: Option<ArrayRecordOptions>,
    /// Chunks encoded in parallel by this many background threads (0: on the calling thread). The
    /// bytes written do not depend on it.
    pub parallelism: u32,
    /// Zstd streams compressed by this many libzstd worker threads each (0: none), in jobs of 512 KiB:
    /// pays for chunks much larger than that, or a file of a single large chunk. Streams above 512 KiB
    /// then differ in bytes from `zstd_workers: 0` (still one standard frame each), but not between
    /// values above 0. No C++ option string syntax; set in code.
    pub zstd_workers: u32,
    /// A serialized `RecordsMetadata` (see [`crate::metadata`]) written as the `'m'` chunk after the file
    /// signature, as C++ `set_metadata` does. Set in code only: it has no option-string syntax in C++
    /// either.
    pub metadata: Option<Vec<u8>>,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            compression: CompressionOptions::default(),
            transpose: false,
            chunk_size: None,
            bucket_fraction: 1.0,
            final_padding: 1,
            initial_padding: 1,
            array_record: None,
            parallelism: 0,
            zstd_workers: 0,
            metadata: None,
        }
    }
}

fn err(text: &str, message: impl Into<String>) -> Error {
    Error::Options {
        text: text.to_owned(),
        message: message.into(),
    }
}

fn parse_size(text: &str, value: &str) -> Result<u64> {
    let (num, mult) = match value.chars().last() {
        Some('B') => (&value[..value.len() - 1], 1u64),
        Some('k' | 'K') => (&value[..value.len() - 1], 1 << 10),
        Some('M') => (&value[..value.len() - 1], 1 << 20),
        Some('G') => (&value[..value.len() - 1], 1 << 30),
        Some('T') => (&value[..value.len() - 1], 1 << 40),
        _ => (value, 1),
    };
    if let Ok(n) = num.parse::<u64>() {
        return n
            .checked_mul(mult)
            .ok_or_else(|| err(text, format!("size {value} overflows")));
    }
    let f: f64 = num
        .parse()
        .map_err(|_| err(text, format!("bad size {value:?}")))?;
    if !(f >= 0.0 && f.is_finite()) {
        return Err(err(text, format!("bad size {value:?}")));
    }
    Ok((f * mult as f64).round() as u64)
}

fn parse_int<T: std::str::FromStr + PartialOrd + std::fmt::Display>(
    text: &str,
    name: &str,
    value: &str,
    min: T,
    max: T,
) -> Result<T> {
    let v: T = value
        .parse()
        .map_err(|_| err(text, format!("{name}: bad number {value:?}")))?;
    if v < min || v > max {
        return Err(err(
            text,
            format!("{name}: {value} is outside {min}..={max}"),
        ));
    }
    Ok(v)
}

fn parse_bool(text: &str, name: &str, value: Option<&str>) -> Result<bool> {
    match value {
        None | Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(v) => Err(err(
            text,
            format!("{name}: expected true or false, got {v:?}"),
        )),
    }
}

impl WriterOptions {
    /// Parses C++ `RecordWriterBase::Options` text, e.g. `"transpose,brotli:6,chunk_size:1M"`.
    ///
    /// # Errors
    /// [`Error::Options`] naming the offending option.
    pub fn parse(text: &str) -> Result<Self> {
        Self::parse_impl(text, false)
    }

    /// Parses array_record's `ArrayRecordWriterBase::Options` text and selects the ArrayRecord layout,
    /// e.g. `"group_size:64,transpose,zstd:3"`.
    ///
    /// # Errors
    /// [`Error::Options`] naming the offending option.
    pub fn parse_array_record(text: &str) -> Result<Self> {
        Self::parse_impl(text, true)
    }

    #[allow(clippy::too_many_lines)]
    fn parse_impl(text: &str, array_record: bool) -> Result<Self> {
        let mut o = Self::default();
        let mut ar = ArrayRecordOptions::default();
        let mut codec_named = false;
        let mut window_named = false;
        if array_record {
            o.compression = CompressionOptions {
                kind: CompressionType::Zstd,
                level: 3,
                window_log: None,
            };
        }
        for item in text.split(',') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (name, value) = match item.split_once(':') {
                Some((n, v)) => (n, Some(v)),
                None => (item, None),
            };
            let need = |what: &str| {
                value.ok_or_else(|| err(text, format!("{name} needs a value ({what})")))
            };
            match name {
                "default" => {}
                "transpose" => o.transpose = parse_bool(text, name, value)?,
                "uncompressed" => {
                    if value.is_some() {
                        return Err(err(text, "uncompressed takes no value"));
                    }
                    o.compression.kind = CompressionType::None;
                    codec_named = true;
                }
                "brotli" => {
                    o.compression.kind = CompressionType::Brotli;
                    o.compression.level =
                        value.map_or(Ok(6), |v| parse_int(text, name, v, 0, 11))?;
                    codec_named = true;
                }
                "zstd" => {
                    o.compression.kind = CompressionType::Zstd;
                    o.compression.level =
                        value.map_or(Ok(3), |v| parse_int(text, name, v, -131_072, 22))?;
                    codec_named = true;
                }
                "snappy" => {
                    o.compression.kind = CompressionType::Snappy;
                    o.compression.level =
                        value.map_or(Ok(1), |v| parse_int(text, name, v, 1, 2))?;
                    codec_named = true;
                }
                "window_log" => {
                    let v = need("auto or 10..=31")?;
                    o.compression.window_log = if v == "auto" {
                        None
                    } else {
                        Some(parse_int(text, name, v, 10, 31)?)
                    };
                    window_named = true;
                }
                "chunk_size" if !array_record => {
                    let v = parse_size(text, need("a size")?)?;
                    if v == 0 {
                        return Err(err(text, "chunk_size must be positive"));
                    }
                    o.chunk_size = Some(v);
                }
                "bucket_fraction" if !array_record => {
                    let v: f64 = need("0..=1")?
                        .parse()
                        .map_err(|_| err(text, "bad bucket_fraction"))?;
                    if !(0.0..=1.0).contains(&v) {
                        return Err(err(text, "bucket_fraction must be in 0..=1"));
                    }
                    o.bucket_fraction = v;
                }
                "padding" | "initial_padding" | "final_padding" if !array_record => {
                    let p = value.map_or(Ok(1 << 16), |v| parse_size(text, v))?.max(1);
                    if name != "final_padding" {
                        o.initial_padding = p;
                    }
                    if name != "initial_padding" {
                        o.final_padding = p;
                    }
                }
                "pad_to_block_boundary" if !array_record => match value {
                    None | Some("true") => {
                        o.initial_padding = 1 << 16;
                        o.final_padding = 1 << 16;
                    }
                    Some("false") => {
                        o.initial_padding = 1;
                        o.final_padding = 1;
                    }
                    Some("initially") => o.initial_padding = 1 << 16,
                    Some(v) => {
                        return Err(err(text, format!("pad_to_block_boundary: bad value {v:?}")));
                    }
                },
                "parallelism" if !array_record => {
                    o.parallelism = parse_int(text, name, need("a number")?, 0, 256)?;
                }
                "group_size" if array_record => {
                    ar.group_size =
                        parse_int(text, name, need("a number")?, 1, u64::from(u32::MAX))?;
                }
                "transpose_bucket_size" if array_record => {
                    let v = need("a size or auto")?;
                    ar.transpose_bucket_size = if v == "auto" {
                        None
                    } else {
                        Some(parse_size(text, v)?)
                    };
                }
                "pad_to_block_boundary" if array_record => {
                    // As array_record: a bare option parses as false.
                    ar.pad_to_block_boundary = value == Some("true");
                }
                "max_parallelism" | "saturation_delay_ms" if array_record => {
                    let v = need("a number")?;
                    if v != "auto" {
                        parse_int::<u64>(text, name, v, 0, u64::MAX)?;
                    }
                }
                other => return Err(err(text, format!("unknown option {other:?}"))),
            }
        }
        if array_record {
            if !codec_named {
                o.compression.kind = CompressionType::Zstd;
                o.compression.level = 3;
            }
            if o.compression.kind == CompressionType::Zstd && !window_named {
                o.compression.window_log = Some(20);
            }
            o.array_record = Some(ar);
        }
        if o.compression.kind == CompressionType::Snappy && o.compression.window_log.is_some() {
            return Err(err(text, "snappy takes no window_log"));
        }
        if o.compression.kind == CompressionType::Brotli
            && o.compression.window_log.is_some_and(|w| w > 30)
        {
            return Err(err(text, "brotli window_log is at most 30"));
        }
        Ok(o)
    }

    /// The effective chunk size.
    #[must_use]
    pub fn effective_chunk_size(&self) -> u64 {
        self.chunk_size
            .unwrap_or(if self.compression.kind == CompressionType::None {
                4 << 10
            } else {
                1 << 20
            })
    }

    /// Uncompressed bucket size of transposed chunks, as C++ `RecordWriterBase::Worker::MakeChunkEncoder`:
    /// the chunk size times `bucket_fraction`, rounded, at least 1. `None` (one bucket) when
    /// `bucket_fraction` is 1 or there is no compression.
    ///
    /// At `bucket_fraction` 1 (the default) C++ still starts a bucket per buffer kind; we keep one bucket,
    /// so that default files stay as this crate has always written them.
    #[must_use]
    pub fn bucket_size(&self) -> Option<u64> {
        if self.bucket_fraction >= 1.0 || self.compression.kind == CompressionType::None {
            return None;
        }
        let size = (self.effective_chunk_size() as f64 * self.bucket_fraction).round();
        Some((size as u64).max(1))
    }

    /// The codec part in option syntax, e.g. `zstd:3,window_log:20`.
    #[must_use]
    pub fn compression_text(&self) -> String {
        let c = self.compression;
        let mut s = match c.kind {
            CompressionType::None => "uncompressed".to_owned(),
            CompressionType::Snappy => "snappy".to_owned(),
            k => format!("{}:{}", k.name(), c.level),
        };
        if let Some(w) = c.window_log {
            s.push_str(&format!(",window_log:{w}"));
        }
        s
    }

    /// The `writer_options` string array_record stores in its footer (`group_size:N,` first).
    #[must_use]
    pub fn array_record_text(&self) -> String {
        let ar = self.array_record.unwrap_or_default();
        let mut s = format!(
            "group_size:{},transpose:{},pad_to_block_boundary:{},",
            ar.group_size, self.transpose, ar.pad_to_block_boundary
        );
        if self.transpose {
            match ar.transpose_bucket_size {
                Some(n) => s.push_str(&format!("transpose_bucket_size:{n},")),
                None => s.push_str("transpose_bucket_size:auto,"),
            }
        }
        s.push_str(&self.compression_text());
        s.push_str(",max_parallelism:1");
        s
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn bucket_size_as_cpp() {
        let cases = [
            ("transpose,zstd:3", None),
            ("transpose,zstd:3,bucket_fraction:1", None),
            // round(1 MiB * 0.1)
            ("transpose,zstd:3,bucket_fraction:0.1", Some(104_858)),
            (
                "transpose,brotli:6,chunk_size:1000,bucket_fraction:0.0015",
                Some(2),
            ),
            // At least 1.
            ("transpose,snappy,bucket_fraction:0", Some(1)),
            // C++ does not split uncompressed buckets.
            ("transpose,uncompressed,bucket_fraction:0.1", None),
        ];
        for (i, (text, want)) in cases.into_iter().enumerate() {
            let o = WriterOptions::parse(text).unwrap();
            assert_eq!(o.bucket_size(), want, "case {i}: {text}");
        }
    }

    #[test]
    fn cpp_syntax() {
        let o = WriterOptions::parse("transpose,zstd:5,chunk_size:2M,final_padding").unwrap();
        assert!(o.transpose);
        assert_eq!(o.compression.kind, CompressionType::Zstd);
        assert_eq!(o.compression.level, 5);
        assert_eq!(o.chunk_size, Some(2 << 20));
        assert_eq!(o.final_padding, 1 << 16);
        let d = WriterOptions::parse("").unwrap();
        assert_eq!(
            d.compression,
            CompressionOptions {
                kind: CompressionType::Brotli,
                level: 6,
                window_log: None
            }
        );
        assert_eq!(
            WriterOptions::parse("uncompressed")
                .unwrap()
                .effective_chunk_size(),
            4096
        );
        for bad in [
            "brotli:12",
            "zstd:x",
            "nope",
            "chunk_size:0",
            "snappy,window_log:12",
            "group_size:3",
        ] {
            assert!(WriterOptions::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn array_record_syntax() {
        let o = WriterOptions::parse_array_record("group_size:16").unwrap();
        assert_eq!(
            o.array_record_text(),
            "group_size:16,transpose:false,pad_to_block_boundary:false,zstd:3,window_log:20,max_parallelism:1"
        );
        let o =
            WriterOptions::parse_array_record("transpose,brotli:6,pad_to_block_boundary").unwrap();
        assert!(!o.array_record.unwrap().pad_to_block_boundary);
        assert_eq!(
            o.array_record_text(),
            "group_size:1,transpose:true,pad_to_block_boundary:false,transpose_bucket_size:256,brotli:6,max_parallelism:1"
        );
    }
}
