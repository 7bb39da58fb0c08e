//! Wire compression of whole messages.
//!
//! On the wire a MATHLDBT message travels either as is, as exactly one
//! zstd frame (RFC 8878), or as exactly one gzip member (RFC 1952) whose
//! content is the message. The three are told apart by their first bytes
//! (`MATHLDBT`, `28 B5 2F FD`, `1F 8B`), so
//! [`Decoder::decode_compressed`](crate::Decoder::decode_compressed) needs no side channel.
//!
//! Compressors and decompressors live in the [`Encoder`](crate::Encoder) /
//! [`Decoder`](crate::Decoder) and
//! are reused across calls (a zstd `CCtx`/`DCtx`, a deflate state), as are
//! the output buffers. Decompression takes `max_uncompressed_len` and
//! enforces it before allocating: from the zstd frame header's content
//! size when present (our encoder always writes it) or the gzip `ISIZE`
//! hint, and by bounding the output buffer otherwise.

use crate::error::{DecodeError, EncodeError};
use crate::format::MAGIC;

/// The compression applied to a whole message on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Compression {
    /// The message as is.
    None,
    /// One zstd frame with the content size and content checksum recorded.
    #[cfg(feature = "compression-zstd")]
    Zstd {
        /// zstd level (1..=22; 3 is zstd's default).
        level: i32,
    },
    /// One gzip member (deterministic header: no name, mtime 0, OS 255).
    #[cfg(feature = "compression-gzip")]
    Gzip {
        /// deflate level (0..=9; 6 is gzip's default).
        level: u32,
    },
}

impl Compression {
    /// zstd at level 3.
    #[cfg(feature = "compression-zstd")]
    pub const ZSTD_DEFAULT: Compression = Compression::Zstd { level: 3 };
    /// gzip at level 6.
    #[cfg(feature = "compression-gzip")]
    pub const GZIP_DEFAULT: Compression = Compression::Gzip { level: 6 };

    /// A short label such as `none`, `zstd (level=3)`, `gzip (level=6)`.
    #[must_use]
    pub fn label(&self) -> String {
        match self {
            Compression::None => "none".to_owned(),
            #[cfg(feature = "compression-zstd")]
            Compression::Zstd { level } => format!("zstd (level={level})"),
            #[cfg(feature = "compression-gzip")]
            Compression::Gzip { level } => format!("gzip (level={level})"),
        }
    }
}

/// What a buffer of wire bytes holds, judged by its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WireFormat {
    /// An uncompressed MATHLDBT message.
    Raw,
    /// A zstd frame.
    Zstd,
    /// A gzip member.
    Gzip,
}

/// zstd frame magic number, little-endian `0xFD2FB528`.
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
/// gzip member magic.
pub const GZIP_MAGIC: [u8; 2] = [0x1F, 0x8B];

/// Identifies the wire format of `bytes`, or `None` if unrecognized.
#[must_use]
pub fn detect_wire_format(bytes: &[u8]) -> Option<WireFormat> {
    if bytes.starts_with(&MAGIC) {
        Some(WireFormat::Raw)
    } else if bytes.starts_with(&ZSTD_MAGIC) {
        Some(WireFormat::Zstd)
    } else if bytes.starts_with(&GZIP_MAGIC) {
        Some(WireFormat::Gzip)
    } else {
        None
    }
}

/// Reusable compressor state of an [`Encoder`](crate::Encoder).
#[derive(Default)]
pub(crate) struct CompressState {
    #[cfg(feature = "compression-zstd")]
    zstd: Option<(i32, zstd::bulk::Compressor<'static>)>,
    #[cfg(feature = "compression-gzip")]
    gzip: Option<(u32, flate2::Compress)>,
    out: Vec<u8>,
}

impl std::fmt::Debug for CompressState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompressState")
            .field("out_capacity", &self.out.capacity())
            .finish_non_exhaustive()
    }
}

/// Reusable decompressor state of a [`Decoder`](crate::Decoder).
#[derive(Default)]
pub(crate) struct DecompressState {
    #[cfg(feature = "compression-zstd")]
    zstd: Option<zstd::bulk::Decompressor<'static>>,
    #[cfg(feature = "compression-gzip")]
    gzip: Option<flate2::Decompress>,
    buf: Vec<u8>,
}

