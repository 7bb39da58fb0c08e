//! A throughput measurement in the manner of ROOT's `rootreadspeed`, of TTree branches (below)
//! and RNTuple fields (`ntuple.rs`).
//!
//! Setup (untimed): open the files, read the trees, list every basket of the selected branches,
//! map the files (nothing is read yet).
//! Timed: read each basket record (a small one into a reused buffer, a large one from the page
//! cache through the map, without a copy), decompress it, and decode its entries into typed
//! values (big-endian to native) in steps of 1,024 entries, spread over `threads` worker
//! threads by basket, biggest first; with
//! several threads a big basket is itself split (blocks, then entry ranges). The cache is
//! bypassed (every basket is read once, as in a real analysis pass) and per-thread buffers are
//! reused, so the loop allocates nothing per basket.
//!
//! [`Mode::DecompressOnly`] is the codec anchor: the same basket records are first loaded into
//! memory (untimed) and only their decompression is timed. Full read time over decompress-only
//! time says how much the reader adds on top of the codec library. [`Mode::DecompressCopy`] and
//! [`Mode::ReadCopy`] are floors: the least any reader handing out values in memory of its own
//! does, without and with reading the file; [`Mode::ReadDecompress`], reading and decompressing
//! alone, is the floor of any reader of the file, and [`Mode::ReadTouch`], which also touches
//! the entries and their offset table once, of any reader of the entries. [`Mode::ReadFind`]
//! measures what finding the strings costs a reader that lends them where they lie.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use rayon::prelude::*;

pub mod bottleneck;
mod floors;
mod ntuple;
mod report;
mod stages;
mod steps;

use floors::{copy_entries, find_entries, touch_entries};
pub use stages::Stages;
use stages::{StageClock, lap, restart};
use steps::{Decompressed, steps};

use crate::basket::{BasketBuffers, BasketData, BasketHeader, strings_checked_with_table};
use crate::column::Values;
use crate::compression;
use crate::cursor::Cursor;
use crate::decode::numeric::{ENTRIES_PER_TASK, decode_flat, decode_var_into, var_value_count};
use crate::decode::{PARALLEL_BASKET_BYTES, TextListView, TextView, leaflist, object};
use crate::error::{Error, Result};
use crate::file::{Key, RootFile};
use crate::layout::{Field, Layout, Shape};
use crate::mapped::Mapped;
use crate::reader::Branch;
use crate::tree::BasketLocation;
use crate::types::{Element, LeafType};

pub use report::{Config, Mode, Report, Selection};

struct Unit {
    branch: usize,
    seek: u64,
    bytes: u32,
}

struct Scratch {
    /// The full read's basket buffers.
    basket: BasketBuffers,
    /// The decompress-only modes' payload.
    payload: Vec<u8>,
    /// [`Mode::DecompressCopy`]'s copy of the payload.
    copy: Vec<u8>,
    /// The full read's small basket records, read rather than mapped.
    record: Vec<u8>,
    typed: TypedScratch,
    /// The stages' clock, when they are timed.
    clock: Option<StageClock>,
}

#[derive(Default)]
struct TypedScratch {
    b: Vec<bool>,
    i8: Vec<i8>,
    u8: Vec<u8>,
    i16: Vec<i16>,
    u16: Vec<u16>,
    i32: Vec<i32>,
    u32: Vec<u32>,
    i64: Vec<i64>,
    u64: Vec<u64>,
    f32: Vec<f32>,
    f64: Vec<f64>,
    offsets: Vec<u64>,
    /// The values of the last object branch decoded, and its shape: emptied (memory kept) for
    /// the next basket of that shape.
    objects: Option<(Shape, Values)>,
    /// The same for leaf lists.
    leaf_list: Option<(Vec<Field>, Values)>,
    /// The string entries handed out where they lie ([`TextView`], [`TextListView`]), counted.
    text_entries: usize,
    /// The numbers decoded, counted.
    values: usize,
}

/// The first `n` elements of `buf`, growing it (zero-filled) only when it is too short: the
/// buffers are reused across baskets and every element is overwritten by the decode, so
/// re-zeroing them for each basket would only cost time.
fn prefix<T: Default + Clone>(buf: &mut Vec<T>, n: usize) -> &mut [T] {
    if buf.len() < n {
        buf.resize(n, T::default());
    }
    &mut buf[..n]
}

/// Basket records up to this size are read into a reused buffer; larger ones are taken through
/// the map. A small record's first touch through the map costs a page fault and, for a record
/// in a 2 MiB stretch of the file not touched before, a page table: more than copying it.
const READ_MAX: usize = 64 << 10;

