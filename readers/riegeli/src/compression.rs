//! Compression of the streams inside chunks.
//!
//! A chunk names one codec in its first byte; every stream of the chunk uses it. A compressed stream is
//! `varint64(uncompressed_size) ‖ codec bytes`; an uncompressed stream is the raw bytes, without prefix.
//! Zstd is one standard frame, Brotli a (possibly large-window) brotli stream, Snappy the raw block format.
//!
//! [`Compressor`] and [`Decompressor`] keep their codec contexts between streams so that a writer or reader
//! allocates them once.

use crate::error::{DecodeError, invalid};
use crate::varint::{read_varint64, write_varint64};

/// The codec byte of a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompressionType {
    /// `0x00`: no compression.
    None,
    /// `'b'`: Brotli.
    Brotli,
    /// `'z'`: Zstd.
    Zstd,
    /// `'s'`: raw Snappy.
    Snappy,
}

impl CompressionType {
    /// The stored byte.
    #[must_use]
    pub fn to_byte(self) -> u8 {
        match self {
            Self::None => 0,
            Self::Brotli => b'b',
            Self::Zstd => b'z',
            Self::Snappy => b's',
        }
    }

    /// The codec of a stored byte, if known.
    #[must_use]
    pub fn from_byte(b: u8) -> Option<Self> {
        match b {
            0 => Some(Self::None),
            b'b' => Some(Self::Brotli),
            b'z' => Some(Self::Zstd),
            b's' => Some(Self::Snappy),
            _ => None,
        }
    }

    /// The name used in option strings.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "uncompressed",
            Self::Brotli => "brotli",
            Self::Zstd => "zstd",
            Self::Snappy => "snappy",
        }
    }
}

/// Codec and its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompressionOptions {
    /// The codec.
    pub kind: CompressionType,
    /// Level (Brotli 0..=11, Zstd -131072..=22, Snappy 1..=2).
    pub level: i32,
    /// Window log (Brotli 10..=30, Zstd 10..=31); `None` is the codec's default.
    pub window_log: Option<u32>,
}

impl Default for CompressionOptions {
    /// `brotli:6`, the C++ default.
    fn default() -> Self {
        Self {
            kind: CompressionType::Brotli,
            level: 6,
            window_log: None,
        }
    }
}

/// Input per job of libzstd's multithreaded mode: its minimum, so that a 1 MiB chunk is compressed by two
/// threads (each job sees the previous one's data as history, so the ratio barely changes).
pub const ZSTD_JOB_SIZE: u32 = 512 << 10;

/// A reusable compressor for one codec.
pub struct Compressor {
    options: CompressionOptions,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    /// The parameters `zstd` was made with: level, window log, workers.
    zstd_key: ZstdKey,
    snappy: snap::raw::Encoder,
    /// Zstd's whole frame, Snappy's, or Brotli's output one step at a time, before it is appended.
    scratch: Vec<u8>,
}

/// Zstd parameters that a recycled context must match: level, window log, workers.
type ZstdKey = (i32, Option<u32>, u32);

/// Zstd contexts of dropped compressors, for the next compressor with the same parameters (as C++ riegeli's
/// `RecyclingPool` of `ZSTD_CCtx`): a writer per small file then skips allocating and first touching the
/// context's tables, and starting its worker threads. A context keeps its parameters and starts every frame
/// afresh, so the bytes are the same as with a new one.
static ZSTD_RECYCLED: std::sync::Mutex<Vec<(ZstdKey, zstd::bulk::Compressor<'static>)>> =
    std::sync::Mutex::new(Vec::new());

/// Contexts kept by [`ZSTD_RECYCLED`] (a few MiB at most for the usual levels).
const ZSTD_RECYCLED_MAX: usize = 4;

fn recycled_zstd(key: ZstdKey) -> Option<zstd::bulk::Compressor<'static>> {
    let mut pool = ZSTD_RECYCLED.lock().ok()?;
    let i = pool.iter().position(|(k, _)| *k == key)?;
    Some(pool.swap_remove(i).1)
}

