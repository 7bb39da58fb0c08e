//! Branch handles and the eager [`BranchReader`].
//!
//! Decoding goes straight from the decompressed basket bytes into the typed output: fixed-size
//! layouts are written into one preallocated `Vec<T>`, each basket into its own disjoint slice
//! (so baskets can be decoded in parallel without a copy), converting big-endian to native in
//! bulk. Variable-size layouts (counter-based jagged arrays and `std::vector<T>`) produce
//! `offsets` (`entries + 1` values, starting at 0) and one contiguous `values` vector.

use std::sync::Arc;

use rayon::prelude::*;

use crate::basket::BasketData;
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::file::{Key, RootFile};
use crate::lazy::LazyBranchReader;
use crate::tree::{BasketInfo, BasketLocation, BranchMeta, Layout};
use crate::types::{Element, LeafType, SHORT_RUN, check_type};

/// Bytes of the per-entry header of a streamed `std::vector<T>`: byte count, version, size.
pub const VECTOR_HEADER: usize = 10;

/// Compressed bytes from which [`Parallel::Auto`] decodes baskets on the rayon pool.
///
/// Below this the pool's fork/join overhead costs more than it saves (seed 000's zstd
/// measurement: 6.5 µs sequential vs 9.8 µs parallel on a few kilobytes).
pub const PARALLEL_THRESHOLD: u64 = 1 << 20;

/// Whether baskets are decoded in parallel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Parallel {
    /// In parallel when the selected baskets hold at least [`PARALLEL_THRESHOLD`] compressed
    /// bytes, there are at least two of them and the pool has more than one thread.
    #[default]
    Auto,
    /// Always sequential.
    Never,
    /// Always on the rayon pool.
    Always,
}

impl Parallel {
    fn decide(self, baskets: &[BasketInfo]) -> bool {
        match self {
            Self::Never => false,
            Self::Always => true,
            Self::Auto => {
                baskets.len() >= 2
                    && rayon::current_num_threads() > 1
                    && baskets
                        .iter()
                        .map(BasketInfo::compressed_bytes)
                        .sum::<u64>()
                        >= PARALLEL_THRESHOLD
            }
        }
    }
}

/// A variable-length column: entry `j` is `values[offsets[j]..offsets[j + 1]]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Jagged<T> {
    /// `entries + 1` offsets into `values`, starting at 0.
    pub offsets: Vec<u64>,
    /// All values, concatenated.
    pub values: Vec<T>,
}

impl<T> Jagged<T> {
    /// Number of entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no entries.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values of entry `j`.
    #[must_use]
    pub fn get(&self, j: usize) -> Option<&[T]> {
        let a = usize::try_from(*self.offsets.get(j)?).ok()?;
        let b = usize::try_from(*self.offsets.get(j + 1)?).ok()?;
        self.values.get(a..b)
    }
}

/// Values of any element type (for tools that do not know the type in advance).
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum Values {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Values {
    /// Number of values.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Self::Bool(v) => v.len(),
            Self::I8(v) => v.len(),
            Self::U8(v) => v.len(),
            Self::I16(v) => v.len(),
            Self::U16(v) => v.len(),
            Self::I32(v) => v.len(),
            Self::U32(v) => v.len(),
            Self::I64(v) => v.len(),
            Self::U64(v) => v.len(),
            Self::F32(v) => v.len(),
            Self::F64(v) => v.len(),
        }
    }

    /// Whether there are no values.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A column of a branch over an entry range, of whatever type the branch holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The branch layout.
    pub layout: Layout,
    /// For jagged and vector layouts: `entries + 1` offsets into `values`.
    pub offsets: Option<Vec<u64>>,
    /// The values.
    pub values: Values,
}

/// A branch of an opened tree: metadata plus the file to read its baskets from.
#[derive(Debug, Clone)]
pub struct Branch {
    file: RootFile,
    meta: Arc<BranchMeta>,
}

impl Branch {
    pub(crate) fn new(file: RootFile, meta: Arc<BranchMeta>) -> Self {
        Self { file, meta }
    }

    /// The metadata.
    #[must_use]
    pub fn meta(&self) -> &BranchMeta {
        &self.meta
    }

