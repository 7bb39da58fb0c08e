//! Decoding a transposed chunk with a [`FieldProjection`], as C++ `TransposeDecoder` does:
//!
//! 1. *Resolve*: walk the state machine over the transitions without touching any buffer, keeping
//!    the stack of open submessages' field numbers, and decide for each state on its first visit
//!    whether its field is emitted whole, as existence only, or not at all (C++ decides on the
//!    first visit too and keeps the decision). Fields inside a dropped submessage are dropped
//!    without a lookup (a skip level counts how deep the walk is inside one).
//! 2. *Decompress* only the buckets that hold a buffer an emitted state reads (and the non-proto
//!    buffers). A bucket's buffers are found from its decompressed size, the varint prefix of its
//!    compressed stream, so skipped buckets are never decompressed.
//! 3. *Emit*: walk again, writing the kept fields backward. The output is built reversed in a
//!    `Vec` (prepending a run of bytes = pushing it reversed) and turned around at the end; it can
//!    only be shorter than the full records, so `decoded_data_size` bounds it.
//!
//! Cost: the transitions are walked twice, and only the kept columns are decompressed and copied.

use super::{Action, DecodeError, State, TransposeDecoder, invalid};
use crate::compression::{CompressionType, Decompressor};
use crate::projection::{FieldProjection, Inclusion};
use crate::varint::{encode_varint64, read_varint32, read_varint64};

/// What a state does under the projection, decided on its first visit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resolved {
    Unvisited,
    /// Emitted as without a projection (a start of submessage: closes one that is kept).
    Yes,
    /// Dropped (a start of submessage: closes one that is dropped).
    No,
    /// Emitted with a zero or empty value.
    Existence,
}

/// Wire type of a group's end tag, which opens the group when decoding backward.
const END_GROUP: u32 = 4;
/// Wire type of a group's start tag.
const START_GROUP: u32 = 3;

/// The walk over the state machine shared by both passes: calls `visit` on every state the
/// transitions lead through, in decoding order.
fn walk(
    states: &[State],
    transitions: &[u8],
    first_node: usize,
    mut noop_budget: u64,
    mut visit: impl FnMut(usize) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    let mut node = first_node;
    let mut n = u32::from(states[node].implicit);
    let mut tpos = 0usize;
    loop {
        let st = &states[node];
        if st.action == Action::NoOp {
            noop_budget = noop_budget
                .checked_sub(1)
                .ok_or_else(|| DecodeError::new("state machine does not progress"))?;
        }
        visit(node)?;
        let next = st.next as usize;
        if n == 0 {
            let Some(&b) = transitions.get(tpos) else {
                return Ok(());
            };
            tpos += 1;
            node = next + usize::from(b >> 2);
            let Some(target) = states.get(node) else {
                return invalid("transition out of range");
            };
            n = u32::from(b & 3) + u32::from(target.implicit);
        } else {
            node = next;
            if !states[node].implicit {
                n -= 1;
            }
        }
    }
}

/// Prepends `bytes` to the reversed output `rev`, which may not outgrow `limit`.
fn prepend(rev: &mut Vec<u8>, bytes: &[u8], limit: usize) -> Result<(), DecodeError> {
    if rev.len() + bytes.len() > limit {
        return invalid("projected records exceed the decoded data size");
    }
    rev.extend(bytes.iter().rev());
    Ok(())
}

/// Takes `len` bytes from a buffer cursor `(pos, end)` over `storage`.
fn take<'a>(
    storage: &'a [u8],
    cursor: &mut (usize, usize),
    len: usize,
) -> Result<&'a [u8], DecodeError> {
    if cursor.1 - cursor.0 < len {
        return invalid("buffer exhausted");
    }
    let s = &storage[cursor.0..cursor.0 + len];
    cursor.0 += len;
    Ok(s)
}

