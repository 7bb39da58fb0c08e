//! `riegeli-tool write`'s output file. The writer hands its sink many small pieces (chunk and
//! block headers, 24-40 bytes) between large ones (chunk data, up to a 64 KiB block). Small
//! pieces are gathered in a buffer; a large one goes to the file from where it is, in one
//! `writev` with what was gathered before it. Unlike a `BufWriter`, the data is not copied once
//! more in user space (100 MB for an uncompressed 100 MB file), and a block costs one system
//! call.
//!
//! Also compiled into the `riegeli_tool_write` bench (its `library_write_file` cell), so that the
//! in-process writer is timed over the very sink the tool uses.

use std::fs::File;
use std::io::{self, IoSlice, Write};
use std::path::Path;

/// Pieces at least this long are written from where they are.
const DIRECT: usize = 4 << 10;

/// Gathered bytes are written out before they would pass this.
const GATHER: usize = 64 << 10;

/// Small writes gathered, large ones passed through with them (see the module docs).
pub struct Gather<W: Write> {
    inner: W,
    pending: Vec<u8>,
    accepted: u64,
}

/// The tool's output file.
pub type OutputFile = Gather<File>;

impl OutputFile {
    /// Creates (or truncates) the file at `path`.
    pub fn create(path: &Path) -> io::Result<Self> {
        Ok(Gather::new(File::create(path)?))
    }
}

impl<W: Write> Gather<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            pending: Vec::with_capacity(GATHER),
            accepted: 0,
        }
    }

    /// Writes out what is gathered and flushes; returns the bytes written in all.
    pub fn finish(mut self) -> io::Result<u64> {
        self.flush()?;
        Ok(self.accepted)
    }

    fn write_pending(&mut self) -> io::Result<()> {
        let result = self.inner.write_all(&self.pending);
        self.pending.clear();
        result
    }
}

impl<W: Write> Write for Gather<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.len() < DIRECT {
            if self.pending.len() + buf.len() > GATHER {
                self.write_pending()?;
            }
            self.pending.extend_from_slice(buf);
            self.accepted += buf.len() as u64;
            return Ok(buf.len());
        }
        // The gathered bytes must all go out before any of `buf`; the call reports only how
        // much of `buf` went.
        let mut sent = 0;
        while sent < self.pending.len() {
            let slices = [IoSlice::new(&self.pending[sent..]), IoSlice::new(buf)];
            let n = match self.inner.write_vectored(&slices) {
                Ok(0) => {
                    self.pending.drain(..sent);
                    return Err(io::ErrorKind::WriteZero.into());
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.pending.drain(..sent);
                    return Err(e);
                }
            };
            let rest = self.pending.len() - sent;
            if n > rest {
                self.pending.clear();
                self.accepted += (n - rest) as u64;
                return Ok(n - rest);
            }
            sent += n;
        }
        self.pending.clear();
        let n = self.inner.write(buf)?;
        self.accepted += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_pending()?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for Gather<W> {
    /// As `BufWriter`: what is gathered is written out, errors ignored (call `finish` to see them).
    fn drop(&mut self) {
        let _ = self.write_pending();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    /// A sink that takes at most `limit` bytes a call, from every slice of a vectored write
    /// (as `writev` does) or only from the first non-empty one (the default), counting calls.
    struct Sink {
        limit: usize,
        vectored: bool,
        data: Vec<u8>,
        calls: usize,
    }

    impl Sink {
        fn new(limit: usize, vectored: bool) -> Self {
            Self {
                limit,
                vectored,
                data: Vec::new(),
                calls: 0,
            }
        }
    }

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(self.limit);
            self.data.extend_from_slice(&buf[..n]);
            self.calls += 1;
            Ok(n)
        }

        fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
            if !self.vectored {
                let first = bufs
                    .iter()
                    .find(|b| !b.is_empty())
                    .map_or(&[][..], |b| &**b);
                return self.write(first);
            }
            self.calls += 1;
            let mut n = 0;
            for b in bufs {
                let take = b.len().min(self.limit - n);
                self.data.extend_from_slice(&b[..take]);
                n += take;
            }
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Pieces as the record writer makes them: headers around block-sized data, and small
    /// chunks of every size up to past `DIRECT`.
    fn pieces() -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for i in 0..40u8 {
            out.push(vec![i; 24]);
            out.push((0..65_512u32).map(|k| (k as u8) ^ i).collect());
            out.push(vec![i; 3 + usize::from(i) * 200]);
        }
        // The postscript's header, gathered when the file ends.
        out.push(vec![0xee; 40]);
        out
    }

    fn write_through(sink: &mut Sink) -> Vec<u8> {
        let mut g = Gather::new(&mut *sink);
        let mut expected = Vec::new();
        for p in pieces() {
            g.write_all(&p).unwrap();
            expected.extend_from_slice(&p);
        }
        assert_eq!(g.finish().unwrap(), expected.len() as u64);
        expected
    }

    #[test]
    fn bytes_arrive_in_order_however_the_sink_splits_them() {
        for limit in [1, 7, 24, 4095, 4096, 65_536, usize::MAX] {
            for vectored in [false, true] {
                let mut sink = Sink::new(limit, vectored);
                let expected = write_through(&mut sink);
                assert!(
                    sink.data == expected,
                    "sink taking {limit} bytes a call, vectored {vectored}"
                );
            }
        }
    }

    #[test]
    fn a_block_and_the_headers_before_it_take_one_call() {
        let mut sink = Sink::new(usize::MAX, true);
        write_through(&mut sink);
        // One call per large piece (each carries the small ones before it), one at the end
        // for the small ones after the last.
        let large = pieces().iter().filter(|p| p.len() >= DIRECT).count();
        assert_eq!(sink.calls, large + 1);
    }

    #[test]
    fn a_file_gets_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let mut g = OutputFile::create(&path).unwrap();
        let mut expected = Vec::new();
        for p in pieces() {
            g.write_all(&p).unwrap();
            expected.extend_from_slice(&p);
        }
        assert_eq!(g.finish().unwrap(), expected.len() as u64);
        assert!(std::fs::read(&path).unwrap() == expected);
    }

    #[test]
    fn dropping_writes_what_is_gathered() {
        let mut sink = Vec::new();
        {
            let mut g = Gather::new(&mut sink);
            g.write_all(b"header").unwrap();
        }
        assert_eq!(sink, b"header");
    }
}