impl Drop for Compressor {
    fn drop(&mut self) {
        if let Some(c) = self.zstd.take()
            && let Ok(mut pool) = ZSTD_RECYCLED.lock()
            && pool.len() < ZSTD_RECYCLED_MAX
        {
            pool.push((self.zstd_key, c));
        }
    }
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Compressor {
    /// A compressor with `options`.
    ///
    /// # Errors
    /// If the zstd context cannot be created with these parameters.
    pub fn new(options: CompressionOptions) -> std::io::Result<Self> {
        Self::with_workers(options, 0)
    }

    /// A compressor with `options` whose Zstd streams are compressed by `workers` threads of libzstd
    /// (its multithreaded mode, in jobs of [`ZSTD_JOB_SIZE`]); other codecs ignore `workers`.
    ///
    /// The frame is still one standard Zstd frame with the content size, readable by any decoder; its bytes
    /// differ from those of `workers == 0` but are the same for every `workers >= 1`.
    ///
    /// # Errors
    /// If the zstd context cannot be created with these parameters.
    pub fn with_workers(options: CompressionOptions, workers: u32) -> std::io::Result<Self> {
        let zstd = if options.kind == CompressionType::Zstd {
            use zstd::zstd_safe::CParameter;
            let key = (options.level, options.window_log, workers);
            if let Some(c) = recycled_zstd(key) {
                return Ok(Self {
                    options,
                    zstd: Some(c),
                    zstd_key: key,
                    snappy: snap::raw::Encoder::new(),
                    scratch: Vec::new(),
                });
            }
            let mut c = zstd::bulk::Compressor::new(options.level)?;
            c.include_checksum(false)?;
            c.include_contentsize(true)?;
            if let Some(w) = options.window_log {
                c.set_parameter(CParameter::WindowLog(w))?;
            }
            if workers > 0 {
                c.set_parameter(CParameter::NbWorkers(workers))?;
                c.set_parameter(CParameter::JobSize(ZSTD_JOB_SIZE))?;
            }
            Some(c)
        } else {
            None
        };
        Ok(Self {
            options,
            zstd,
            zstd_key: (options.level, options.window_log, workers),
            snappy: snap::raw::Encoder::new(),
            scratch: Vec::new(),
        })
    }

    /// The options.
    #[must_use]
    pub fn options(&self) -> CompressionOptions {
        self.options
    }

    /// Appends the framed stream of `src` to `dst`.
    ///
    /// # Errors
    /// If the codec fails (it does not on valid parameters).
    pub fn compress_into(&mut self, src: &[u8], dst: &mut Vec<u8>) -> std::io::Result<()> {
        match self.options.kind {
            CompressionType::None => dst.extend_from_slice(src),
            CompressionType::Zstd => {
                write_varint64(dst, src.len() as u64);
                let c = self
                    .zstd
                    .as_mut()
                    .ok_or_else(|| std::io::Error::other("zstd context missing"))?;
                self.scratch.clear();
                self.scratch
                    .reserve(zstd::zstd_safe::compress_bound(src.len()));
                c.compress_to_buffer(src, &mut self.scratch)?;
                dst.extend_from_slice(&self.scratch);
            }
            CompressionType::Snappy => {
                write_varint64(dst, src.len() as u64);
                // Into a buffer kept at its largest size: making room in `dst` for the worst case
                // would zero it each time (765 KB for a 640 KiB chunk, more than the data).
                let room = snap::raw::max_compress_len(src.len());
                if self.scratch.len() < room {
                    self.scratch.resize(room, 0);
                }
                let n = self
                    .snappy
                    .compress(src, &mut self.scratch)
                    .map_err(std::io::Error::other)?;
                dst.extend_from_slice(&self.scratch[..n]);
            }
            CompressionType::Brotli => {
                write_varint64(dst, src.len() as u64);
                brotli_compress(
                    src,
                    dst,
                    self.options.level,
                    self.options.window_log,
                    &mut self.scratch,
                )?;
            }
        }
        Ok(())
    }
}

impl Compressor {
    /// Appends the framed stream of the concatenation of `parts` to `dst`, without assembling them first
    /// for Zstd (streamed into its context, written straight into `dst`) and without compression.
    ///
    /// # Errors
    /// If the codec fails (it does not on valid parameters).
    pub fn compress_parts_into(
        &mut self,
        parts: &[&[u8]],
        dst: &mut Vec<u8>,
    ) -> std::io::Result<()> {
        use zstd::zstd_safe::{InBuffer, OutBuffer, ResetDirective, zstd_sys::ZSTD_EndDirective};
        let total: usize = parts.iter().map(|p| p.len()).sum();
        match (self.options.kind, self.zstd.as_mut()) {
            (CompressionType::None, _) => {
                dst.reserve(total);
                for part in parts {
                    dst.extend_from_slice(part);
                }
            }
            (CompressionType::Zstd, Some(c)) => {
                let zerr = |e: usize| {
                    std::io::Error::other(format!("zstd: {}", zstd::zstd_safe::get_error_name(e)))
                };
                write_varint64(dst, total as u64);
                let cctx = c.context_mut();
                cctx.reset(ResetDirective::SessionOnly).map_err(zerr)?;
                cctx.set_pledged_src_size(Some(total as u64))
                    .map_err(zerr)?;
                dst.reserve(zstd::zstd_safe::compress_bound(total));
                let mut pos = dst.len();
                let last = parts.len().saturating_sub(1);
                for (i, part) in parts.iter().enumerate() {
                    let mut input = InBuffer::around(part);
                    let op = if i == last {
                        ZSTD_EndDirective::ZSTD_e_end
                    } else {
                        ZSTD_EndDirective::ZSTD_e_continue
                    };
                    loop {
                        if dst.capacity() == pos {
                            // Not expected within the bound; grow rather than fail.
                            dst.reserve(dst.capacity() / 2 + 4096);
                        }
                        let mut out = OutBuffer::around_pos(dst, pos);
                        let remaining = cctx
                            .compress_stream2(&mut out, &mut input, op)
                            .map_err(zerr)?;
                        pos = out.pos();
                        let done = if i == last {
                            remaining == 0
                        } else {
                            input.pos() == part.len()
                        };
                        if done {
                            break;
                        }
                    }
                }
                if parts.is_empty() {
                    // An empty frame still has to be ended.
                    let mut input = InBuffer::around(&[]);
                    loop {
                        let mut out = OutBuffer::around_pos(dst, pos);
                        let remaining = cctx
                            .compress_stream2(&mut out, &mut input, ZSTD_EndDirective::ZSTD_e_end)
                            .map_err(zerr)?;
                        pos = out.pos();
                        if remaining == 0 {
                            break;
                        }
                        dst.reserve(4096);
                    }
                }
                dst.truncate(pos);
            }
            _ => {
                // A fresh buffer: one kept across calls (with the transposed encoder's) made glibc give
                // Brotli's per-stream state fresh pages for every chunk (measured: 5x the page faults).
                let mut joined = Vec::with_capacity(total);
                for part in parts {
                    joined.extend_from_slice(part);
                }
                self.compress_into(&joined, dst)?;
            }
        }
        Ok(())
    }
}

/// A reusable decompressor for all codecs.
#[derive(Default)]
pub struct Decompressor {
    zstd: Option<zstd::bulk::Decompressor<'static>>,
    snappy: snap::raw::Decoder,
}

impl std::fmt::Debug for Decompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decompressor").finish_non_exhaustive()
    }
}