    /// The branch name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.meta.name
    }

    /// Number of entries.
    #[must_use]
    pub fn entries(&self) -> u64 {
        self.meta.entries
    }

    /// The file.
    #[must_use]
    pub fn file(&self) -> &RootFile {
        &self.file
    }

    /// The layout, or [`Error::UnsupportedBranch`].
    ///
    /// # Errors
    /// Branches this reader cannot decode.
    pub fn layout(&self) -> Result<Layout> {
        self.meta
            .layout
            .clone()
            .map_err(|detail| Error::UnsupportedBranch {
                branch: self.meta.name.clone(),
                detail,
            })
    }

    /// The baskets in entry order.
    #[must_use]
    pub fn baskets(&self) -> &[BasketInfo] {
        &self.meta.baskets
    }

    /// Loads basket `i` through the file's cache.
    ///
    /// # Errors
    /// Out-of-range index, I/O and decoding errors.
    pub fn basket(&self, i: usize) -> Result<Arc<BasketData>> {
        let info = self.meta.baskets.get(i).ok_or(Error::EntryOutOfRange {
            start: i as u64,
            stop: (i as u64).saturating_add(1),
            entries: self.meta.baskets.len() as u64,
        })?;
        self.load(info)
    }

    pub(crate) fn load(&self, info: &BasketInfo) -> Result<Arc<BasketData>> {
        match &info.location {
            BasketLocation::Embedded(data) => Ok(Arc::clone(data)),
            BasketLocation::OnDisk { seek, bytes } => {
                let cache = self.file.cache();
                let key = (self.file.inner.id, *seek);
                if let Some(hit) = cache.get(key) {
                    return Ok(hit);
                }
                // The record, then the basket built from it, count against the cache bound
                // while they are in flight (the key says how big the basket will be).
                let entries = (info.end - info.first) as usize;
                cache.make_room(*bytes as usize);
                let raw = self.file.source().read("basket", *seek, *bytes as usize)?;
                let objlen = Key::parse(&mut Cursor::new(&raw, *seek, "basket key"))?.objlen;
                let table = entries.saturating_add(1).saturating_mul(4);
                cache.make_room((*bytes as usize) + (objlen as usize).saturating_add(table));
                let data = Arc::new(BasketData::from_record(&raw, *seek)?);
                drop(raw);
                self.check_entries(info, &data)?;
                cache.insert(key, Arc::clone(&data));
                Ok(data)
            }
        }
    }

    pub(crate) fn check_entries(&self, info: &BasketInfo, data: &BasketData) -> Result<()> {
        if data.entries() as u64 != info.end - info.first {
            return Err(Error::corrupt(
                "basket",
                info.compressed_bytes(),
                format!(
                    "branch {:?}: basket holds {} entries, the branch table says {}",
                    self.meta.name,
                    data.entries(),
                    info.end - info.first
                ),
            ));
        }
        Ok(())
    }

    /// An eager reader.
    #[must_use]
    pub fn reader(&self) -> BranchReader {
        BranchReader {
            branch: self.clone(),
            parallel: Parallel::Auto,
        }
    }

    /// A lazy reader.
    ///
    /// # Errors
    /// Branches this reader cannot decode.
    pub fn lazy(&self) -> Result<LazyBranchReader> {
        LazyBranchReader::new(self.clone())
    }

    /// Index range of the baskets overlapping entries `start..stop`.
    pub(crate) fn basket_span(&self, start: u64, stop: u64) -> std::ops::Range<usize> {
        let b = &self.meta.baskets;
        let lo = b.partition_point(|x| x.end <= start);
        let hi = b.partition_point(|x| x.first < stop);
        lo..hi.max(lo)
    }

    pub(crate) fn check_range(&self, start: u64, stop: u64) -> Result<()> {
        if start > stop || stop > self.meta.entries {
            return Err(Error::EntryOutOfRange {
                start,
                stop,
                entries: self.meta.entries,
            });
        }
        Ok(())
    }

    /// Reads entries `start..stop` as a typed column: `(values, offsets)` where `offsets` is
    /// `Some` for jagged and vector layouts.
    pub(crate) fn read_range<T: Element>(
        &self,
        start: u64,
        stop: u64,
        parallel: Parallel,
    ) -> Result<(Vec<T>, Option<Vec<u64>>)> {
        self.check_range(start, stop)?;
        let layout = self.layout()?;
        check_type::<T>(&self.meta.name, layout.leaf_type())?;
        let span = self.basket_span(start, stop);
        let selected = self.meta.baskets.get(span).unwrap_or_default();
        let par = parallel.decide(selected);
        // Load (and validate) the baskets first: every allocation below is then justified by
        // data actually decompressed, never by counts read from the file.
        let load = |info: &BasketInfo| -> Result<Arc<BasketData>> {
            let basket = self.load(info)?;
            self.check_entries(info, &basket)?;
            Ok(basket)
        };
        let loaded: Vec<Arc<BasketData>> = if par {
            selected.par_iter().map(load).collect::<Result<_>>()?
        } else {
            selected.iter().map(load).collect::<Result<_>>()?
        };
        if let Some(per) = layout.fixed_len() {
            let mut jobs = Vec::with_capacity(selected.len());
            let mut total = 0usize;
            for (info, basket) in selected.iter().zip(&loaded) {
                let a = (start.max(info.first) - info.first) as usize;
                let b = (stop.min(info.end) - info.first) as usize;
                // Checked before the output is allocated from the entry counts.
                flat_data(basket, &self.meta.name, per * T::SIZE)?;
                total += (b - a) * per;
                jobs.push((basket, a, b));
            }
            let mut out = vec![T::default(); total];
            let mut slices = Vec::with_capacity(jobs.len());
            let mut rest = out.as_mut_slice();
            for (basket, a, b) in jobs {
                let (head, tail) = rest
                    .split_at_mut_checked((b - a) * per)
                    .ok_or_else(|| Error::corrupt("branch", 0, "basket table inconsistent"))?;
                slices.push((basket, a, b, head));
                rest = tail;
            }
            let name = self.meta.name.as_str();
            let run = |(basket, a, b, dst): (&Arc<BasketData>, usize, usize, &mut [T])| {
                let whole = a == 0 && b == basket.entries();
                if par && whole && basket.data().len() >= PARALLEL_BASKET_BYTES {
                    decode_flat_par(basket, name, per, dst)
                } else {
                    decode_flat(basket, name, per, a, b, dst)
                }
            };
            if par {
                slices.into_par_iter().with_max_len(1).try_for_each(run)?;
            } else {
                slices.into_iter().try_for_each(run)?;
            }
            Ok((out, None))
        } else {
            // Each basket's share of the values follows from its entry offsets: split the
            // output first, then decode every basket straight into its part (in parallel when
            // it pays, a big basket split further). Each share is bounded by the basket's
            // decompressed bytes, so the allocation is justified by data, not by counts.
            let vector = matches!(layout, Layout::Vector(_));
            let name = self.meta.name.as_str();
            let mut shares = Vec::with_capacity(selected.len());
            let mut total = 0usize;
            for (info, basket) in selected.iter().zip(&loaded) {
                let a = (start.max(info.first) - info.first) as usize;
                let b = (stop.min(info.end) - info.first) as usize;
                let count = var_value_count(basket, name, T::SIZE, vector, a, b)?;
                total += count;
                shares.push((a, b, count));
            }
            let mut values = vec![T::default(); total];
            let mut offsets = vec![0u64; (stop - start) as usize + 1];
            let mut jobs = Vec::with_capacity(selected.len());
            let mut v_rest = values.as_mut_slice();
            let mut e_rest = offsets.get_mut(1..).unwrap_or_default();
            let mut base = 0u64;
            let inconsistent = || Error::corrupt("branch", 0, "basket table inconsistent");
            for (basket, (a, b, count)) in loaded.iter().zip(shares) {
                let (v, v_tail) = v_rest
                    .split_at_mut_checked(count)
                    .ok_or_else(inconsistent)?;
                let (e, e_tail) = e_rest
                    .split_at_mut_checked(b - a)
                    .ok_or_else(inconsistent)?;
                jobs.push((basket, a, b, v, e, base));
                base += count as u64;
                (v_rest, e_rest) = (v_tail, e_tail);
            }
            type Job<'a, T> = (
                &'a Arc<BasketData>,
                usize,
                usize,
                &'a mut [T],
                &'a mut [u64],
                u64,
            );
            let run = |(basket, a, b, v, e, base): Job<'_, T>| {
                let whole = a == 0 && b == basket.entries();
                if par && whole && basket.data().len() >= PARALLEL_BASKET_BYTES {
                    decode_var_par(basket, name, vector, v, e, base)
                } else {
                    decode_var_into(basket, name, vector, a, b, v, e, base)
                }
            };
            if par {
                jobs.into_par_iter().with_max_len(1).try_for_each(run)?;
            } else {
                jobs.into_iter().try_for_each(run)?;
            }
            Ok((values, Some(offsets)))
        }
    }

    /// Reads entries `start..stop` into a [`Column`] of the branch's own type.
    ///
    /// # Errors
    /// Unsupported branches, out-of-range entries, I/O and decoding errors.
    pub fn read_column(&self, start: u64, stop: u64, parallel: Parallel) -> Result<Column> {
        let layout = self.layout()?;
        macro_rules! typed {
            ($t:ty, $v:ident) => {{
                let (v, offsets) = self.read_range::<$t>(start, stop, parallel)?;
                Column {
                    layout,
                    offsets,
                    values: Values::$v(v),
                }
            }};
        }
        Ok(match layout.leaf_type() {
            LeafType::Bool => typed!(bool, Bool),
            LeafType::I8 => typed!(i8, I8),
            LeafType::U8 => typed!(u8, U8),
            LeafType::I16 => typed!(i16, I16),
            LeafType::U16 => typed!(u16, U16),
            LeafType::I32 => typed!(i32, I32),
            LeafType::U32 => typed!(u32, U32),
            LeafType::I64 => typed!(i64, I64),
            LeafType::U64 => typed!(u64, U64),
            LeafType::F32 => typed!(f32, F32),
            LeafType::F64 => typed!(f64, F64),
        })
    }
}

