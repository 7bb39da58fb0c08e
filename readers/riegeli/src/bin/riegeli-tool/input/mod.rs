//! `riegeli-tool write`'s input: records as `cat` writes them, each an 8-byte little-endian
//! length, then that many bytes ([`parse`]).
//!
//! The input is read on a thread of its own, in 1 MiB blocks (standard input's own buffer is
//! 8 KiB: a read call per record or less), so that getting it out of the page cache or a pipe
//! overlaps with encoding. Who then copies the records into place (a chunk's records must lie
//! back to back before most codecs see them) depends on which thread has time for it:
//!
//! * **A fast codec** (none, Snappy, Zstd): reading the input costs about what encoding it does,
//!   so the input thread only reads, and the writer copies each record out of its block.
//! * **Brotli** costs several times the reading, so the input thread also gathers the records
//!   into [`RecordGroup`]s of a chunk each, which the writer takes without a copy.
//!
//! ```text
//!  fast codec:  input thread: read() blocks --full--> writer: parse, write_record()
//!  Brotli:      input thread: read() blocks, parse -> [group] --full--> writer.write_group()
//!                                                    [group] <-empty-- (the writer's old buffers)
//! ```
//!
//! A regular file, with Snappy or Zstd, is not read at all but mapped ([`MappedRecords`]): the
//! writer copies the records out of the page cache, and the core that would have read goes to
//! encoding (`riegeli-tool write` gives the writer a background encoding thread):
//!
//! ```text
//!  mapped file: writer: parse, write_record() --chunk--> encoding thread: compress
//! ```

mod blocks;
mod mapped;
mod parse;

use std::io;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

use riegeli_records::RecordGroup;

use blocks::{ReadBlocks, ThreadBlocks};
pub use mapped::MappedRecords;
pub use parse::{InputError, LenPrefixed, NextRecord};

/// The size of the blocks the input is read in.
const BLOCK_SIZE: usize = 1 << 20;

/// Groups handed to the writer or being filled at once (beside the writer's own buffers).
const GROUPS_IN_FLIGHT: usize = 2;

/// Where a group ends: at `records` records, or once it holds `bytes` bytes of them.
#[derive(Debug, Clone, Copy)]
pub struct GroupShape {
    pub records: u64,
    pub bytes: usize,
}

/// Standard input, as the writer takes it (see the module docs).
pub enum Input {
    /// Records of a mapped file, parsed on the writer's thread.
    Mapped(MappedRecords),
    /// Records parsed on the writer's thread out of blocks read ahead.
    Records(LenPrefixed<ThreadBlocks>),
    /// Records gathered into groups on the input thread.
    Groups(Groups),
}

impl Input {
    /// Standard input, gathered into groups of `shape` on the input thread when `gather` (the
    /// codec is slow), else handed out record by record.
    pub fn stdin(shape: GroupShape, gather: bool) -> Self {
        if gather {
            let parser = LenPrefixed::new(ReadBlocks(io::stdin()), BLOCK_SIZE);
            Self::Groups(Groups::spawn(parser, shape))
        } else {
            let blocks = ThreadBlocks::spawn(io::stdin(), BLOCK_SIZE);
            Self::Records(LenPrefixed::new(blocks, BLOCK_SIZE))
        }
    }
}

/// What the input thread sends: a group of records, or why the input stopped.
type Sent = Result<RecordGroup, InputError>;

/// Groups of records gathered on a thread of their own (see the module docs).
pub struct Groups {
    full: Receiver<Sent>,
    empty: Sender<RecordGroup>,
    thread: Option<JoinHandle<()>>,
}

