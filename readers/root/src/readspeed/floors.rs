//! The floors' hand-outs: what [`super::Mode::ReadCopy`], [`super::Mode::ReadFind`] and
//! [`super::Mode::ReadTouch`] do with a basket in place of decoding it.

use super::steps::{Decompressed, ENTRIES_PER_STEP, steps};
use crate::basket::{BasketData, sum_first_bytes};
use crate::decode::text_start;
use crate::layout::{Layout, Shape};

/// [`super::Mode::ReadCopy`]'s hand-out: the entries' bytes a step at a time into `bytes`, and where
/// entries vary in size each entry's end into `ends` (both reused, as the full read's buffers).
/// In a `vector<string>` or `vector<vector<T>>` entry, where each item's length or count says
/// where the next item starts, each item's end too: a reader finds them one after the other,
/// whatever it does with them.
pub(super) fn copy_entries(
    basket: &BasketData,
    layout: &Layout,
    bytes: &mut Vec<u8>,
    ends: &mut Vec<u64>,
) {
    let (data, n) = (basket.data(), basket.entries());
    let items = item_kind(layout);
    match basket.offsets() {
        Some(bounds) => {
            for (a, b) in steps(0, n) {
                let Some(step) = bounds.get(a..=b) else {
                    return;
                };
                let (s, e) = (step[0], step[step.len() - 1]);
                bytes.clear();
                bytes.extend_from_slice(data.get(s as usize..e as usize).unwrap_or_default());
                ends.clear();
                match items {
                    None => ends.extend(step[1..].iter().map(|&x| u64::from(x.wrapping_sub(s)))),
                    Some(value_size) => {
                        for pair in step.windows(2) {
                            let entry = data.get(pair[0] as usize..pair[1] as usize);
                            item_ends(entry.unwrap_or_default(), value_size, |end| {
                                ends.push(end as u64);
                            });
                        }
                    }
                }
            }
        }
        None => {
            let per_step = (data.len() / n.max(1)).max(1) * ENTRIES_PER_STEP;
            for step in data.chunks(per_step) {
                bytes.clear();
                bytes.extend_from_slice(step);
            }
        }
    }
}

/// [`super::Mode::ReadTouch`]'s passes over a decompressed basket: one byte of every 64-byte
/// line of its entries, and every start of its entry-offset table (after the entries and the
/// table's 4-byte count) converted from big-endian and less the key length; all summed (so
/// that the work is not optimised away). Nothing stored or checked. A basket without a table,
/// or whose table is cut short, has only its entries touched.
///
/// Where each entry is one string behind its length byte (`texts`: `char*`, and `std::string`
/// or `TString` written without object headers), a reader cannot find an entry's characters
/// without that byte (one byte, or 255 and four more): each entry's first byte is loaded in the
/// table's pass instead of a byte a line, the fastest way found (the full read's check, eight
/// at a time), so that what the full read takes over this floor is comparing and storing.
pub(super) fn touch_entries(payload: &[u8], basket: &Decompressed, texts: bool) -> u64 {
    let border = usize::try_from(basket.entry_bytes).unwrap_or(usize::MAX);
    let entries = payload.get(..border).unwrap_or(payload);
    let table = payload
        .get(border.saturating_add(4)..)
        .and_then(|t| t.get(..basket.entries.saturating_mul(4)))
        .unwrap_or_default()
        .as_chunks::<4>()
        .0;
    let lines = || {
        entries
            .iter()
            .step_by(64)
            .fold(0u64, |sum, &b| sum.wrapping_add(u64::from(b)))
    };
    if texts && !table.is_empty() {
        return u64::from(sum_first_bytes(table, basket.keylen, payload));
    }
    let starts = table.iter().fold(0u32, |sum, start| {
        sum.wrapping_add(u32::from_be_bytes(*start).wrapping_sub(basket.keylen))
    });
    lines().wrapping_add(u64::from(starts))
}