/// Most streams expand by less than this; beyond it, output grows only as the codec produces it.
const TRUSTED_EXPANSION: usize = 1 << 12;

impl Decompressor {
    /// A decompressor.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes the framed stream `src` of codec `kind`. For [`CompressionType::None`] returns `src` itself;
    /// otherwise decompresses into `scratch` (cleared first) and returns it. The output may not exceed
    /// `max_size` bytes.
    pub(crate) fn stream<'a>(
        &mut self,
        kind: CompressionType,
        src: &'a [u8],
        scratch: &'a mut Vec<u8>,
        max_size: u64,
    ) -> Result<&'a [u8], DecodeError> {
        if kind == CompressionType::None {
            if src.len() as u64 > max_size {
                return invalid("uncompressed stream longer than the decoded size");
            }
            return Ok(src);
        }
        self.decompress_into(kind, src, scratch, max_size)?;
        Ok(scratch.as_slice())
    }

    /// Decompresses the framed stream `src` into `dst` (replacing its contents; unspecified on error).
    pub(crate) fn decompress_into(
        &mut self,
        kind: CompressionType,
        src: &[u8],
        dst: &mut Vec<u8>,
        max_size: u64,
    ) -> Result<(), DecodeError> {
        if !matches!(kind, CompressionType::Brotli | CompressionType::Snappy) {
            dst.clear();
        }
        if kind == CompressionType::None {
            if src.len() as u64 > max_size {
                return invalid("uncompressed stream longer than the decoded size");
            }
            dst.extend_from_slice(src);
            return Ok(());
        }
        let mut pos = 0;
        let Some(size) = read_varint64(src, &mut pos) else {
            return invalid("bad size prefix of a compressed stream");
        };
        if size > max_size {
            return invalid(format!(
                "compressed stream claims {size} bytes, more than the {max_size} allowed"
            ));
        }
        let body = src.get(pos..).unwrap_or_default();
        let size = usize::try_from(size).map_err(|_| DecodeError::new("stream too large"))?;
        let trusted = size
            <= body
                .len()
                .saturating_mul(TRUSTED_EXPANSION)
                .saturating_add(1 << 16);
        match kind {
            CompressionType::None => {}
            CompressionType::Zstd => {
                if trusted {
                    if self.zstd.is_none() {
                        let mut d = zstd::bulk::Decompressor::new()
                            .map_err(|e| DecodeError::new(format!("zstd: {e}")))?;
                        d.set_parameter(zstd::zstd_safe::DParameter::WindowLogMax(31))
                            .map_err(|e| DecodeError::new(format!("zstd: {e}")))?;
                        self.zstd = Some(d);
                    }
                    let Some(d) = self.zstd.as_mut() else {
                        return invalid("zstd context missing");
                    };
                    dst.reserve_exact(size);
                    d.decompress_to_buffer(body, dst)
                        .map_err(|e| DecodeError::new(format!("zstd: {e}")))?;
                } else {
                    zstd_streaming(body, dst, size)?;
                }
            }
            CompressionType::Snappy => {
                let n = snap::raw::decompress_len(body)
                    .map_err(|e| DecodeError::new(format!("snappy: {e}")))?;
                if n != size {
                    return invalid("snappy length disagrees with the size prefix");
                }
                if !trusted {
                    return invalid("snappy stream claims an impossible expansion");
                }
                resize_reusing(dst, n);
                self.snappy
                    .decompress(body, dst)
                    .map_err(|e| DecodeError::new(format!("snappy: {e}")))?;
            }
            CompressionType::Brotli => {
                brotli_decompress(body, dst, size, trusted)?;
            }
        }
        if dst.len() != size {
            return invalid(format!(
                "stream decompressed to {} bytes, its prefix says {size}",
                dst.len()
            ));
        }
        Ok(())
    }
}

