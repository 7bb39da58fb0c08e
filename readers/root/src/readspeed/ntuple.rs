//! `readspeed` on RNTuples, with the report it gives for TTrees.
//!
//! Setup (untimed, as for trees): open the files and their RNTuples (anchor, header, footer and
//! page lists, checksums verified), resolve the fields, list their pages; for
//! [`Mode::DecompressOnly`] also load every page's bytes into memory.
//! Timed, [`Mode::Full`]: read the fields as an analysis reading them page by page does, and as
//! ROOT's views and the TTree measurement do ([`RNTuple::unpack_unit`]): every page taken from a
//! read-only map of its file (as the TTree measurement takes its baskets: no copy before the
//! codec), checksummed, decompressed and decoded into typed values in buffers each thread
//! reuses, pages spread over `threads` threads (largest first), nothing kept.
//! [`Mode::ReadDecompress`]: the same without decoding (the floor any reader of the pages pays:
//! reading, checksums, decompression). [`Mode::ReadCopy`]: the same, then each page's bytes
//! copied once into a reused buffer (the floor of a reader that hands out the values of split
//! columns, which it must put back together, in memory of its own). (`read_field`, which also keeps every value of a field in
//! one column, pays for that memory besides.) [`Mode::DecompressOnly`], the codec's ceiling:
//! only the preloaded pages' decompression, spread over the same threads, one reused buffer per
//! thread.
//! Uncompressed bytes are the fields' pages decompressed (what ROOT's page sizes count).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::report::{Config, Mode, Report, Selection};
use crate::compression;
use crate::error::{Error, Result};
use crate::file::RootFile;
use crate::mapped::Mapped;
use crate::rntuple::RNTuple;
use crate::rntuple::columns::{PageUnit, StoredPage, UnitScratch};

/// Whether `name` in the file at `path` is an RNTuple (then readspeed reads it as one).
pub(super) fn is_rntuple(path: &PathBuf, name: &str) -> Result<bool> {
    let file = RootFile::open_with_cache(path, 0)?;
    Ok(file.find_key(name)?.is_rntuple())
}

/// A page loaded for the decompress-only ceiling.
struct Loaded {
    page: StoredPage,
    data: Vec<u8>,
}