/// Where entries are lists of strings (`Some(None)`) or of lists of numbers (`Some(Some(size))`
/// of a number): `vector<string>` and `vector<vector<T>>` as ROOT streams them.
fn item_kind(layout: &Layout) -> Option<Option<usize>> {
    let Layout::Object(Shape::Headed(list)) = layout else {
        return None;
    };
    let Shape::List(item) = &**list else {
        return None;
    };
    match &**item {
        Shape::Text => Some(None),
        Shape::List(num) => match **num {
            Shape::Num(t) => Some(Some(t.size())),
            _ => None,
        },
        _ => None,
    }
}

/// [`super::Mode::ReadFind`]'s pass over a basket: where each string starts, found plainly, summed
/// (so that the work is not optimised away); for lists of strings or of lists, each item's end.
/// Nothing else.
pub(super) fn find_entries(basket: &BasketData, layout: &Layout) -> usize {
    let (data, Some(bounds)) = (basket.data(), basket.offsets()) else {
        return 0;
    };
    let mut found = 0usize;
    match (layout, item_kind(layout)) {
        (_, Some(value_size)) => {
            for pair in bounds.windows(2) {
                let entry = data.get(pair[0] as usize..pair[1] as usize);
                item_ends(entry.unwrap_or_default(), value_size, |end| {
                    found = found.wrapping_add(end);
                });
            }
        }
        (Layout::Object(shape), None) if shape.is_string() => {
            let headed = *shape != Shape::Text;
            for pair in bounds.windows(2) {
                let (s, e) = (pair[0] as usize, pair[1] as usize);
                if s == e {
                    continue;
                }
                found = found.wrapping_add(text_start(data, s, headed).unwrap_or(0));
            }
        }
        _ => {}
    }
    found
}

