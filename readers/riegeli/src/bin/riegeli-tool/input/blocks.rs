//! Where [`super::parse::LenPrefixed`] gets its blocks: read on the calling thread
//! ([`ReadBlocks`]), or ahead on a thread of their own ([`ThreadBlocks`]).

use std::io::{self, Read};
use std::sync::mpsc::{Receiver, Sender, channel};

/// A source of input in blocks.
pub trait BlockSource {
    /// Puts the next `size` bytes of input in `block` (its length is then at least `size`, its
    /// content past the bytes returned unspecified); returns how many there are. Fewer than
    /// `size` means the input has ended.
    fn next_block(&mut self, block: &mut Vec<u8>, size: usize) -> io::Result<usize>;
}

/// Reads each block from `R` on the calling thread, into the block given.
pub struct ReadBlocks<R>(pub R);

impl<R: Read> BlockSource for ReadBlocks<R> {
    fn next_block(&mut self, block: &mut Vec<u8>, size: usize) -> io::Result<usize> {
        block.resize(size, 0);
        fill(&mut self.0, &mut block[..size])
    }
}

/// Reads `buf` full from `src`, or to the end of the input; returns the bytes read.
fn fill(src: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut len = 0;
    while len < buf.len() {
        match src.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(len)
}

/// Blocks in use at once with [`ThreadBlocks`]: one parsed, one read ahead, one being read into.
const BLOCKS: usize = 3;

/// A block the reader thread filled, and how much of it holds input.
type Filled = io::Result<(Vec<u8>, usize)>;

/// Blocks read ahead on a thread of their own; the parser's block is swapped for a full one (no
/// copy), and goes back to the thread to be read into.
pub struct ThreadBlocks {
    full: Receiver<Filled>,
    empty: Sender<Vec<u8>>,
    size: usize,
}

impl ThreadBlocks {
    /// Reads `src` on a new thread in blocks of `size` bytes.
    pub fn spawn<R: Read + Send + 'static>(mut src: R, size: usize) -> Self {
        let (full_tx, full) = channel();
        let (empty, empty_rx) = channel::<Vec<u8>>();
        for _ in 1..BLOCKS {
            // Cannot fail: the receiver is alive.
            let _ = empty.send(Vec::new());
        }
        std::thread::spawn(move || {
            // Until the input ends (a block not full), reading fails, or the parser is gone.
            while let Ok(mut block) = empty_rx.recv() {
                block.resize(size, 0);
                let filled = fill(&mut src, &mut block);
                let last = !matches!(filled, Ok(n) if n == size);
                if full_tx.send(filled.map(|n| (block, n))).is_err() || last {
                    return;
                }
            }
        });
        Self { full, empty, size }
    }
}

impl BlockSource for ThreadBlocks {
    fn next_block(&mut self, block: &mut Vec<u8>, size: usize) -> io::Result<usize> {
        debug_assert_eq!(size, self.size, "ThreadBlocks reads blocks of its own size");
        let Ok(filled) = self.full.recv() else {
            return Err(io::Error::other("the input thread stopped"));
        };
        let (full, len) = filled?;
        let done = std::mem::replace(block, full);
        // The first block replaced is empty; the thread sizes it. A thread gone at the end needs
        // no more blocks.
        let _ = self.empty.send(done);
        Ok(len)
    }
}
