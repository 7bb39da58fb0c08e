//! `root_branch_read`: seed 000's benchmarks under the seed's own ids, each beside a cold-cache
//! variant of its own name.
//!
//! Data: a 200,000-entry TTree written by real ROOT 6.40 (pt/F, arr[4]/F, jets =
//! std::vector<float>) under zlib-1 and zstd-5, made once by `tools/root_readspeed_compare.py`'s
//! writer (through `$BENCH_PYTHON` or `tools/.venv`) into `<target>/root-bench-data/`.
//!
//! * `<group>/<id>` as the seed prints it (`single_branch_read/zlib/pt`,
//!   `indexed_branch_read/vector_tree/njet_pt[0]`, ...): the file's basket cache already holds
//!   the baskets, as in the seed's measurements since its cache (criterion repeats a read, and
//!   every repetition after the first finds its baskets decompressed).
//! * `<group>_cold/<id>`: the cache is emptied before every iteration (outside the timing), so
//!   each iteration reads and decompresses its baskets (the OS page cache stays warm): what the
//!   seed's first table timed before it had a cache.
//! * `parallel_by_size/{sequential,parallel,auto}/<entries>`: `pt` of trees of 2,000 to 200,000
//!   entries (zstd, cold): where reading the baskets on rayon's pool starts to pay (the seed saw
//!   "rayon overhead > benefit for small data"), and what the library's own choice
//!   ([`Parallel::Auto`]) makes of it.
//!
//! The seed's `njet_pt` is a `std::vector<float>` of jet momenta: here the tree's `jets`.
//!
//! `nanoaod_read/every_branch`: every one of the 311 branches of a 100,000-entry NanoAOD-like
//! file (`tools/root_nanoaod.py`, written by ROOT) read into columns, cold and warm.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod data;

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use root_reader::{Parallel, RootFile};

const ENTRIES: u64 = 200_000;

