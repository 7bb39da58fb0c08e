//! Encoding of transposed chunks.
//!
//! Records are split as C++ does (`TransposeEncoder`): a record that parses as a protobuf message with
//! canonical varints is walked field by field; every (parent message, tag) pair gets its own buffer;
//! varints lose their continuation bits (single-byte values 0..=3 are inlined into the state), fixed32/64
//! keep their raw bytes, length-delimited fields become submessages when their payload is itself a
//! non-empty proto (depth below 100), otherwise strings (`varint len ‖ bytes`); groups emit their tags.
//! Other records go whole into the non-proto buffer, with their lengths in the last buffer.
//!
//! The state machine is simpler than C++'s but fully general (C++ reads it, see the interop tests):
//! - one state per distinct key (tag, subtype, buffer); when there are more than 64, a complete 64-ary tree
//!   of NoOp states in front routes to them, so an explicit transition is the base-64 digits of the target;
//! - a key always followed by the same key (in execution order) gets an *implicit* transition, except the
//!   last executed state, which must stay explicit so that decoding stops;
//! - zero offsets fold into the previous transition byte's repeat count (up to 3).
//!
//! Buffers are written last-value-first, as the decoder reads them. With no bucket size (the default
//! `bucket_fraction` 1.0, or no compression) they all go into one bucket in creation order. With a bucket
//! size they are laid out as C++ `TransposeEncoder::WriteBuffers` does: grouped by kind (varint, fixed32,
//! fixed64, string, non-proto), each group sorted by length and split by [`split_buckets`], the non-proto
//! lengths in a bucket of their own; every bucket is compressed on its own, so that a projection skips
//! decompressing the buckets it does not need.

use rustc_hash::FxHashMap;

use super::{INLINE_BASE, MAX_INLINE_ENCODE, ids};
use crate::compression::{CompressionType, Compressor};
use crate::varint::{encode_varint64, read_canonical_varint64, write_varint64};

/// Maximum submessage nesting the encoder descends into (as C++).
const MAX_DEPTH: usize = 100;
const NONE: u32 = u32::MAX;
/// Parent id of top-level fields.
const ROOT: u32 = u32::MAX - 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum BufferKind {
    Varint,
    Fixed32,
    Fixed64,
    String,
    NonProto,
}

/// Bytes written back to front: every value is prepended, so that the buffer reads last value first, as
/// the decoder consumes it, with no reversal pass at the end.
#[derive(Debug, Default)]
struct BackBuf {
    /// The bytes are `storage[start..]`.
    storage: Vec<u8>,
    start: usize,
}

impl BackBuf {
    fn len(&self) -> usize {
        self.storage.len() - self.start
    }

    fn as_slice(&self) -> &[u8] {
        &self.storage[self.start..]
    }

    /// Empties the buffer, keeping its memory.
    fn clear(&mut self) {
        self.start = self.storage.len();
    }

    /// The `n` bytes just in front of the current contents, which now start there.
    #[inline]
    fn front(&mut self, n: usize) -> &mut [u8] {
        if self.start < n {
            self.grow(n);
        }
        self.start -= n;
        &mut self.storage[self.start..self.start + n]
    }

    /// Makes room for at least `capacity` bytes in all.
    fn reserve(&mut self, capacity: usize) {
        if self.storage.len() < capacity {
            self.grow(capacity - self.len());
        }
    }

    #[inline]
    fn prepend(&mut self, bytes: &[u8]) {
        self.front(bytes.len()).copy_from_slice(bytes);
    }

    #[cold]
    fn grow(&mut self, n: usize) {
        let len = self.len();
        let capacity = (self.storage.len() * 2).max(len + n).max(256);
        // A fresh zeroed allocation (calloc: fresh pages are not cleared again) and one copy of the
        // contents to its end; growing in place would copy them twice and clear the new part.
        let mut storage = vec![0u8; capacity];
        storage[capacity - len..].copy_from_slice(self.as_slice());
        self.storage = storage;
        self.start = capacity - len;
    }
}

#[derive(Debug)]
struct Buffer {
    kind: BufferKind,
    /// Order among buffers of equal length, as C++'s node ids: (parent, tag), top-level parents first.
    node_key: (u32, u32),
    /// The values, last first.
    bytes: BackBuf,
}