/// Decodes entries `a..b` of a fixed-size basket (`per` values per entry) into `dst`.
pub(crate) fn decode_flat<T: Element>(
    basket: &BasketData,
    branch: &str,
    per: usize,
    a: usize,
    b: usize,
    dst: &mut [T],
) -> Result<()> {
    let size = T::SIZE * per;
    let data = flat_data(basket, branch, size)?;
    if b > basket.entries() {
        return Err(Error::corrupt(
            "basket",
            0,
            format!("branch {branch:?}: entries {a}..{b} outside the basket"),
        ));
    }
    let src = data.get(a * size..b * size).unwrap_or_default();
    T::decode_into(src, dst);
    Ok(())
}

/// The entry bytes of a fixed-size basket, checked to hold exactly `entries` entries of
/// `entry_bytes` each.
fn flat_data<'a>(basket: &'a BasketData, branch: &str, entry_bytes: usize) -> Result<&'a [u8]> {
    let data = basket.data();
    if data.len() != basket.entries() * entry_bytes {
        return Err(Error::corrupt(
            "basket",
            0,
            format!(
                "branch {branch:?}: {} data bytes for {} entries of {entry_bytes} bytes",
                data.len(),
                basket.entries()
            ),
        ));
    }
    Ok(data)
}

/// Decoded bytes from which one basket is split into several decode tasks when the caller runs
/// on a multi-threaded pool (below it a task's fork/join costs more than the split saves).
pub const PARALLEL_BASKET_BYTES: usize = 2 << 20;

