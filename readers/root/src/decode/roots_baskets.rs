//! Tests over the baskets of ROOT-written fixtures, read through the file API. They live apart
//! from the decoders they test because that API (tree, branch, reader) imports the decoders.

#![allow(clippy::unwrap_used, clippy::float_cmp)]

/// Runs `check` on every basket of every object branch of the ROOT-written fixture
/// `objects.root` whose shape `wanted` accepts (`None`: whole), then on its first basket with
/// each byte's bit flipped in turn (`Some(byte)`). Returns how many branches and flips it
/// checked.
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

mod object {
    use crate::decode::object::{decode_entries, empty, generic};
    use crate::decode::specialized;
    use crate::layout::Shape;

    /// Every object branch of the ROOT-written fixture `objects.root`, with its shape.
    fn object_branches() -> Vec<(std::sync::Arc<crate::BranchMeta>, Shape, crate::Branch)> {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/objects.root");
        let file = crate::RootFile::open(&path).unwrap();
        let tree = file.tree("t").unwrap();
        tree.all_branches()
            .into_iter()
            .filter_map(|meta| match &meta.layout {
                Ok(crate::Layout::Object(shape)) => {
                    let shape = shape.clone();
                    let branch = tree.branch(&meta.name).unwrap();
                    Some((meta, shape, branch))
                }
                _ => None,
            })
            .collect()
    }

    /// The specialized loops return exactly what the generic walk returns, on every basket of
    /// every object branch ROOT wrote, and on every entry range of the first one.
    #[test]
    fn specialized_loops_equal_the_generic_walk_on_roots_baskets() {
        let mut specialized_shapes = 0;
        for (meta, shape, branch) in object_branches() {
            let shape = &shape;
            for i in 0..branch.baskets().len() {
                let basket = branch.basket(i).unwrap();
                let n = basket.entries();
                let mut slow = empty(shape);
                let slow_result = generic(&basket, &meta.name, shape, 0, n, &mut slow);
                let mut fast = empty(shape);
                let Some(fast_result) = specialized::decode(&basket, shape, 0, n, &mut fast) else {
                    continue;
                };
                specialized_shapes += 1;
                assert_eq!(fast_result.is_ok(), slow_result.is_ok(), "{}", meta.name);
                if slow_result.is_ok() {
                    assert_eq!(fast, slow, "{} basket {i}", meta.name);
                }
                if i == 0 {
                    for (a, b) in [(0, 1), (3, 17), (n - 1, n)] {
                        let mut fast = empty(shape);
                        let mut slow = empty(shape);
                        let _ = specialized::decode(&basket, shape, a, b, &mut fast);
                        let _ = generic(&basket, &meta.name, shape, a, b, &mut slow);
                        assert_eq!(fast, slow, "{} {a}..{b}", meta.name);
                    }
                }
            }
        }
        assert!(specialized_shapes >= 20, "{specialized_shapes}");
    }

    /// Every object branch of the ROOT-written fixture, its first basket's bytes flipped one
    /// bit at a time and cut at every entry boundary and inside entries: an error or values,
    /// never a panic or an allocation past what the bytes justify. Flipped, the specialized
    /// loops say what the generic walk says (the same values, or both an error): they fall back
    /// to the general rules for anything unusual, so damage must not change their answer.
    #[test]
    fn real_baskets_damaged_never_panic() {
        let (mut checked, mut specialized_checked) = (0, 0);
        for (meta, shape, branch) in object_branches() {
            let shape = &shape;
            let basket = branch.basket(0).unwrap();
            let n = basket.entries();
            let mut out = empty(shape);
            // A member-wise collection is refused whole: nothing to damage.
            if decode_entries(&basket, &meta.name, shape, 0, n, &mut out).is_err() {
                assert_eq!(meta.name, "ranges");
                continue;
            }
            let good = basket.data().to_vec();
            for i in 0..good.len() {
                let mut bytes = good.clone();
                bytes[i] ^= 1 << (i % 8);
                let damaged = basket.with_data_for_test(bytes);
                let _ = decode_entries(&damaged, &meta.name, shape, 0, n, &mut empty(shape));
                let (mut fast, mut slow) = (empty(shape), empty(shape));
                let Some(fast_result) = specialized::decode(&damaged, shape, 0, n, &mut fast)
                else {
                    continue;
                };
                let slow_result = generic(&damaged, &meta.name, shape, 0, n, &mut slow);
                assert_eq!(
                    fast_result.is_ok(),
                    slow_result.is_ok(),
                    "{} byte {i}",
                    meta.name
                );
                if fast_result.is_ok() {
                    // Compared as printed: a flipped bit can make a NaN, unequal to itself.
                    let (fast, slow) = (format!("{fast:?}"), format!("{slow:?}"));
                    assert_eq!(fast, slow, "{} byte {i}", meta.name);
                }
                specialized_checked += 1;
            }
            for cut in (0..good.len()).step_by(3) {
                let damaged = basket.with_data_for_test(good[..cut].to_vec());
                assert!(
                    decode_entries(&damaged, &meta.name, shape, 0, n, &mut empty(shape)).is_err(),
                    "{} cut at {cut}",
                    meta.name
                );
            }
            checked += 1;
        }
        assert!(checked >= 20, "{checked} object branches");
        assert!(
            specialized_checked >= 1000,
            "{specialized_checked} specialized flips"
        );
    }
}