/// A (parent message, tag) pair.
#[derive(Debug, Clone, Copy)]
struct Node {
    /// The parent node plus one, 0 at the top level (C++ numbers nodes in creation order too, after
    /// its root).
    parent_rank: u32,
    tag: u32,
    buffer: u32,
    /// State per varint subtype 0..=13 (0..=9 lengths, 10..=13 inline values), or slot 0 for other kinds.
    states: [u32; 14],
    /// State of the submessage end (`tag + 4`).
    end_state: u32,
}

#[derive(Debug, Clone, Copy)]
struct Key {
    /// Stored tag or reserved id.
    tag: u32,
    /// Varint subtype (only for varint tags).
    subtype: u8,
    /// Internal buffer id or [`NONE`].
    buffer: u32,
}

/// Collects records and encodes them as a transposed chunk.
#[derive(Debug, Default)]
pub(crate) struct TransposeEncoder {
    buffers: Vec<Buffer>,
    /// Varint lengths of the non-proto records, last first.
    non_proto_lengths: BackBuf,
    non_proto_buffer: u32,
    nodes: Vec<Node>,
    node_ids: FxHashMap<(u32, u32), u32>,
    keys: Vec<Key>,
    start_of_message: u32,
    non_proto: u32,
    start_of_submessage: u32,
    sequence: Vec<u32>,
    group_stack: Vec<u32>,
    num_records: u64,
    decoded_size: u64,
    /// Initial capacity of the non-proto buffer (see [`Self::with_capacity_hint`]).
    non_proto_capacity: usize,
    /// Emptied buffers kept for the next chunk by [`Self::clear_keeping_buffers`], next to reuse last.
    spare: Vec<BackBuf>,
    /// Uncompressed bucket size to split buffers at; `None`: one bucket.
    bucket_size: Option<u64>,
    /// Buffer ids in written order ([`Self::lengths_id`] for the non-proto lengths), set by `encode_prefix`.
    order: Vec<u32>,
    /// Number of buffers in each bucket, in order.
    bucket_counts: Vec<usize>,
    // Scratch for `encode`.
    header: Vec<u8>,
    transitions: Vec<u8>,
    compressed: Vec<u8>,
}

impl TransposeEncoder {
    pub(crate) fn new() -> Self {
        let mut e = Self::default();
        e.clear();
        e
    }

    /// An encoder whose non-proto buffer starts with `capacity` bytes (the expected chunk size): records
    /// that are not protos are then copied once, not again at every doubling.
    pub(crate) fn with_capacity_hint(capacity: usize) -> Self {
        let mut e = Self::new();
        e.non_proto_capacity = capacity;
        e
    }

    /// Splits buffers into buckets of about `bucket_size` uncompressed bytes (`None`: one bucket).
    pub(crate) fn set_bucket_size(&mut self, bucket_size: Option<u64>) {
        self.bucket_size = bucket_size;
    }

    pub(crate) fn num_records(&self) -> u64 {
        self.num_records
    }

    pub(crate) fn decoded_size(&self) -> u64 {
        self.decoded_size
    }

    pub(crate) fn clear(&mut self) {
        // Buffers are not kept for the next chunk: holding them while a codec allocates its per-stream
        // state made glibc hand Brotli fresh pages for every chunk (measured: 5x the page faults).
        self.buffers.clear();
        self.non_proto_lengths.clear();
        self.non_proto_buffer = NONE;
        self.nodes.clear();
        self.node_ids.clear();
        self.keys.clear();
        self.start_of_message = NONE;
        self.non_proto = NONE;
        self.start_of_submessage = NONE;
        self.sequence.clear();
        self.num_records = 0;
        self.decoded_size = 0;
    }

    /// As [`Self::clear`], keeping the buffers' memory for the next chunk's buffers (in creation order):
    /// a chunk of large records then neither regrows nor faults in its buffers again.
    pub(crate) fn clear_keeping_buffers(&mut self) {
        for mut buffer in self.buffers.drain(..).rev() {
            buffer.bytes.clear();
            self.spare.push(buffer.bytes);
        }
        self.clear();
    }

    fn new_key(&mut self, tag: u32, subtype: u8, buffer: u32) -> u32 {
        self.keys.push(Key {
            tag,
            subtype,
            buffer,
        });
        (self.keys.len() - 1) as u32
    }