/// Entries per decode task when one basket is split.
const ENTRIES_PER_TASK: usize = 1 << 16;

/// As [`decode_flat`] for a whole basket, split into tasks on the rayon pool.
pub(crate) fn decode_flat_par<T: Element>(
    basket: &BasketData,
    branch: &str,
    per: usize,
    dst: &mut [T],
) -> Result<()> {
    let n = basket.entries();
    // Sizes checked: every task's source and destination chunks then match.
    let src = flat_data(basket, branch, T::SIZE * per)?;
    let values = dst.len().min(n * per);
    let chunk = ENTRIES_PER_TASK * per;
    src.par_chunks(chunk * T::SIZE)
        .zip(dst[..values].par_chunks_mut(chunk))
        .for_each(|(s, d)| T::decode_into(s, d));
    Ok(())
}

/// As [`decode_var_into`] for a whole basket, split into tasks on the rayon pool (each task's
/// share of `values` follows from the entry offsets alone).
pub(crate) fn decode_var_par<T: Element>(
    basket: &BasketData,
    branch: &str,
    vector: bool,
    values: &mut [T],
    ends: &mut [u64],
    base: u64,
) -> Result<()> {
    let n = basket.entries();
    let mut jobs = Vec::with_capacity(n.div_ceil(ENTRIES_PER_TASK));
    let (mut v_rest, mut e_rest) = (values, ends);
    let mut base = base;
    for a in (0..n).step_by(ENTRIES_PER_TASK) {
        let b = (a + ENTRIES_PER_TASK).min(n);
        let count = var_value_count(basket, branch, T::SIZE, vector, a, b)?;
        let too_short = || Error::corrupt("basket", 0, format!("branch {branch:?}: entry sizes"));
        let (v, v_tail) = v_rest.split_at_mut_checked(count).ok_or_else(too_short)?;
        let (e, e_tail) = e_rest.split_at_mut_checked(b - a).ok_or_else(too_short)?;
        jobs.push((a, b, v, e, base));
        base += count as u64;
        (v_rest, e_rest) = (v_tail, e_tail);
    }
    jobs.into_par_iter()
        .with_max_len(1)
        .try_for_each(|(a, b, v, e, base)| {
            decode_var_into(basket, branch, vector, a, b, v, e, base)
        })
}

