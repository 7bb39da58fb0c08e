//! The benchmark files, written once by real ROOT 6.40 (through `$BENCH_PYTHON` or
//! `tools/.venv`) into `<target>/root-bench-data/` and reused while their marker exists.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use root_reader::readspeed::Mode;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

fn data_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace().join("target"), PathBuf::from);
    target.join("root-bench-data")
}

/// The Python that writes the files with ROOT; without one, says what to run and exits (a
/// fresh machine has no venv: a panic's backtrace would not say how to get one).
fn python() -> PathBuf {
    let found = std::env::var_os("BENCH_PYTHON")
        .map(PathBuf::from)
        .or_else(|| Some(workspace().join("tools/.venv/bin/python")).filter(|p| p.exists()));
    found.unwrap_or_else(|| {
        eprintln!(
            "error: the ROOT benchmarks write their files with ROOT (PyPI `root`), and there is no \
             Python with it here.\n\
             Create the pinned venv once, from the workspace root:\n\
             \n    tools/venv.sh\n\n\
             (or set BENCH_PYTHON to a python that can `import ROOT`), then run the benchmark again."
        );
        std::process::exit(2)
    })
}

/// One branch per type the reader decodes, in the NanoAOD-like file (`root_ceiling` and the
/// ceiling worker).
pub const NANO_BRANCHES: [(&str, &str); 13] = [
    ("f32", "MET_pt"),
    ("bool", "HLT_Path3"),
    ("u32_counter", "nJet"),
    ("u64", "event"),
    ("jagged_f32", "Jet_pt"),
    ("jagged_u8", "Jet_jetId"),
    ("jagged_bool", "Jet_isGood"),
    ("char_star", "processName"),
    ("std_string", "generator"),
    ("vector_string", "Jet_tags"),
    ("vector_vector_f32", "LHE_scale"),
    ("leaf_list", "beamSpot"),
    ("double32_range", "vertexZ"),
];

/// The cells of one branch in `root_ceiling` and the ceiling worker, as (name, threads, mode):
/// the full read, the codec alone and the floors on one thread; the full read with copied
/// strings for string branches (`strings`); where `two_threads`, the full read and the codec
/// alone on two threads (the codec's own speed-up is what the machine's second core gives).
pub fn ceiling_cells(strings: bool, two_threads: bool) -> Vec<(&'static str, usize, Mode)> {
    let mut cells = vec![
        ("full_1t", 1, Mode::Full),
        ("decompress_only_1t", 1, Mode::DecompressOnly),
        ("decompress_copy_1t", 1, Mode::DecompressCopy),
        ("read_copy_1t", 1, Mode::ReadCopy),
        ("read_find_1t", 1, Mode::ReadFind),
        ("read_decompress_1t", 1, Mode::ReadDecompress),
        ("read_touch_1t", 1, Mode::ReadTouch),
    ];
    if strings {
        cells.push(("full_copied_strings_1t", 1, Mode::FullCopiedStrings));
    }
    if two_threads {
        cells.push(("full_2t", 2, Mode::Full));
        cells.push(("decompress_only_2t", 2, Mode::DecompressOnly));
        cells.push(("read_decompress_2t", 2, Mode::ReadDecompress));
    }
    cells
}

/// Whether the NanoAOD branch of `kind` (one of [`NANO_BRANCHES`]) holds strings.
pub fn holds_strings(kind: &str) -> bool {
    matches!(kind, "char_star" | "std_string" | "vector_string")
}

/// Runs `make` unless `dir/marker` exists, then leaves the marker.
fn once(dir: &Path, marker: &str, make: impl FnOnce()) {
    std::fs::create_dir_all(dir).unwrap();
    let done = dir.join(marker);
    if !done.exists() {
        make();
        std::fs::write(done, b"").unwrap();
    }
}

/// The directory holding `readspeed_{zlib,zstd}.root` of `entries` entries
/// (`tools/root_readspeed_compare.py`: pt/F, arr[4]/F, jets = std::vector<float>).
pub fn readspeed_files(entries: u64) -> PathBuf {
    let dir = data_dir().join(format!("readspeed_{entries}"));
    once(&dir, "written.ok", || {
        let code = format!(
            "import sys; sys.path.insert(0, {tools:?}); import root_readspeed_compare as c; \
             c.make_files({dir:?}, {entries})",
            tools = workspace().join("tools").display().to_string(),
            dir = dir.display().to_string(),
        );
        let status = Command::new(python()).args(["-c", &code]).status().unwrap();
        assert!(
            status.success(),
            "writing the readspeed files with ROOT failed"
        );
    });
    dir
}

/// The NanoAOD-like file of `entries` entries (`tools/root_nanoaod.py`, zstd-5).
pub fn nanoaod_file(entries: u64) -> PathBuf {
    let dir = data_dir().join(format!("nanoaod_{entries}"));
    let path = dir.join("nanoaod.root");
    once(&dir, "written.ok", || {
        let status = Command::new(python())
            .arg(workspace().join("tools/root_nanoaod.py"))
            .arg("write")
            .arg(&path)
            .arg("--entries")
            .arg(entries.to_string())
            .status()
            .unwrap();
        assert!(
            status.success(),
            "writing the NanoAOD-like file with ROOT failed"
        );
    });
    path
}