impl std::fmt::Debug for DecompressState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecompressState")
            .field("buf_capacity", &self.buf.capacity())
            .finish_non_exhaustive()
    }
}

#[cfg_attr(
    not(any(feature = "compression-zstd", feature = "compression-gzip")),
    allow(unused_variables, reason = "no compressor compiled in")
)]
pub(crate) fn compress<'a>(
    raw: &'a [u8],
    compression: Compression,
    state: &'a mut CompressState,
) -> Result<&'a [u8], EncodeError> {
    match compression {
        Compression::None => Ok(raw),
        #[cfg(feature = "compression-zstd")]
        Compression::Zstd { level } => {
            zstd_compress(state, level, raw)?;
            Ok(&state.out)
        }
        #[cfg(feature = "compression-gzip")]
        Compression::Gzip { level } => {
            gzip_compress(state, level, raw)?;
            Ok(&state.out)
        }
    }
}

pub(crate) fn decompress<'a>(
    wire: &'a [u8],
    max: usize,
    state: &'a mut DecompressState,
) -> Result<&'a [u8], DecodeError> {
    match detect_wire_format(wire) {
        Some(WireFormat::Raw) => {
            if wire.len() > max {
                return Err(DecodeError::UncompressedTooLarge { limit: max });
            }
            Ok(wire)
        }
        Some(WireFormat::Zstd) => {
            #[cfg(feature = "compression-zstd")]
            {
                zstd_decompress(state, wire, max)?;
                Ok(&state.buf)
            }
            #[cfg(not(feature = "compression-zstd"))]
            {
                let _ = state;
                Err(DecodeError::CompressionUnavailable { codec: "zstd" })
            }
        }
        Some(WireFormat::Gzip) => {
            #[cfg(feature = "compression-gzip")]
            {
                gzip_decompress(state, wire, max)?;
                Ok(&state.buf)
            }
            #[cfg(not(feature = "compression-gzip"))]
            {
                let _ = state;
                Err(DecodeError::CompressionUnavailable { codec: "gzip" })
            }
        }
        None => Err(DecodeError::UnknownWireFormat {
            prefix: wire.iter().take(4).copied().collect(),
        }),
    }
}

#[cfg(feature = "compression-zstd")]
fn zstd_compress(state: &mut CompressState, level: i32, raw: &[u8]) -> Result<(), EncodeError> {
    let err = |e: std::io::Error| EncodeError::Compress {
        codec: "zstd",
        message: e.to_string(),
    };
    match &mut state.zstd {
        Some((l, c)) => {
            if *l != level {
                c.set_compression_level(level).map_err(err)?;
                *l = level;
            }
        }
        slot @ None => {
            let mut c = zstd::bulk::Compressor::new(level).map_err(err)?;
            // Integrity for the compressed wire: zstd verifies it on
            // decompression.
            c.set_parameter(zstd::stream::raw::CParameter::ChecksumFlag(true))
                .map_err(err)?;
            *slot = Some((level, c));
        }
    }
    let Some((_, c)) = state.zstd.as_mut() else {
        return Err(EncodeError::Compress {
            codec: "zstd",
            message: "compressor unavailable".to_owned(),
        });
    };
    state.out.clear();
    state
        .out
        .reserve(zstd::zstd_safe::compress_bound(raw.len()));
    c.compress_to_buffer(raw, &mut state.out).map_err(err)?;
    Ok(())
}