/// Number of values in entries `a..b` of a variable-size basket, from its entry offsets alone
/// (`std::vector` entries carry a [`VECTOR_HEADER`] each). [`decode_var_into`] checks that the
/// entries agree.
pub(crate) fn var_value_count(
    basket: &BasketData,
    branch: &str,
    size: usize,
    vector: bool,
    a: usize,
    b: usize,
) -> Result<usize> {
    let bounds = var_bounds(basket, branch, a, b)?;
    let span = (bounds[bounds.len() - 1] - bounds[0]) as usize;
    let header = if vector { VECTOR_HEADER * (b - a) } else { 0 };
    Ok(span.saturating_sub(header) / size)
}

fn var_bounds<'a>(basket: &'a BasketData, branch: &str, a: usize, b: usize) -> Result<&'a [u32]> {
    let bad = |d: String| Error::corrupt("basket", 0, format!("branch {branch:?}: {d}"));
    basket
        .offsets()
        .ok_or_else(|| bad("variable-size entries without offsets".into()))?
        .get(a..=b)
        .ok_or_else(|| bad(format!("entries {a}..{b} outside the basket")))
}

/// Decodes entries `a..b` of a variable-size basket into `values`, which must hold exactly
/// [`var_value_count`] elements, and writes each entry's end (in values, plus `base`) to
/// `ends` (`b - a` elements).
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode_var_into<T: Element>(
    basket: &BasketData,
    branch: &str,
    vector: bool,
    a: usize,
    b: usize,
    values: &mut [T],
    ends: &mut [u64],
    base: u64,
) -> Result<()> {
    let bad = |d: String| Error::corrupt("basket", 0, format!("branch {branch:?}: {d}"));
    let bounds = var_bounds(basket, branch, a, b)?;
    let size = T::SIZE;
    let data = basket.data();
    if ends.len() != b - a {
        return Err(bad(format!(
            "{} end slots for {} entries",
            ends.len(),
            b - a
        )));
    }
    if !vector {
        // Counter-based arrays are contiguous: check the entry sizes, then decode in one go.
        let mut end = base;
        for (w, slot) in bounds.windows(2).zip(ends.iter_mut()) {
            let len = (w[1] - w[0]) as usize;
            if !len.is_multiple_of(size) {
                return Err(bad(format!(
                    "entry of {len} bytes is not a multiple of {size}"
                )));
            }
            end += (len / size) as u64;
            *slot = end;
        }
        let (first, last) = (bounds[0] as usize, bounds[bounds.len() - 1] as usize);
        let src = data.get(first..last).unwrap_or_default();
        if src.len() != values.len() * size {
            return Err(bad(format!(
                "{} bytes for {} values",
                src.len(),
                values.len()
            )));
        }
        T::decode_into(src, values);
        return Ok(());
    }
    // One pass: each entry is a 10-byte header (byte count, version, i32 size) then `size`
    // values; the declared size must account for exactly the entry's remaining bytes, so the
    // values land exactly in the slice sized from the offsets.
    // Entries are short (a few values): most are decoded with one fixed-length run
    // (`decode_short_run`), reading into the next entry and writing into the next entry's
    // slots, which that entry then overwrites; the ones that do not fit take the exact path.
    let mut pos = 0usize;
    for (w, slot) in bounds.windows(2).zip(ends.iter_mut()) {
        let (start, end) = (w[0] as usize, w[1] as usize);
        let entry = data.get(start..end).unwrap_or_default();
        let Some((head, body)) = entry.split_first_chunk::<VECTOR_HEADER>() else {
            return Err(bad(format!("vector entry of {} bytes", entry.len())));
        };
        let declared = u32::from_be_bytes([head[6], head[7], head[8], head[9]]) as usize;
        let short = body.len() <= SHORT_RUN
            && T::decode_short_run(
                data.get(start + VECTOR_HEADER..).unwrap_or_default(),
                values.get_mut(pos..).unwrap_or_default(),
            );
        let fits = body.len() == declared.wrapping_mul(size);
        match values.get_mut(pos..pos + body.len() / size) {
            Some(_) if short && fits => {}
            Some(dst) if fits => T::decode_into(body, dst),
            _ => {
                return Err(bad(format!(
                    "vector entry declares {declared} values in {} bytes",
                    body.len()
                )));
            }
        }
        pos += declared;
        *slot = base + pos as u64;
    }
    if pos != values.len() {
        return Err(bad(format!(
            "{pos} values decoded, {} expected",
            values.len()
        )));
    }
    Ok(())
}

