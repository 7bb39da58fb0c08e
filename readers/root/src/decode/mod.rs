//! Decoding: basket bytes to column values, one module per kind of entry. The eager reader
//! ([`crate::reader`]), the lazy one ([`crate::lazy`]) and readspeed all call these; none of
//! them reads files.

mod jump;
pub(crate) mod leaflist;
mod nested;
pub(crate) mod numeric;
pub(crate) mod object;
mod scaled;
pub(crate) mod specialized;
mod text;
mod text_lists;

pub use numeric::{PARALLEL_BASKET_BYTES, VECTOR_HEADER};
pub use text::TextView;
pub(crate) use text::text_start;
pub use text_lists::{TextList, TextListView};

/// Makes room for `n` more elements in `v`, which decoders reuse basket after basket (emptied,
/// their memory kept). Growing a vector copies its whole old allocation, used or not: when less
/// than half of it is in use, a new allocation and a copy of what is used costs less.
pub(crate) fn reserve<T: Copy>(v: &mut Vec<T>, n: usize) {
    if v.capacity() - v.len() >= n {
        return;
    }
    if v.len() < v.capacity() / 2 {
        let mut fresh = Vec::with_capacity(v.len() + n);
        fresh.extend_from_slice(v);
        *v = fresh;
    } else {
        v.reserve(n);
    }
}

/// A string as ROOT streams it (a length byte; from 255 bytes on, 255 and a 4-byte length),
/// `len` bytes of the alphabet: for the string decoders' tests.
#[cfg(test)]
pub(crate) fn streamed_string(len: usize) -> Vec<u8> {
    let mut v = if len < 255 {
        vec![len as u8]
    } else {
        let mut v = vec![255];
        v.extend((len as u32).to_be_bytes());
        v
    };
    v.extend((0..len).map(|i| b'a' + (i % 26) as u8));
    v
}

/// An object as ROOT streams it: byte count, `version` (for version 0, a class checksum after
/// it), then `body`: for the object decoders' tests.
#[cfg(test)]
pub(crate) fn headed_for_test(body: &[u8], version: [u8; 2]) -> Vec<u8> {
    let checksum = if version == [0, 0] { 4 } else { 0 };
    let mut v = ((body.len() as u32 + 2 + checksum) | object::BYTE_COUNT_FLAG)
        .to_be_bytes()
        .to_vec();
    v.extend(version);
    if version == [0, 0] {
        v.extend([1, 2, 3, 4]);
    }
    v.extend(body);
    v
}

/// Runs `check` on every basket of every object branch of the ROOT-written fixture
/// `objects.root` whose shape `wanted` accepts (`None`: whole), then on its first basket with
/// each byte's bit flipped in turn (`Some(byte)`). Returns how many branches and flips it
/// checked.
#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
pub(crate) fn on_roots_baskets_whole_and_flipped(
    wanted: impl Fn(&crate::layout::Shape) -> bool,
    mut check: impl FnMut(&str, &crate::layout::Shape, &crate::basket::BasketData, Option<usize>),
) -> (usize, usize) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/objects.root");
    let file = crate::RootFile::open(&path).unwrap();
    let tree = file.tree("t").unwrap();
    let (mut branches, mut flips) = (0, 0);
    for meta in tree.all_branches() {
        let Ok(crate::Layout::Object(shape)) = &meta.layout else {
            continue;
        };
        if !wanted(shape) {
            continue;
        }
        let branch = tree.branch(&meta.name).unwrap();
        for i in 0..branch.baskets().len() {
            check(&meta.name, shape, &branch.basket(i).unwrap(), None);
        }
        let basket = branch.basket(0).unwrap();
        let good = basket.data().to_vec();
        for i in 0..good.len() {
            let mut bytes = good.clone();
            bytes[i] ^= 1 << (i % 8);
            check(
                &meta.name,
                shape,
                &basket.with_data_for_test(bytes),
                Some(i),
            );
            flips += 1;
        }
        branches += 1;
    }
    (branches, flips)
}

#[cfg(test)]
mod tests {
    #[test]
    fn reserve_keeps_the_values_and_makes_the_room() {
        for (len, cap, n) in [
            (0, 0, 5),
            (1, 100, 500),
            (60, 100, 500),
            (3, 10, 2),
            (0, 64, 64),
        ] {
            let mut v: Vec<u32> = Vec::with_capacity(cap);
            v.extend(0..len);
            super::reserve(&mut v, n as usize);
            assert!(v.capacity() - v.len() >= n as usize);
            assert!(v.iter().copied().eq(0..len));
        }
    }
}
