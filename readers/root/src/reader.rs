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
use crate::error::{Error, Result};
use crate::file::RootFile;
use crate::lazy::LazyBranchReader;
use crate::tree::{BasketInfo, BasketLocation, BranchMeta, Layout};
use crate::types::{Element, LeafType, check_type};

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
                if let Some(hit) = cache.get(*seek) {
                    return Ok(hit);
                }
                let raw = self.file.source().read("basket", *seek, *bytes as usize)?;
                let data = Arc::new(BasketData::from_record(&raw, *seek)?);
                self.check_entries(info, &data)?;
                cache.insert(*seek, Arc::clone(&data));
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
                let need = basket.entries() * per * T::TYPE.size();
                if basket.data().len() != need {
                    return Err(Error::corrupt(
                        "basket",
                        info.first,
                        format!(
                            "branch {:?}: {} data bytes for {} entries of {} values",
                            self.meta.name,
                            basket.data().len(),
                            basket.entries(),
                            per
                        ),
                    ));
                }
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
                decode_flat(basket, name, per, a, b, dst)
            };
            if par {
                slices.into_par_iter().try_for_each(run)?;
            } else {
                slices.into_iter().try_for_each(run)?;
            }
            Ok((out, None))
        } else {
            let vector = matches!(layout, Layout::Vector(_));
            // Reserve once, from the loaded baskets (an upper bound for partial ranges): no
            // reallocation and copy while decoding.
            let header = if vector { VECTOR_HEADER } else { 0 };
            let cap: usize = loaded
                .iter()
                .map(|b| b.data().len().saturating_sub(header * b.entries()) / T::TYPE.size())
                .sum();
            let mut values = Vec::with_capacity(cap);
            let mut offsets = Vec::with_capacity((stop - start) as usize + 1);
            offsets.push(0u64);
            for (info, basket) in selected.iter().zip(&loaded) {
                let a = (start.max(info.first) - info.first) as usize;
                let b = (stop.min(info.end) - info.first) as usize;
                decode_var(
                    basket,
                    &self.meta.name,
                    vector,
                    a,
                    b,
                    &mut values,
                    &mut offsets,
                )?;
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
    let size = T::TYPE.size() * per;
    let data = basket.data();
    if data.len() != basket.entries() * size || b > basket.entries() {
        return Err(Error::corrupt(
            "basket",
            0,
            format!(
                "branch {branch:?}: {} data bytes for {} entries of {size} bytes",
                data.len(),
                basket.entries()
            ),
        ));
    }
    let src = data.get(a * size..b * size).unwrap_or_default();
    T::decode_into(src, dst);
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
    let bad = |d: String| Error::corrupt("basket", 0, format!("branch {branch:?}: {d}"));
    let offs = basket
        .offsets()
        .ok_or_else(|| bad("variable-size entries without offsets".into()))?;
    let size = T::TYPE.size();
    let data = basket.data();
    let bounds = offs
        .get(a..=b)
        .ok_or_else(|| bad(format!("entries {a}..{b} outside the basket")))?;
    let header = if vector { VECTOR_HEADER } else { 0 };
    let mut base = offsets.last().copied().unwrap_or(0);
    if !vector {
        // Counter-based arrays are contiguous: check the entry sizes, then decode in one go.
        for w in bounds.windows(2) {
            let len = (w[1] - w[0]) as usize;
            if !len.is_multiple_of(size) {
                return Err(bad(format!(
                    "entry of {len} bytes is not a multiple of {size}"
                )));
            }
            base += (len / size) as u64;
            offsets.push(base);
        }
        let (first, last) = (bounds[0] as usize, bounds[bounds.len() - 1] as usize);
        T::extend_from_be(data.get(first..last).unwrap_or_default(), values);
        return Ok(());
    }
    // One pass: each entry is a 10-byte header (byte count, version, i32 size) then `size`
    // values; the declared size must account for exactly the entry's remaining bytes.
    let span = (bounds[bounds.len() - 1] - bounds[0]) as usize;
    values.reserve(span.saturating_sub(header * (bounds.len() - 1)) / size);
    offsets.reserve(bounds.len() - 1);
    for w in bounds.windows(2) {
        let entry = data.get(w[0] as usize..w[1] as usize).unwrap_or_default();
        let Some((head, body)) = entry.split_first_chunk::<VECTOR_HEADER>() else {
            return Err(bad(format!("vector entry of {} bytes", entry.len())));
        };
        let declared = u32::from_be_bytes([head[6], head[7], head[8], head[9]]) as usize;
        if body.len() != declared.wrapping_mul(size) {
            return Err(bad(format!(
                "vector entry declares {declared} values in {} bytes",
                body.len()
            )));
        }
        T::extend_from_be(body, values);
        base += declared as u64;
        offsets.push(base);
    }
    Ok(())
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
