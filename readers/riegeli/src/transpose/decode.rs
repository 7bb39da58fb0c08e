//! Decoding of transposed chunks.
//!
//! Per state, when executed (output is prepended; `written` = bytes emitted so far):
//!
//! | state | action |
//! |---|---|
//! | 0 NoOp | nothing (routing) |
//! | 1 NonProto | read varint32 `L` from the non-proto lengths buffer (the last one), prepend `L` bytes of this state's buffer, then act as StartOfMessage |
//! | 2 StartOfSubmessage | pop (saved, end state); prepend `tag(end) ‖ varint(written - saved)` |
//! | 3 StartOfMessage | the submessage stack must be empty; push `written` to the record limits |
//! | tag, wire 0, subtype 0..=9 | prepend `tag ‖` subtype+1 buffer bytes with the high bit set on all but the last |
//! | tag, wire 0, subtype 10..=137 | prepend `tag ‖ (subtype - 10)` |
//! | tag, wire 1 / 5 | prepend `tag ‖` 8 / 4 buffer bytes |
//! | tag, wire 2 | prepend `tag ‖` a `varint len ‖ bytes` value of the buffer |
//! | tag + 4 (wire 6) | end of a submessage of field `tag`: push (written, this state) |
//! | tag, wire 3 / 4 | prepend the tag |
//!
//! Transitions: a counter `n` starts at 1 if the first state is implicit. After executing a state, move to
//! its `next`; if `n == 0` read a byte `b` (stop at the end of the stream): the state is `next + (b >> 2)` and
//! `n = (b & 3) + implicit(state)`; otherwise `n -= 1` unless the new state is implicit.
//!
//! Hostile input: every count is bounded by the bytes that justify it, the output by `decoded_data_size`
//! (itself bounded by what the buffers and transitions can produce), loops of implicit transitions are
//! rejected, and the steps that emit nothing are capped, so decoding always ends.

use super::{INLINE_BASE, MAX_INLINE_DECODE, ids};
use crate::compression::{CompressionType, Decompressor};
use crate::error::{DecodeError, invalid};
use crate::projection::FieldProjection;

mod project;
use crate::varint::{encode_varint64, read_varint32, read_varint64};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    NoOp,
    NonProto,
    StartOfSubmessage,
    StartOfMessage,
    Varint,
    VarintInline,
    Fixed32,
    Fixed64,
    String,
    SubmessageEnd,
    Tag,
}

#[derive(Debug, Clone, Copy)]
struct State {
    action: Action,
    implicit: bool,
    /// Bytes of `tag` to emit (tag varint, plus the value byte for inline varints).
    tag_len: u8,
    /// Varint value length for [`Action::Varint`].
    varint_len: u8,
    buffer: u32,
    next: u32,
    tag: [u8; 6],
}

/// A reusable decoder of transposed chunks.
#[derive(Debug, Default)]
pub(crate) struct TransposeDecoder {
    header: Vec<u8>,
    buckets: Vec<u8>,
    scratch: Vec<u8>,
    transitions: Vec<u8>,
    states: Vec<State>,
    buffers: Vec<(usize, usize)>,
    stack: Vec<(usize, u32)>,
    limits: Vec<usize>,
    buffer_lengths: Vec<u64>,
    bucket_lengths: Vec<u64>,
    tags: Vec<u32>,
    nexts: Vec<u32>,
    chain: Vec<u32>,
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn v32(&mut self, what: &str) -> Result<u32, DecodeError> {
        read_varint32(self.data, &mut self.pos)
            .ok_or_else(|| DecodeError::new(format!("bad varint ({what})")))
    }
    fn v64(&mut self, what: &str) -> Result<u64, DecodeError> {
        read_varint64(self.data, &mut self.pos)
            .ok_or_else(|| DecodeError::new(format!("bad varint ({what})")))
    }
    fn byte(&mut self, what: &str) -> Result<u8, DecodeError> {
        let b = *self
            .data
            .get(self.pos)
            .ok_or_else(|| DecodeError::new(format!("truncated header ({what})")))?;
        self.pos += 1;
        Ok(b)
    }
    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
}

