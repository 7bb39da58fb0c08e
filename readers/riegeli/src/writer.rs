//! Writing Riegeli/records files.
//!
//! [`RecordWriter`] collects records into a chunk (simple or transposed, per [`WriterOptions`]), encodes it
//! when it reaches the chunk size (each record counts its size + 8, as in C++) and streams it out with the
//! block headers interleaved. With [`WriterOptions::array_record`] set it writes the ArrayRecord layout
//! instead: exactly `group_size` records per chunk, then a footer chunk indexing the chunks and a postscript
//! chunk in the last 64 KiB, so that C++ `ArrayRecordReader` can read records by index.

use std::io::Write;

use crate::array_record::{
    FooterEntry, encode_footer_entry, encode_footer_metadata, encode_postscript,
};
use crate::block::{
    BLOCK_HEADER_SIZE, BLOCK_SIZE, BlockHeader, distance_without_overhead,
    is_possible_chunk_boundary,
};
use crate::chunk::{CHUNK_HEADER_SIZE, ChunkHeader, ChunkType};
use crate::compression::{CompressionOptions, CompressionType, Compressor};
use crate::error::{Error, Result};
use crate::group::RecordGroup;
use crate::options::WriterOptions;
use crate::simple::SimpleEncoder;
use crate::transpose::encode::TransposeEncoder;

/// Writes chunks with block headers interleaved.
#[derive(Debug)]
pub(crate) struct ChunkWriter<W> {
    out: W,
    pos: u64,
    zeros: Vec<u8>,
}

impl<W: Write> ChunkWriter<W> {
    pub(crate) fn new(out: W) -> Self {
        Self {
            out,
            pos: 0,
            zeros: Vec::new(),
        }
    }

    pub(crate) fn pos(&self) -> u64 {
        self.pos
    }

    /// Writes one chunk; returns its begin.
    pub(crate) fn write_chunk(
        &mut self,
        header: &ChunkHeader,
        data: &[u8],
    ) -> std::io::Result<u64> {
        self.write_chunk_parts(header, &[data])
    }

    /// Writes one chunk whose data is the concatenation of `parts`; returns its begin.
    pub(crate) fn write_chunk_parts(
        &mut self,
        header: &ChunkHeader,
        parts: &[&[u8]],
    ) -> std::io::Result<u64> {
        let begin = self.pos;
        let end = header.chunk_end(begin);
        self.write_section(begin, end, &header.encode())?;
        for part in parts {
            self.write_section(begin, end, part)?;
        }
        while self.pos < end {
            self.block_header_if_needed(begin, end)?;
            let n = (end - self.pos).min(BLOCK_SIZE - self.pos % BLOCK_SIZE);
            if self.zeros.len() < n as usize {
                self.zeros.resize(n as usize, 0);
            }
            self.out.write_all(&self.zeros[..n as usize])?;
            self.pos += n;
        }
        Ok(begin)
    }

    /// Writes a data chunk whose (uncompressed) data is the concatenation of `parts`, with
    /// the header's size and hash computed over them; returns its begin.
    pub(crate) fn write_data_chunk_parts(
        &mut self,
        chunk_type: ChunkType,
        num_records: u64,
        decoded_data_size: u64,
        parts: &[&[u8]],
    ) -> std::io::Result<u64> {
        let header = ChunkHeader {
            data_size: parts.iter().map(|p| p.len() as u64).sum(),
            data_hash: crate::hash::highway_hash64_parts(parts),
            chunk_type,
            num_records,
            decoded_data_size,
        };
        self.write_chunk_parts(&header, parts)
    }

    fn block_header_if_needed(&mut self, begin: u64, end: u64) -> std::io::Result<()> {
        if self.pos.is_multiple_of(BLOCK_SIZE) {
            let h = BlockHeader {
                previous_chunk: self.pos - begin,
                next_chunk: end - self.pos,
            };
            self.out.write_all(&h.encode())?;
            self.pos += BLOCK_HEADER_SIZE;
        }
        Ok(())
    }