impl Groups {
    /// Starts a thread that gathers the records of `source` into groups of `shape`.
    pub fn spawn<S: NextRecord + Send + 'static>(source: S, shape: GroupShape) -> Self {
        let (full_tx, full) = sync_channel(GROUPS_IN_FLIGHT);
        let (empty, empty_rx) = channel();
        for _ in 0..GROUPS_IN_FLIGHT {
            // Cannot fail: the receiver is alive.
            let _ = empty.send(RecordGroup::new());
        }
        let thread = std::thread::spawn(move || gather(source, shape, &full_tx, &empty_rx));
        Self {
            full,
            empty,
            thread: Some(thread),
        }
    }

    /// The next group (never empty), or `None` at the end of the input. The whole records
    /// before a truncation come first, then the error.
    pub fn next_group(&mut self) -> Result<Option<RecordGroup>, InputError> {
        match self.full.recv() {
            Ok(sent) => sent.map(Some),
            // The thread ended and sends nothing more: only a panic is not the input's end.
            Err(_) => match self.thread.take().map(JoinHandle::join) {
                Some(Err(_)) => Err(InputError::Io(io::Error::other(
                    "the input thread stopped unexpectedly",
                ))),
                _ => Ok(None),
            },
        }
    }

    /// Gives a group (emptied by the writer) back for reuse.
    pub fn recycle(&self, group: RecordGroup) {
        // The thread may have ended: the group is then dropped.
        let _ = self.empty.send(group);
    }
}

/// The input thread: fills each empty group from `source` and sends it, until the input ends,
/// fails, or the writer is gone.
fn gather(
    mut source: impl NextRecord,
    shape: GroupShape,
    full: &SyncSender<Sent>,
    empty: &Receiver<RecordGroup>,
) {
    while let Ok(mut group) = empty.recv() {
        group.clear();
        let stop = loop {
            match source.next_record() {
                Ok(Some(record)) => {
                    group.push(record);
                    if group.len() >= shape.records || group.bytes() >= shape.bytes {
                        break None;
                    }
                }
                Ok(None) => break Some(Ok(())),
                Err(e) => break Some(Err(e)),
            }
        };
        if !group.is_empty() && full.send(Ok(group)).is_err() {
            return;
        }
        match stop {
            None => {}
            Some(Ok(())) => return,
            Some(Err(e)) => {
                let _ = full.send(Err(e));
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

    use super::parse::tests::{Trickle, encode, records};
    use super::*;

    /// The records before the input stopped, and why.
    type Stopped = (Vec<Vec<u8>>, InputError);

    /// Every record of `input` through `Groups`, with the shape of each group checked.
    fn read_groups(input: &[u8], shape: GroupShape) -> Result<Vec<Vec<u8>>, Stopped> {
        let parser = LenPrefixed::new(ReadBlocks(Trickle::new(input, 4096)), 64);
        let mut groups = Groups::spawn(parser, shape);
        let mut out = Vec::new();
        let mut last_short = false;
        loop {
            match groups.next_group() {
                Ok(Some(mut group)) => {
                    assert!(!group.is_empty());
                    // Only the last group may end short of the shape.
                    assert!(!last_short, "a short group before the end");
                    last_short = group.len() < shape.records && group.bytes() < shape.bytes;
                    out.extend(group.iter().map(<[u8]>::to_vec));
                    group.clear();
                    groups.recycle(group);
                }
                Ok(None) => return Ok(out),
                Err(e) => return Err((out, e)),
            }
        }
    }

    #[test]
    fn groups_hold_every_record_in_order() {
        let records = records();
        let input = encode(&records);
        for shape in [
            GroupShape {
                records: 1,
                bytes: usize::MAX,
            },
            GroupShape {
                records: 4,
                bytes: usize::MAX,
            },
            GroupShape {
                records: 64,
                bytes: usize::MAX,
            },
            GroupShape {
                records: 1000,
                bytes: 5000,
            },
        ] {
            assert!(read_groups(&input, shape).unwrap() == records, "{shape:?}");
        }
        assert!(
            read_groups(
                &[],
                GroupShape {
                    records: 4,
                    bytes: 100
                }
            )
            .unwrap()
            .is_empty()
        );
    }

    #[test]
    fn a_truncated_input_gives_its_whole_records_then_the_error() {
        let records = records();
        let input = encode(&records);
        // Cut inside the length of record 10, then inside record 10 itself.
        let before = encode(&records[..10]).len();
        for cut in [before + 3, before + 8 + 1] {
            let shape = GroupShape {
                records: 4,
                bytes: usize::MAX,
            };
            let (got, e) = read_groups(&input[..cut], shape).unwrap_err();
            assert!(got == records[..10], "cut {cut}");
            assert!(
                matches!(
                    e,
                    InputError::TruncatedLength { record: 10, .. }
                        | InputError::TruncatedRecord { record: 10, .. }
                ),
                "cut {cut}: {e}"
            );
        }
    }
}
