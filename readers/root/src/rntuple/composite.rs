//! Reading the fields that are not a leaf, a string, a collection or a record: projected
//! cardinalities, `std::variant`s and fixed-size arrays.

use super::descriptor::{FieldDesc, Role};
use super::encoding::ColumnType;
use super::{RNTuple, Span};
use crate::column::{FieldValues, Lists, Values};
use crate::error::{Error, Result};
use crate::types::LeafType;

impl RNTuple {
    /// A projected `ROOT::RNTupleCardinality<std::uint32_t|std::uint64_t>`: the sizes of the
    /// collection whose offset column its alias column names.
    pub(super) fn read_projection(
        &self,
        id: u32,
        ty: &str,
        path: &str,
        span: &Span,
    ) -> Result<Values> {
        let wide = match ty {
            "ROOT::RNTupleCardinality<std::uint64_t>" => true,
            "ROOT::RNTupleCardinality<std::uint32_t>" => false,
            _ => return Err(self.unsupported(path, format!("projected field of type {ty}"))),
        };
        let mut aliases = self
            .header
            .schema
            .aliases
            .iter()
            .chain(&self.footer.extension.aliases)
            .filter(|(_, field)| *field == id);
        let (Some(&(physical, _)), None) = (aliases.next(), aliases.next()) else {
            return Err(Error::corrupt(
                "RNTuple header",
                0,
                format!("projected field {path:?} needs one alias column"),
            ));
        };
        let source = self
            .columns
            .get(physical as usize)
            .map(|c| c.field)
            .filter(|&f| {
                self.fields
                    .get(f as usize)
                    .is_some_and(|d| d.role == Role::Collection)
                    && self
                        .columns_of(f)
                        .iter()
                        .any(|r| r.first() == Some(&physical))
            })
            .ok_or_else(|| {
                Error::corrupt(
                    "RNTuple header",
                    0,
                    format!("{path:?} projects column {physical}, no collection's offsets"),
                )
            })?;
        let offsets = self.read_offsets(source, path, span)?;
        let sizes = offsets.windows(2).map(|w| {
            let [a, b] = [w.first(), w.get(1)].map(|x| x.copied().unwrap_or_default());
            b - a
        });
        if wide {
            Ok(Values::U64(sizes.collect()))
        } else {
            let narrow: Option<Vec<u32>> = sizes.map(|n| u32::try_from(n).ok()).collect();
            narrow.map(Values::U32).ok_or_else(|| {
                Error::corrupt("RNTuple column", 0, format!("{path:?}: a size over 2^32"))
            })
        }
    }

    /// A `std::variant<T1, ..., Tn>`: a record of its alternatives `_0` .. `_{n-1}`, each a
    /// list of one item for the entries holding it and of none otherwise. The `Switch` column
    /// gives per entry the alternative (1 to n; 0: no value) and the item's index in that
    /// alternative's column (counted from the cluster's first item of it), which must be its
    /// next item: the items are taken in order.
    pub(super) fn read_variant(
        &self,
        id: u32,
        kids: &[u32],
        path: &str,
        span: &Span,
        depth: usize,
    ) -> Result<Values> {
        let n = kids.len();
        let mut offsets: Vec<Vec<u64>> = vec![vec![0]; n];
        let mut counts = vec![0u64; n];
        let mut base = vec![0u64; n];
        let mut current = None;
        self.for_each_page(id, 0, path, span, |ci, col, page, elements| {
            if col.kind != Some(ColumnType::Switch) || Some(page.len()) != elements.checked_mul(12) {
                return Err(self.unsupported(
                    path,
                    format!("variant dispatch in a {} column", col.type_name()),
                ));
            }
            if current != Some(ci) {
                current = Some(ci);
                base.clone_from(&counts);
            }
            for element in page.chunks_exact(12) {
                let mut index = [0u8; 8];
                index.copy_from_slice(element.get(..8).unwrap_or(&[0; 8]));
                let mut tag = [0u8; 4];
                tag.copy_from_slice(element.get(8..12).unwrap_or(&[0; 4]));
                let (index, tag) = (u64::from_le_bytes(index), u32::from_le_bytes(tag) as usize);
                for (k, list) in offsets.iter_mut().enumerate() {
                    let mut end = list.last().copied().unwrap_or_default();
                    if tag == k + 1 {
                        let (Some(count), Some(first)) = (counts.get_mut(k), base.get(k)) else {
                            continue;
                        };
                        if index != *count - first {
                            return Err(Error::corrupt(
                                "RNTuple page",
                                0,
                                format!(
                                    "variant {path:?}: item {index} of alternative {tag} out of order"
                                ),
                            ));
                        }
                        *count += 1;
                        end += 1;
                    }
                    list.push(end);
                }
                if tag > n {
                    return Err(Error::corrupt(
                        "RNTuple page",
                        0,
                        format!("variant {path:?} of {n} alternatives holds alternative {tag}"),
                    ));
                }
            }
            Ok(())
        })?;
        let mut members = Vec::with_capacity(n);
        for ((&k, offsets), count) in kids.iter().zip(offsets).zip(counts) {
            let name = self.field_name(k).to_owned();
            let items = self.read_id(k, &format!("{path}.{name}"), span, depth + 1)?;
            if items.len() as u64 != count {
                return Err(Error::corrupt(
                    "RNTuple column",
                    0,
                    format!(
                        "variant {path:?}: alternative {name} has {} items, its entries {count}",
                        items.len()
                    ),
                ));
            }
            members.push(FieldValues {
                name,
                len: 1,
                values: Values::Lists(Box::new(Lists { offsets, items })),
            });
        }
        Ok(Values::Record(members))
    }

    /// A fixed-size array (`std::array<T, N>`, `T[N]`: a subfield `_0` holding N items per
    /// item) or a `std::bitset<N>` (N bits of its own): lists of N items.
    pub(super) fn read_array(
        &self,
        f: &FieldDesc,
        id: u32,
        kids: &[u32],
        path: &str,
        span: &Span,
        depth: usize,
    ) -> Result<Values> {
        let ty = &f.type_name;
        let n = f.array_size.unwrap_or_default();
        if n == 0 {
            return Err(self.unsupported(path, format!("fixed-size array type {ty} of size 0")));
        }
        let items = match kids {
            [] if ty.starts_with("std::bitset<") => {
                self.read_leaf(id, path, span, LeafType::Bool)?
            }
            [child] if self.columns_of(id).is_empty() => self.read_id(
                *child,
                &format!("{path}.{}", self.field_name(*child)),
                span,
                depth + 1,
            )?,
            _ => return Err(self.unsupported(path, format!("fixed-size array type {ty}"))),
        };
        let len = items.len() as u64;
        if !len.is_multiple_of(n) {
            return Err(Error::corrupt(
                "RNTuple column",
                0,
                format!("array field {path:?} has {len} items, not a multiple of {n}"),
            ));
        }
        let offsets = (0..=len / n).map(|k| k * n).collect();
        Ok(Values::Lists(Box::new(Lists { offsets, items })))
    }
}