/// [`Mode::DecompressCopy`] copies a payload this much at a time into one reused buffer, as the
/// full read hands out a step's values at a time: copied whole into a buffer of its size, a
/// large payload would leave the core's cache and cost the floor more than the full read.
const COPY_CHUNK: usize = 16 << 10;

/// Decodes a whole basket into the reused buffers and returns how many values it decoded;
/// `split`: a big basket is decoded by several tasks on the current rayon pool, each over a
/// range of its entries in steps, into buffers of its own, as one thread decodes a basket.
/// (Decoded whole, as the library's column reads must, the 18.8 MB `jets` basket of the
/// 2M-entry files made 20 MB of fresh buffers in every read, and doubled its page faults on two
/// threads.)
fn consume<T: Element>(
    basket: &BasketData,
    name: &str,
    layout: &Layout,
    split: bool,
    buf: &mut Vec<T>,
    ends: &mut Vec<u64>,
) -> Result<usize> {
    let n = basket.entries();
    if split && basket.data().len() >= PARALLEL_BASKET_BYTES {
        return (0..n)
            .into_par_iter()
            .step_by(ENTRIES_PER_TASK)
            .with_max_len(1)
            .map(|a| {
                let b = (a + ENTRIES_PER_TASK).min(n);
                consume_steps::<T>(basket, name, layout, a, b, &mut Vec::new(), &mut Vec::new())
            })
            .try_reduce(|| 0, |x, y| Ok(x + y));
    }
    consume_steps(basket, name, layout, 0, n, buf, ends)
}

/// Decodes entries `a..b` of a basket in steps of [`ENTRIES_PER_STEP`](steps::ENTRIES_PER_STEP)
/// into `buf` and `ends` (the typed output of a step stays in the core's cache); returns how many
/// values it decoded.
fn consume_steps<T: Element>(
    basket: &BasketData,
    name: &str,
    layout: &Layout,
    a: usize,
    b: usize,
    buf: &mut Vec<T>,
    ends: &mut Vec<u64>,
) -> Result<usize> {
    let vector = matches!(layout, Layout::Vector(_));
    let mut decoded = 0;
    for (a, b) in steps(a, b) {
        match layout.fixed_len() {
            Some(per) => {
                decode_flat(basket, name, per, a, b, prefix(buf, (b - a) * per))?;
                decoded += (b - a) * per;
            }
            None => {
                let count = var_value_count(basket, name, T::SIZE, vector, a, b)?;
                let values = prefix(buf, count);
                decode_var_into(basket, name, vector, a, b, values, prefix(ends, b - a), 0)?;
                decoded += count;
            }
        }
    }
    Ok(decoded)
}

impl TypedScratch {
    fn decode(
        &mut self,
        basket: &BasketData,
        name: &str,
        layout: &Layout,
        split: bool,
        copy_strings: bool,
    ) -> Result<()> {
        let o = &mut self.offsets;
        let n = basket.entries();
        let t = match layout {
            // Checked, the strings are ready to be handed out where they lie; reading them is
            // the analysis' own work, as reading the numbers the full read writes is.
            Layout::Object(shape) if !copy_strings && shape.is_string() => {
                let strings = TextView::new(basket, name, layout)?;
                self.text_entries = std::hint::black_box(self.text_entries + strings.len());
                return Ok(());
            }
            Layout::Object(shape) if !copy_strings && shape.is_string_list() => {
                let lists = TextListView::new(basket, name, layout)?;
                self.text_entries = std::hint::black_box(self.text_entries + lists.len());
                return Ok(());
            }
            // Objects and leaf lists: built as they are read, a step at a time.
            Layout::Object(shape) => {
                if self.objects.as_ref().is_none_or(|(s, _)| s != shape) {
                    self.objects = Some((shape.clone(), object::empty(shape)));
                }
                let (_, out) = self
                    .objects
                    .as_mut()
                    .ok_or_else(|| Error::corrupt("readspeed", 0, "object scratch"))?;
                for (a, b) in steps(0, n) {
                    out.clear();
                    object::decode_entries(basket, name, shape, a, b, out)?;
                }
                return Ok(());
            }
            Layout::LeafList(fields) => {
                if self.leaf_list.as_ref().is_none_or(|(f, _)| f != fields) {
                    self.leaf_list = Some((fields.clone(), leaflist::empty(fields)));
                }
                let (_, out) = self
                    .leaf_list
                    .as_mut()
                    .ok_or_else(|| Error::corrupt("readspeed", 0, "leaf list scratch"))?;
                for (a, b) in steps(0, n) {
                    out.clear();
                    leaflist::decode_entries(basket, name, fields, a, b, out)?;
                }
                return Ok(());
            }
            Layout::Scalar(t) | Layout::Fixed(t, _) | Layout::Jagged(t) | Layout::Vector(t) => *t,
        };
        let decoded = match t {
            LeafType::Bool => consume(basket, name, layout, split, &mut self.b, o),
            LeafType::I8 => consume(basket, name, layout, split, &mut self.i8, o),
            LeafType::U8 => consume(basket, name, layout, split, &mut self.u8, o),
            LeafType::I16 => consume(basket, name, layout, split, &mut self.i16, o),
            LeafType::U16 => consume(basket, name, layout, split, &mut self.u16, o),
            LeafType::I32 => consume(basket, name, layout, split, &mut self.i32, o),
            LeafType::U32 => consume(basket, name, layout, split, &mut self.u32, o),
            LeafType::I64 => consume(basket, name, layout, split, &mut self.i64, o),
            LeafType::U64 => consume(basket, name, layout, split, &mut self.u64, o),
            LeafType::F32 => consume(basket, name, layout, split, &mut self.f32, o),
            LeafType::F64 => consume(basket, name, layout, split, &mut self.f64, o),
        }?;
        self.values = std::hint::black_box(self.values + decoded);
        Ok(())
    }
}