struct Data {
    files: Vec<(&'static str, RootFile)>,
}

impl Data {
    fn load() -> Self {
        let dir = data::readspeed_files(ENTRIES);
        let files = ["zlib", "zstd"]
            .into_iter()
            .map(|c| {
                (
                    c,
                    RootFile::open(dir.join(format!("readspeed_{c}.root"))).unwrap(),
                )
            })
            .collect();
        Self { files }
    }
}

/// Runs `f` as `<group>_cold/<name>` (cache emptied before each iteration) and, as the seed
/// names it, `<group>/<name>` (baskets cached).
fn cold_warm<R>(
    c: &mut Criterion,
    group: &str,
    name: &str,
    bytes: u64,
    file: &RootFile,
    mut f: impl FnMut() -> R,
) {
    let mut g = c.benchmark_group(format!("{group}_cold"));
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function(name, |b| {
        b.iter_batched(
            || file.cache().clear(),
            |()| black_box(f()),
            BatchSize::PerIteration,
        );
    });
    g.finish();
    black_box(f());
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function(name, |b| b.iter(|| black_box(f())));
    g.finish();
}

fn benches(c: &mut Criterion) {
    let data = Data::load();
    for (codec, file) in &data.files {
        let tree = file.tree("t").unwrap();
        assert_eq!(tree.entries, ENTRIES);
        let pt = tree.branch("pt").unwrap();
        let arr = tree.branch("arr").unwrap();
        let jets = tree.branch("jets").unwrap();
        let pt_bytes = ENTRIES * 4;
        let arr_bytes = ENTRIES * 16;
        let jets_n = jets.reader().read_jagged::<f32>().unwrap().values.len() as u64;
        let jets_bytes = jets_n * 4;

        cold_warm(
            c,
            "single_branch_read",
            &format!("{codec}/pt"),
            pt_bytes,
            file,
            || pt.reader().read::<f32>().unwrap(),
        );
        cold_warm(
            c,
            "repeated_branch_read",
            &format!("{codec}/3x_same"),
            3 * pt_bytes,
            file,
            || {
                (0..3)
                    .map(|_| pt.reader().read::<f32>().unwrap().len())
                    .sum::<usize>()
            },
        );
        for (mode, par) in [
            ("sequential", Parallel::Never),
            ("parallel", Parallel::Always),
            ("auto", Parallel::Auto),
        ] {
            cold_warm(
                c,
                "parallel_vs_sequential",
                &format!("{mode}/{codec}"),
                pt_bytes,
                file,
                || pt.reader().parallel(par).read::<f32>().unwrap(),
            );
        }
        cold_warm(
            c,
            "multi_branch_read",
            &format!("{codec}/3branches"),
            pt_bytes + arr_bytes + jets_bytes,
            file,
            || {
                let a = pt.reader().read::<f32>().unwrap().len();
                let b = arr.reader().read::<f32>().unwrap().len();
                let j = jets.reader().read_jagged::<f32>().unwrap().values.len();
                a + b + j
            },
        );
        let lazy = pt.lazy().unwrap();
        let mid = ENTRIES / 2 + 17;
        cold_warm(
            c,
            "lazy_single_entry",
            &format!("{codec}/pt"),
            4,
            file,
            || lazy.read_at::<f32>(mid).unwrap(),
        );
        let quarter = ENTRIES / 4;
        cold_warm(
            c,
            "lazy_range_read",
            &format!("{codec}/25%_range"),
            quarter * 4,
            file,
            || lazy.read_range::<f32>(quarter, 2 * quarter).unwrap(),
        );
        cold_warm(
            c,
            "lazy_range_read",
            &format!("{codec}/full_range"),
            pt_bytes,
            file,
            || lazy.read_range::<f32>(0, ENTRIES).unwrap(),
        );
        cold_warm(
            c,
            "lazy_vs_eager",
            &format!("eager/{codec}"),
            pt_bytes,
            file,
            || pt.reader().parallel(Parallel::Never).read::<f32>().unwrap(),
        );
        cold_warm(
            c,
            "lazy_vs_eager",
            &format!("lazy_all/{codec}"),
            pt_bytes,
            file,
            || lazy.read_all::<f32>().unwrap(),
        );
        if *codec == "zstd" {
            cold_warm(
                c,
                "jagged_branch_read",
                "vector_tree",
                jets_bytes,
                file,
                || jets.reader().read_jagged::<f32>().unwrap(),
            );
            cold_warm(
                c,
                "indexed_branch_read",
                "vector_tree/njet_pt[0]",
                ENTRIES * 4,
                file,
                || {
                    let j = jets.reader().read_jagged::<f32>().unwrap();
                    (0..j.len())
                        .filter_map(|e| j.get(e).and_then(|v| v.first().copied()))
                        .sum::<f32>()
                },
            );
            cold_warm(
                c,
                "fixed_array_branch_read",
                "fixed_array",
                arr_bytes,
                file,
                || arr.reader().read::<f32>().unwrap(),
            );
            cold_warm(
                c,
                "chained_slice",
                "sequential_decode_all",
                pt_bytes,
                file,
                || {
                    lazy.load_all_chained()
                        .unwrap()
                        .decode_all::<f32>()
                        .unwrap()
                },
            );
            let positions: Vec<u64> = (0..1000u64).map(|i| (i * 7919 % ENTRIES) * 4).collect();
            cold_warm(c, "chained_slice", "random_access_1000", 4000, file, || {
                let chained = lazy.load_all_chained().unwrap();
                positions
                    .iter()
                    .filter_map(|&p| chained.decode_at::<f32>(p))
                    .sum::<f32>()
            });
        }
    }
}

/// Tree sizes of `parallel_by_size`: 8 KB to 800 KB of `pt`.
const SIZES: [u64; 5] = [2_000, 20_000, 50_000, 100_000, ENTRIES];

/// `parallel_by_size/{sequential,parallel,auto}/<entries>`: one branch of small to large trees,
/// read cold on one thread, on rayon's pool, and as the library chooses.
fn parallel_by_size(c: &mut Criterion) {
    let mut g = c.benchmark_group("parallel_by_size");
    for entries in SIZES {
        let file =
            RootFile::open(data::readspeed_files(entries).join("readspeed_zstd.root")).unwrap();
        let tree = file.tree("t").unwrap();
        let pt = tree.branch("pt").unwrap();
        g.throughput(Throughput::Bytes(entries * 4));
        for (mode, par) in [
            ("sequential", Parallel::Never),
            ("parallel", Parallel::Always),
            ("auto", Parallel::Auto),
        ] {
            g.bench_function(format!("{mode}/{entries}"), |b| {
                b.iter_batched(
                    || file.cache().clear(),
                    |()| black_box(pt.reader().parallel(par).read::<f32>().unwrap()),
                    BatchSize::PerIteration,
                );
            });
        }
    }
    g.finish();
}

/// Entries of the NanoAOD-like file read whole by `nanoaod_read`.
const NANO_ENTRIES: u64 = 100_000;

/// `nanoaod_read/every_branch`: all 311 branches of a NanoAOD-like file (flat, counter-jagged,
/// bools, strings, nested vectors, a leaf list, a packed real) read into columns, cold and warm.
fn nanoaod(c: &mut Criterion) {
    let file = RootFile::open(data::nanoaod_file(NANO_ENTRIES)).unwrap();
    let tree = file.tree("Events").unwrap();
    let branches: Vec<_> = tree
        .all_branches()
        .iter()
        .map(|m| tree.branch(&m.name).unwrap())
        .collect();
    assert!(branches.len() > 300);
    // Uncompressed bytes written (fTotBytes), the data the read decodes.
    let bytes: u64 = branches
        .iter()
        .map(|b| u64::try_from(b.meta().tot_bytes).unwrap_or(0))
        .sum();
    cold_warm(c, "nanoaod_read", "every_branch", bytes, &file, || {
        branches
            .iter()
            .map(|b| {
                b.read_column(0, NANO_ENTRIES, Parallel::Auto)
                    .unwrap()
                    .entries()
            })
            .sum::<usize>()
    });
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! { name = root_branch_read; config = config(); targets = benches, parallel_by_size, nanoaod }
criterion_main!(root_branch_read);
