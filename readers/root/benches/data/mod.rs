//! The benchmark files, written once by real ROOT 6.40 (through `$BENCH_PYTHON` or
//! `tools/.venv`) into `<target>/root-bench-data/` and reused while their marker exists.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

fn data_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace().join("target"), PathBuf::from);
    target.join("root-bench-data")
}

fn python() -> PathBuf {
    std::env::var_os("BENCH_PYTHON")
        .map(PathBuf::from)
        .or_else(|| Some(workspace().join("tools/.venv/bin/python")).filter(|p| p.exists()))
        .expect("the ROOT benchmarks need ROOT: set BENCH_PYTHON or run tools/test.sh")
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