/// Appends entries `a..b` of a variable-size basket to `values`, and their end offsets (in
/// values, continuing from the last one) to `offsets`.
pub(crate) fn decode_var<T: Element>(
    basket: &BasketData,
    branch: &str,
    vector: bool,
    a: usize,
    b: usize,
    values: &mut Vec<T>,
    offsets: &mut Vec<u64>,
) -> Result<()> {
    let count = var_value_count(basket, branch, T::SIZE, vector, a, b)?;
    let base = offsets.last().copied().unwrap_or(0);
    let (v0, o0) = (values.len(), offsets.len());
    values.resize(v0 + count, T::default());
    offsets.resize(o0 + (b - a), 0);
    decode_var_into(
        basket,
        branch,
        vector,
        a,
        b,
        &mut values[v0..],
        &mut offsets[o0..],
        base,
    )
}

/// The eager reader: a whole branch (or an entry range) into typed vectors.
#[derive(Debug, Clone)]
pub struct BranchReader {
    branch: Branch,
    parallel: Parallel,
}

impl BranchReader {
    /// Chooses when baskets are decoded on the rayon pool.
    #[must_use]
    pub fn parallel(mut self, parallel: Parallel) -> Self {
        self.parallel = parallel;
        self
    }

    /// The branch.
    #[must_use]
    pub fn branch(&self) -> &Branch {
        &self.branch
    }

    /// All values of a scalar or fixed-array branch, flattened (`entries * len` values).
    ///
    /// # Errors
    /// Type mismatch, variable-size layouts (use [`Self::read_jagged`]), I/O and decoding errors.
    pub fn read<T: Element>(&self) -> Result<Vec<T>> {
        self.read_range(0, self.branch.entries())
    }

    /// Values of entries `start..stop` of a scalar or fixed-array branch.
    ///
    /// # Errors
    /// As [`Self::read`], plus out-of-range entries.
    pub fn read_range<T: Element>(&self, start: u64, stop: u64) -> Result<Vec<T>> {
        let layout = self.branch.layout()?;
        if layout.fixed_len().is_none() {
            return Err(Error::UnsupportedBranch {
                branch: self.branch.name().to_string(),
                detail: format!("{} is variable-size: use read_jagged", layout.describe()),
            });
        }
        Ok(self.branch.read_range::<T>(start, stop, self.parallel)?.0)
    }

    /// All entries as offsets + values (any layout; fixed layouts get regular offsets).
    ///
    /// # Errors
    /// Type mismatch, I/O and decoding errors.
    pub fn read_jagged<T: Element>(&self) -> Result<Jagged<T>> {
        let entries = self.branch.entries();
        let (values, offsets) = self.branch.read_range::<T>(0, entries, self.parallel)?;
        let offsets = match offsets {
            Some(o) => o,
            None => {
                let per = self.branch.layout()?.fixed_len().unwrap_or(1) as u64;
                (0..=entries).map(|j| j * per).collect()
            }
        };
        Ok(Jagged { offsets, values })
    }

