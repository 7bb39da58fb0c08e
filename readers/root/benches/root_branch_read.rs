//! `root_branch_read`: seed 000's benchmarks, each with a cold-cache and a warm-cache variant.
//!
//! Data: a 200,000-entry TTree written by real ROOT 6.40 (pt/F, arr[4]/F, jets =
//! std::vector<float>) under zlib-1 and zstd-5, made once by `tools/root_readspeed_compare.py`'s
//! writer (through `$BENCH_PYTHON` or `tools/.venv`) into `<target>/root-bench-data/`.
//!
//! * `.../cold`: the file's basket cache is emptied before every iteration (outside the timing),
//!   so each iteration reads and decompresses its baskets (the OS page cache stays warm).
//! * `.../warm`: the cache already holds the baskets: what seed 000's "post-cache" table timed.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use root_reader::{Parallel, RootFile};

const ENTRIES: u64 = 200_000;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

fn data_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace().join("target"), PathBuf::from);
    target.join("root-bench-data")
}

fn ensure_data() -> PathBuf {
    let dir = data_dir();
    let done = dir.join(format!("readspeed_zstd_{ENTRIES}.ok"));
    if done.exists() {
        return dir;
    }
    std::fs::create_dir_all(&dir).unwrap();
    let python = std::env::var_os("BENCH_PYTHON")
        .map(PathBuf::from)
        .or_else(|| Some(workspace().join("tools/.venv/bin/python")).filter(|p| p.exists()))
        .expect("root_branch_read needs ROOT: set BENCH_PYTHON or run tools/test.sh");
    let code = format!(
        "import sys; sys.path.insert(0, {tools:?}); import root_readspeed_compare as c; \
         c.make_files({dir:?}, {ENTRIES})",
        tools = workspace().join("tools").display().to_string(),
        dir = dir.display().to_string(),
    );
    let status = Command::new(python).args(["-c", &code]).status().unwrap();
    assert!(status.success(), "writing the bench data with ROOT failed");
    std::fs::write(done, b"").unwrap();
    dir
}

struct Data {
    files: Vec<(&'static str, RootFile)>,
}

impl Data {
    fn load() -> Self {
        let dir = ensure_data();
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

/// Runs `f` as `<group>/<name>/cold` and `<group>/<name>/warm`.
fn cold_warm<R>(
    c: &mut Criterion,
    group: &str,
    name: &str,
    bytes: u64,
    file: &RootFile,
    mut f: impl FnMut() -> R,
) {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function(format!("{name}/cold"), |b| {
        b.iter_batched(
            || file.cache().clear(),
            |()| black_box(f()),
            BatchSize::PerIteration,
        );
    });
    black_box(f());
    g.bench_function(format!("{name}/warm"), |b| b.iter(|| black_box(f())));
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
                "vector_tree/jets[0]",
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

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! { name = root_branch_read; config = config(); targets = benches }
criterion_main!(root_branch_read);
