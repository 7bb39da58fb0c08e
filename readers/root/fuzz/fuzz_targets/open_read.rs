//! Open + list + read every branch and every RNTuple field of arbitrary bytes: must never
//! panic, hang or over-allocate.
#![no_main]

use libfuzzer_sys::fuzz_target;
use root_reader::{Parallel, RootFile, TextListView, TextView};

fuzz_target!(|data: &[u8]| {
    let Ok(file) = RootFile::from_bytes(data.to_vec()) else {
        return;
    };
    if let Ok(ntuples) = file.rntuples() {
        for entry in ntuples {
            let Ok(ntuple) = file.rntuple(&format!("{};{}", entry.path, entry.key.cycle)) else {
                continue;
            };
            let n = ntuple.entries();
            for field in ntuple.fields() {
                let _ = ntuple.read_field(&field.name);
                let _ = ntuple.read_field_range(&field.name, n / 3, n / 2);
                let _ = ntuple.stored_pages(&field.name);
            }
        }
    }
    let Ok(trees) = file.trees() else { return };
    for entry in trees {
        let Ok(tree) = file.tree(&format!("{};{}", entry.path, entry.key.cycle)) else {
            continue;
        };
        for named in tree.named_branches() {
            let Ok(branch) = tree.branch(&named.column) else {
                continue;
            };
            let _ = branch.read_column(0, branch.entries(), Parallel::Never);
            if let (Ok(lazy), Ok(layout)) = (branch.lazy(), branch.layout()) {
                let _ = lazy.for_each_basket(0, branch.entries(), |_, basket| {
                    if let Ok(lists) = TextListView::new(basket, branch.name(), &layout) {
                        let _ = lists.iter().map(Iterator::count).sum::<usize>();
                    }
                    let strings = TextView::new(basket, branch.name(), &layout)?;
                    let _ = strings.iter().map(<[u8]>::len).sum::<usize>();
                    Ok(())
                });
            }
            if let Ok(lazy) = branch.lazy() {
                let _ = lazy.read_entry::<f32>(0);
                let _ = lazy.load_all_chained().map(|c| c.decode_all::<u8>());
            }
        }
    }
});