/// Runs the measurement.
///
/// # Errors
/// Missing files, trees or branches; I/O and decoding errors.
pub fn run(config: &Config) -> Result<Report> {
    let setup = Instant::now();
    let setup_cpu = cpu_time::ProcessTime::now();
    let mut branches: Vec<(Branch, Layout)> = Vec::new();
    let mut embedded_bytes = 0u64;
    // As rootreadspeed: one tree name is read from every file; several are paired with the
    // files one to one.
    let pairs: Vec<(&PathBuf, &String)> = match config.trees.as_slice() {
        [one] => config.files.iter().map(|f| (f, one)).collect(),
        many if many.len() == config.files.len() => config.files.iter().zip(many).collect(),
        many => {
            return Err(Error::NotFound {
                name: format!("{} trees for {} files", many.len(), config.files.len()),
                file: "give one tree, or one tree per file".to_string(),
            });
        }
    };
    if let Some((path, name)) = pairs.first()
        && ntuple::is_rntuple(path, name)?
    {
        return ntuple::run(config, &pairs, setup, setup_cpu);
    }
    let mut maps = Vec::new();
    let mut map_of_branch = Vec::new();
    for (path, tree_name) in pairs {
        let file = RootFile::open_with_cache(path, 0)?;
        maps.push(Mapped::open(path)?);
        {
            let tree = file.tree(tree_name)?;
            let selected: Vec<Branch> = match &config.branches {
                Selection::Names(names) => names
                    .iter()
                    .map(|n| tree.branch(n))
                    .collect::<Result<_>>()?,
                Selection::All => tree
                    .named_branches()
                    .iter()
                    .filter(|b| b.meta.layout.is_ok())
                    .map(|b| tree.branch(&b.column))
                    .collect::<Result<_>>()?,
            };
            for b in selected {
                let layout = b.layout()?;
                branches.push((b, layout));
                map_of_branch.push(maps.len() - 1);
            }
        }
    }
    let mut units = Vec::new();
    for (k, (b, _)) in branches.iter().enumerate() {
        for info in b.baskets() {
            match &info.location {
                BasketLocation::OnDisk { seek, bytes } => {
                    units.push(Unit {
                        branch: k,
                        seek: *seek,
                        bytes: *bytes,
                    });
                }
                // Embedded baskets were read with the tree metadata (setup); they are counted
                // but have nothing left to read or decompress.
                BasketLocation::Embedded(d) => embedded_bytes += d.data().len() as u64,
            }
        }
    }
    let preloaded: Vec<Vec<u8>> = if config.mode.preloads() {
        units
            .iter()
            .map(|u| {
                let (b, _) = &branches[u.branch];
                b.file().source().read("basket", u.seek, u.bytes as usize)
            })
            .collect::<Result<_>>()?
    } else {
        Vec::new()
    };
    let threads = config.threads.max(1);
    let pool = if threads > 1 {
        Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| Error::corrupt("thread pool", 0, e.to_string()))?,
        )
    } else {
        None
    };
    // Several threads: biggest baskets first (longest-processing-time order), so the one that
    // takes longest never starts last while the other threads idle; big baskets are also split
    // (blocks decompressed and entry ranges decoded as separate tasks).
    let split = pool.is_some();
    let mut order: Vec<usize> = (0..units.len()).collect();
    if split {
        order.sort_by_key(|&i| std::cmp::Reverse(units[i].bytes));
    }
    let new_scratch = || Scratch {
        basket: BasketBuffers::default(),
        payload: Vec::new(),
        copy: Vec::new(),
        record: Vec::with_capacity(READ_MAX),
        typed: TypedScratch::default(),
        clock: config.stages.then(StageClock::new),
    };
    // Each thread's buffers are made in setup. Their first large request also has glibc merge
    // the small chunks that reading the metadata left free, which it does lazily at the next
    // large request: made in the timed loop, the first basket paid for setup's cleanup (seen in
    // profiles of bool's full read as malloc_consolidate, 7% of its samples).
    let mut scratches: Vec<Scratch> = (0..threads).map(|_| new_scratch()).collect();
    let setup_real_time_s = setup.elapsed().as_secs_f64();
    let setup_cpu_time_s = setup_cpu.elapsed().as_secs_f64();

    let copy_strings = config.mode == Mode::FullCopiedStrings;
    let work = |scratch: &mut Scratch, i: usize| -> Result<(u64, u64)> {
        let unit = units
            .get(i)
            .ok_or_else(|| Error::corrupt("readspeed", 0, "unit"))?;
        let (branch, layout) = &branches[unit.branch];
        restart(&mut scratch.clock);
        if config.mode.preloads() {
            let raw = preloaded.get(i).map_or(&[][..], Vec::as_slice);
            let n = decompress_only(raw, unit.seek, &mut scratch.payload, split)?.entry_bytes;
            lap(&mut scratch.clock, |s| &mut s.decompress_s);
            if config.mode == Mode::DecompressCopy {
                for chunk in scratch.payload.chunks(COPY_CHUNK) {
                    scratch.copy.clear();
                    scratch.copy.extend_from_slice(chunk);
                }
                lap(&mut scratch.clock, |s| &mut s.decode_s);
            }
            return Ok((n, u64::from(unit.bytes)));
        }
        let len = unit.bytes as usize;
        let raw = if len <= READ_MAX {
            let source = branch.file().source();
            source.read_into("basket", unit.seek, len, &mut scratch.record)?;
            &scratch.record[..]
        } else {
            maps[map_of_branch[unit.branch]].get("basket", unit.seek, len)?
        };
        lap(&mut scratch.clock, |s| &mut s.read_s);
        if matches!(config.mode, Mode::ReadDecompress | Mode::ReadTouch) {
            let basket = decompress_only(raw, unit.seek, &mut scratch.payload, split)?;
            lap(&mut scratch.clock, |s| &mut s.decompress_s);
            if config.mode == Mode::ReadTouch {
                let texts = strings_checked_with_table(layout);
                std::hint::black_box(touch_entries(&scratch.payload, &basket, texts));
                lap(&mut scratch.clock, |s| &mut s.index_s);
            }
            return Ok((basket.entry_bytes, u64::from(unit.bytes)));
        }
        let buffers = std::mem::take(&mut scratch.basket);
        let clock = &mut scratch.clock;
        let basket =
            BasketData::from_record_staged(raw, unit.seek, buffers, split, Some(layout), || {
                lap(clock, |s| &mut s.decompress_s);
            })?;
        lap(&mut scratch.clock, |s| &mut s.index_s);
        if config.mode == Mode::ReadFind {
            std::hint::black_box(find_entries(&basket, layout));
        } else if config.mode == Mode::ReadCopy {
            copy_entries(
                &basket,
                layout,
                &mut scratch.copy,
                &mut scratch.typed.offsets,
            );
        } else {
            scratch
                .typed
                .decode(&basket, branch.name(), layout, split, copy_strings)?;
        }
        lap(&mut scratch.clock, |s| &mut s.decode_s);
        let n = basket.data().len() as u64;
        scratch.basket = basket.into_buffers();
        Ok((n, u64::from(unit.bytes)))
    };

    let cpu0 = cpu_time::ProcessTime::now();
    let t0 = Instant::now();
    let (unc, comp) = match &pool {
        None => {
            let mut scratch = scratches.pop().unwrap_or_else(new_scratch);
            let mut acc = (0u64, 0u64);
            for i in 0..units.len() {
                let (u, c) = work(&mut scratch, i)?;
                acc.0 += u;
                acc.1 += c;
            }
            scratches.push(scratch);
            acc
        }
        Some(pool) => {
            // A free list of scratches, so buffers are reused across baskets as on one thread.
            // A worker waiting inside a split basket may pick up another basket meanwhile: it
            // takes another scratch from the list, so there are as many as baskets in
            // progress at once, not one per basket.
            let free: Mutex<Vec<Scratch>> = Mutex::new(std::mem::take(&mut scratches));
            let take = || {
                free.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .pop()
                    .unwrap_or_else(new_scratch)
            };
            let give = |s: Scratch| {
                free.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(s);
            };
            let done = pool.install(|| {
                order
                    .par_iter()
                    .with_max_len(1)
                    .map(|&i| {
                        let mut scratch = take();
                        let done = work(&mut scratch, i);
                        give(scratch);
                        done
                    })
                    .try_reduce(|| (0, 0), |a, b| Ok((a.0 + b.0, a.1 + b.1)))
            });
            scratches = free
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            done?
        }
    };
    let real_time_s = t0.elapsed().as_secs_f64();
    let cpu_time_s = cpu0.elapsed().as_secs_f64();
    let stages = config
        .stages
        .then(|| Stages::of(scratches.iter().filter_map(|s| s.clock.as_ref())));
    Ok(Report {
        setup_real_time_s,
        setup_cpu_time_s,
        real_time_s,
        cpu_time_s,
        uncompressed_bytes: unc + embedded_bytes,
        compressed_bytes: comp,
        threads,
        baskets: units.len() as u64,
        branches: branches.len(),
        mode: config.mode,
        stages,
    })
}

