//! The crate's error type.

use std::io;

/// Errors of reading, writing and decoding Riegeli/records files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The underlying reader or writer failed.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// A block header or chunk header is corrupted (bad hash or inconsistent fields).
    #[error("corrupted Riegeli/records file at offset {pos}: {message}")]
    Corrupted {
        /// File offset of the damaged structure (the chunk or block begin).
        pos: u64,
        /// What is wrong.
        message: String,
    },
    /// The chunk data does not match its hash; the chunk header is intact.
    #[error(
        "chunk at offset {chunk_begin}: data hash mismatch (stored {stored:#018x}, computed {computed:#018x})"
    )]
    DataHash {
        /// Begin of the chunk.
        chunk_begin: u64,
        /// Hash stored in the chunk header.
        stored: u64,
        /// Hash of the data read.
        computed: u64,
    },
    /// The file ends inside a chunk.
    #[error(
        "truncated Riegeli/records file: the chunk at offset {chunk_begin} needs {needed} bytes, the file has {size}"
    )]
    Truncated {
        /// Begin of the incomplete chunk.
        chunk_begin: u64,
        /// File size needed to hold the chunk.
        needed: u64,
        /// Actual file size.
        size: u64,
    },
    /// The chunk's framing is intact but its contents do not decode.
    #[error("chunk at offset {chunk_begin} does not decode: {message}")]
    InvalidChunk {
        /// Begin of the chunk.
        chunk_begin: u64,
        /// What is wrong.
        message: String,
    },
    /// Writer options do not parse.
    #[error("invalid options {text:?}: {message}")]
    Options {
        /// The options text.
        text: String,
        /// What is wrong.
        message: String,
    },
    /// The ArrayRecord footer or postscript is missing or malformed.
    #[error("not a valid ArrayRecord file: {0}")]
    ArrayRecord(String),
    /// A record index past the end was requested.
    #[error("record index {index} out of range (the file has {num_records} records)")]
    IndexOutOfRange {
        /// Requested index.
        index: u64,
        /// Number of records.
        num_records: u64,
    },
    /// A record or chunk too large for the format.
    #[error("{0}")]
    TooLarge(String),
    /// The writer was used after an earlier error or after `close`.
    #[error("the writer is closed or failed earlier")]
    WriterClosed,
}

/// An error inside chunk data, before the chunk's position is attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DecodeError(pub(crate) String);

impl DecodeError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }

    pub(crate) fn at(self, chunk_begin: u64) -> Error {
        Error::InvalidChunk {
            chunk_begin,
            message: self.0,
        }
    }
}

/// Shorthand for `Err(DecodeError::new(..))`.
pub(crate) fn invalid<T>(message: impl Into<String>) -> Result<T, DecodeError> {
    Err(DecodeError::new(message))
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
