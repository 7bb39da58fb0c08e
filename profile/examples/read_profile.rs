//! Reads a callgrind output file or saved `perf script` output, prints its ten largest self
//! counts, and writes its flamegraph beside it:
//!
//! ```text
//! cargo run -p bench-profile --example read_profile -- callgrind.digest.kib16.out
//! cargo run -p bench-profile --example read_profile -- perf.script
//! ```

use std::path::{Path, PathBuf};

use bench_profile::{Profile, ProfileError, Unit, callgrind, perf, profile_flamegraph_svg};

fn read(path: &Path) -> Result<Profile, ProfileError> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    if name.starts_with("callgrind.") || name.ends_with(".out") {
        callgrind::read(path)?.to_profile(&path.display().to_string())
    } else {
        let file = std::fs::File::open(path).map_err(|source| ProfileError::Io {
            what: path.display().to_string(),
            source,
        })?;
        let folded = perf::fold_perf_script(file, &path.display().to_string())?;
        Profile::from_folded(Unit::Samples, folded, &path.display().to_string())
    }
}

fn main() {
    let Some(path) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: read_profile FILE (callgrind output or perf script output)");
        std::process::exit(2);
    };
    let result = read(&path).and_then(|profile| {
        println!("{} {} in total", profile.total, profile.unit);
        for f in profile.functions.iter().take(10) {
            println!(
                "{:>6.2}%  {:>12}  {}",
                profile.share(f.self_count) * 100.0,
                f.self_count,
                f.name
            );
        }
        let svg = profile_flamegraph_svg(&profile, &path.display().to_string())?;
        let out = path.with_extension("svg");
        std::fs::write(&out, svg).map_err(|source| ProfileError::Io {
            what: out.display().to_string(),
            source,
        })?;
        println!("flamegraph: {}", out.display());
        Ok(())
    });
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
