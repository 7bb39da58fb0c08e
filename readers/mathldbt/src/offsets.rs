//! Offsets of variable-length values, checked and walked the same way by the owned model, the
//! borrowed views and the codec. They sit below all of them, so none imports another for them.

use crate::error::BatchError;

/// Checks an offsets array against a data length. `exact` requires
/// `offsets[0] == 0` and `offsets[last] == data_len`; otherwise only
/// `offsets[last] <= data_len` (views may address a sub-range).
pub(crate) fn check_offsets(
    offsets: &[u32],
    data_len: usize,
    exact: bool,
    is_boundary: impl Fn(usize) -> bool,
) -> Result<(), BatchError> {
    let Some((&first, _)) = offsets.split_first() else {
        return Err(BatchError::InvalidOffsets {
            index: 0,
            reason: "offsets must hold at least one entry",
        });
    };
    if exact && first != 0 {
        return Err(BatchError::InvalidOffsets {
            index: 0,
            reason: "first offset must be 0",
        });
    }
    let mut prev = first;
    for (index, &o) in offsets.iter().enumerate() {
        if o < prev {
            return Err(BatchError::InvalidOffsets {
                index,
                reason: "offsets must be non-decreasing",
            });
        }
        if o as usize > data_len {
            return Err(BatchError::InvalidOffsets {
                index,
                reason: "offset past the end of the data",
            });
        }
        if !is_boundary(o as usize) {
            return Err(BatchError::InvalidOffsets {
                index,
                reason: "offset is not on a UTF-8 character boundary",
            });
        }
        prev = o;
    }
    if exact && prev as usize != data_len {
        return Err(BatchError::InvalidOffsets {
            index: offsets.len() - 1,
            reason: "last offset must equal the data length",
        });
    }
    Ok(())
}

/// Iterates `(start, end)` pairs of consecutive offsets.
pub(crate) fn offset_pairs(offsets: &[u32]) -> impl Iterator<Item = (usize, usize)> + '_ {
    offsets
        .iter()
        .zip(offsets.iter().skip(1))
        .map(|(&a, &b)| (a as usize, b as usize))
}
