//! The `vector<string>` entries of a basket where they lie: each entry checked once by the same
//! rules as [`super::object`]'s walk, then its strings handed out as slices of the decompressed
//! basket, found one after the other as they are read. Nothing is copied (see [`super::text`]).

use super::framing::{
    EntryError, body, count, entry, entry_error, split_headed, split_string, string,
};
use super::jump::{Vbmi, plain_string_lists};
use super::text::lent;
use crate::basket::BasketData;
use crate::error::Result;
use crate::layout::{Layout, Shape};

/// The checked `vector<string>` entries of one basket, borrowed from it.
///
/// ```no_run
/// # fn main() -> Result<(), root_reader::Error> {
/// let file = root_reader::RootFile::open("events.root")?;
/// let branch = file.tree("Events")?.branch("Jet_tags")?;
/// let layout = branch.layout()?;
/// let mut tags = 0;
/// branch.lazy()?.for_each_basket(0, branch.entries(), |_, basket| {
///     let lists = root_reader::TextListView::new(basket, branch.name(), &layout)?;
///     tags += lists.iter().map(|list| list.filter(|t| t.starts_with(b"b")).count()).sum::<usize>();
///     Ok(())
/// })?;
/// # let _ = tags;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct TextListView<'a> {
    data: &'a [u8],
    /// `len + 1` entry offsets into `data`.
    bounds: &'a [u32],
}

impl<'a> TextListView<'a> {
    /// Checks every entry of `basket`, a basket of the `vector<string>` branch `branch` laid out
    /// as `layout`: an object header, a count, that many strings and nothing else, as
    /// [`crate::BranchReader::read_column`] reads them.
    ///
    /// # Errors
    /// A layout other than one `vector<string>` per entry; an entry that is not one (which entry
    /// and what is wrong, as the column read says it).
    pub fn new(basket: &'a BasketData, branch: &str, layout: &Layout) -> Result<Self> {
        let (_, bounds) = lent(
            basket,
            branch,
            layout,
            Shape::is_string_list,
            "vector<string>",
        )?;
        let data = basket.data();
        let vbmi = Vbmi::detect();
        let mut j = 0;
        while j + 1 < bounds.len() {
            // The common case in bulk; anything else by the general rules, which say what is
            // wrong (a long string is not wrong, only less common).
            j += match vbmi {
                Some(v) => v.plain_string_lists(data, &bounds[j..]),
                None => plain_string_lists(data, &bounds[j..]),
            };
            if j + 1 < bounds.len() {
                check_entry(basket, j).map_err(|(j, d)| entry_error(branch, j, d))?;
                j += 1;
            }
        }
        Ok(Self { data, bounds })
    }

    /// Number of lists (entries).
    #[must_use]
    pub fn len(&self) -> usize {
        self.bounds.len().saturating_sub(1)
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The strings of entry `i`, in order.
    #[must_use]
    pub fn get(&self, i: usize) -> Option<TextList<'a>> {
        let (s, e) = (
            *self.bounds.get(i)? as usize,
            *self.bounds.get(i + 1)? as usize,
        );
        // Checked in `new`: the header, the count and every string agree with the entry.
        let (body, _) = split_headed(self.data.get(s..e)?).ok()?;
        let (count, rest) = body.split_first_chunk::<4>()?;
        Some(TextList {
            rest,
            left: u32::from_be_bytes(*count) as usize,
        })
    }

    /// The lists in entry order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = TextList<'a>> + '_ {
        (0..self.len()).map(|i| self.get(i).unwrap_or_default())
    }
}

/// The strings of one `vector<string>` entry of a [`TextListView`], each found where the one
/// before it ends.
#[derive(Debug, Clone, Default)]
pub struct TextList<'a> {
    rest: &'a [u8],
    left: usize,
}

impl<'a> Iterator for TextList<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.left == 0 {
            return None;
        }
        let (text, rest) = split_string(self.rest).ok()?;
        self.rest = rest;
        self.left -= 1;
        Some(text)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for TextList<'_> {}

