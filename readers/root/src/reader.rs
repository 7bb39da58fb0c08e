//! Branch handles and the eager [`BranchReader`]: which baskets a read needs, loaded through
//! the cache, handed to the decoders of [`crate::decode`].
//!
//! Numeric layouts go straight from the decompressed basket bytes into the typed output:
//! fixed-size layouts are written into one preallocated `Vec<T>`, each basket into its own
//! disjoint slice (so baskets can be decoded in parallel without a copy). Variable-size
//! layouts (counter-based jagged arrays and `std::vector<T>`) produce `offsets` (`entries + 1`
//! values, starting at 0) and one contiguous `values` vector. Leaf lists and object branches
//! are decoded basket by basket (in parallel when it pays) and joined.

use std::sync::Arc;

use rayon::prelude::*;

use crate::basket::{BasketBuffers, BasketData};
use crate::column::{Column, Jagged, Values};
use crate::cursor::Cursor;
use crate::decode::numeric::{
    decode_flat, decode_flat_par, decode_var_into, decode_var_par, flat_data, var_value_count,
};
use crate::decode::{PARALLEL_BASKET_BYTES, leaflist, object};
use crate::error::{Error, Result};
use crate::file::{Key, RootFile};
use crate::layout::Layout;
use crate::tree::{BasketInfo, BasketLocation, BranchMeta, Tree};
use crate::types::{Element, LeafType, check_type};

/// Compressed bytes from which [`Parallel::Auto`] decodes baskets on the rayon pool.
///
/// Below this the pool's fork/join overhead costs more than it saves. `parallel_by_size` (zstd
/// `pt`, cold, 2 cores; BENCHMARKS.md, 2026-12-06): 73 KB of baskets read 0.70x as fast in
/// parallel, 182 KB 1.14x, 364 KB 1.91x, 727 KB 1.61x; so the pool is taken from 256 KiB (it was
/// 1 MiB, which left 1.6x to 1.9x on the table between the two).
pub const PARALLEL_THRESHOLD: u64 = 256 << 10;

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

/// The baskets a read needs, loaded, and whether to decode them in parallel.
type LoadedSpan<'a> = (&'a [BasketInfo], Vec<Arc<BasketData>>, bool);

impl Tree {
    /// Looks up a branch (top-level or nested) by its column name, its full path
    /// (`parent/child/leaf`) or its own name when no other branch has it
    /// ([`Tree::find_branch`]).
    ///
    /// # Errors
    /// [`Error::NoSuchBranch`], [`Error::AmbiguousBranch`].
    pub fn branch(&self, name: &str) -> Result<Branch> {
        let named = self.find_branch(name)?;
        Ok(Branch::new(self.file().clone(), Arc::clone(&named.meta)))
    }
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
                let layout = self.meta.layout.as_ref().ok();
                let data = BasketData::from_record_staged(
                    &raw,
                    *seek,
                    BasketBuffers::default(),
                    false,
                    layout,
                    || {},
                )?;
                let data = Arc::new(data);
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

    /// The baskets overlapping entries `start..stop`, loaded (in parallel when `parallel`
    /// says so) and checked to hold the entries the branch table says; and whether to decode
    /// in parallel. Every allocation of a decoder is then justified by data actually
    /// decompressed, never by counts read from the file.
    fn load_span(&self, start: u64, stop: u64, parallel: Parallel) -> Result<LoadedSpan<'_>> {
        self.check_range(start, stop)?;
        let span = self.basket_span(start, stop);
        let selected = self.meta.baskets.get(span).unwrap_or_default();
        let par = parallel.decide(selected);
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
        Ok((selected, loaded, par))
    }

    /// Reads entries `start..stop` as a typed column: `(values, offsets)` where `offsets` is
    /// `Some` for jagged, vector and list-valued object layouts.
    pub(crate) fn read_range<T: Element>(
        &self,
        start: u64,
        stop: u64,
        parallel: Parallel,
    ) -> Result<(Vec<T>, Option<Vec<u64>>)> {
        let layout = self.layout()?;
        if let Layout::Object(_) | Layout::LeafList(_) = layout {
            // Packed reals and members of collections of them are numbers too.
            let column = self.read_column(start, stop, parallel)?;
            let actual = column.values.leaf_type();
            return match column.values.into_vec::<T>() {
                Some(values) => Ok((values, column.offsets)),
                None => Err(Error::TypeMismatch {
                    branch: self.meta.name.clone(),
                    actual: actual.map_or("objects", LeafType::name),
                    requested: T::TYPE.name(),
                }),
            };
        }
        check_type::<T>(&self.meta.name, layout.leaf_type())?;
        let (selected, loaded, par) = self.load_span(start, stop, parallel)?;
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
        let t = match &layout {
            Layout::Object(shape) => {
                let shape = shape.clone();
                return self.read_by_basket(start, stop, parallel, layout, |basket, a, b| {
                    let mut out = object::empty(&shape);
                    object::decode_entries(basket, &self.meta.name, &shape, a, b, &mut out)?;
                    Ok(out)
                });
            }
            Layout::LeafList(fields) => {
                let fields = fields.clone();
                return self.read_by_basket(start, stop, parallel, layout, |basket, a, b| {
                    let mut out = leaflist::empty(&fields);
                    leaflist::decode_entries(basket, &self.meta.name, &fields, a, b, &mut out)?;
                    Ok(out)
                });
            }
            Layout::Scalar(t) | Layout::Fixed(t, _) | Layout::Jagged(t) | Layout::Vector(t) => *t,
        };
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
        Ok(match t {
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

    /// Decodes each basket's share of entries `start..stop` with `decode` (on the rayon pool
    /// when it pays) and joins the parts in entry order. An entry whose item is a list (a
    /// vector, a member of a split collection) gets its offsets in [`Column::offsets`].
    fn read_by_basket(
        &self,
        start: u64,
        stop: u64,
        parallel: Parallel,
        layout: Layout,
        decode: impl Fn(&BasketData, usize, usize) -> Result<Values> + Sync,
    ) -> Result<Column> {
        let (selected, loaded, par) = self.load_span(start, stop, parallel)?;
        let part = |(info, basket): (&BasketInfo, &Arc<BasketData>)| {
            let a = (start.max(info.first) - info.first) as usize;
            let b = (stop.min(info.end) - info.first) as usize;
            decode(basket, a, b)
        };
        let parts: Vec<Values> = if par {
            selected
                .par_iter()
                .zip(&loaded)
                .map(part)
                .collect::<Result<_>>()?
        } else {
            selected
                .iter()
                .zip(&loaded)
                .map(part)
                .collect::<Result<_>>()?
        };
        let mut values = match &layout {
            Layout::Object(shape) => object::empty(shape),
            Layout::LeafList(fields) => leaflist::empty(fields),
            _ => return Err(Error::corrupt("branch", 0, "numeric layout read by basket")),
        };
        for p in parts {
            values.append(p)?;
        }
        let (offsets, values) = match values {
            Values::Lists(lists) => (Some(lists.offsets), lists.items),
            other => (None, other),
        };
        Ok(Column {
            layout,
            offsets,
            values,
        })
    }
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