#[cfg(feature = "compression-zstd")]
fn zstd_decompress(
    state: &mut DecompressState,
    wire: &[u8],
    max: usize,
) -> Result<(), DecodeError> {
    use std::io::Read;
    let fail = |message: String| DecodeError::Decompress {
        codec: "zstd",
        message,
    };
    let frame_len = zstd::zstd_safe::find_frame_compressed_size(wire)
        .map_err(|code| fail(zstd::zstd_safe::get_error_name(code).to_owned()))?;
    if frame_len != wire.len() {
        return Err(fail(format!(
            "{} bytes after the first frame (exactly one frame is allowed)",
            wire.len() - frame_len
        )));
    }
    let out = &mut state.buf;
    out.clear();
    match zstd::zstd_safe::get_frame_content_size(wire) {
        Ok(Some(size)) => {
            let size = usize::try_from(size)
                .ok()
                .filter(|&s| s <= max)
                .ok_or(DecodeError::UncompressedTooLarge { limit: max })?;
            out.reserve_exact(size);
            if state.zstd.is_none() {
                state.zstd =
                    Some(zstd::bulk::Decompressor::new().map_err(|e| fail(e.to_string()))?);
            }
            let Some(d) = state.zstd.as_mut() else {
                return Err(fail("decompressor unavailable".to_owned()));
            };
            let n = d
                .decompress_to_buffer(wire, out)
                .map_err(|e| fail(e.to_string()))?;
            if n != size {
                return Err(fail(format!("frame declares {size} bytes but holds {n}")));
            }
        }
        Ok(None) => {
            // No content size (a streaming producer): inflate with a hard
            // cap of max + 1 bytes to detect overflow.
            let mut dec = zstd::stream::read::Decoder::with_buffer(wire)
                .map_err(|e| fail(e.to_string()))?
                .single_frame();
            let cap = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
            (&mut dec)
                .take(cap)
                .read_to_end(out)
                .map_err(|e| fail(e.to_string()))?;
            if out.len() > max {
                return Err(DecodeError::UncompressedTooLarge { limit: max });
            }
        }
        Err(e) => return Err(fail(format!("bad frame header: {e:?}"))),
    }
    Ok(())
}

#[cfg(feature = "compression-gzip")]
fn gzip_compress(state: &mut CompressState, level: u32, raw: &[u8]) -> Result<(), EncodeError> {
    use flate2::{Compress, FlushCompress, Status};
    let level = level.min(9);
    match &mut state.gzip {
        Some((l, c)) if *l == level => c.reset(),
        slot => *slot = Some((level, Compress::new(flate2::Compression::new(level), false))),
    }
    let Some((_, c)) = state.gzip.as_mut() else {
        return Err(EncodeError::Compress {
            codec: "gzip",
            message: "compressor unavailable".to_owned(),
        });
    };
    let out = &mut state.out;
    out.clear();
    // RFC 1952 header: ID1 ID2 CM=8 FLG=0 MTIME=0 XFL OS=255 (unknown).
    let xfl = match level {
        9 => 2,
        0 | 1 => 4,
        _ => 0,
    };
    out.extend_from_slice(&[0x1F, 0x8B, 8, 0, 0, 0, 0, 0, xfl, 0xFF]);
    out.reserve(raw.len() / 2 + 64);
    let mut consumed = 0usize;
    loop {
        if out.capacity() - out.len() < 64 {
            out.reserve(out.capacity().max(4096));
        }
        let (before_in, before_out) = (c.total_in(), c.total_out());
        let status = c
            .compress_vec(
                raw.get(consumed..).unwrap_or_default(),
                out,
                FlushCompress::Finish,
            )
            .map_err(|e| EncodeError::Compress {
                codec: "gzip",
                message: e.to_string(),
            })?;
        consumed += usize::try_from(c.total_in() - before_in).unwrap_or(0);
        if status == Status::StreamEnd {
            break;
        }
        if c.total_in() == before_in && c.total_out() == before_out {
            // With at least 64 bytes of room, deflate always progresses;
            // guard against a loop all the same.
            return Err(EncodeError::Compress {
                codec: "gzip",
                message: "deflate made no progress".to_owned(),
            });
        }
    }
    let mut crc = flate2::Crc::new();
    crc.update(raw);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    // ISIZE is the length modulo 2^32 (RFC 1952).
    out.extend_from_slice(&(raw.len() as u32).to_le_bytes());
    Ok(())
}