    /// A new (empty) buffer; returns its id.
    fn new_buffer(&mut self, kind: BufferKind, node_key: (u32, u32)) -> u32 {
        let bytes = self.spare.pop().unwrap_or_default();
        self.buffers.push(Buffer {
            kind,
            node_key,
            bytes,
        });
        (self.buffers.len() - 1) as u32
    }

    pub(crate) fn add_record(&mut self, record: &[u8]) {
        self.num_records += 1;
        self.decoded_size += record.len() as u64;
        if is_proto_message(record, &mut self.group_stack) {
            if self.start_of_message == NONE {
                self.start_of_message = self.new_key(ids::START_OF_MESSAGE, 0, NONE);
            }
            self.sequence.push(self.start_of_message);
            self.walk(record, ROOT, 0);
        } else {
            if self.non_proto == NONE {
                self.non_proto_buffer = self.new_buffer(BufferKind::NonProto, (0, 0));
                self.buffers[self.non_proto_buffer as usize]
                    .bytes
                    .reserve(self.non_proto_capacity);
                self.non_proto = self.new_key(ids::NON_PROTO, 0, self.non_proto_buffer);
            }
            self.buffers[self.non_proto_buffer as usize]
                .bytes
                .prepend(record);
            let mut len = [0u8; 10];
            let n = encode_varint64(&mut len, record.len() as u64);
            self.non_proto_lengths.prepend(&len[..n]);
            self.sequence.push(self.non_proto);
        }
    }

    fn node(&mut self, parent: u32, tag: u32) -> u32 {
        let next = self.nodes.len() as u32;
        let id = *self.node_ids.entry((parent, tag)).or_insert(next);
        if id == next {
            self.nodes.push(Node {
                parent_rank: if parent == ROOT { 0 } else { parent + 1 },
                tag,
                buffer: NONE,
                states: [NONE; 14],
                end_state: NONE,
            });
        }
        id
    }

    fn buffer_of(&mut self, node: u32, kind: BufferKind) -> u32 {
        let b = self.nodes[node as usize].buffer;
        if b != NONE {
            // A node's tag fixes its wire type, hence the kind of its buffer.
            debug_assert!(self.buffers[b as usize].kind == kind);
            return b;
        }
        let n = &self.nodes[node as usize];
        let b = self.new_buffer(kind, (n.parent_rank, n.tag));
        self.nodes[node as usize].buffer = b;
        b
    }

    fn state(&mut self, node: u32, slot: usize, tag: u32, subtype: u8, buffer: u32) -> u32 {
        let s = self.nodes[node as usize].states[slot];
        if s != NONE {
            return s;
        }
        let s = self.new_key(tag, subtype, buffer);
        self.nodes[node as usize].states[slot] = s;
        s
    }

