//! The error type of the crate.

use std::path::PathBuf;

/// Everything that can go wrong while opening, reading or writing a booklet file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system error, with the file it concerned.
    #[error("{path}: {source}")]
    Io {
        /// The booklet file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Flag `r` or `w` on a file that does not exist.
    #[error(
        "{0}: no such booklet file (flag r and w need an existing file; use c or n to create one)"
    )]
    NotFound(PathBuf),
    /// The first 16 bytes are neither booklet magic.
    #[error("not a booklet file: unknown file-type magic {magic:02x?}")]
    BadMagic {
        /// The 16 bytes found at offset 0.
        magic: [u8; 16],
    },
    /// The header's format version is not one this crate reads (3, 4 and 5).
    #[error("unsupported booklet format version {0} (this crate reads versions 3 to 5)")]
    UnsupportedVersion(u16),
    /// The file is structurally invalid: a field points outside the file, a chain loops, ...
    #[error("corrupt booklet file at offset {offset}: {reason}")]
    Corrupt {
        /// Byte offset of the offending structure.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// Another handle holds a conflicting lock and the lock timeout expired.
    #[error(
        "{path}: could not acquire the file lock within {waited_ms} ms; another handle or process holds it"
    )]
    LockTimeout {
        /// The booklet file.
        path: PathBuf,
        /// How long we waited.
        waited_ms: u128,
    },
    /// A write on a handle opened with flag `r`.
    #[error("the booklet is open read-only")]
    ReadOnly,
    /// `delete` of a key that is not present.
    #[error("key not found")]
    KeyNotFound,
    /// A value whose length differs from a fixed-length file's value length.
    #[error("value must be exactly {expected} bytes in this fixed-length booklet, got {got}")]
    WrongValueLength {
        /// The file's value length.
        expected: u32,
        /// The length passed in.
        got: usize,
    },
    /// A key longer than 65 535 bytes or a value longer than 4 GiB - 1.
    #[error("{what} of {len} bytes exceeds the format limit of {max} bytes")]
    TooLarge {
        /// "key" or "value".
        what: &'static str,
        /// The length passed in.
        len: usize,
        /// The limit.
        max: u64,
    },
    /// An operation the file does not support (timestamps on a file without them, metadata on
    /// a fixed-length file, ...).
    #[error("unsupported: {0}")]
    Unsupported(&'static str),
    /// Invalid arguments when creating a file.
    #[error("invalid option: {0}")]
    InvalidOption(String),
    /// A stored value or key could not be decoded with the file's serializer.
    #[error("cannot decode with serializer {serializer}: {reason}")]
    Decode {
        /// Serializer name.
        serializer: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// A value the serializer cannot hold (bytes in JSON, an int beyond msgpack's range, ...).
    #[error("cannot encode with serializer {serializer}: {reason}")]
    Encode {
        /// Serializer name.
        serializer: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// Decoding would take more memory than the value's budget ([`crate::serial::Limits`]):
    /// a zstd frame that expands too far, or a pickle that repeats memoized objects too often.
    #[error(
        "decoding with serializer {serializer} would take more than {limit} bytes \
         (the decode budget; raise Limits::max_bytes if the value is genuine)"
    )]
    DecodeLimit {
        /// Serializer name.
        serializer: &'static str,
        /// The budget of this value, in bytes.
        limit: usize,
    },
    /// The file's key or value serializer has no typed codec here (pandas, geopandas,
    /// shapely, a custom class, or a code this crate does not know). The stored bytes are still
    /// readable through the byte API (`get`, `iter`).
    #[error(
        "{}serializer {name} (code {code}) is not supported for typed values; supported: None, \
         bytes, str, json, orjson, pickle (plain values), msgpack, zstd, pickle_zstd, orjson_zstd, \
         msgpack_zstd, the integer codes and the numpy integer codes (read the stored bytes with \
         get/iter instead)",
        if role.is_empty() { String::new() } else { format!("the file's {role} ") }
    )]
    UnsupportedSerializer {
        /// "key", "value", or "" when not known.
        role: &'static str,
        /// The header code.
        code: u16,
        /// Python booklet's name for it, or "unknown".
        name: String,
    },
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn corrupt(offset: u64, reason: impl Into<String>) -> Self {
        Error::Corrupt {
            offset,
            reason: reason.into(),
        }
    }
}