    /// All entries as a [`Column`] of the branch's own type.
    ///
    /// # Errors
    /// Unsupported branches, I/O and decoding errors.
    pub fn read_column(&self) -> Result<Column> {
        self.branch
            .read_column(0, self.branch.entries(), self.parallel)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::float_cmp)]
    use super::*;

    /// Entries of 0 to 20 values (most shorter than a short run, some longer), enough of them
    /// to be split into several parallel tasks.
    fn entries(n: usize) -> Vec<Vec<f32>> {
        (0..n)
            .map(|j| {
                (0..(j * 7 + j / 3) % 21)
                    .map(|k| (j * 31 + k) as f32 * 0.5)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn vector_entries_decode_alike_sequential_parallel_and_in_ranges() {
        let want = entries(3 * ENTRIES_PER_TASK + 17);
        let basket = BasketData::vector_f32_for_test(&want, None).unwrap();
        let flat: Vec<f32> = want.iter().flatten().copied().collect();
        let mut ends = Vec::new();
        let mut end = 0u64;
        for e in &want {
            end += e.len() as u64;
            ends.push(end);
        }

        let (mut values, mut offsets) = (Vec::<f32>::new(), vec![0u64]);
        decode_var(
            &basket,
            "jets",
            true,
            0,
            want.len(),
            &mut values,
            &mut offsets,
        )
        .unwrap();
        assert_eq!(values, flat);
        assert_eq!(offsets[1..], ends[..]);

        let mut par_values = vec![-1.0f32; flat.len()];
        let mut par_ends = vec![0u64; want.len()];
        decode_var_par(&basket, "jets", true, &mut par_values, &mut par_ends, 0).unwrap();
        assert_eq!(par_values, flat);
        assert_eq!(par_ends, ends);

        // A middle range, appended after earlier values.
        let (a, b) = (1000, 1000 + ENTRIES_PER_TASK + 5);
        let (mut values, mut offsets) = (vec![7.0f32], vec![0u64, 1]);
        decode_var(&basket, "jets", true, a, b, &mut values, &mut offsets).unwrap();
        let want_range: Vec<f32> = want[a..b].iter().flatten().copied().collect();
        assert_eq!(values[1..], want_range[..]);
        assert_eq!(*offsets.last().unwrap(), 1 + want_range.len() as u64);
    }

    #[test]
    fn a_vector_entry_that_lies_about_its_size_is_an_error() {
        let mut want = entries(2 * ENTRIES_PER_TASK);
        want[20] = vec![1.0; 3];
        let good = BasketData::vector_f32_for_test(&want, None).unwrap();
        let count = var_value_count(&good, "jets", 4, true, 0, want.len()).unwrap();
        let mut values = vec![0f32; count];
        let mut ends = vec![0u64; want.len()];
        assert!(decode_var_par(&good, "jets", true, &mut values, &mut ends, 0).is_ok());
        // Too few slots for the values the offsets imply.
        let short = &mut values[..count - 1];
        assert!(decode_var_into(&good, "jets", true, 0, want.len(), short, &mut ends, 0).is_err());
        assert!(decode_var_par(&good, "jets", true, short, &mut ends, 0).is_err());
        // An entry whose declared size disagrees with its bytes, on every path.
        let liar = BasketData::vector_f32_for_test(&want, Some(20)).unwrap();
        let err = decode_var_par(&liar, "jets", true, &mut values, &mut ends, 0).unwrap_err();
        assert!(
            err.to_string().contains("declares 2 values in 12 bytes"),
            "{err}"
        );
        let (mut v, mut o) = (Vec::new(), vec![0u64]);
        assert!(decode_var::<f32>(&liar, "jets", true, 0, 40, &mut v, &mut o).is_err());
    }

    #[test]
    fn fixed_arrays_decode_alike_sequential_and_parallel() {
        let n = 2 * ENTRIES_PER_TASK + 3;
        let want: Vec<f64> = (0..n * 4).map(|k| k as f64 * 0.25 - 7.0).collect();
        let payload: Vec<u8> = want.iter().flat_map(|v| v.to_be_bytes()).collect();
        let basket = BasketData::flat_for_test(payload, n);
        let mut seq = vec![0f64; n * 4];
        decode_flat(&basket, "arr", 4, 0, n, &mut seq).unwrap();
        let mut par = vec![0f64; n * 4];
        decode_flat_par(&basket, "arr", 4, &mut par).unwrap();
        assert_eq!(seq, want);
        assert_eq!(par, want);
        // A basket whose bytes do not match its entry count is refused on both paths.
        let short = BasketData::flat_for_test(vec![0; 31], n);
        assert!(decode_flat_par(&short, "arr", 4, &mut par).is_err());
    }
}
