//! Prints how an RNTuple is stored: its fields with their column encodings, then per cluster
//! and column the pages (elements, stored bytes, checksum), and reads every field once.
//!
//! ```text
//! cargo run --example rntuple_layout -- FILE NTUPLE
//! ```

use root_reader::RootFile;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, path, name] = args.as_slice() else {
        return Err("usage: rntuple_layout FILE NTUPLE".into());
    };
    let file = RootFile::open(path)?;
    let nt = file.rntuple(name)?;
    let [epoch, major, minor, patch] = nt.anchor().version;
    println!(
        "{name}: format {epoch}.{major}.{minor}.{patch}, {} entries, {} clusters, written by {:?}",
        nt.entries(),
        nt.clusters().len(),
        nt.header().writer
    );
    for (id, c) in nt.column_descs().iter().enumerate() {
        let field = nt.field_descs().get(c.field as usize);
        println!(
            "  column {id:>3}: {:<14} field {:<12} representation {}{}",
            c.type_name(),
            field.map_or("?", |f| f.name.as_str()),
            c.representation,
            c.first_element
                .map_or(String::new(), |e| format!(", from element {e}")),
        );
    }
    for (k, cluster) in nt.clusters().iter().enumerate() {
        println!(
            "  cluster {k}: entries {}..{}",
            cluster.first_entry,
            cluster.first_entry + cluster.entries
        );
        for (id, range) in cluster.columns.iter().enumerate() {
            let pages: Vec<String> = range
                .pages
                .iter()
                .map(|p| {
                    format!(
                        "{}:{}B{}",
                        p.elements,
                        p.locator.size,
                        if p.checksum { "+" } else { "" }
                    )
                })
                .collect();
            println!(
                "    column {id:>3} from element {:>6}{}: {}",
                range.first_element,
                if range.suppressed {
                    " (suppressed)"
                } else {
                    ""
                },
                pages.join(" ")
            );
        }
    }
    for field in nt.fields() {
        match nt.read_field(&field.name) {
            Ok(values) => println!(
                "  {} ({}): {} values",
                field.name,
                field.type_name,
                values.len()
            ),
            Err(e) => println!("  {} ({}): {e}", field.name, field.type_name),
        }
    }
    Ok(())
}
