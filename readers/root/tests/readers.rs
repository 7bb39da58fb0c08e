//! The eager and lazy readers, ChainedSlice and the basket cache on real ROOT files.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod util;

use root_reader::{BasketCache, ChainedSlice, Layout, Parallel, RootFile};

fn open(name: &str) -> RootFile {
    RootFile::open(util::fixture(name)).unwrap()
}

#[test]
fn eager_parallel_and_sequential_agree() {
    let file = open("types_zstd.root");
    let tree = file.tree("t").unwrap();
    for name in ["f", "d", "arr", "l"] {
        let b = tree.branch(name).unwrap();
        assert!(b.baskets().len() > 1, "{name} should span several baskets");
        let seq = b.read_column(0, b.entries(), Parallel::Never).unwrap();
        let par = b.read_column(0, b.entries(), Parallel::Always).unwrap();
        assert_eq!(seq, par, "{name}");
    }
    let x = tree
        .branch("jets")
        .unwrap()
        .reader()
        .parallel(Parallel::Always)
        .read_jagged::<f32>();
    let y = tree
        .branch("jets")
        .unwrap()
        .reader()
        .parallel(Parallel::Never)
        .read_jagged::<f32>();
    assert_eq!(x.unwrap(), y.unwrap());
}

#[test]
fn lazy_reader_matches_eager_everywhere() {
    let file = open("types_zlib.root");
    let tree = file.tree("t").unwrap();
    let f = tree.branch("f").unwrap();
    let eager: Vec<f32> = f.reader().read().unwrap();
    let lazy = f.lazy().unwrap();
    for (j, want) in eager.iter().enumerate() {
        assert_eq!(lazy.read_at::<f32>(j as u64).unwrap(), *want, "entry {j}");
    }
    // Ranges that start and stop inside baskets and cross basket boundaries.
    let n = eager.len() as u64;
    for (a, b) in [(0, n), (3, 4), (17, 151), (n - 1, n), (50, 50)] {
        assert_eq!(
            lazy.read_range::<f32>(a, b).unwrap(),
            eager[a as usize..b as usize].to_vec()
        );
    }
    assert_eq!(lazy.read_all::<f32>().unwrap(), eager);
    // Jagged through the lazy reader.
    let x = tree.branch("xd").unwrap();
    let all = x.reader().read_jagged::<f64>().unwrap();
    let lx = x.lazy().unwrap();
    for j in 0..x.entries() {
        assert_eq!(
            lx.read_entry::<f64>(j).unwrap(),
            all.get(j as usize).unwrap(),
            "entry {j}"
        );
    }
    let part = lx.read_range_jagged::<f64>(5, 120).unwrap();
    for j in 0..part.len() {
        assert_eq!(part.get(j), all.get(j + 5));
    }
    // Fixed arrays.
    let arr = tree.branch("arr").unwrap();
    assert_eq!(
        arr.layout().unwrap(),
        Layout::Fixed(root_reader::LeafType::F32, 4)
    );
    assert_eq!(
        arr.lazy().unwrap().read_entry::<f32>(3).unwrap(),
        vec![3.0, 3.25, 3.5, 3.75]
    );
    assert!(
        arr.lazy().unwrap().read_at::<f32>(3).is_err(),
        "read_at is for scalars"
    );
}

#[test]
fn basket_of_is_a_binary_search_over_basket_ranges() {
    let file = open("types_none.root");
    let tree = file.tree("t").unwrap();
    let d = tree.branch("d").unwrap();
    let lazy = d.lazy().unwrap();
    for (i, info) in d.baskets().iter().enumerate() {
        assert_eq!(lazy.basket_of(info.first), Some(i));
        assert_eq!(lazy.basket_of(info.end - 1), Some(i));
    }
    assert_eq!(lazy.basket_of(d.entries()), None);
}