/// Entry `j` holds one `vector<string>` and nothing else, by the rules the column read's own
/// fallback applies.
fn check_entry(basket: &BasketData, j: usize) -> std::result::Result<(), EntryError> {
    let (n, mut rest) = count(j, body(j, entry(basket, j)?)?, 1)?;
    for _ in 0..n {
        rest = string(j, rest)?.1;
    }
    match rest {
        [] => Ok(()),
        _ => Err((j, format!("{} bytes left after the strings", rest.len()))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]
mod tests {
    use super::*;
    use crate::column::Values;
    use crate::decode::framing::{headed_for_test as headed, streamed_string};
    use crate::decode::object::{decode_entries, empty};
    use crate::decode::roots_baskets::on_roots_baskets_whole_and_flipped;
    use crate::layout::Shape;

    fn shape() -> Shape {
        Shape::headed(Shape::list(Shape::Text))
    }

    /// What the column read returns for the basket: its lists, or that it failed.
    fn column_read(basket: &BasketData) -> Option<Vec<Vec<Vec<u8>>>> {
        let shape = shape();
        let mut out = empty(&shape);
        decode_entries(basket, "b", &shape, 0, basket.entries(), &mut out).ok()?;
        let Values::Lists(lists) = out else {
            panic!("read as {out:?}");
        };
        let Values::Text(strings) = &lists.items else {
            panic!("items read as {:?}", lists.items);
        };
        let ends = &lists.offsets;
        Some(
            ends.windows(2)
                .map(|w| (w[0]..w[1]).map(|k| strings.get(k as usize).unwrap().to_vec()))
                .map(Iterator::collect)
                .collect(),
        )
    }

    fn view(basket: &BasketData) -> Option<Vec<Vec<Vec<u8>>>> {
        let lists = TextListView::new(basket, "b", &Layout::Object(shape())).ok()?;
        assert_eq!(lists.iter().len(), basket.entries());
        Some(
            lists
                .iter()
                .map(|list| {
                    let n = list.len();
                    let strings: Vec<Vec<u8>> = list.map(<[u8]>::to_vec).collect();
                    assert_eq!(strings.len(), n);
                    strings
                })
                .collect(),
        )
    }

    fn entry(lengths: &[usize], version: [u8; 2]) -> Vec<u8> {
        let mut body = (lengths.len() as u32).to_be_bytes().to_vec();
        lengths
            .iter()
            .for_each(|&n| body.extend(streamed_string(n)));
        headed(&body, version)
    }

    /// Lists of every length form (empty lists, empty strings, 254 and 255 bytes, the 4-byte
    /// form), version-0 headers: the column read's lists; every cut of every entry and absurd
    /// counts: refused by both.
    #[test]
    fn equals_the_column_read_at_every_length_and_header() {
        let entries = [
            entry(&[], [0, 9]),
            entry(&[0], [0, 9]),
            entry(&[3, 0, 5], [0, 9]),
            entry(&[254, 1], [0, 9]),
            entry(&[255, 300, 2], [0, 9]),
            entry(&[4, 6], [0, 0]),
        ];
        let refs: Vec<&[u8]> = entries.iter().map(Vec::as_slice).collect();
        let basket = BasketData::entries_for_test(&refs);
        let lists = view(&basket).expect("good entries");
        assert_eq!(Some(lists.clone()), column_read(&basket));
        let sizes: Vec<Vec<usize>> = lists
            .iter()
            .map(|l| l.iter().map(Vec::len).collect())
            .collect();
        assert_eq!(sizes[4], [255, 300, 2]);
        for (k, e) in entries.iter().enumerate() {
            for cut in 1..e.len() {
                let mut cut_entries = refs.clone();
                cut_entries[k] = &e[..cut];
                let basket = BasketData::entries_for_test(&cut_entries);
                assert_eq!(
                    view(&basket),
                    column_read(&basket),
                    "entry {k} cut at {cut}"
                );
            }
        }
        for count in [2u32, 3, 1 << 20, u32::MAX] {
            let mut absurd = entry(&[1, 1], [0, 9]);
            absurd[10..14].copy_from_slice(&count.to_be_bytes());
            let basket = BasketData::entries_for_test(&[&absurd]);
            assert_eq!(view(&basket), None, "count {count}");
            assert_eq!(column_read(&basket), None, "count {count}");
        }
    }

    /// A 4-byte length (after a length byte of 255) that disagrees with the bytes that follow,
    /// in an entry just the size a one-byte length of 255 would give: refused, as by the column
    /// read, not taken for a short string.
    #[test]
    fn long_lengths_that_disagree_with_the_entry_are_refused() {
        for declared in [9_999u32, 3] {
            let mut text = vec![255];
            text.extend(declared.to_be_bytes());
            text.resize(256, b'x');
            let mut body = 1u32.to_be_bytes().to_vec();
            body.extend(text);
            let basket =
                BasketData::entries_for_test(&[&entry(&[1], [0, 9]), &headed(&body, [0, 9])]);
            assert_eq!(column_read(&basket), None, "{declared}");
            assert_eq!(view(&basket), None, "{declared}");
        }
    }

    /// The common-case test without VBMI (the walk) and with it (where this machine has it)
    /// take the same entries of every basket of ROOT's `vector<string>` branches, whole and
    /// with each bit flipped: machines without VBMI run the walk, which the views' other tests
    /// here may not reach.
    #[test]
    fn the_walk_and_the_vbmi_check_take_the_same_entries() {
        let mut compared = 0;
        on_roots_baskets_whole_and_flipped(Shape::is_string_list, |name, _, basket, flip| {
            let (data, bounds) = (basket.data(), basket.offsets().unwrap_or_default());
            let walked = plain_string_lists(data, bounds);
            assert!(flip.is_some() || walked + 1 == bounds.len(), "{name}");
            if let Some(vbmi) = Vbmi::detect() {
                assert_eq!(
                    vbmi.plain_string_lists(data, bounds),
                    walked,
                    "{name} {flip:?}"
                );
                compared += 1;
            }
        });
        assert!(Vbmi::detect().is_none() || compared >= 100, "{compared}");
    }

    #[test]
    fn other_layouts_are_refused() {
        let basket = BasketData::entries_for_test(&[&[1, b'x']]);
        let err = TextListView::new(&basket, "name", &Layout::Object(Shape::Text)).unwrap_err();
        assert!(err.to_string().contains("name"), "{err}");
    }

    /// Every `vector<string>` branch of the ROOT-written fixture: the column read's lists on
    /// every basket; its first basket flipped one bit at a time, the column read's answer (the
    /// same lists, or both an error) and never a panic.
    #[test]
    fn equals_the_column_read_on_roots_baskets_whole_and_damaged() {
        let (branches, flips) =
            on_roots_baskets_whole_and_flipped(Shape::is_string_list, |name, _, basket, flip| {
                let lists = view(basket);
                assert!(flip.is_some() || lists.is_some(), "{name}");
                assert_eq!(lists, column_read(basket), "{name} {flip:?}");
            });
        assert!(branches >= 1, "{branches} vector<string> branches");
        assert!(flips >= 100, "{flips} flips");
    }
}