impl TransposeDecoder {
    /// Decodes the chunk whose states are parsed (`self.states`, `self.tags`) from `data`, whose
    /// buckets start at `pos`, keeping only the fields of `projection`.
    #[allow(clippy::too_many_arguments, clippy::too_many_lines)]
    pub(super) fn decode_projected(
        &mut self,
        projection: &FieldProjection,
        data: &[u8],
        mut pos: usize,
        kind: CompressionType,
        num_records: u64,
        decoded_data_size: u64,
        num_buffers: usize,
        first_node: usize,
        decompressor: &mut Decompressor,
        out: &mut Vec<u8>,
        ends: &mut Vec<usize>,
    ) -> Result<(), DecodeError> {
        let limit =
            usize::try_from(decoded_data_size).map_err(|_| DecodeError::new("chunk too large"))?;
        // Bucket ranges in `data`; the transitions are the rest.
        let mut bucket_ranges = Vec::with_capacity(self.bucket_lengths.len());
        for &len in &self.bucket_lengths {
            let end = usize::try_from(len)
                .ok()
                .and_then(|l| pos.checked_add(l))
                .filter(|&e| e <= data.len())
                .ok_or_else(|| DecodeError::new("bucket extends past the chunk"))?;
            bucket_ranges.push(pos..end);
            pos = end;
        }
        let mut transitions_buf = std::mem::take(&mut self.transitions);
        let result = (|| {
            let transitions: &[u8] = match kind {
                CompressionType::None => &data[pos..],
                _ => {
                    decompressor.decompress_into(
                        kind,
                        &data[pos..],
                        &mut transitions_buf,
                        1 << 34,
                    )?;
                    &transitions_buf
                }
            };
            let noop_budget = (transitions.len() as u64)
                .saturating_add(decoded_data_size)
                .saturating_add(num_records)
                .saturating_add(1)
                .saturating_mul(64);
            let resolved = self.resolve(projection, transitions, first_node, noop_budget, limit)?;
            let storage = self.load_buckets(
                &resolved,
                data,
                &bucket_ranges,
                kind,
                num_buffers,
                decompressor,
            )?;
            // Uncompressed buckets are read in place: the cursors point into `data`.
            let buffers: &[u8] = if kind == CompressionType::None {
                data
            } else {
                &storage
            };
            let result = self.emit(
                &resolved,
                buffers,
                transitions,
                first_node,
                noop_budget,
                num_records,
                num_buffers,
                limit,
                out,
                ends,
            );
            self.buckets = storage;
            result
        })();
        self.transitions = transitions_buf;
        result
    }

    /// Pass 1: each visited state's fate.
    fn resolve(
        &self,
        projection: &FieldProjection,
        transitions: &[u8],
        first_node: usize,
        noop_budget: u64,
        limit: usize,
    ) -> Result<Vec<Resolved>, DecodeError> {
        let states = &self.states[..];
        let tags = &self.tags[..];
        let mut resolved = vec![Resolved::Unvisited; states.len()];
        let mut open: Vec<u32> = Vec::new();
        let mut skipped = 0usize;
        let max_stack = limit / 2 + 1;
        walk(states, transitions, first_node, noop_budget, |node| {
            let st = &states[node];
            let tag = tags[node];
            if resolved[node] == Resolved::Unvisited {
                resolved[node] = match st.action {
                    // Not cached: one start state may close kept and dropped submessages alike.
                    Action::NoOp
                    | Action::NonProto
                    | Action::StartOfMessage
                    | Action::StartOfSubmessage => Resolved::Yes,
                    _ if skipped > 0 => Resolved::No,
                    _ => {
                        let group_start = st.action == Action::Tag && tag & 7 == START_GROUP;
                        match projection.resolve(&open, tag >> 3, group_start) {
                            Inclusion::Yes => Resolved::Yes,
                            Inclusion::No => Resolved::No,
                            Inclusion::Existence => Resolved::Existence,
                        }
                    }
                };
            }
            let kept = if st.action == Action::StartOfSubmessage {
                skipped == 0
            } else {
                resolved[node] != Resolved::No
            };
            let opens = st.action == Action::SubmessageEnd
                || (st.action == Action::Tag && tag & 7 == END_GROUP);
            let closes = st.action == Action::StartOfSubmessage
                || (st.action == Action::Tag && tag & 7 == START_GROUP);
            if opens {
                if !kept {
                    skipped += 1;
                } else if open.len() >= max_stack {
                    return invalid("submessages nested beyond the data size");
                } else {
                    open.push(tag >> 3);
                }
            } else if closes {
                if !kept {
                    skipped = skipped.checked_sub(1).ok_or_else(|| {
                        DecodeError::new("skipped submessage start without an end")
                    })?;
                } else if open.pop().is_none() {
                    return invalid("submessage start without an end");
                }
            }
            Ok(())
        })?;
        Ok(resolved)
    }