    /// Walks a message already checked by [`is_proto_message`].
    fn walk(&mut self, data: &[u8], parent: u32, depth: usize) {
        let mut parent = parent;
        let base_stack = self.group_stack.len();
        let mut p = 0;
        while p < data.len() {
            let Some(tag) = read_canonical_varint64(data, &mut p) else {
                return;
            };
            let tag = tag as u32;
            let node = self.node(parent, tag);
            match tag & 7 {
                0 => {
                    let start = p;
                    if read_canonical_varint64(data, &mut p).is_none() {
                        return;
                    }
                    let bytes = &data[start..p];
                    if bytes.len() == 1 && bytes[0] <= MAX_INLINE_ENCODE {
                        let subtype = INLINE_BASE + bytes[0];
                        let s = self.state(node, usize::from(subtype), tag, subtype, NONE);
                        self.sequence.push(s);
                    } else {
                        let subtype = (bytes.len() - 1) as u8;
                        let b = self.buffer_of(node, BufferKind::Varint);
                        let s = self.state(node, usize::from(subtype), tag, subtype, b);
                        self.sequence.push(s);
                        let front = self.buffers[b as usize].bytes.front(p - start);
                        for (d, &x) in front.iter_mut().zip(&data[start..p]) {
                            *d = x & 0x7f;
                        }
                    }
                }
                1 | 5 => {
                    let (kind, n) = if tag & 7 == 1 {
                        (BufferKind::Fixed64, 8)
                    } else {
                        (BufferKind::Fixed32, 4)
                    };
                    let b = self.buffer_of(node, kind);
                    let s = self.state(node, 0, tag, 0, b);
                    self.sequence.push(s);
                    self.buffers[b as usize].bytes.prepend(&data[p..p + n]);
                    p += n;
                }
                2 => {
                    let start = p;
                    let Some(len) = read_canonical_varint64(data, &mut p) else {
                        return;
                    };
                    let end = p + len as usize;
                    let payload = &data[p..end];
                    if !payload.is_empty()
                        && depth < MAX_DEPTH
                        && is_proto_message(payload, &mut self.group_stack)
                    {
                        if self.start_of_submessage == NONE {
                            self.start_of_submessage =
                                self.new_key(ids::START_OF_SUBMESSAGE, 0, NONE);
                        }
                        self.sequence.push(self.start_of_submessage);
                        self.walk(payload, node, depth + 1);
                        let mut end_state = self.nodes[node as usize].end_state;
                        if end_state == NONE {
                            end_state = self.new_key(tag + 4, 0, NONE);
                            self.nodes[node as usize].end_state = end_state;
                        }
                        self.sequence.push(end_state);
                    } else {
                        let b = self.buffer_of(node, BufferKind::String);
                        let s = self.state(node, 0, tag, 0, b);
                        self.sequence.push(s);
                        self.buffers[b as usize].bytes.prepend(&data[start..end]);
                    }
                    p = end;
                }
                3 => {
                    let s = self.state(node, 0, tag, 0, NONE);
                    self.sequence.push(s);
                    self.group_stack.push(parent);
                    parent = node;
                }
                _ => {
                    // 4: end of group (validated to match).
                    if self.group_stack.len() > base_stack {
                        parent = self.group_stack.pop().unwrap_or(ROOT);
                    }
                    let node = self.node(parent, tag);
                    let s = self.state(node, 0, tag, 0, NONE);
                    self.sequence.push(s);
                }
            }
        }
        self.group_stack.truncate(base_stack);
    }

    /// Writes the chunk data to `out` (cleared first) and resets the encoder.
    pub(crate) fn encode(
        &mut self,
        compressor: &mut Compressor,
        out: &mut Vec<u8>,
    ) -> std::io::Result<()> {
        self.encode_prefix(compressor, out)?;
        if compressor.options().kind == CompressionType::None {
            for part in self.bucket_parts() {
                out.extend_from_slice(part);
            }
        }
        compressor.compress_into(&self.transitions, out)?;
        self.clear();
        Ok(())
    }

    /// For uncompressed chunks, the rest of the chunk data after [`Self::encode_prefix`]: writing both saves
    /// assembling the chunk data. Call [`Self::clear`] afterwards.
    pub(crate) fn uncompressed_tail(&self) -> impl Iterator<Item = &[u8]> {
        self.bucket_parts()
            .chain(std::iter::once(self.transitions.as_slice()))
    }