#[test]
fn chained_slice_decodes_across_segment_boundaries() {
    let file = open("types_zstd.root");
    let tree = file.tree("t").unwrap();
    let d = tree.branch("d").unwrap();
    let eager: Vec<f64> = d.reader().read().unwrap();
    let chained = d.lazy().unwrap().load_all_chained().unwrap();
    assert_eq!(chained.segments(), d.baskets().len());
    assert_eq!(chained.len(), eager.len() as u64 * 8);
    assert_eq!(chained.decode_all::<f64>().unwrap(), eager);
    for (j, want) in eager.iter().enumerate() {
        assert_eq!(chained.decode_at::<f64>(j as u64 * 8), Some(*want));
    }
    // A position that straddles two segments: read 8 bytes starting 4 bytes before a boundary.
    let first = d.basket(0).unwrap();
    let boundary = first.data().len() as u64;
    let straddle = chained.read_array::<8>(boundary - 4).unwrap();
    let mut expect = first.data()[first.data().len() - 4..].to_vec();
    expect.extend_from_slice(&d.basket(1).unwrap().data()[..4]);
    assert_eq!(straddle.to_vec(), expect);
    assert_eq!(chained.locate(boundary), Some((1, 0)));
    assert_eq!(chained.locate(chained.len()), None);
    // Misaligned element size across segments: decode as u8 always works.
    assert_eq!(
        chained.decode_all::<u8>().unwrap().len() as u64,
        chained.len()
    );
    assert!(ChainedSlice::default().is_empty());
}

#[test]
fn cache_counts_hits_misses_and_evictions() {
    let path = util::fixture("types_zlib.root");
    let file = RootFile::open(&path).unwrap();
    let tree = file.tree("t").unwrap();
    let b = tree.branch("da").unwrap();
    let n = b.baskets().len() as u64;
    let _ = b.reader().read::<f64>().unwrap();
    let s1 = file.cache().stats();
    assert_eq!((s1.misses, s1.hits), (n, 0));
    let _ = b.reader().read::<f64>().unwrap();
    let s2 = file.cache().stats();
    assert_eq!((s2.misses, s2.hits), (n, n));
    file.cache().clear();
    let _ = b.reader().read::<f64>().unwrap();
    assert_eq!(file.cache().stats().misses, 2 * n);

    // A cache smaller than the branch evicts and stays within its bound.
    let small = RootFile::open_with_cache(&path, 600).unwrap();
    let tree = small.tree("t").unwrap();
    let b = tree.branch("da").unwrap();
    let all = b.reader().read::<f64>().unwrap();
    let s = small.cache().stats();
    assert!(s.evicted > 0 && s.bytes <= 600, "{s:?}");
    assert_eq!(
        all,
        tree.branch("da").unwrap().reader().read::<f64>().unwrap()
    );
    assert_eq!(BasketCache::default().capacity(), 256 << 20);
}

#[test]
fn lazy_scan_stays_within_the_cache_bound() {
    let file = RootFile::open_with_cache(util::fixture("types_lzma.root"), 2048).unwrap();
    let tree = file.tree("t").unwrap();
    let mut total = 0usize;
    for meta in tree.all_branches() {
        let lazy = tree.branch(&meta.name).unwrap().lazy().unwrap();
        lazy.for_each_basket(0, lazy.entries(), |_, basket| {
            total += basket.data().len();
            Ok(())
        })
        .unwrap();
        assert!(file.cache().stats().bytes <= 2048);
    }
    assert!(total > 4 * 2048, "the scan read more than the cache holds");
}

#[test]
fn header_and_listing() {
    let file = open("structure.root");
    let h = file.header();
    assert_eq!(h.version, 64000);
    assert!(!h.large);
    assert_eq!(h.begin, 100);
    assert_eq!(h.end, file.len());
    let trees: Vec<String> = file
        .trees()
        .unwrap()
        .iter()
        .map(|t| format!("{};{}", t.path, t.key.cycle))
        .collect();
    assert_eq!(trees.len(), 4, "{trees:?}");
    for want in ["t;1", "t;2", "sub/inner;1", "sub/deeper/t2;1"] {
        assert!(trees.contains(&want.to_string()), "{want} in {trees:?}");
    }
}