    fn write_section(&mut self, begin: u64, end: u64, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            self.block_header_if_needed(begin, end)?;
            let n = (bytes.len() as u64).min(BLOCK_SIZE - self.pos % BLOCK_SIZE) as usize;
            self.out.write_all(&bytes[..n])?;
            self.pos += n as u64;
            bytes = &bytes[n..];
        }
        Ok(())
    }

    /// Writes a padding chunk so that the position becomes a multiple of `multiple` (C++
    /// `PosAfterPadding`).
    pub(crate) fn pad(&mut self, multiple: u64) -> std::io::Result<()> {
        if multiple <= 1 || self.pos.is_multiple_of(multiple) {
            return Ok(());
        }
        let mut len = multiple - self.pos % multiple;
        while len < CHUNK_HEADER_SIZE {
            len += multiple;
        }
        let mut end = self.pos + len;
        while !is_possible_chunk_boundary(end) {
            end += multiple;
        }
        let data_size = distance_without_overhead(self.pos, end) - CHUNK_HEADER_SIZE;
        let data = vec![0u8; data_size as usize];
        let header = ChunkHeader::new(ChunkType::Padding, &data, 0, 0);
        self.write_chunk(&header, &data)?;
        Ok(())
    }

    pub(crate) fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    pub(crate) fn into_inner(self) -> W {
        self.out
    }
}

/// Largest buffer allocated up front for a chunk; larger chunks grow theirs.
const MAX_BUFFER_HINT: u64 = 4 << 20;

enum Encoder {
    Simple(SimpleEncoder),
    Transpose(Box<TransposeEncoder>),
}

impl Encoder {
    /// The chunk size (the expected decoded size of a chunk) sizes the buffers up front.
    fn new(options: &WriterOptions) -> Self {
        let hint = options.effective_chunk_size().min(MAX_BUFFER_HINT) as usize;
        if options.transpose {
            let mut e = TransposeEncoder::with_capacity_hint(hint);
            e.set_bucket_size(options.bucket_size());
            Self::Transpose(Box::new(e))
        } else {
            Self::Simple(SimpleEncoder::with_capacity_hint(hint))
        }
    }

    /// Encodes the collected records into `data`; returns the chunk header. Resets the encoder.
    fn encode(
        &mut self,
        compressor: &mut Compressor,
        data: &mut Vec<u8>,
    ) -> std::io::Result<ChunkHeader> {
        let num_records = self.num_records();
        let (chunk_type, decoded) = match self {
            Self::Simple(e) => {
                let decoded = e.decoded_size();
                e.encode(compressor, data)?;
                (ChunkType::Simple, decoded)
            }
            Self::Transpose(e) => {
                let decoded = e.decoded_size();
                e.encode(compressor, data)?;
                (ChunkType::Transposed, decoded)
            }
        };
        Ok(ChunkHeader::new(chunk_type, data, num_records, decoded))
    }

    fn num_records(&self) -> u64 {
        match self {
            Self::Simple(e) => e.num_records(),
            Self::Transpose(e) => e.num_records(),
        }
    }
}

/// Writes records to a Riegeli/records file (or the ArrayRecord layout).
///
/// Records are byte strings. `close` must be called to write the last chunk (and, for the ArrayRecord
/// layout, the footer and postscript); dropping the writer loses them.
pub struct RecordWriter<W: Write> {
    chunks: ChunkWriter<W>,
    options: WriterOptions,
    compressor: Compressor,
    encoder: Encoder,
    chunk_so_far: u64,
    chunk_size: u64,
    data: Vec<u8>,
    footer: Vec<FooterEntry>,
    num_records: u64,
    failed: bool,
    pool: Option<Pool>,
}

/// A chunk encoded by a worker: its header, data, and the emptied encoder for reuse.
type Encoded = (ChunkHeader, Vec<u8>, Encoder);

/// Background threads encoding chunks; results are written in submission order.
struct Pool {
    jobs: Option<std::sync::mpsc::Sender<(u64, Encoder, Vec<u8>)>>,
    done: std::sync::mpsc::Receiver<(u64, std::io::Result<Encoded>)>,
    workers: Vec<std::thread::JoinHandle<()>>,
    submitted: u64,
    written: u64,
    ready: std::collections::BTreeMap<u64, Encoded>,
    spare: Vec<(Encoder, Vec<u8>)>,
    max_in_flight: u64,
}