fn count_at_most(n: u32, available: usize, what: &str) -> Result<usize, DecodeError> {
    let n = n as usize;
    if n > available {
        return invalid(format!("{what} = {n} exceeds what the header can hold"));
    }
    Ok(n)
}

fn take<'a>(
    buckets: &'a [u8],
    cursor: &mut (usize, usize),
    n: usize,
) -> Result<&'a [u8], DecodeError> {
    let (pos, end) = *cursor;
    if end - pos < n {
        return invalid("a buffer ran out of data");
    }
    cursor.0 = pos + n;
    Ok(&buckets[pos..pos + n])
}

#[inline]
fn prepend(out: &mut [u8], w: &mut usize, bytes: &[u8]) -> Result<(), DecodeError> {
    if *w < bytes.len() {
        return invalid("records exceed the decoded data size");
    }
    *w -= bytes.len();
    out[*w..*w + bytes.len()].copy_from_slice(bytes);
    Ok(())
}

impl TransposeDecoder {
    /// Decodes `data` into `out` (exactly `decoded_data_size` bytes) and the cumulative record ends.
    #[expect(
        clippy::too_many_arguments,
        reason = "the chunk's fields, the projection and the reused buffers; a struct would only rename them"
    )]
    pub(crate) fn decode(
        &mut self,
        data: &[u8],
        num_records: u64,
        decoded_data_size: u64,
        projection: Option<&FieldProjection>,
        decompressor: &mut Decompressor,
        out: &mut Vec<u8>,
        ends: &mut Vec<usize>,
    ) -> Result<(), DecodeError> {
        ends.clear();
        let Some(&kind_byte) = data.first() else {
            return invalid("empty transposed chunk");
        };
        let Some(kind) = CompressionType::from_byte(kind_byte) else {
            return invalid(format!("unknown compression type {kind_byte:#04x}"));
        };
        let mut pos = 1;
        let header_size =
            read_varint64(data, &mut pos).ok_or_else(|| DecodeError::new("bad header size"))?;
        let header_end = usize::try_from(header_size)
            .ok()
            .and_then(|s| pos.checked_add(s))
            .filter(|&e| e <= data.len())
            .ok_or_else(|| DecodeError::new("header stream extends past the chunk"))?;
        decompressor.decompress_into(kind, &data[pos..header_end], &mut self.header, 1 << 32)?;
        pos = header_end;
        let header = std::mem::take(&mut self.header);
        let result = self.decode_with_header(
            &header,
            data,
            pos,
            kind,
            num_records,
            decoded_data_size,
            projection.filter(|p| !p.includes_all()),
            decompressor,
            out,
            ends,
        );
        self.header = header;
        result
    }

    #[allow(clippy::too_many_arguments, clippy::too_many_lines)]
    fn decode_with_header(
        &mut self,
        header: &[u8],
        data: &[u8],
        mut pos: usize,
        kind: CompressionType,
        num_records: u64,
        decoded_data_size: u64,
        projection: Option<&FieldProjection>,
        decompressor: &mut Decompressor,
        out: &mut Vec<u8>,
        ends: &mut Vec<usize>,
    ) -> Result<(), DecodeError> {
        let mut h = Cursor {
            data: header,
            pos: 0,
        };
        let num_buckets = h.v32("num_buckets")?;
        let num_buffers = h.v32("num_buffers")?;
        let num_buckets = count_at_most(num_buckets, h.remaining(), "num_buckets")?;
        let num_buffers = count_at_most(num_buffers, h.remaining(), "num_buffers")?;
        if num_buckets == 0 && num_buffers != 0 {
            return invalid("buffers without buckets");
        }
        self.bucket_lengths.clear();
        for _ in 0..num_buckets {
            let v = h.v64("bucket length")?;
            self.bucket_lengths.push(v);
        }
        self.buffer_lengths.clear();
        let mut buffers_total = 0u64;
        for _ in 0..num_buffers {
            let v = h.v64("buffer length")?;
            buffers_total = buffers_total.saturating_add(v);
            self.buffer_lengths.push(v);
        }
        // Buffers hold output bytes, plus one length varint per non-proto record.
        if buffers_total > decoded_data_size.saturating_add(num_records.saturating_mul(10)) {
            return invalid("buffers are larger than the records they encode");
        }
        let num_states = h.v32("num_states")?;
        let num_states = count_at_most(num_states, h.remaining(), "num_states")?;
        if num_states == 0 {
            return invalid("no states");
        }
        self.tags.clear();
        for _ in 0..num_states {
            let v = h.v32("tag")?;
            self.tags.push(v);
        }
        self.nexts.clear();
        for _ in 0..num_states {
            let v = h.v32("next node")?;
            self.nexts.push(v);
        }
        // States.
        self.states.clear();
        let mut has_non_proto = false;
        for &tag in &self.tags {
            let mut st = State {
                action: Action::NoOp,
                implicit: false,
                tag_len: 0,
                varint_len: 0,
                buffer: u32::MAX,
                next: 0,
                tag: [0; 6],
            };
            let mut tag_to_write = None;
            let mut inline_value = None;
            match tag {
                ids::NO_OP => {}
                ids::NON_PROTO => {
                    st.action = Action::NonProto;
                    has_non_proto = true;
                }
                ids::START_OF_SUBMESSAGE => st.action = Action::StartOfSubmessage,
                ids::START_OF_MESSAGE => st.action = Action::StartOfMessage,
                4..=7 => return invalid(format!("invalid state id {tag}")),
                t => match t & 7 {
                    0 => {
                        let subtype = h.byte("subtype")?;
                        if subtype < INLINE_BASE {
                            st.action = Action::Varint;
                            st.varint_len = subtype + 1;
                        } else if subtype - INLINE_BASE <= MAX_INLINE_DECODE {
                            st.action = Action::VarintInline;
                            inline_value = Some(subtype - INLINE_BASE);
                        } else {
                            return invalid(format!("invalid varint subtype {subtype}"));
                        }
                        tag_to_write = Some(t);
                    }
                    1 => {
                        st.action = Action::Fixed64;
                        tag_to_write = Some(t);
                    }
                    5 => {
                        st.action = Action::Fixed32;
                        tag_to_write = Some(t);
                    }
                    2 => {
                        st.action = Action::String;
                        tag_to_write = Some(t);
                    }
                    3 | 4 => {
                        st.action = Action::Tag;
                        tag_to_write = Some(t);
                    }
                    6 => {
                        st.action = Action::SubmessageEnd;
                        tag_to_write = Some(t - 4);
                    }
                    _ => return invalid(format!("invalid tag {t}")),
                },
            }
            if let Some(t) = tag_to_write {
                let mut buf = [0u8; 10];
                let n = encode_varint64(&mut buf, u64::from(t));
                st.tag[..n].copy_from_slice(&buf[..n]);
                st.tag_len = n as u8;
                if let Some(v) = inline_value {
                    st.tag[n] = v;
                    st.tag_len += 1;
                }
            }
            self.states.push(st);
        }
        // Buffer indices, in state order.
        for (i, st) in self.states.iter_mut().enumerate() {
            if matches!(
                st.action,
                Action::NonProto
                    | Action::Varint
                    | Action::Fixed32
                    | Action::Fixed64
                    | Action::String
            ) {
                let idx = h.v32("buffer index")?;
                if idx as usize >= num_buffers {
                    return invalid(format!("state {i}: buffer index {idx} out of range"));
                }
                st.buffer = idx;
            }
        }
        if has_non_proto && num_buffers == 0 {
            return invalid("non-proto state without buffers");
        }
        let first_node = h.v32("first_node")? as usize;
        if first_node >= num_states {
            return invalid("first node out of range");
        }
        if h.remaining() != 0 {
            return invalid("extra bytes after the transposed header");
        }
        // Next nodes.
        for (st, &v) in self.states.iter_mut().zip(&self.nexts) {
            let v = v as usize;
            if v >= num_states {
                let target = v - num_states;
                if target >= num_states {
                    return invalid("implicit transition out of range");
                }
                st.implicit = true;
                st.next = target as u32;
            } else {
                st.next = v as u32;
            }
        }
        let max_chain = self.check_implicit_loops()?;
        if let Some(projection) = projection {
            return self.decode_projected(
                projection,
                data,
                pos,
                kind,
                num_records,
                decoded_data_size,
                num_buffers,
                first_node,
                decompressor,
                out,
                ends,
            );
        }

        // Buckets and buffers. A single bucket (our encoder's layout) is used in place when uncompressed
        // and decompressed straight into `buckets` otherwise.
        self.buckets.clear();
        let mut raw_bucket = None;
        let mut bucket_ends = Vec::with_capacity(num_buckets);
        for i in 0..num_buckets {
            let len = self.bucket_lengths[i];
            let end = usize::try_from(len)
                .ok()
                .and_then(|l| pos.checked_add(l))
                .filter(|&e| e <= data.len())
                .ok_or_else(|| DecodeError::new("bucket extends past the chunk"))?;
            let limit = buffers_total - self.buckets.len() as u64;
            if kind == CompressionType::None {
                if (end - pos) as u64 > limit {
                    return invalid("bucket larger than its buffers");
                }
                if num_buckets == 1 {
                    raw_bucket = Some(pos..end);
                    bucket_ends.push(end - pos);
                    pos = end;
                    continue;
                }
                self.buckets.extend_from_slice(&data[pos..end]);
            } else if num_buckets == 1 {
                decompressor.decompress_into(kind, &data[pos..end], &mut self.buckets, limit)?;
            } else {
                decompressor.decompress_into(kind, &data[pos..end], &mut self.scratch, limit)?;
                self.buckets.extend_from_slice(&self.scratch);
            }
            bucket_ends.push(self.buckets.len());
            pos = end;
        }
        let buckets_owned = std::mem::take(&mut self.buckets);
        let storage: &[u8] = match &raw_bucket {
            Some(r) => &data[r.clone()],
            None => &buckets_owned,
        };
        let result = self.finish_buckets(
            storage,
            &bucket_ends,
            data,
            pos,
            kind,
            buffers_total,
            max_chain,
            decoded_data_size,
            num_records,
            num_buffers,
            first_node,
            decompressor,
            out,
            ends,
        );
        self.buckets = buckets_owned;
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_buckets(
        &mut self,
        storage: &[u8],
        bucket_ends: &[usize],
        data: &[u8],
        pos: usize,
        kind: CompressionType,
        buffers_total: u64,
        max_chain: usize,
        decoded_data_size: u64,
        num_records: u64,
        num_buffers: usize,
        first_node: usize,
        decompressor: &mut Decompressor,
        out: &mut Vec<u8>,
        ends: &mut Vec<usize>,
    ) -> Result<(), DecodeError> {
        let num_buckets = bucket_ends.len();
        self.buffers.clear();
        let mut off = 0usize;
        let mut bucket = 0usize;
        while bucket + 1 < num_buckets && off == bucket_ends[bucket] {
            bucket += 1;
        }
        for &len in &self.buffer_lengths {
            let bucket_end = *bucket_ends.get(bucket).unwrap_or(&0);
            let len = usize::try_from(len).map_err(|_| DecodeError::new("buffer too large"))?;
            if bucket_end - off < len {
                return invalid("buffer extends past its bucket");
            }
            self.buffers.push((off, off + len));
            off += len;
            while bucket + 1 < num_buckets && off == bucket_ends[bucket] {
                bucket += 1;
            }
        }
        if off != storage.len() || (num_buckets > 0 && bucket + 1 != num_buckets) {
            return invalid("buckets hold data beyond their buffers");
        }
        // Transitions: the rest of the chunk.
        let mut transitions_buf = std::mem::take(&mut self.transitions);
        let transitions: &[u8] = match kind {
            CompressionType::None => &data[pos..],
            _ => {
                let r =
                    decompressor.decompress_into(kind, &data[pos..], &mut transitions_buf, 1 << 34);
                if let Err(e) = r {
                    self.transitions = transitions_buf;
                    return Err(e);
                }
                &transitions_buf
            }
        };
        let result = self.finish(
            storage,
            transitions,
            buffers_total,
            max_chain,
            decoded_data_size,
            num_records,
            num_buffers,
            first_node,
            out,
            ends,
        );
        self.transitions = transitions_buf;
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        &mut self,
        storage: &[u8],
        transitions: &[u8],
        buffers_total: u64,
        max_chain: usize,
        decoded_data_size: u64,
        num_records: u64,
        num_buffers: usize,
        first_node: usize,
        out: &mut Vec<u8>,
        ends: &mut Vec<usize>,
    ) -> Result<(), DecodeError> {
        // Output bound: buffers plus at most 16 bytes per step; steps are bounded by the transitions.
        let steps = (transitions.len() as u64 + 1)
            .saturating_mul(4)
            .saturating_mul(max_chain as u64 + 1);
        if decoded_data_size > buffers_total.saturating_add(steps.saturating_mul(16)) {
            return invalid("decoded data size is larger than the chunk can produce");
        }
        let size =
            usize::try_from(decoded_data_size).map_err(|_| DecodeError::new("chunk too large"))?;
        // Every byte is written below (the run checks that the output is filled exactly), so a reused
        // buffer needs no clearing.
        if out.len() < size {
            out.resize(size, 0);
        }
        out.truncate(size);
        let non_proto_lengths = num_buffers.wrapping_sub(1);
        self.run(
            storage,
            out,
            transitions,
            first_node,
            num_records,
            non_proto_lengths,
            decoded_data_size,
        )?;
        // Record ends from the limits (distances from the end, last record first).
        let n = self.limits.len();
        if n as u64 != num_records {
            return invalid(format!(
                "decoded {n} records, the header says {num_records}"
            ));
        }
        if n > 0 && self.limits[n - 1] != size {
            return invalid("the first record does not start at the beginning");
        }
        ends.reserve(n);
        for k in (0..n.saturating_sub(1)).rev() {
            ends.push(size - self.limits[k]);
        }
        if n > 0 {
            ends.push(size);
        }
        Ok(())
    }

    /// Rejects cycles of implicit transitions; returns the longest implicit chain.
    fn check_implicit_loops(&mut self) -> Result<usize, DecodeError> {
        // chain[i]: 0 unknown, u32::MAX in progress, else 1 + chain length from i.
        let n = self.states.len();
        self.chain.clear();
        self.chain.resize(n, 0);
        let mut max_chain = 0usize;
        let mut path = Vec::new();
        for start in 0..n {
            let mut i = start;
            path.clear();
            loop {
                if self.chain[i] == u32::MAX {
                    return invalid("loop of implicit transitions");
                }
                if self.chain[i] != 0 {
                    break;
                }
                if !self.states[i].implicit {
                    self.chain[i] = 1;
                    break;
                }
                self.chain[i] = u32::MAX;
                path.push(i);
                i = self.states[i].next as usize;
            }
            let mut len = self.chain[i];
            while let Some(j) = path.pop() {
                len += 1;
                self.chain[j] = len;
            }
            max_chain = max_chain.max(len as usize);
        }
        Ok(max_chain)
    }

    #[allow(clippy::too_many_lines, clippy::too_many_arguments)]
    fn run(
        &mut self,
        buckets: &[u8],
        out: &mut [u8],
        transitions: &[u8],
        first_node: usize,
        num_records: u64,
        non_proto_lengths: usize,
        decoded_data_size: u64,
    ) -> Result<(), DecodeError> {
        let size = out.len();
        let mut w = size;
        let states = &self.states[..];
        let cursors = &mut self.buffers;
        let stack = &mut self.stack;
        let limits = &mut self.limits;
        stack.clear();
        limits.clear();
        let max_stack = (decoded_data_size / 2 + 1) as usize;
        let mut noop_budget = (transitions.len() as u64)
            .saturating_add(decoded_data_size)
            .saturating_add(num_records)
            .saturating_add(1)
            .saturating_mul(64);
        let mut node = first_node;
        let mut n = u32::from(states[node].implicit);
        let mut tpos = 0usize;
        loop {
            let st = &states[node];
            match st.action {
                Action::NoOp => {
                    noop_budget = noop_budget
                        .checked_sub(1)
                        .ok_or_else(|| DecodeError::new("state machine does not progress"))?;
                }
                Action::Varint => {
                    let tl = st.tag_len as usize;
                    let vl = st.varint_len as usize;
                    let cursor = &mut cursors[st.buffer as usize];
                    let bytes = take(buckets, cursor, vl)?;
                    let total = tl + vl;
                    if w < total {
                        return invalid("records exceed the decoded data size");
                    }
                    w -= total;
                    let dst = &mut out[w..w + total];
                    dst[..tl].copy_from_slice(&st.tag[..tl]);
                    for (d, &b) in dst[tl..total - 1].iter_mut().zip(bytes) {
                        *d = b | 0x80;
                    }
                    dst[total - 1] = bytes[vl - 1];
                }
                Action::VarintInline | Action::Tag => {
                    prepend(out, &mut w, &st.tag[..st.tag_len as usize])?;
                }
                Action::String => {
                    let cursor = &mut cursors[st.buffer as usize];
                    let mut p = cursor.0;
                    let len = read_varint32(&buckets[..cursor.1], &mut p)
                        .ok_or_else(|| DecodeError::new("bad string length in a buffer"))?;
                    let value_len = (p - cursor.0) + len as usize;
                    let value = take(buckets, cursor, value_len)?;
                    let tl = st.tag_len as usize;
                    prepend(out, &mut w, value)?;
                    prepend(out, &mut w, &st.tag[..tl])?;
                }
                Action::Fixed32 | Action::Fixed64 => {
                    let vl = if st.action == Action::Fixed32 { 4 } else { 8 };
                    let bytes = take(buckets, &mut cursors[st.buffer as usize], vl)?;
                    prepend(out, &mut w, bytes)?;
                    prepend(out, &mut w, &st.tag[..st.tag_len as usize])?;
                }
                Action::SubmessageEnd => {
                    if stack.len() >= max_stack {
                        return invalid("submessages nested beyond the data size");
                    }
                    stack.push((size - w, node as u32));
                }
                Action::StartOfSubmessage => {
                    let (saved, end_state) = stack
                        .pop()
                        .ok_or_else(|| DecodeError::new("submessage start without an end"))?;
                    let len = (size - w) - saved;
                    if len >= 1 << 32 {
                        return invalid("submessage too long");
                    }
                    let mut buf = [0u8; 10];
                    let vn = encode_varint64(&mut buf, len as u64);
                    prepend(out, &mut w, &buf[..vn])?;
                    let end = &states[end_state as usize];
                    prepend(out, &mut w, &end.tag[..end.tag_len as usize])?;
                }
                Action::StartOfMessage => {
                    if !stack.is_empty() {
                        return invalid("record ends inside a submessage");
                    }
                    if limits.len() as u64 >= num_records {
                        return invalid("more records than the header says");
                    }
                    limits.push(size - w);
                }
                Action::NonProto => {
                    let lengths = cursors
                        .get_mut(non_proto_lengths)
                        .ok_or_else(|| DecodeError::new("no non-proto lengths buffer"))?;
                    let mut p = lengths.0;
                    let len = read_varint32(&buckets[..lengths.1], &mut p)
                        .ok_or_else(|| DecodeError::new("bad non-proto record length"))?;
                    lengths.0 = p;
                    let bytes = take(buckets, &mut cursors[st.buffer as usize], len as usize)?;
                    prepend(out, &mut w, bytes)?;
                    if !stack.is_empty() {
                        return invalid("record ends inside a submessage");
                    }
                    if limits.len() as u64 >= num_records {
                        return invalid("more records than the header says");
                    }
                    limits.push(size - w);
                }
            }
            let next = st.next as usize;
            if n == 0 {
                let Some(&b) = transitions.get(tpos) else {
                    break;
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
        if !stack.is_empty() {
            return invalid("unterminated submessage");
        }
        if w != 0 {
            return invalid("records are shorter than the decoded data size");
        }
        Ok(())
    }
}