/// Makes `dst` `n` bytes long for a codec to overwrite, zeroing only bytes it never held: output buffers
/// are reused chunk after chunk, and zeroing a whole chunk before every decompression costs a pass over it.
fn resize_reusing(dst: &mut Vec<u8>, n: usize) {
    if dst.len() >= n {
        dst.truncate(n);
    } else {
        dst.resize(n, 0);
    }
}

/// Zstd for streams whose claimed size is not plausible from their length: output grows as decoded.
fn zstd_streaming(body: &[u8], dst: &mut Vec<u8>, size: usize) -> Result<(), DecodeError> {
    use std::io::Read;
    let mut decoder = zstd::stream::read::Decoder::with_buffer(body)
        .map_err(|e| DecodeError::new(format!("zstd: {e}")))?;
    decoder
        .window_log_max(31)
        .map_err(|e| DecodeError::new(format!("zstd: {e}")))?;
    let mut limited = decoder.single_frame().take(size as u64 + 1);
    limited
        .read_to_end(dst)
        .map_err(|e| DecodeError::new(format!("zstd: {e}")))?;
    Ok(())
}

/// Brotli's output is taken in steps of this size through a reused buffer: sizing `dst` for the
/// worst case up front would zero more than the whole input for every chunk.
const BROTLI_OUTPUT_STEP: usize = 64 << 10;

