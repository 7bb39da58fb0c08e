//! Structural inspection of a message without decoding its buffers.

use crate::decode::read_layout;
use crate::error::DecodeError;
use crate::format::{TRAILER_LEN, buffer_names};
use crate::types::{DataType, Encoding};

/// One buffer of a column, as declared by its descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferInfo {
    /// Buffer name as in SPEC.md (`validity`, `values`, `offsets`, ...).
    pub name: &'static str,
    /// Length in bytes.
    pub len: u64,
}

/// One column descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnInfo {
    /// Field name.
    pub name: String,
    /// Logical type.
    pub data_type: DataType,
    /// Encoding.
    pub encoding: Encoding,
    /// Whether the field is nullable.
    pub nullable: bool,
    /// Declared null count.
    pub null_count: u32,
    /// Encoding parameter byte (the index width for `DictUtf8`).
    pub param: u8,
    /// Buffers in wire order.
    pub buffers: Vec<BufferInfo>,
}

impl ColumnInfo {
    /// Total bytes of this column's buffers.
    #[must_use]
    pub fn buffer_bytes(&self) -> u64 {
        self.buffers.iter().map(|b| b.len).sum()
    }
}

/// What a message's header and descriptors say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageInfo {
    /// Format version.
    pub version: u16,
    /// Row count.
    pub num_rows: u32,
    /// The checksum trailer, when present (verified by [`inspect`]).
    pub checksum: Option<u64>,
    /// Bytes of header plus descriptors.
    pub metadata_len: usize,
    /// Total message length.
    pub total_len: usize,
    /// Columns in order.
    pub columns: Vec<ColumnInfo>,
}

/// Parses and checks a message's header, checksum and descriptors (every
/// check that does not need the buffers' contents), and describes them.
/// Use [`crate::decode`] to validate a message completely.
///
/// # Errors
/// Any structural [`DecodeError`].
pub fn inspect(bytes: &[u8]) -> Result<MessageInfo, DecodeError> {
    let mut descs = Vec::new();
    let (header, body, buffers_start) = read_layout(bytes, true, &mut descs)?;
    let checksum = (header.flags & crate::format::FLAG_CHECKSUM != 0)
        .then(|| bytes.get(body.len()..))
        .flatten()
        .and_then(|t| <[u8; TRAILER_LEN]>::try_from(t).ok())
        .map(u64::from_le_bytes);
    let columns = descs
        .iter()
        .enumerate()
        .map(|(c, d)| {
            let (start, len) = d.name;
            let name = body
                .get(start..start + len)
                .and_then(|n| std::str::from_utf8(n).ok())
                .ok_or(DecodeError::InvalidName { column: c })?
                .to_owned();
            let names = std::iter::once("validity")
                .filter(|_| d.has_validity())
                .chain(buffer_names(d.data_type, d.encoding).iter().copied());
            let buffers = names
                .zip(d.buffer_lens.iter().take(d.buffer_count))
                .map(|(name, &len)| BufferInfo { name, len })
                .collect();
            Ok(ColumnInfo {
                name,
                data_type: d.data_type,
                encoding: d.encoding,
                nullable: d.nullable(),
                null_count: d.null_count,
                param: d.param,
                buffers,
            })
        })
        .collect::<Result<_, DecodeError>>()?;
    Ok(MessageInfo {
        version: crate::format::VERSION,
        num_rows: header.num_rows,
        checksum,
        metadata_len: buffers_start,
        total_len: bytes.len(),
        columns,
    })
}