impl Pool {
    /// `threads` encoding threads, each with a compressor whose Zstd streams use `zstd_workers` threads.
    fn new(
        threads: u32,
        compression: CompressionOptions,
        zstd_workers: u32,
    ) -> std::io::Result<Self> {
        let (jobs_tx, jobs_rx) = std::sync::mpsc::channel::<(u64, Encoder, Vec<u8>)>();
        let jobs_rx = std::sync::Arc::new(std::sync::Mutex::new(jobs_rx));
        let (done_tx, done) = std::sync::mpsc::channel();
        let mut workers = Vec::new();
        for _ in 0..threads {
            let jobs_rx = std::sync::Arc::clone(&jobs_rx);
            let done_tx = done_tx.clone();
            let mut compressor = Compressor::with_workers(compression, zstd_workers)?;
            workers.push(std::thread::spawn(move || {
                loop {
                    let job = match jobs_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok((seq, mut encoder, mut data)) = job else {
                        return;
                    };
                    let result = encoder
                        .encode(&mut compressor, &mut data)
                        .map(|h| (h, data, encoder));
                    if done_tx.send((seq, result)).is_err() {
                        return;
                    }
                }
            }));
        }
        Ok(Self {
            jobs: Some(jobs_tx),
            done,
            workers,
            submitted: 0,
            written: 0,
            ready: std::collections::BTreeMap::new(),
            spare: Vec::new(),
            max_in_flight: u64::from(threads) * 2,
        })
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

impl<W: Write> std::fmt::Debug for RecordWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordWriter")
            .field("options", &self.options)
            .field("pos", &self.chunks.pos())
            .field("num_records", &self.num_records)
            .finish_non_exhaustive()
    }
}

impl<W: Write> RecordWriter<W> {
    /// Starts a file at position 0 of `out`: writes the file signature.
    ///
    /// # Errors
    /// If writing fails or the codec parameters are rejected.
    pub fn new(out: W, options: WriterOptions) -> Result<Self> {
        let mut compressor = Compressor::with_workers(options.compression, options.zstd_workers)?;
        let chunk_size = options.effective_chunk_size();
        let encoder = Encoder::new(&options);
        let pool = match options.parallelism {
            0 => None,
            n => Some(Pool::new(n, options.compression, options.zstd_workers)?),
        };
        let mut chunks = ChunkWriter::new(out);
        chunks.write_chunk(&ChunkHeader::new(ChunkType::FileSignature, &[], 0, 0), &[])?;
        let mut data = Vec::new();
        if let Some(metadata) = &options.metadata {
            // As C++ `EncodeMetadata`: one record in a transposed chunk with the file's compression.
            let mut m = TransposeEncoder::new();
            m.add_record(metadata);
            m.encode(&mut compressor, &mut data)?;
            let header = ChunkHeader::new(ChunkType::FileMetadata, &data, 0, metadata.len() as u64);
            chunks.write_chunk(&header, &data)?;
        }
        Ok(Self {
            chunks,
            options,
            compressor,
            encoder,
            chunk_so_far: 0,
            chunk_size,
            data,
            footer: Vec::new(),
            num_records: 0,
            failed: false,
            pool,
        })
    }

    /// Parses `options` (C++ syntax, or array_record's when `array_record`) and starts a file.
    ///
    /// # Errors
    /// As [`WriterOptions::parse`] and [`RecordWriter::new`].
    pub fn with_options_text(out: W, options: &str, array_record: bool) -> Result<Self> {
        let options = if array_record {
            WriterOptions::parse_array_record(options)?
        } else {
            WriterOptions::parse(options)?
        };
        Self::new(out, options)
    }

    /// The options.
    #[must_use]
    pub fn options(&self) -> &WriterOptions {
        &self.options
    }

    /// Records written so far.
    #[must_use]
    pub fn num_records(&self) -> u64 {
        self.num_records
    }

    /// Bytes written so far (complete chunks only).
    #[must_use]
    pub fn pos(&self) -> u64 {
        self.chunks.pos()
    }

    /// Appends one record.
    ///
    /// # Errors
    /// If writing a completed chunk fails; the writer is unusable afterwards.
    pub fn write_record(&mut self, record: &[u8]) -> Result<()> {
        if self.failed {
            return Err(Error::WriterClosed);
        }
        let cost = record.len() as u64 + 8;
        if let Some(ar) = self.options.array_record {
            self.add(record);
            if self.encoder.num_records() >= ar.group_size {
                self.guard(Self::write_data_chunk)?;
            }
            return Ok(());
        }
        if self.encoder.num_records() > 0 && self.chunk_so_far + cost > self.chunk_size {
            self.guard(Self::write_data_chunk)?;
        }
        self.add(record);
        self.chunk_so_far += cost;
        if self.chunk_so_far + 8 > self.chunk_size {
            self.guard(Self::write_data_chunk)?;
        }
        Ok(())
    }