/// Decompresses one basket record into `out`.
fn decompress_only(raw: &[u8], seek: u64, out: &mut Vec<u8>, split: bool) -> Result<Decompressed> {
    let mut cur = Cursor::new(raw, seek, "basket key");
    let key = Key::parse(&mut cur)?;
    let header = BasketHeader::parse(&mut cur)?;
    let stored = raw.get(usize::from(key.keylen)..).unwrap_or_default();
    if key.is_compressed() {
        compression::decompress_reusing(stored, key.objlen as usize, out, split)?;
    } else {
        out.clear();
        out.extend_from_slice(stored);
    }
    let entry_bytes = (header.last as u64).saturating_sub(u64::from(key.keylen));
    Ok(Decompressed {
        entry_bytes: entry_bytes.min(u64::from(key.objlen)),
        keylen: u32::from(key.keylen),
        entries: usize::try_from(header.nev_buf).unwrap_or(0),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::consume;
    use crate::basket::BasketData;
    use crate::decode::PARALLEL_BASKET_BYTES;
    use crate::layout::Layout;
    use crate::types::LeafType;

    /// A basket over [`PARALLEL_BASKET_BYTES`] is split over the pool into tasks of entry
    /// ranges: every value is decoded once, as on one thread, and a bad entry in any task
    /// fails the read.
    #[test]
    fn a_big_basket_split_over_two_threads_decodes_every_value_once() {
        let entries: Vec<Vec<f32>> = (0..200_000u32)
            .map(|i| (0..i % 7).map(|k| (i * 7 + k) as f32).collect())
            .collect();
        let total: usize = entries.iter().map(Vec::len).sum();
        let layout = Layout::Vector(LeafType::F32);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let read = |basket: &BasketData, split: bool| {
            pool.install(|| {
                consume::<f32>(
                    basket,
                    "v",
                    &layout,
                    split,
                    &mut Vec::new(),
                    &mut Vec::new(),
                )
            })
        };
        let good = BasketData::vector_f32_for_test(&entries, None).unwrap();
        assert!(good.data().len() >= PARALLEL_BASKET_BYTES);
        assert_eq!(read(&good, true).unwrap(), total);
        assert_eq!(read(&good, false).unwrap(), total);
        // A lie in the first task, and one in the last (tasks of 65,536 entries).
        for lie in [3, 199_998] {
            let liar = BasketData::vector_f32_for_test(&entries, Some(lie)).unwrap();
            let (split, whole) = (read(&liar, true), read(&liar, false));
            assert!(split.is_err() && whole.is_err(), "entry {lie}");
            assert_eq!(
                split.unwrap_err().to_string(),
                whole.unwrap_err().to_string()
            );
        }
    }
}
