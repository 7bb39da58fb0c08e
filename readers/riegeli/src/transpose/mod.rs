//! Transposed chunks (`'t'`): records split into per-field columns plus a state machine that re-assembles
//! them.
//!
//! ```text
//! u8        compression_type
//! varint64  header_size          stored length of the header stream
//! bytes     header stream        (decompressed) num_buckets, num_buffers, bucket lengths, buffer lengths,
//!                                num_states, tags, next nodes, subtypes, buffer indices, first_node
//! bytes     bucket[0..num_buckets)   each one stream; a bucket is consecutive buffers
//! bytes     transitions stream   the rest of the data: one byte per explicit transition, (offset << 2) | repeat
//! ```
//!
//! Decoding runs backward: the state machine emits the last record's last field first and every value is
//! *prepended* to the output; each buffer holds its values last-first so it is read front to back. See
//! [`decode`] for the per-state actions and [`encode`] for the encoder.
//!
//! Glossary: a *buffer* is the column of one field path (parent message, tag); a *bucket* is a compressed
//! group of consecutive buffers; a *state* is a (tag, subtype, buffer) triple with a *base* (explicit
//! transitions add the transition byte's offset to it) or an *implicit* successor (no byte consumed).

pub(crate) mod decode;
pub(crate) mod encode;

/// Reserved state ids (tags below 8 are not valid proto tags).
pub(crate) mod ids {
    pub(crate) const NO_OP: u32 = 0;
    pub(crate) const NON_PROTO: u32 = 1;
    pub(crate) const START_OF_SUBMESSAGE: u32 = 2;
    pub(crate) const START_OF_MESSAGE: u32 = 3;
}

/// Varint subtypes from this value on are inline values `subtype - INLINE_BASE`.
pub(crate) const INLINE_BASE: u8 = 10;
/// Largest inline varint value the decoder accepts (subtype 137).
pub(crate) const MAX_INLINE_DECODE: u8 = 127;
/// Largest single-byte varint the encoder inlines (as C++ does).
pub(crate) const MAX_INLINE_ENCODE: u8 = 3;