    /// Appends every record of `group`, in order, and empties it: the file is byte for byte the
    /// one [`Self::write_record`] on each would make. Where the group is exactly the next chunk (the
    /// ArrayRecord layout with simple chunks, the writer between chunks, at most
    /// [`Self::records_per_chunk`] records) the writer takes the group's buffers instead of copying
    /// the records, and leaves its own emptied ones in `group` for the next.
    ///
    /// # Errors
    /// As [`Self::write_record`].
    pub fn write_group(&mut self, group: &mut RecordGroup) -> Result<()> {
        if self.failed {
            return Err(Error::WriterClosed);
        }
        let per_chunk = self.records_per_chunk();
        match &mut self.encoder {
            Encoder::Simple(e)
                if e.num_records() == 0
                    && !group.is_empty()
                    && per_chunk.is_some_and(|n| group.len() <= n) =>
            {
                e.adopt(group);
                self.num_records += e.num_records();
                if per_chunk.is_some_and(|n| e.num_records() >= n) {
                    self.guard(Self::write_data_chunk)?;
                }
            }
            _ => {
                for record in group.iter() {
                    self.write_record(record)?;
                }
                group.clear();
            }
        }
        Ok(())
    }

    /// Records in each chunk, where the options fix it (the ArrayRecord layout's group size, with
    /// simple chunks): a [`RecordGroup`] of that many is taken whole by [`Self::write_group`].
    #[must_use]
    pub fn records_per_chunk(&self) -> Option<u64> {
        match (&self.options.array_record, self.options.transpose) {
            (Some(ar), false) => Some(ar.group_size),
            _ => None,
        }
    }

    fn add(&mut self, record: &[u8]) {
        match &mut self.encoder {
            Encoder::Simple(e) => e.add_record(record),
            Encoder::Transpose(e) => e.add_record(record),
        }
        self.num_records += 1;
    }

    fn guard(&mut self, f: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        let r = f(self);
        if r.is_err() {
            self.failed = true;
        }
        r
    }

    /// Hands the collected records to the pool; writes the chunks finished so far (waiting while too many
    /// are in flight, or for all of them when `all`).
    fn submit_and_drain(&mut self, all: bool) -> Result<()> {
        let Some(pool) = self.pool.as_mut() else {
            return Ok(());
        };
        if self.encoder.num_records() > 0 {
            let (fresh, data) = pool
                .spare
                .pop()
                .unwrap_or_else(|| (Encoder::new(&self.options), Vec::new()));
            let encoder = std::mem::replace(&mut self.encoder, fresh);
            let jobs = pool.jobs.as_ref().ok_or(Error::WriterClosed)?;
            jobs.send((pool.submitted, encoder, data))
                .map_err(|_| Error::WriterClosed)?;
            pool.submitted += 1;
        }
        loop {
            let in_flight = pool.submitted - pool.written;
            let must_wait = if all {
                in_flight > 0
            } else {
                in_flight > pool.max_in_flight
            };
            let next = if must_wait {
                pool.done.recv().map_err(|_| Error::WriterClosed)?
            } else {
                match pool.done.try_recv() {
                    Ok(x) => x,
                    Err(_) => return Ok(()),
                }
            };
            let (seq, result) = next;
            pool.ready.insert(seq, result?);
            while let Some((header, data, encoder)) = pool.ready.remove(&pool.written) {
                let begin = self.chunks.write_chunk(&header, &data)?;
                pool.written += 1;
                pool.spare.push((encoder, data));
                if let Some(ar) = self.options.array_record {
                    self.footer.push(FooterEntry {
                        chunk_offset: begin,
                        decoded_data_size: header.decoded_data_size,
                        num_records: header.num_records,
                    });
                    if ar.pad_to_block_boundary {
                        self.chunks.pad(BLOCK_SIZE)?;
                    }
                }
            }
        }
    }

