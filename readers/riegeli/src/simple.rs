//! Simple chunks (`'r'`).
//!
//! ```text
//! u8        compression_type
//! varint64  compressed_sizes_size   stored length of the next stream (with its size prefix if compressed)
//! bytes     compressed_sizes        one stream: num_records varint64 record lengths
//! bytes     compressed_values       one stream, to the end of the data: the concatenated records
//! ```

use crate::compression::{CompressionType, Compressor, Decompressor};
use crate::error::{DecodeError, invalid};
use crate::group::RecordGroup;
use crate::varint::{read_varint64, write_varint64};

/// Where the decoded records of a chunk live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Values {
    /// In the chunk data from this offset (uncompressed simple chunks: no copy).
    InData(usize),
    /// In the decoder's output buffer.
    InBuffer,
}

/// Decodes a simple chunk: fills `ends` with the cumulative record ends.
pub(crate) fn decode(
    data: &[u8],
    num_records: u64,
    decoded_data_size: u64,
    decompressor: &mut Decompressor,
    sizes_scratch: &mut Vec<u8>,
    values_out: &mut Vec<u8>,
    ends: &mut Vec<usize>,
) -> Result<Values, DecodeError> {
    ends.clear();
    let Some(&kind_byte) = data.first() else {
        return invalid("empty simple chunk");
    };
    let Some(kind) = CompressionType::from_byte(kind_byte) else {
        return invalid(format!("unknown compression type {kind_byte:#04x}"));
    };
    let mut pos = 1;
    let sizes_size =
        read_varint64(data, &mut pos).ok_or_else(|| DecodeError::new("bad sizes size"))?;
    let sizes_end = usize::try_from(sizes_size)
        .ok()
        .and_then(|s| pos.checked_add(s))
        .filter(|&e| e <= data.len())
        .ok_or_else(|| DecodeError::new("sizes stream extends past the chunk"))?;
    let sizes_src = &data[pos..sizes_end];
    let sizes = decompressor.stream(
        kind,
        sizes_src,
        sizes_scratch,
        num_records.saturating_mul(10),
    )?;
    // Every record needs at least one byte of sizes: this bounds the allocation below.
    if num_records > sizes.len() as u64 {
        return invalid(format!(
            "{num_records} records but only {} bytes of sizes",
            sizes.len()
        ));
    }
    ends.reserve(num_records as usize);
    let mut total = 0u64;
    let mut spos = 0;
    for _ in 0..num_records {
        let size =
            read_varint64(sizes, &mut spos).ok_or_else(|| DecodeError::new("bad record size"))?;
        total = total
            .checked_add(size)
            .filter(|&t| t <= decoded_data_size)
            .ok_or_else(|| DecodeError::new("record sizes exceed the decoded data size"))?;
        ends.push(total as usize);
    }
    if spos != sizes.len() {
        return invalid("extra bytes after the record sizes");
    }
    if total != decoded_data_size {
        return invalid(format!(
            "record sizes sum to {total}, the header says {decoded_data_size}"
        ));
    }
    let values_src = &data[sizes_end..];
    if kind == CompressionType::None {
        if values_src.len() as u64 != decoded_data_size {
            return invalid("values stream length differs from the decoded data size");
        }
        Ok(Values::InData(sizes_end))
    } else {
        decompressor.decompress_into(kind, values_src, values_out, decoded_data_size)?;
        if values_out.len() as u64 != decoded_data_size {
            return invalid("values stream length differs from the decoded data size");
        }
        Ok(Values::InBuffer)
    }
}

/// Collects records and encodes them as a simple chunk.
#[derive(Debug, Default)]
pub(crate) struct SimpleEncoder {
    /// The chunk's records: their sizes (the sizes stream, uncompressed) and their bytes.
    records: RecordGroup,
    compressed_sizes: Vec<u8>,
}

impl SimpleEncoder {
    /// An encoder whose values buffer is allocated for `capacity` bytes (the expected chunk size) instead
    /// of doubling up to it in the first chunk.
    pub(crate) fn with_capacity_hint(capacity: usize) -> Self {
        let mut records = RecordGroup::new();
        records.values.reserve(capacity);
        Self {
            records,
            ..Self::default()
        }
    }

    pub(crate) fn add_record(&mut self, record: &[u8]) {
        self.records.push(record);
    }

    pub(crate) fn num_records(&self) -> u64 {
        self.records.len()
    }

    /// Takes the records of `group` by swapping buffers with it (no copy); the encoder must be
    /// empty. `group` is left empty, with the encoder's buffers.
    pub(crate) fn adopt(&mut self, group: &mut RecordGroup) {
        debug_assert!(
            self.records.is_empty(),
            "adopt into an encoder holding records"
        );
        std::mem::swap(&mut self.records, group);
        group.clear();
    }

    pub(crate) fn decoded_size(&self) -> u64 {
        self.records.bytes() as u64
    }

    /// Writes the chunk data to `out` (cleared first) and resets the encoder.
    pub(crate) fn encode(
        &mut self,
        compressor: &mut Compressor,
        out: &mut Vec<u8>,
    ) -> std::io::Result<()> {
        out.clear();
        let kind = compressor.options().kind;
        out.push(kind.to_byte());
        self.compressed_sizes.clear();
        compressor.compress_into(&self.records.sizes, &mut self.compressed_sizes)?;
        write_varint64(out, self.compressed_sizes.len() as u64);
        out.extend_from_slice(&self.compressed_sizes);
        compressor.compress_into(&self.records.values, out)?;
        self.clear();
        Ok(())
    }

    /// For uncompressed chunks: writes the chunk data before the values to `out` (cleared first); the
    /// chunk data is `out ‖ self.values()`, which saves copying the values.
    pub(crate) fn encode_uncompressed_prefix(&mut self, out: &mut Vec<u8>) {
        out.clear();
        out.push(0);
        write_varint64(out, self.records.sizes.len() as u64);
        out.extend_from_slice(&self.records.sizes);
    }

    pub(crate) fn values(&self) -> &[u8] {
        &self.records.values
    }

    pub(crate) fn clear(&mut self) {
        self.records.clear();
    }
}