/// Brotli (C brotli through `brotlic`, as C++ riegeli) into `dst`, appended; `step` is the
/// reused output buffer.
fn brotli_compress(
    src: &[u8],
    dst: &mut Vec<u8>,
    level: i32,
    window_log: Option<u32>,
    step: &mut Vec<u8>,
) -> std::io::Result<()> {
    use brotlic::encode::BrotliOperation;
    use brotlic::{BrotliEncoderOptions, LargeWindowSize, Quality, WindowSize};
    let bad = |e| std::io::Error::other(format!("brotli parameters: {e:?}"));
    let mut options = BrotliEncoderOptions::new();
    options.quality(Quality::new(u8::try_from(level).unwrap_or(6)).map_err(bad)?);
    let window = window_log.unwrap_or(22) as u8;
    if window > 24 {
        options.large_window_size(LargeWindowSize::new(window).map_err(bad)?);
    } else {
        options.window_size(WindowSize::new(window).map_err(bad)?);
    }
    options.size_hint(u32::try_from(src.len()).unwrap_or(u32::MAX));
    let mut encoder = options.build().map_err(bad)?;
    step.resize(BROTLI_OUTPUT_STEP, 0);
    let mut input = src;
    loop {
        let r = encoder
            .compress(input, step, BrotliOperation::Finish)
            .map_err(|_| std::io::Error::other("brotli compression failed"))?;
        input = &input[r.bytes_read..];
        dst.extend_from_slice(&step[..r.bytes_written]);
        if encoder.is_finished() {
            return Ok(());
        }
        if r.bytes_read == 0 && r.bytes_written == 0 {
            return Err(std::io::Error::other("brotli compression made no progress"));
        }
    }
}

fn brotli_decompress(
    body: &[u8],
    dst: &mut Vec<u8>,
    size: usize,
    trusted: bool,
) -> Result<(), DecodeError> {
    use brotlic::BrotliDecoderOptions;
    use brotlic::decode::DecoderInfo;
    let mut decoder = BrotliDecoderOptions::new()
        .large_window_size(true)
        .build()
        .map_err(|e| DecodeError::new(format!("brotli: {e:?}")))?;
    let initial = if trusted { size } else { size.min(1 << 20) };
    resize_reusing(dst, initial);
    let mut input = body;
    let mut written = 0usize;
    loop {
        let r = decoder
            .decompress(input, &mut dst[written..])
            .map_err(|e| DecodeError::new(format!("brotli: {e:?}")))?;
        input = &input[r.bytes_read..];
        written += r.bytes_written;
        match r.info {
            DecoderInfo::Finished => {
                if !input.is_empty() {
                    return invalid("brotli: bytes after the end of the stream");
                }
                dst.truncate(written);
                return Ok(());
            }
            DecoderInfo::NeedsMoreOutput => {
                if dst.len() > size {
                    return invalid("brotli: stream longer than its size prefix");
                }
                let grow = dst.len().max(1 << 16).min(size + 1 - dst.len());
                dst.resize(dst.len() + grow, 0);
            }
            DecoderInfo::NeedsMoreInput => return invalid("brotli: truncated stream"),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn roundtrip_every_codec() {
        let data: Vec<u8> = (0..100_000u32)
            .map(|i| (i % 251) as u8 ^ (i / 1000) as u8)
            .collect();
        let mut d = Decompressor::new();
        for kind in [
            CompressionType::None,
            CompressionType::Brotli,
            CompressionType::Zstd,
            CompressionType::Snappy,
        ] {
            let mut c = Compressor::new(CompressionOptions {
                kind,
                level: 3,
                window_log: None,
            })
            .unwrap();
            let mut framed = Vec::new();
            c.compress_into(&data, &mut framed).unwrap();
            // In parts: the same decoded bytes, after a prefix already in the output.
            for cuts in [&[][..], &[0, 7, 50_000][..], &[99_999][..]] {
                let mut parts = Vec::new();
                let mut start = 0;
                for &cut in cuts {
                    parts.push(&data[start..cut]);
                    start = cut;
                }
                parts.push(&data[start..]);
                let mut out = b"prefix".to_vec();
                c.compress_parts_into(&parts, &mut out).unwrap();
                assert_eq!(&out[..6], b"prefix");
                let mut back = Vec::new();
                d.decompress_into(kind, &out[6..], &mut back, data.len() as u64)
                    .unwrap();
                assert_eq!(back, data, "{kind:?} in parts {cuts:?}");
            }
            let mut empty = Vec::new();
            c.compress_parts_into(&[], &mut empty).unwrap();
            let mut back = Vec::new();
            d.decompress_into(kind, &empty, &mut back, 0).unwrap();
            assert!(back.is_empty(), "{kind:?}");
            let mut out = Vec::new();
            d.decompress_into(kind, &framed, &mut out, data.len() as u64)
                .unwrap();
            assert_eq!(out, data, "{kind:?}");
            // A smaller limit is refused.
            assert!(
                d.decompress_into(kind, &framed, &mut out, 10).is_err(),
                "{kind:?}"
            );
        }
    }
}