    /// Pass 2's input: the buffers emitted states read, in `self.buffers` over the returned storage,
    /// or over `data` itself when uncompressed (the other buffers are left empty and never read).
    fn load_buckets(
        &mut self,
        resolved: &[Resolved],
        data: &[u8],
        bucket_ranges: &[std::ops::Range<usize>],
        kind: CompressionType,
        num_buffers: usize,
        decompressor: &mut Decompressor,
    ) -> Result<Vec<u8>, DecodeError> {
        let mut needed = vec![false; num_buffers];
        for (st, r) in self.states.iter().zip(resolved) {
            let reads = matches!(
                st.action,
                Action::Varint | Action::Fixed32 | Action::Fixed64 | Action::String
            ) && *r == Resolved::Yes;
            if reads || (st.action == Action::NonProto && *r != Resolved::Unvisited) {
                needed[st.buffer as usize] = true;
                if st.action == Action::NonProto {
                    needed[num_buffers - 1] = true;
                }
            }
        }
        // Buffers fill their buckets in order; a bucket's decompressed size is its stream's prefix.
        let mut storage = std::mem::take(&mut self.buckets);
        storage.clear();
        self.buffers.clear();
        self.buffers.resize(num_buffers, (0, 0));
        let mut buffer = 0usize;
        for range in bucket_ranges {
            let compressed = &data[range.clone()];
            let size = if kind == CompressionType::None {
                compressed.len() as u64
            } else {
                let mut p = 0;
                read_varint64(compressed, &mut p)
                    .ok_or_else(|| DecodeError::new("bad size prefix of a bucket"))?
            };
            let first = buffer;
            let mut filled = 0u64;
            while filled < size {
                let Some(&len) = self.buffer_lengths.get(buffer) else {
                    return invalid("bucket larger than its buffers");
                };
                filled = filled.saturating_add(len);
                buffer += 1;
            }
            // Empty buffers after a full bucket belong to the next one (or end the list).
            if filled != size {
                return invalid("buffer extends past its bucket");
            }
            if !needed[first..buffer].iter().any(|&b| b) {
                continue;
            }
            let base = if kind == CompressionType::None {
                range.start
            } else if storage.is_empty() {
                // The first bucket needed goes straight to the storage, the others through scratch.
                decompressor.decompress_into(kind, compressed, &mut storage, size)?;
                if storage.len() as u64 != size {
                    return invalid("bucket decompresses to another size than its prefix");
                }
                0
            } else {
                let base = storage.len();
                decompressor.decompress_into(kind, compressed, &mut self.scratch, size)?;
                if self.scratch.len() as u64 != size {
                    return invalid("bucket decompresses to another size than its prefix");
                }
                storage.extend_from_slice(&self.scratch);
                base
            };
            let mut off = base;
            for b in first..buffer {
                let len = self.buffer_lengths[b] as usize;
                self.buffers[b] = (off, off + len);
                off += len;
            }
        }
        if self.buffer_lengths[buffer..].iter().any(|&l| l != 0) {
            return invalid("buffers beyond the buckets");
        }
        Ok(storage)
    }