pub(super) fn run(
    config: &Config,
    pairs: &[(&PathBuf, &String)],
    setup: Instant,
    setup_cpu: cpu_time::ProcessTime,
) -> Result<Report> {
    if !matches!(
        config.mode,
        Mode::Full | Mode::DecompressOnly | Mode::ReadDecompress | Mode::ReadCopy
    ) {
        let field = match &config.branches {
            Selection::Names(names) => names.first().cloned().unwrap_or_default(),
            Selection::All => String::new(),
        };
        return Err(Error::UnsupportedField {
            ntuple: pairs
                .first()
                .map_or_else(String::new, |(_, n)| (*n).clone()),
            field,
            detail: format!(
                "readspeed measures an RNTuple in full, read-copy, read-decompress or \
                 decompress-only, not {:?} (a floor of TTree baskets)",
                config.mode
            ),
        });
    }
    // Every (ntuple, field) read with the map of its file, and every page those reads read.
    let mut reads: Vec<(RNTuple, String, usize)> = Vec::new();
    let mut units: Vec<(usize, PageUnit)> = Vec::new();
    let mut maps = Vec::new();
    for (path, name) in pairs {
        let file = RootFile::open_with_cache(path, 0)?;
        maps.push(Mapped::open(path)?);
        let ntuple = file.rntuple(name)?;
        let fields: Vec<String> = match &config.branches {
            Selection::Names(names) => names.clone(),
            Selection::All => ntuple.fields().into_iter().map(|f| f.name).collect(),
        };
        for field in fields {
            units.extend(
                ntuple
                    .page_units(&field)?
                    .into_iter()
                    .map(|u| (reads.len(), u)),
            );
            reads.push((ntuple.clone(), field, maps.len() - 1));
        }
    }
    let threads = config.threads.max(1);
    if threads > 1 {
        // Longest first, so that the last page to start is a short one.
        units.sort_by_key(|(_, u)| std::cmp::Reverse(u.stored().stored));
    }
    let pages: Vec<StoredPage> = units.iter().map(|(_, u)| u.stored()).collect();
    let uncompressed_bytes: u64 = pages.iter().map(|p| p.bytes).sum();
    let compressed_bytes: u64 = pages.iter().map(|p| p.stored).sum();
    let loaded: Vec<Loaded> = if config.mode == Mode::DecompressOnly {
        pages
            .iter()
            .zip(&units)
            .map(|(p, &(k, _))| {
                let stored = usize::try_from(p.stored).map_err(|_| too_big(p))?;
                let data = reads[k]
                    .0
                    .file()
                    .source()
                    .read("RNTuple page", p.offset, stored)?
                    .to_vec();
                Ok(Loaded { page: *p, data })
            })
            .collect::<Result<_>>()?
    } else {
        Vec::new()
    };
    // A pool of exactly `threads` (1: the measurement stays on one thread).
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::corrupt("thread pool", 0, e.to_string()))?;
    let setup_real_time_s = setup.elapsed().as_secs_f64();
    let setup_cpu_time_s = setup_cpu.elapsed().as_secs_f64();

    let cpu0 = cpu_time::ProcessTime::now();
    let t0 = Instant::now();
    // Each thread takes the next page (longest first) until none is left: one set of buffers
    // per thread, and no thread idles while another holds several pages.
    let next = AtomicUsize::new(0);
    let worked: Vec<Result<()>> = pool.broadcast(|_| {
        if config.mode == Mode::DecompressOnly {
            let mut out = Vec::new();
            while let Some(l) = loaded.get(next.fetch_add(1, Ordering::Relaxed)) {
                decompress(l, &mut out)?;
            }
            return Ok(());
        }
        let (mut scratch, mut copy) = (UnitScratch::default(), Vec::new());
        while let Some((k, unit)) = units.get(next.fetch_add(1, Ordering::Relaxed)) {
            let (ntuple, _, map) = &reads[*k];
            let (offset, len) = ntuple.unit_extent(unit)?;
            let stored = maps[*map].get("RNTuple page", offset, len)?;
            match config.mode {
                Mode::ReadDecompress => ntuple.unpack_unit_bytes(unit, stored, &mut scratch)?,
                Mode::ReadCopy => {
                    ntuple.unpack_unit_bytes(unit, stored, &mut scratch)?;
                    copy.clear();
                    copy.extend_from_slice(scratch.page());
                }
                _ => ntuple.unpack_unit(unit, stored, &mut scratch)?,
            }
            std::hint::black_box((&scratch, &copy));
        }
        Ok(())
    });
    worked.into_iter().collect::<Result<()>>()?;
    let real_time_s = t0.elapsed().as_secs_f64();
    let cpu_time_s = cpu0.elapsed().as_secs_f64();
    Ok(Report {
        setup_real_time_s,
        setup_cpu_time_s,
        real_time_s,
        cpu_time_s,
        uncompressed_bytes,
        compressed_bytes,
        threads,
        baskets: pages.len() as u64,
        branches: reads.len(),
        mode: config.mode,
        stages: None,
    })
}

/// Decompresses one preloaded page into `out` (a page stored as is is copied, as the reader
/// copies it).
fn decompress(l: &Loaded, out: &mut Vec<u8>) -> Result<()> {
    let expected = usize::try_from(l.page.bytes).map_err(|_| too_big(&l.page))?;
    out.clear();
    if l.page.stored == l.page.bytes {
        out.extend_from_slice(&l.data);
    } else {
        compression::decompress_reusing(&l.data, expected, out, false)?;
    }
    std::hint::black_box(&out);
    Ok(())
}

fn too_big(p: &StoredPage) -> Error {
    Error::corrupt("RNTuple page", p.offset, "page larger than memory")
}