#[cfg(feature = "compression-gzip")]
fn gzip_decompress(
    state: &mut DecompressState,
    wire: &[u8],
    max: usize,
) -> Result<(), DecodeError> {
    use flate2::{Decompress, FlushDecompress, Status};
    let fail = |message: &str| DecodeError::Decompress {
        codec: "gzip",
        message: message.to_owned(),
    };
    const FHCRC: u8 = 0x02;
    const FEXTRA: u8 = 0x04;
    const FNAME: u8 = 0x08;
    const FCOMMENT: u8 = 0x10;

    let mut r = crate::format::Reader::new(wire, 0);
    let fixed: [u8; 10] = r
        .array("gzip header")
        .map_err(|_| fail("truncated header"))?;
    let [_, _, cm, flg, ..] = fixed;
    if cm != 8 {
        return Err(fail("compression method is not deflate"));
    }
    if flg & 0xE0 != 0 {
        return Err(fail("reserved header flag bits set"));
    }
    if flg & FEXTRA != 0 {
        let xlen = r.u16("gzip extra").map_err(|_| fail("truncated header"))?;
        r.take(usize::from(xlen), "gzip extra")
            .map_err(|_| fail("truncated header"))?;
    }
    for flag in [FNAME, FCOMMENT] {
        if flg & flag != 0 {
            loop {
                if r.u8("gzip string").map_err(|_| fail("truncated header"))? == 0 {
                    break;
                }
            }
        }
    }
    if flg & FHCRC != 0 {
        let header_len = r.pos();
        let stored = r
            .u16("gzip header crc")
            .map_err(|_| fail("truncated header"))?;
        let mut crc = flate2::Crc::new();
        crc.update(wire.get(..header_len).unwrap_or_default());
        if (crc.sum() & 0xFFFF) as u16 != stored {
            return Err(fail("header CRC mismatch"));
        }
    }
    let body_start = r.pos();
    let Some(trailer_start) = wire.len().checked_sub(8).filter(|&t| t >= body_start) else {
        return Err(fail("truncated member (no trailer)"));
    };
    let deflate = wire.get(body_start..trailer_start).unwrap_or_default();
    let mut trailer = crate::format::Reader::new(wire, trailer_start);
    let stored_crc = trailer
        .u32("gzip crc")
        .map_err(|_| fail("truncated trailer"))?;
    let stored_isize = trailer
        .u32("gzip isize")
        .map_err(|_| fail("truncated trailer"))?;

    let out = &mut state.buf;
    out.clear();
    // ISIZE is only a hint (mod 2^32, attacker-controlled): cap it.
    out.reserve_exact((stored_isize as usize).min(max).saturating_add(1));
    let d = match &mut state.gzip {
        Some(d) => {
            d.reset(false);
            d
        }
        slot @ None => slot.insert(Decompress::new(false)),
    };
    let mut consumed = 0usize;
    loop {
        if out.len() == out.capacity() {
            if out.len() > max {
                return Err(DecodeError::UncompressedTooLarge { limit: max });
            }
            let room = max
                .saturating_add(1)
                .saturating_sub(out.len())
                .min(out.len().max(1 << 16));
            out.reserve_exact(room);
        }
        let (before_in, before_out) = (d.total_in(), d.total_out());
        let status = d
            .decompress_vec(
                deflate.get(consumed..).unwrap_or_default(),
                out,
                FlushDecompress::None,
            )
            .map_err(|e| DecodeError::Decompress {
                codec: "gzip",
                message: e.to_string(),
            })?;
        consumed += usize::try_from(d.total_in() - before_in).unwrap_or(0);
        if out.len() > max {
            return Err(DecodeError::UncompressedTooLarge { limit: max });
        }
        if status == Status::StreamEnd {
            break;
        }
        let progressed = d.total_in() != before_in || d.total_out() != before_out;
        if !progressed && out.len() < out.capacity() {
            return Err(fail("truncated deflate stream"));
        }
    }
    if consumed != deflate.len() {
        return Err(fail(
            "bytes between the deflate stream and the trailer (one member only)",
        ));
    }
    let mut crc = flate2::Crc::new();
    crc.update(out);
    if crc.sum() != stored_crc {
        return Err(fail("CRC-32 mismatch"));
    }
    if out.len() as u32 != stored_isize {
        return Err(fail("ISIZE mismatch"));
    }
    Ok(())
}