    /// Pass 2: the kept fields, written backward.
    #[allow(clippy::too_many_arguments, clippy::too_many_lines)]
    fn emit(
        &mut self,
        resolved: &[Resolved],
        storage: &[u8],
        transitions: &[u8],
        first_node: usize,
        noop_budget: u64,
        num_records: u64,
        num_buffers: usize,
        limit: usize,
        out: &mut Vec<u8>,
        ends: &mut Vec<usize>,
    ) -> Result<(), DecodeError> {
        let states = &self.states[..];
        let tags = &self.tags[..];
        let cursors = &mut self.buffers;
        let limits = &mut self.limits;
        limits.clear();
        let mut rev = std::mem::take(out);
        rev.clear();
        let mut open: Vec<(usize, u32)> = Vec::new();
        let mut skipped = 0usize;
        let non_proto_lengths = num_buffers.wrapping_sub(1);
        let walked = walk(states, transitions, first_node, noop_budget, |node| {
            let st = &states[node];
            let r = resolved[node];
            let tag = &st.tag[..st.tag_len as usize];
            match (st.action, r) {
                (Action::NoOp, _) => {}
                (Action::Varint, Resolved::Yes) => {
                    let vl = st.varint_len as usize;
                    let bytes = take(storage, &mut cursors[st.buffer as usize], vl)?;
                    let mut value = [0u8; 10];
                    for (d, &b) in value[..vl - 1].iter_mut().zip(bytes) {
                        *d = b | 0x80;
                    }
                    value[vl - 1] = bytes[vl - 1];
                    prepend(&mut rev, &value[..vl], limit)?;
                    prepend(&mut rev, tag, limit)?;
                }
                (Action::VarintInline, Resolved::Yes) => prepend(&mut rev, tag, limit)?,
                // A kept group (whole, on the way to a field, or for its presence): its tags.
                (Action::Tag, Resolved::Yes | Resolved::Existence) => {
                    if tags[node] & 7 == END_GROUP {
                        open.push((rev.len(), node as u32));
                    } else if open.pop().is_none() {
                        return invalid("group start without an end");
                    }
                    prepend(&mut rev, tag, limit)?;
                }
                (Action::Varint | Action::VarintInline, Resolved::Existence) => {
                    // The tag alone (an inline value's byte dropped), then a zero value.
                    let tl = if st.action == Action::VarintInline {
                        tag.len() - 1
                    } else {
                        tag.len()
                    };
                    prepend(&mut rev, &[0], limit)?;
                    prepend(&mut rev, &tag[..tl], limit)?;
                }
                (Action::String, Resolved::Yes) => {
                    let cursor = &mut cursors[st.buffer as usize];
                    let mut p = cursor.0;
                    let len = read_varint32(&storage[..cursor.1], &mut p)
                        .ok_or_else(|| DecodeError::new("bad string length in a buffer"))?;
                    let value_len = (p - cursor.0) + len as usize;
                    let value = take(storage, cursor, value_len)?;
                    prepend(&mut rev, value, limit)?;
                    prepend(&mut rev, tag, limit)?;
                }
                (Action::String, Resolved::Existence) => {
                    prepend(&mut rev, &[0], limit)?;
                    prepend(&mut rev, tag, limit)?;
                }
                (Action::Fixed32 | Action::Fixed64, Resolved::Yes | Resolved::Existence) => {
                    let vl = if st.action == Action::Fixed32 { 4 } else { 8 };
                    if r == Resolved::Yes {
                        let bytes = take(storage, &mut cursors[st.buffer as usize], vl)?;
                        prepend(&mut rev, bytes, limit)?;
                    } else {
                        prepend(&mut rev, &[0; 8][..vl], limit)?;
                    }
                    prepend(&mut rev, tag, limit)?;
                }
                (Action::SubmessageEnd, Resolved::Yes | Resolved::Existence) => {
                    open.push((rev.len(), node as u32));
                }
                (Action::SubmessageEnd | Action::Tag, Resolved::No) => {
                    let opens = st.action == Action::SubmessageEnd || tags[node] & 7 == END_GROUP;
                    if opens {
                        skipped += 1;
                    } else {
                        skipped = skipped.checked_sub(1).ok_or_else(|| {
                            DecodeError::new("skipped submessage start without an end")
                        })?;
                    }
                }
                (Action::StartOfSubmessage, _) if skipped > 0 => skipped -= 1,
                (Action::StartOfSubmessage, _) => {
                    let (saved, end_state) = open
                        .pop()
                        .ok_or_else(|| DecodeError::new("submessage start without an end"))?;
                    let len = rev.len() - saved;
                    if len >= 1 << 32 {
                        return invalid("submessage too long");
                    }
                    let mut buf = [0u8; 10];
                    let vn = encode_varint64(&mut buf, len as u64);
                    prepend(&mut rev, &buf[..vn], limit)?;
                    let end = &states[end_state as usize];
                    prepend(&mut rev, &end.tag[..end.tag_len as usize], limit)?;
                }
                (Action::StartOfMessage, _) => {
                    if !open.is_empty() {
                        return invalid("record ends inside a submessage");
                    }
                    if limits.len() as u64 >= num_records {
                        return invalid("more records than the header says");
                    }
                    limits.push(rev.len());
                }
                (Action::NonProto, _) => {
                    let lengths = cursors
                        .get_mut(non_proto_lengths)
                        .ok_or_else(|| DecodeError::new("no non-proto lengths buffer"))?;
                    let mut p = lengths.0;
                    let len = read_varint32(&storage[..lengths.1], &mut p)
                        .ok_or_else(|| DecodeError::new("bad non-proto record length"))?;
                    lengths.0 = p;
                    let bytes = take(storage, &mut cursors[st.buffer as usize], len as usize)?;
                    prepend(&mut rev, bytes, limit)?;
                    if !open.is_empty() {
                        return invalid("record ends inside a submessage");
                    }
                    if limits.len() as u64 >= num_records {
                        return invalid("more records than the header says");
                    }
                    limits.push(rev.len());
                }
                // Dropped fields, and states pass 1 never reached (pass 2 walks the same way).
                _ => {}
            }
            Ok(())
        });
        rev.reverse();
        *out = rev;
        walked?;
        if !open.is_empty() || skipped != 0 {
            return invalid("unterminated submessage");
        }
        let size = out.len();
        let n = limits.len();
        if n as u64 != num_records {
            return invalid(format!(
                "decoded {n} records, the header says {num_records}"
            ));
        }
        if n > 0 && limits[n - 1] != size {
            return invalid("the first record does not start at the beginning");
        }
        ends.reserve(n);
        for k in (0..n.saturating_sub(1)).rev() {
            ends.push(size - limits[k]);
        }
        if n > 0 {
            ends.push(size);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepend_builds_the_output_reversed_within_its_limit() {
        let mut rev = Vec::new();
        assert!(prepend(&mut rev, b"cd", 4).is_ok());
        assert!(prepend(&mut rev, b"ab", 4).is_ok());
        rev.reverse();
        assert_eq!(rev, b"abcd");
        let mut rev = vec![0; 3];
        assert!(
            prepend(&mut rev, b"xy", 4).is_err(),
            "past the decoded size"
        );
    }

    #[test]
    fn take_stops_at_the_buffer_end() {
        let storage = b"0123456789";
        let mut cursor = (2, 5);
        assert_eq!(take(storage, &mut cursor, 2).ok(), Some(&b"23"[..]));
        assert!(take(storage, &mut cursor, 2).is_err());
        assert_eq!(take(storage, &mut cursor, 1).ok(), Some(&b"4"[..]));
    }
}