    /// Writes the chunk data up to the transitions to `out` (cleared first), without the bucket if
    /// uncompressed, and prepares `self.transitions`.
    #[allow(clippy::too_many_lines)]
    pub(crate) fn encode_prefix(
        &mut self,
        compressor: &mut Compressor,
        out: &mut Vec<u8>,
    ) -> std::io::Result<()> {
        out.clear();
        let kind = compressor.options().kind;
        out.push(kind.to_byte());

        // Buffers: laid out in buckets, each compressed on its own; uncompressed they are written
        // straight into `out` by the caller.
        self.lay_out_buckets();
        let buffer_lengths: Vec<u64> = self
            .order
            .iter()
            .map(|&id| self.buffer_bytes(id).len() as u64)
            .collect();
        let bucket_lengths = self.write_buckets(compressor, &buffer_lengths)?;
        // Where each buffer id landed, for the states' buffer indices.
        let mut position = vec![0u32; self.order.len()];
        for (i, &id) in self.order.iter().enumerate() {
            position[id as usize] = i as u32;
        }

        // States: NoOp tree levels, then the real states (one per key).
        let num_keys = self.keys.len();
        let mut level_counts = Vec::new();
        if num_keys > 64 {
            let mut c = num_keys;
            while c > 64 {
                c = c.div_ceil(64);
                level_counts.push(c);
            }
            level_counts.reverse();
        }
        let levels = level_counts.len();
        let mut level_starts = Vec::with_capacity(levels + 1);
        let mut total_noops = 0usize;
        for &c in &level_counts {
            level_starts.push(total_noops);
            total_noops += c;
        }
        let real_start = total_noops;
        let (num_states, first_node) = if num_keys == 0 {
            (1usize, 0usize)
        } else {
            let last = *self.sequence.last().unwrap_or(&0) as usize;
            (total_noops + num_keys, real_start + last)
        };

        // Successors in execution order (reverse sequence): implicit when unique.
        const MULTIPLE: u32 = u32::MAX - 1;
        let mut succ = vec![NONE; num_keys];
        for pair in self.sequence.windows(2) {
            let (to, from) = (pair[0], pair[1]);
            let s = &mut succ[from as usize];
            if *s == NONE {
                *s = to;
            } else if *s != to {
                *s = MULTIPLE;
            }
        }
        if let Some(&first) = self.sequence.first() {
            succ[first as usize] = MULTIPLE;
        }

        // Transition bytes.
        self.transitions.clear();
        let mut digits = [0u8; 8];
        for pair in self.sequence.windows(2).rev() {
            let (to, from) = (pair[0] as usize, pair[1] as usize);
            if succ[from] != MULTIPLE {
                continue;
            }
            let nd = levels + 1;
            let mut j = to;
            for l in (0..nd).rev() {
                digits[l] = (j % 64) as u8;
                j /= 64;
            }
            for &d in &digits[..nd] {
                match self.transitions.last_mut() {
                    Some(last) if d == 0 && *last & 3 < 3 => *last += 1,
                    _ => self.transitions.push(d << 2),
                }
            }
        }

        // Header.
        self.header.clear();
        let h = &mut self.header;
        write_varint64(h, bucket_lengths.len() as u64);
        write_varint64(h, buffer_lengths.len() as u64);
        for &len in bucket_lengths.iter().chain(&buffer_lengths) {
            write_varint64(h, len);
        }
        write_varint64(h, num_states as u64);
        if num_keys == 0 {
            write_varint64(h, u64::from(ids::NO_OP));
            write_varint64(h, 0);
        } else {
            for _ in 0..total_noops {
                write_varint64(h, u64::from(ids::NO_OP));
            }
            for key in &self.keys {
                write_varint64(h, u64::from(key.tag));
            }
            for (l, &c) in level_counts.iter().enumerate() {
                let next_start = level_starts.get(l + 1).copied().unwrap_or(real_start);
                for t in 0..c {
                    write_varint64(h, (next_start + 64 * t) as u64);
                }
            }
            for &s in &succ {
                if s == MULTIPLE || s == NONE {
                    write_varint64(h, 0);
                } else {
                    write_varint64(h, (num_states + real_start + s as usize) as u64);
                }
            }
            for key in &self.keys {
                if key.tag >= 8 && key.tag & 7 == 0 {
                    h.push(key.subtype);
                }
            }
            for key in &self.keys {
                if key.buffer != NONE {
                    write_varint64(h, u64::from(position[key.buffer as usize]));
                }
            }
        }
        write_varint64(h, first_node as u64);

        // Chunk data.
        let header_start = out.len();
        let mut stream = Vec::new();
        compressor.compress_into(&self.header, &mut stream)?;
        write_varint64(out, stream.len() as u64);
        out.extend_from_slice(&stream);
        debug_assert!(out.len() > header_start);
        if kind != CompressionType::None {
            out.extend_from_slice(&self.compressed);
        }
        Ok(())
    }

    /// The id standing for the non-proto lengths in [`Self::order`].
    fn lengths_id(&self) -> u32 {
        self.buffers.len() as u32
    }

    fn buffer_bytes(&self, id: u32) -> &[u8] {
        match self.buffers.get(id as usize) {
            Some(b) => b.bytes.as_slice(),
            None => self.non_proto_lengths.as_slice(),
        }
    }

