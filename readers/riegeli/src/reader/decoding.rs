//! Decoding a chunk's records: on the reader's thread, or ahead of it on a pool of threads.

use crate::chunk::{ChunkHeader, ChunkType};
use crate::compression::Decompressor;
use crate::error::Result;
use crate::projection::FieldProjection;
use crate::simple::{self, Values};
use crate::transpose::decode::TransposeDecoder;

use super::chunks::Failure;

/// Whether a chunk of this header is decoded for records (unknown types with records fail to decode).
pub(super) fn has_records(header: &ChunkHeader) -> bool {
    match header.chunk_type {
        ChunkType::Simple | ChunkType::Transposed => true,
        ChunkType::Unknown(_) => header.num_records > 0,
        _ => false,
    }
}

/// Codec contexts and scratch of one decoding thread.
#[derive(Debug, Default)]
pub(crate) struct Decoders {
    pub(super) decompressor: Decompressor,
    pub(super) transpose: TransposeDecoder,
    scratch: Vec<u8>,
    /// The fields transposed chunks keep (`None`: all).
    pub(super) projection: Option<std::sync::Arc<FieldProjection>>,
}

/// Decodes the records of a simple or transposed chunk into `values` / `ends`.
pub(super) fn decode_chunk(
    header: &ChunkHeader,
    data: &[u8],
    d: &mut Decoders,
    values: &mut Vec<u8>,
    ends: &mut Vec<usize>,
) -> Result<Values, crate::error::DecodeError> {
    let data = &data[..header.data_size as usize];
    match header.chunk_type {
        ChunkType::Simple => simple::decode(
            data,
            header.num_records,
            header.decoded_data_size,
            &mut d.decompressor,
            &mut d.scratch,
            values,
            ends,
        ),
        ChunkType::Transposed => d
            .transpose
            .decode(
                data,
                header.num_records,
                header.decoded_data_size,
                d.projection.as_deref(),
                &mut d.decompressor,
                values,
                ends,
            )
            .map(|()| Values::InBuffer),
        ChunkType::Unknown(t) => {
            ends.clear();
            Err(crate::error::DecodeError::new(format!(
                "unknown chunk type {t:#04x} with records"
            )))
        }
        _ => {
            ends.clear();
            Ok(Values::InBuffer)
        }
    }
}

/// Buffers of one decoded chunk.
#[derive(Debug, Default)]
pub(super) struct ChunkBufs {
    pub(super) data: Vec<u8>,
    pub(super) values: Vec<u8>,
    pub(super) ends: Vec<usize>,
}

pub(super) struct Job {
    pub(super) seq: u64,
    pub(super) begin: u64,
    pub(super) end: u64,
    pub(super) header: ChunkHeader,
    pub(super) bufs: ChunkBufs,
    pub(super) result: Result<Values, crate::error::DecodeError>,
}

pub(super) enum Pending {
    Chunk(u64),
    Failure(Failure),
}

/// Background threads decoding the chunks ahead of the reader (see [`super::RecordReader::set_parallelism`]).
pub(super) struct ReadPool {
    pub(super) jobs: Option<std::sync::mpsc::Sender<Job>>,
    pub(super) done: std::sync::mpsc::Receiver<Job>,
    pub(super) workers: Vec<std::thread::JoinHandle<()>>,
    pub(super) queue: std::collections::VecDeque<Pending>,
    pub(super) ready: std::collections::BTreeMap<u64, Job>,
    pub(super) spare: Vec<ChunkBufs>,
    pub(super) next_seq: u64,
    pub(super) in_flight: usize,
    pub(super) depth: usize,
    pub(super) stopped: bool,
}

impl ReadPool {
    pub(super) fn new(
        threads: usize,
        projection: Option<&std::sync::Arc<FieldProjection>>,
    ) -> Self {
        let (jobs_tx, jobs_rx) = std::sync::mpsc::channel::<Job>();
        let jobs_rx = std::sync::Arc::new(std::sync::Mutex::new(jobs_rx));
        let (done_tx, done) = std::sync::mpsc::channel::<Job>();
        let workers = (0..threads)
            .map(|_| {
                let jobs_rx = std::sync::Arc::clone(&jobs_rx);
                let done_tx = done_tx.clone();
                let projection = projection.cloned();
                std::thread::spawn(move || {
                    let mut decoders = Decoders {
                        projection,
                        ..Decoders::default()
                    };
                    loop {
                        let job = match jobs_rx.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        let Ok(mut job) = job else { return };
                        let bufs = &mut job.bufs;
                        job.result = decode_chunk(
                            &job.header,
                            &bufs.data,
                            &mut decoders,
                            &mut bufs.values,
                            &mut bufs.ends,
                        );
                        if done_tx.send(job).is_err() {
                            return;
                        }
                    }
                })
            })
            .collect();
        Self {
            jobs: Some(jobs_tx),
            done,
            workers,
            queue: std::collections::VecDeque::new(),
            ready: std::collections::BTreeMap::new(),
            spare: Vec::new(),
            next_seq: 0,
            in_flight: 0,
            depth: threads * 2,
            stopped: false,
        }
    }

    /// Waits for every job in flight and forgets the queue (after a seek).
    pub(super) fn reset(&mut self) {
        while self.in_flight > 0 {
            match self.done.recv() {
                Ok(job) => {
                    self.in_flight -= 1;
                    self.spare.push(job.bufs);
                }
                Err(_) => break,
            }
        }
        for (_, job) in std::mem::take(&mut self.ready) {
            self.spare.push(job.bufs);
        }
        self.queue.clear();
        self.stopped = false;
    }
}

impl Drop for ReadPool {
    fn drop(&mut self) {
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}