    fn write_data_chunk(&mut self) -> Result<()> {
        let num_records = self.encoder.num_records();
        self.chunk_so_far = 0;
        if self.pool.is_some() {
            return self.submit_and_drain(false);
        }
        if num_records == 0 {
            return Ok(());
        }
        let (chunk_type, decoded) = match &mut self.encoder {
            Encoder::Simple(e) if self.compressor.options().kind == CompressionType::None => {
                // No copy of the values into the chunk data: it is written in two parts.
                let decoded = e.decoded_size();
                e.encode_uncompressed_prefix(&mut self.data);
                let parts = [self.data.as_slice(), e.values()];
                let begin = self.chunks.write_data_chunk_parts(
                    ChunkType::Simple,
                    num_records,
                    decoded,
                    &parts,
                )?;
                e.clear();
                return self.after_data_chunk(begin, decoded, num_records);
            }
            Encoder::Simple(e) => {
                let decoded = e.decoded_size();
                e.encode(&mut self.compressor, &mut self.data)?;
                (ChunkType::Simple, decoded)
            }
            Encoder::Transpose(e) if self.compressor.options().kind == CompressionType::None => {
                // Likewise: the buffers are written where they are.
                let decoded = e.decoded_size();
                e.encode_prefix(&mut self.compressor, &mut self.data)?;
                let mut parts = vec![self.data.as_slice()];
                parts.extend(e.uncompressed_tail());
                let begin = self.chunks.write_data_chunk_parts(
                    ChunkType::Transposed,
                    num_records,
                    decoded,
                    &parts,
                )?;
                e.clear_keeping_buffers();
                return self.after_data_chunk(begin, decoded, num_records);
            }
            Encoder::Transpose(e) => {
                let decoded = e.decoded_size();
                e.encode(&mut self.compressor, &mut self.data)?;
                (ChunkType::Transposed, decoded)
            }
        };
        let header = ChunkHeader::new(chunk_type, &self.data, num_records, decoded);
        let begin = self.chunks.write_chunk(&header, &self.data)?;
        self.after_data_chunk(begin, decoded, num_records)
    }

    fn after_data_chunk(&mut self, begin: u64, decoded: u64, num_records: u64) -> Result<()> {
        if let Some(ar) = self.options.array_record {
            self.footer.push(FooterEntry {
                chunk_offset: begin,
                decoded_data_size: decoded,
                num_records,
            });
            if ar.pad_to_block_boundary {
                self.chunks.pad(BLOCK_SIZE)?;
            }
        }
        Ok(())
    }

    /// Writes the pending chunk and the final padding, then flushes the output.
    ///
    /// With the ArrayRecord layout a flush ends a group early, which array_record forbids for all but the
    /// last chunk; there it only flushes the output.
    ///
    /// # Errors
    /// If writing fails.
    pub fn flush(&mut self) -> Result<()> {
        if self.failed {
            return Err(Error::WriterClosed);
        }
        self.guard(|w| {
            if w.options.array_record.is_none() {
                w.write_data_chunk()?;
                w.submit_and_drain(true)?;
                w.chunks.pad(w.options.final_padding)?;
            }
            w.chunks.flush()?;
            Ok(())
        })
    }

    /// Writes the last chunk (and the ArrayRecord footer and postscript) and returns the output.
    ///
    /// # Errors
    /// If writing fails.
    pub fn close(mut self) -> Result<W> {
        if self.failed {
            return Err(Error::WriterClosed);
        }
        self.write_data_chunk()?;
        self.submit_and_drain(true)?;
        self.pool = None;
        if self.options.array_record.is_some() {
            self.write_array_record_tail()?;
        } else {
            self.chunks.pad(self.options.final_padding)?;
        }
        self.chunks.flush()?;
        Ok(self.chunks.into_inner())
    }

    fn write_array_record_tail(&mut self) -> Result<()> {
        let mut footer = SimpleEncoder::default();
        let mut rec = Vec::new();
        encode_footer_metadata(
            &mut rec,
            self.footer.len() as u64,
            self.num_records,
            &self.options.array_record_text(),
        );
        footer.add_record(&rec);
        for e in &self.footer {
            rec.clear();
            encode_footer_entry(&mut rec, e);
            footer.add_record(&rec);
        }
        let n = footer.num_records();
        let decoded = footer.decoded_size();
        footer.encode(&mut self.compressor, &mut self.data)?;
        let footer_offset = self.chunks.write_chunk(
            &ChunkHeader::new(ChunkType::Simple, &self.data, n, decoded),
            &self.data,
        )?;
        self.chunks.pad(BLOCK_SIZE)?;
        let mut postscript = SimpleEncoder::default();
        rec.clear();
        encode_postscript(&mut rec, footer_offset);
        for _ in 0..3 {
            postscript.add_record(&rec);
        }
        let decoded = postscript.decoded_size();
        let mut plain = Compressor::new(CompressionOptions {
            kind: CompressionType::None,
            level: 0,
            window_log: None,
        })?;
        postscript.encode(&mut plain, &mut self.data)?;
        self.chunks.write_chunk(
            &ChunkHeader::new(ChunkType::Simple, &self.data, 3, decoded),
            &self.data,
        )?;
        self.chunks.pad(BLOCK_SIZE)?;
        Ok(())
    }
}