    /// Sets [`Self::order`] and [`Self::bucket_counts`].
    fn lay_out_buckets(&mut self) {
        self.order.clear();
        self.bucket_counts.clear();
        let has_lengths = self.non_proto != NONE;
        let Some(bucket_size) = self.bucket_size else {
            // One bucket in creation order, the non-proto lengths last.
            self.order.extend(0..self.buffers.len() as u32);
            if has_lengths {
                self.order.push(self.lengths_id());
            }
            if !self.order.is_empty() {
                self.bucket_counts.push(self.order.len());
            }
            return;
        };
        // As C++: by kind, then by length, then by node.
        self.order.extend(0..self.buffers.len() as u32);
        let buffers = &self.buffers;
        self.order.sort_by_key(|&id| {
            let b = &buffers[id as usize];
            (b.kind, b.bytes.len(), b.node_key)
        });
        let mut start = 0;
        while start < self.order.len() {
            let kind = buffers[self.order[start] as usize].kind;
            let end = start
                + self.order[start..]
                    .iter()
                    .take_while(|&&id| buffers[id as usize].kind == kind)
                    .count();
            let sizes: Vec<u64> = self.order[start..end]
                .iter()
                .map(|&id| buffers[id as usize].bytes.len() as u64)
                .collect();
            self.bucket_counts
                .extend(split_buckets(&sizes, bucket_size));
            start = end;
        }
        if has_lengths {
            self.order.push(self.lengths_id());
            self.bucket_counts.push(1);
        }
    }

    /// Compresses every bucket into `self.compressed` (if compressing); returns the buckets' stored lengths.
    fn write_buckets(
        &mut self,
        compressor: &mut Compressor,
        buffer_lengths: &[u64],
    ) -> std::io::Result<Vec<u64>> {
        self.compressed.clear();
        let mut stored = Vec::with_capacity(self.bucket_counts.len());
        let mut compressed = std::mem::take(&mut self.compressed);
        let mut first = 0;
        for &count in &self.bucket_counts {
            let ids = &self.order[first..first + count];
            if compressor.options().kind == CompressionType::None {
                stored.push(buffer_lengths[first..first + count].iter().sum());
            } else {
                let before = compressed.len();
                let parts: Vec<&[u8]> = ids.iter().map(|&id| self.buffer_bytes(id)).collect();
                if let Err(e) = compressor.compress_parts_into(&parts, &mut compressed) {
                    self.compressed = compressed;
                    return Err(e);
                }
                stored.push((compressed.len() - before) as u64);
            }
            first += count;
        }
        self.compressed = compressed;
        Ok(stored)
    }

    /// The buffers in written order (values last-first, the non-proto lengths as the decoder expects).
    fn bucket_parts(&self) -> impl Iterator<Item = &[u8]> {
        self.order.iter().map(|&id| self.buffer_bytes(id))
    }
}

/// Splits buffers of `sizes` (sorted ascending) into buckets as C++ `TransposeEncoder::WriteBuffers`;
/// returns the number of buffers in each bucket, in order.
///
/// Going from the largest buffer down, a bucket is closed before a buffer when the bucket is non-empty
/// and its size plus half the buffer's reaches `bucket_size`; as soon as the buffers left total at most
/// half of `bucket_size`, they all join the current bucket. Small buffers thus share the first bucket
/// and large ones get buckets of their own.
fn split_buckets(sizes: &[u64], bucket_size: u64) -> Vec<usize> {
    let mut remaining: u64 = sizes.iter().sum();
    let mut counts = Vec::new();
    let (mut current_size, mut current_count) = (0u64, 0usize);
    for (i, &size) in sizes.iter().enumerate().rev() {
        if current_size > 0 && current_size + size / 2 >= bucket_size {
            counts.push(current_count);
            (current_size, current_count) = (0, 0);
        }
        current_size += size;
        current_count += 1;
        remaining -= size;
        if remaining <= bucket_size / 2 {
            // The `i` smaller buffers.
            current_count += i;
            break;
        }
    }
    if current_count > 0 {
        counts.push(current_count);
    }
    counts.reverse();
    counts
}

/// Whether `data` is a protobuf message as C++'s transpose encoder sees it: canonical varints, field
/// numbers above 0, wire types 0..=5, fixed and length-delimited fields inside the data, balanced groups.
pub(crate) fn is_proto_message(data: &[u8], group_stack: &mut Vec<u32>) -> bool {
    let base = group_stack.len();
    let ok = check_proto(data, group_stack, base);
    group_stack.truncate(base);
    ok
}

