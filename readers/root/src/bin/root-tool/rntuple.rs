//! `ls` and `dump` of RNTuples.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use root_reader::{RNTuple, RootFile, Values};
use serde_json::{Value, json};

use crate::dump_args::{DumpFormat, parse_range};

/// The file's RNTuples as `ls --format json` shows them: path, cycle, format version,
/// entries, clusters, and each top-level field's name, type (alias) and column encodings.
pub(crate) fn list(file: &RootFile) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    for entry in file
        .rntuples()
        .context("cannot list the file's directories")?
    {
        let spec = format!("{};{}", entry.path, entry.key.cycle);
        let nt = file
            .rntuple(&spec)
            .with_context(|| format!("cannot read RNTuple {spec}"))?;
        let fields: Vec<Value> = nt
            .fields()
            .into_iter()
            .map(|f| {
                let mut v = json!({
                    "name": f.name,
                    "type": f.type_name,
                    "columns": columns(&nt, f.id),
                });
                if !f.type_alias.is_empty() {
                    v["alias"] = json!(f.type_alias);
                }
                v
            })
            .collect();
        let [epoch, major, minor, patch] = nt.anchor().version;
        out.push(json!({
            "path": entry.path,
            "cycle": entry.key.cycle,
            "description": nt.header().description,
            "format": format!("{epoch}.{major}.{minor}.{patch}"),
            "entries": nt.entries(),
            "clusters": nt.clusters().len(),
            "fields": fields,
        }));
    }
    Ok(out)
}

/// The column types of a field and its subfields (`_0: SplitReal32`), in schema order.
fn columns(nt: &RNTuple, id: u32) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(id, String::new())];
    while let Some((id, prefix)) = stack.pop() {
        let own: Vec<String> = nt
            .column_descs()
            .iter()
            .filter(|c| c.field == id)
            .map(|c| format!("{prefix}{}", c.type_name()))
            .collect();
        out.extend(own);
        for &child in nt.subfields(id).iter().rev() {
            let name = nt.field_descs().get(child as usize).map_or("", |f| &f.name);
            stack.push((child, format!("{prefix}{name}: ")));
        }
    }
    out
}

/// The text form of `ls` for RNTuples.
pub(crate) fn print(out: &mut impl Write, ntuples: &[Value]) -> Result<()> {
    for n in ntuples {
        writeln!(
            out,
            "{};{}  RNTuple {}  {} entries  {} clusters",
            n["path"].as_str().unwrap_or_default(),
            n["cycle"],
            n["format"].as_str().unwrap_or_default(),
            n["entries"],
            n["clusters"],
        )?;
        for f in n["fields"].as_array().into_iter().flatten() {
            let mut ty = f["type"].as_str().unwrap_or_default().to_owned();
            if let Some(alias) = f["alias"].as_str() {
                ty = format!("{ty} ({alias})");
            }
            let cols: Vec<&str> = f["columns"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            writeln!(
                out,
                "  {:<24} {:<40} {}",
                f["name"].as_str().unwrap_or_default(),
                ty,
                cols.join(", ")
            )?;
        }
    }
    Ok(())
}

/// `dump` of an RNTuple: one JSON object per entry, fields as `ls` names them, or a CSV row
/// under a header of their names; only the clusters holding the entry range are read.
pub(crate) fn dump(
    path: &PathBuf,
    spec: &str,
    names: &[String],
    range: Option<&str>,
    format: DumpFormat,
) -> Result<()> {
    let file = RootFile::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let nt = file
        .rntuple(spec)
        .with_context(|| format!("cannot read RNTuple {spec}"))?;
    let (start, stop) = parse_range(range, nt.entries())?;
    let defaulted = names.is_empty();
    let wanted: Vec<String> = if defaulted {
        nt.fields().into_iter().map(|f| f.name).collect()
    } else {
        names.to_vec()
    };
    let mut columns: Vec<(String, Values)> = Vec::new();
    for name in wanted {
        if columns.iter().any(|(n, _)| *n == name) {
            bail!("field {name} is named twice");
        }
        if nt.field_id(&name).is_ok_and(|id| !nt.is_per_entry(id)) {
            bail!("{name} is inside a collection: dump the collection");
        }
        match nt.read_field_range(&name, start, stop) {
            Ok(v) => columns.push((name, v)),
            Err(e) if defaulted && matches!(e, root_reader::Error::UnsupportedField { .. }) => {
                eprintln!("warning: field {name} left out: {e}");
            }
            Err(e) => return Err(e).with_context(|| format!("cannot read field {name}")),
        }
    }
    let out = std::io::stdout();
    let mut out = BufWriter::new(out.lock());
    let keys: Vec<String> = columns
        .iter()
        .map(|(n, _)| root_reader::json::quoted(n))
        .collect();
    let csv = matches!(format, DumpFormat::Csv);
    if csv {
        let mut header = String::new();
        for (k, (name, _)) in columns.iter().enumerate() {
            if k > 0 {
                header.push(',');
            }
            csv_quoted(&mut header, name);
        }
        writeln!(out, "{header}")?;
    }
    let (mut line, mut cell) = (String::new(), String::new());
    for j in 0..usize::try_from(stop - start)? {
        line.clear();
        if !csv {
            line.push('{');
        }
        for (k, (_, values)) in columns.iter().enumerate() {
            if k > 0 {
                line.push(',');
            }
            if csv {
                csv_cell(&mut line, &mut cell, values, j);
            } else {
                line.push_str(&keys[k]);
                line.push(':');
                root_reader::json::write_value(&mut line, values, j);
            }
        }
        if !csv {
            line.push('}');
        }
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(())
}

/// Entry `j` of `values` as one CSV cell (RFC 4180): a string as its text, a number or bool as
/// in JSON, a collection or record as its JSON text; quoted when it holds a comma, quote or
/// line break.
fn csv_cell(line: &mut String, cell: &mut String, values: &Values, j: usize) {
    cell.clear();
    match values {
        Values::Text(s) => cell.push_str(&s.get_str(j).unwrap_or_default()),
        _ => root_reader::json::write_value(cell, values, j),
    }
    csv_quoted(line, cell);
}

fn csv_quoted(line: &mut String, text: &str) {
    if text.contains([',', '"', '\n', '\r']) {
        line.push('"');
        line.push_str(&text.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(text);
    }
}