/// The end of each item of a streamed `vector<string>` (`value_size` `None`) or
/// `vector<vector<T>>` (the size of `T`) entry, after its 10-byte header and count, to `on_end`;
/// stops at the first item that does not fit. No checks beyond staying inside the entry: this is
/// a floor, not a decoder.
fn item_ends(entry: &[u8], value_size: Option<usize>, mut on_end: impl FnMut(usize)) {
    let count = entry
        .get(6..10)
        .map_or(0, |c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize);
    let mut p = 10;
    for _ in 0..count {
        let step = match value_size {
            // A length byte of 255: the length is in the 4 bytes after it.
            None => match entry.get(p) {
                Some(255) => entry
                    .get(p + 1..p + 5)
                    .map(|c| 5 + u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize),
                len => len.map(|&len| 1 + usize::from(len)),
            },
            Some(size) => entry
                .get(p..p + 4)
                .map(|c| 4 + size * u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize),
        };
        match step {
            Some(step) if p + step <= entry.len() => p += step,
            _ => return,
        }
        on_end(p);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::{find_entries, item_ends, touch_entries};
    use crate::basket::BasketData;
    use crate::decode::framing::{headed_for_test, streamed_string};
    use crate::layout::{Layout, Shape};
    use crate::readspeed::steps::Decompressed;

    /// A streamed `vector<…>` entry: a 6-byte header, the count, then the items as given.
    fn entry(count: u32, items: &[u8]) -> Vec<u8> {
        let mut e = vec![0x40, 0, 0, 0, 0, 9];
        e.extend(count.to_be_bytes());
        e.extend(items);
        e
    }

    #[test]
    fn item_ends_follow_string_lengths_and_list_counts() {
        // Strings of 0, 3 and 300 bytes (the last with the 4-byte length form).
        let mut strings = vec![0, 3, b'a', b'b', b'c', 255];
        strings.extend(300u32.to_be_bytes());
        strings.extend([b'x'; 300]);
        let mut ends = Vec::new();
        item_ends(&entry(3, &strings), None, |e| ends.push(e));
        assert_eq!(ends, [11, 15, 320]);
        // Lists of 2 and 0 floats.
        let mut lists = 2u32.to_be_bytes().to_vec();
        lists.extend([0; 8]);
        lists.extend(0u32.to_be_bytes());
        ends.clear();
        item_ends(&entry(2, &lists), Some(4), |e| ends.push(e));
        assert_eq!(ends, [22, 26]);
    }

    #[test]
    fn item_ends_stop_inside_the_entry() {
        let mut ends = Vec::new();
        // A count of 2^32 - 1 strings in 2 bytes, a string longer than the entry, no header.
        item_ends(&entry(u32::MAX, &[0, 0]), None, |e| ends.push(e));
        assert_eq!(ends, [11, 12]);
        ends.clear();
        item_ends(&entry(1, &[9, b'a']), None, |e| ends.push(e));
        item_ends(&entry(1, &[255, 255, 255, 255, 255]), None, |e| {
            ends.push(e)
        });
        item_ends(&entry(1, &u32::MAX.to_be_bytes()), Some(8), |e| {
            ends.push(e)
        });
        item_ends(&[1, 2, 3], Some(8), |e| ends.push(e));
        assert!(ends.is_empty());
    }

    #[test]
    fn touch_entries_adds_a_byte_a_line_or_of_each_string_and_the_table_and_stops_where_it_is_cut()
    {
        // Entries at key-relative 100, 103, 110 (keylen 100): payload offsets 0, 3, 10; one
        // line of entries, its first byte 7.
        let mut payload = vec![7u8; 12];
        payload.extend(4i32.to_be_bytes());
        for start in [100u32, 103, 110] {
            payload.extend(start.to_be_bytes());
        }
        let basket = |entries| Decompressed {
            entry_bytes: 12,
            keylen: 100,
            entries,
        };
        assert_eq!(touch_entries(&payload, &basket(3), false), 7 + 13);
        // Strings: each entry's first byte in place of a byte a line.
        assert_eq!(touch_entries(&payload, &basket(3), true), 3 * 7 + 13);
        // A table shorter than its entries, or none: the entries alone.
        for texts in [false, true] {
            assert_eq!(touch_entries(&payload, &basket(4), texts), 7);
            assert_eq!(touch_entries(&payload[..12], &basket(3), texts), 7);
            assert_eq!(touch_entries(&payload, &basket(usize::MAX), texts), 7);
        }
        // Entries over two lines and more: one byte of each.
        let mut long = vec![1u8; 130];
        long.extend(0i32.to_be_bytes());
        let basket = Decompressed {
            entry_bytes: 130,
            keylen: 0,
            entries: 0,
        };
        assert_eq!(touch_entries(&long, &basket, false), 3);
    }

    #[test]
    fn find_entries_finds_where_each_string_starts() {
        // char*: an empty entry (nothing written), 3 bytes, 300 bytes in the 4-byte form.
        let (short, long) = (streamed_string(3), streamed_string(300));
        let basket = BasketData::entries_for_test(&[&[], &short, &long]);
        let found = find_entries(&basket, &Layout::Object(Shape::Text));
        assert_eq!(found, 1 + (short.len() + 5));
        // std::string: behind a header, and behind a version-0 header's checksum.
        let (a, b) = (
            headed_for_test(&short, [0, 1]),
            headed_for_test(&short, [0, 0]),
        );
        let basket = BasketData::entries_for_test(&[&a, &b]);
        let headed = Layout::Object(Shape::Headed(Box::new(Shape::Text)));
        assert_eq!(find_entries(&basket, &headed), 7 + (a.len() + 11));
        // vector<string>: each item's end.
        let list = entry(2, &[1, b'x', 0]);
        let basket = BasketData::entries_for_test(&[&list, &list]);
        let lists = Layout::Object(Shape::Headed(Box::new(Shape::List(Box::new(Shape::Text)))));
        assert_eq!(find_entries(&basket, &lists), 2 * (12 + 13));
    }
}