fn check_proto(data: &[u8], stack: &mut Vec<u32>, base: usize) -> bool {
    let mut p = 0;
    while p < data.len() {
        let Some(tag) = read_canonical_varint64(data, &mut p) else {
            return false;
        };
        if tag > u64::from(u32::MAX) || tag >> 3 == 0 {
            return false;
        }
        let field = (tag >> 3) as u32;
        match tag & 7 {
            0 => {
                if read_canonical_varint64(data, &mut p).is_none() {
                    return false;
                }
            }
            1 => {
                if data.len() - p < 8 {
                    return false;
                }
                p += 8;
            }
            5 => {
                if data.len() - p < 4 {
                    return false;
                }
                p += 4;
            }
            2 => {
                let Some(len) = read_canonical_varint64(data, &mut p) else {
                    return false;
                };
                if len > u64::from(u32::MAX) || ((data.len() - p) as u64) < len {
                    return false;
                }
                p += len as usize;
            }
            3 => stack.push(field),
            4 => {
                if stack.len() <= base || stack.pop() != Some(field) {
                    return false;
                }
            }
            _ => return false,
        }
    }
    stack.len() == base
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::compression::CompressionOptions;
    use crate::varint::read_varint64;

    #[test]
    fn split_buckets_follows_cpp() {
        // (sizes ascending, bucket size, buffers per bucket)
        let cases: &[(&[u64], u64, &[usize])] = &[
            (&[], 10, &[]),
            (&[5], 1, &[1]),
            // Everything fits in half a bucket: one bucket.
            (&[1, 2, 3], 12, &[3]),
            // The largest alone; the small rest joins the next one's bucket once it is at most half
            // a bucket.
            (&[1, 1, 2, 50, 60], 10, &[4, 1]),
            // A bucket closes when its size plus half the next buffer reaches the bucket size.
            (&[4, 4, 4, 4], 6, &[1, 1, 1, 1]),
            (&[2, 2, 2, 2, 2], 7, &[2, 3]),
        ];
        for (i, &(sizes, bucket_size, want)) in cases.iter().enumerate() {
            assert_eq!(split_buckets(sizes, bucket_size), want, "case {i}");
        }
    }

    /// A proto with a small varint field 1 and a large string field 2 (field 0 first: not a proto).
    fn record(i: u8) -> Vec<u8> {
        let mut r = vec![0x08, 0x80 | i, 0x01, 0x12, 100, 0];
        r.extend(std::iter::repeat_n(i, 99));
        r
    }

    /// (number of buckets, number of buffers) from an encoded chunk's header.
    fn bucket_and_buffer_counts(chunk: &[u8]) -> (u64, u64) {
        let mut p = 1;
        let header_len = read_varint64(chunk, &mut p).unwrap() as usize;
        let stream = &chunk[p..p + header_len];
        let mut q = 0;
        let size = read_varint64(stream, &mut q).unwrap() as usize;
        let header = zstd::bulk::decompress(&stream[q..], size).unwrap();
        let mut h = 0;
        let buckets = read_varint64(&header, &mut h).unwrap();
        (buckets, read_varint64(&header, &mut h).unwrap())
    }

    fn encode(records: &[Vec<u8>], bucket_size: Option<u64>) -> Vec<u8> {
        let mut e = TransposeEncoder::new();
        e.set_bucket_size(bucket_size);
        for r in records {
            e.add_record(r);
        }
        e.add_record(b"\xff not a proto");
        let options = CompressionOptions {
            kind: CompressionType::Zstd,
            level: 3,
            window_log: None,
        };
        let mut c = Compressor::new(options).unwrap();
        let mut out = Vec::new();
        e.encode(&mut c, &mut out).unwrap();
        out
    }

    #[test]
    fn bucket_size_splits_buffers_by_kind_and_size() {
        let records: Vec<Vec<u8>> = (0..50).map(record).collect();
        // Buffers: varint field 1, string field 2, non-proto records, non-proto lengths.
        assert_eq!(bucket_and_buffer_counts(&encode(&records, None)), (1, 4));
        // A bucket per kind, the non-proto lengths alone.
        let split = encode(&records, Some(1 << 20));
        assert_eq!(bucket_and_buffer_counts(&split), (4, 4));
    }
}
