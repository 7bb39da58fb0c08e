//! `RecordsMetadata`, the file metadata of a Riegeli/records file (`riegeli/records/records_metadata.proto`).
//!
//! C++ writes it, when `RecordWriterBase::Options::set_metadata` is used, as an `'m'` chunk right after the
//! file signature: a transposed chunk holding the serialized message as its one record, compressed like the
//! records, with `num_records` 0 and `decoded_data_size` the message size. [`RecordsMetadata`] builds the
//! common fields; [`crate::WriterOptions::metadata`] takes any serialized message (for example one with
//! `file_descriptor` entries or extensions built elsewhere).
//!
//! ```text
//! message RecordsMetadata {
//!   optional string file_comment = 1;
//!   optional string record_type_name = 2;
//!   repeated google.protobuf.FileDescriptorProto file_descriptor = 3;
//!   optional string record_writer_options = 4;
//!   optional int64 num_records = 5;
//!   extensions 1000 to max;
//! }
//! ```

use crate::varint::write_varint64;

/// The scalar fields of `RecordsMetadata`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordsMetadata {
    /// Field 1: free text.
    pub file_comment: Option<String>,
    /// Field 2: full name of the record message type.
    pub record_type_name: Option<String>,
    /// Field 3: serialized `google.protobuf.FileDescriptorProto`s, each after its dependencies.
    pub file_descriptors: Vec<Vec<u8>>,
    /// Field 4: the writer options (informative).
    pub record_writer_options: Option<String>,
    /// Field 5: the number of records (informative).
    pub num_records: Option<i64>,
}

impl RecordsMetadata {
    /// The protobuf wire encoding, fields in number order (as C++ serializes it).
    #[must_use]
    pub fn serialize(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let bytes_field = |out: &mut Vec<u8>, field: u64, value: &[u8]| {
            write_varint64(out, field << 3 | 2);
            write_varint64(out, value.len() as u64);
            out.extend_from_slice(value);
        };
        if let Some(s) = &self.file_comment {
            bytes_field(&mut out, 1, s.as_bytes());
        }
        if let Some(s) = &self.record_type_name {
            bytes_field(&mut out, 2, s.as_bytes());
        }
        for d in &self.file_descriptors {
            bytes_field(&mut out, 3, d);
        }
        if let Some(s) = &self.record_writer_options {
            bytes_field(&mut out, 4, s.as_bytes());
        }
        if let Some(n) = self.num_records {
            write_varint64(&mut out, 5 << 3);
            // int64: negative values are ten-byte two's complement varints.
            write_varint64(&mut out, n as u64);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_encoding() {
        let m = RecordsMetadata {
            file_comment: Some("hello".into()),
            record_type_name: Some("pkg.Rec".into()),
            file_descriptors: vec![b"\x0a\x01a".to_vec()],
            record_writer_options: Some("zstd:3".into()),
            num_records: Some(300),
        };
        assert_eq!(
            m.serialize(),
            b"\x0a\x05hello\x12\x07pkg.Rec\x1a\x03\x0a\x01a\x22\x06zstd:3\x28\xac\x02".to_vec()
        );
        assert!(RecordsMetadata::default().serialize().is_empty());
        let negative = RecordsMetadata {
            num_records: Some(-1),
            ..RecordsMetadata::default()
        };
        assert_eq!(negative.serialize().len(), 11);
    }
}
