//! Scans every branch of a tree through the lazy reader with a bounded basket cache and
//! reports the peak resident memory, to show that a scan of a file larger than the cache stays
//! within the cache bound.
//!
//! ```text
//! cargo run --release --example lazy_scan -- FILE TREE CACHE_MIB
//! ```
//! Prints one JSON object: file size, decompressed bytes scanned, cache bound, the largest
//! decompressed basket (which must be in memory to be decoded at all, cached or not), peak RSS
//! (`VmHWM` from /proc/self/status, Linux), and the cache counters. The reader makes room in
//! the cache for a basket's compressed record and decompressed payload before reading it, and
//! evicted memory goes back to the system (the example installs `malloc_trim`), so expect
//! `peak_rss <= baseline + max(cache bound, largest basket in flight) + metadata`, independent
//! of the file size.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use root_reader::RootFile;

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, path, tree, mib] = args.as_slice() else {
        return Err("usage: lazy_scan FILE TREE CACHE_MIB".into());
    };
    let cache = mib.parse::<usize>()? << 20;
    root_reader::set_memory_release(root_reader::malloc_trim);
    let before = vm_hwm_kib();
    let file = RootFile::open_with_cache(path, cache)?;
    let tree = file.tree(tree)?;
    let t0 = Instant::now();
    let mut scanned = 0u64;
    let mut largest = 0u64;
    for named in tree.named_branches() {
        if named.meta.layout.is_err() {
            continue;
        }
        let lazy = tree.branch(&named.column)?.lazy()?;
        lazy.for_each_basket(0, lazy.entries(), |_, basket| {
            scanned += basket.data().len() as u64;
            largest = largest.max(basket.heap_bytes() as u64);
            Ok(())
        })?;
    }
    let secs = t0.elapsed().as_secs_f64();
    let stats = file.cache().stats();
    println!(
        "{{\"file_bytes\":{},\"scanned_bytes\":{},\"cache_bytes\":{},\"peak_rss_kib_before\":{},\
         \"peak_rss_kib\":{},\"largest_basket_bytes\":{largest},\"cache_held\":{},\"evicted\":{},\"misses\":{},\"seconds\":{secs}}}",
        file.len(),
        scanned,
        cache,
        before.unwrap_or(0),
        vm_hwm_kib().unwrap_or(0),
        stats.bytes,
        stats.evicted,
        stats.misses,
    );
    Ok(())
}
