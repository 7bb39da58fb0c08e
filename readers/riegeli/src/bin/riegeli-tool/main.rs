//! `riegeli-tool`: inspect, dump and write Riegeli/records files.

mod input;
mod output;

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use base64::Engine;
use clap::{Parser, Subcommand, ValueEnum};
use riegeli_records::{
    ArrayRecordReader, ChunkInfo, ChunkType, CompressionType, FieldProjection, ProjectionError,
    RecordReader, RecordWriter, SkippedRegion, WriterOptions,
};

use input::{GroupShape, Input, MappedRecords, NextRecord};
use output::OutputFile;

#[derive(Parser)]
#[command(
    name = "riegeli-tool",
    version,
    about = "Inspect, dump and write Riegeli/records files (byte-compatible with C++ riegeli)",
    after_help = "Examples:
  riegeli-tool info data.riegeli
  riegeli-tool info --format json data.riegeli
  riegeli-tool cat --format jsonl data.riegeli
  riegeli-tool cat --recover --format hex damaged.riegeli
  riegeli-tool cat --fields 1,3.2,4.0 --format hex transposed.riegeli
  riegeli-tool cat data.riegeli | riegeli-tool write --options transpose,zstd:3 copy.riegeli
  riegeli-tool cat data.riegeli | riegeli-tool write --array-record --options group_size:64,zstd:3 out.array_record

Exit status: 0 on success, 1 on a damaged or unreadable file, 2 on bad usage."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the chunks of a file: offsets, types, compression, records and sizes.
    Info {
        /// The file.
        file: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = InfoFormat::Text)]
        format: InfoFormat,
        /// Skip damaged regions (reported on standard error) instead of failing.
        #[arg(long)]
        recover: bool,
        /// Count an ArrayRecord file's footer and postscript records as records (the plain
        /// Riegeli view).
        #[arg(long)]
        raw: bool,
    },
    /// Write every record to standard output. An ArrayRecord file's records are the user's
    /// records only, as C++ `ArrayRecordReader` reads them (`--raw`: every Riegeli record).
    Cat {
        /// The file.
        file: PathBuf,
        /// `len-prefixed`: 8-byte little-endian length, then the bytes; `hex`/`base64`: one record per
        /// line; `jsonl`: {"index", "position", "base64"} per line.
        #[arg(long, value_enum, default_value_t = CatFormat::LenPrefixed)]
        format: CatFormat,
        /// Skip damaged regions (reported on standard error) instead of failing.
        #[arg(long)]
        recover: bool,
        /// Also print an ArrayRecord file's footer and postscript records (the plain Riegeli
        /// view).
        #[arg(long)]
        raw: bool,
        /// Read only these proto fields of transposed chunks (C++ `FieldProjection`): paths of
        /// field numbers, dots between levels, commas between paths; a trailing `.0` keeps only
        /// the field's presence. `1,3.2,4.0`: field 1, field 2 of submessage 3, field 4 emptied.
        /// Records of simple chunks and non-proto records come whole, as in C++.
        #[arg(long, value_name = "PATHS", value_parser = parse_fields)]
        fields: Option<FieldProjection>,
    },
    /// Write records read from standard input (len-prefixed, as `cat` writes them) to a new file.
    Write {
        /// Writer options in C++ syntax, e.g. `transpose,brotli:6,chunk_size:1M` (array_record's syntax
        /// with --array-record, e.g. `group_size:64,zstd:3`).
        #[arg(long, default_value = "")]
        options: String,
        /// Write the ArrayRecord layout (footer index and postscript).
        #[arg(long)]
        array_record: bool,
        /// The output file (overwritten).
        out: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum InfoFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum CatFormat {
    LenPrefixed,
    Hex,
    Base64,
    Jsonl,
}

fn open(path: &Path, recover: bool) -> Result<RecordReader<BufReader<File>>> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut reader = RecordReader::new(BufReader::with_capacity(1 << 20, file))
        .with_context(|| format!("reading {}", path.display()))?;
    if recover {
        reader.set_recovery(|region: &SkippedRegion| {
            eprintln!("riegeli-tool: {region} ({} bytes)", region.len());
            true
        });
    }
    Ok(reader)
}

/// What an ArrayRecord file's postscript says: where its footer starts (the user's records are
/// in the chunks before it), how many records and how they are grouped. `None` for a plain
/// Riegeli file (no valid postscript), as C++ `ArrayRecordReader` would refuse it.
struct ArrayRecordLayout {
    footer_offset: u64,
    records: u64,
    group_size: u64,
}

fn array_record_layout(path: &Path) -> Option<ArrayRecordLayout> {
    let file = File::open(path).ok()?;
    let reader = ArrayRecordReader::new(BufReader::new(file)).ok()?;
    Some(ArrayRecordLayout {
        footer_offset: reader.footer_offset(),
        records: reader.len(),
        group_size: reader.group_size(),
    })
}

fn info(path: &Path, format: InfoFormat, recover: bool, raw: bool) -> Result<()> {
    let layout = if raw { None } else { array_record_layout(path) };
    let mut reader = open(path, recover)?;
    let size = reader.size();
    let mut chunks = Vec::new();
    while let Some(c) = reader
        .read_chunk_info()
        .with_context(|| format!("reading {}", path.display()))?
    {
        chunks.push(c);
    }
    // In an ArrayRecord file the footer and postscript chunks hold no user records.
    let user_chunk = |c: &&ChunkInfo| layout.as_ref().is_none_or(|l| c.begin < l.footer_offset);
    let (records, decoded) = chunks
        .iter()
        .filter(user_chunk)
        .filter(|c| {
            matches!(
                c.header.chunk_type,
                ChunkType::Simple | ChunkType::Transposed
            )
        })
        .fold((0u64, 0u64), |(r, d), c| {
            (r + c.header.num_records, d + c.header.decoded_data_size)
        });
    let mut out = std::io::stdout().lock();
    if format == InfoFormat::Json {
        let list: Vec<serde_json::Value> = chunks
            .iter()
            .map(|c| {
                serde_json::json!({
                    "begin": c.begin,
                    "end": c.end,
                    "type": c.header.chunk_type.name(),
                    "compression": c.compression.map(|k| k.name()),
                    "num_records": c.header.num_records,
                    "data_size": c.header.data_size,
                    "decoded_data_size": c.header.decoded_data_size,
                })
            })
            .collect();
        let doc = serde_json::json!({
            "file": path.display().to_string(),
            "size": size,
            "num_chunks": chunks.len(),
            "num_records": records,
            "decoded_data_size": decoded,
            "array_record": layout.as_ref().map(|l| serde_json::json!({
                "records": l.records,
                "group_size": l.group_size,
                "footer_offset": l.footer_offset,
            })),
            "chunks": list,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "{}: {size} bytes, {} chunks, {records} records, {decoded} record bytes",
        path.display(),
        chunks.len()
    )?;
    if let Some(l) = &layout {
        writeln!(
            out,
            "ArrayRecord: {} records in groups of {}, footer at {} (its chunks and the \
             postscript's hold no records; --raw counts them)",
            l.records, l.group_size, l.footer_offset
        )?;
    }
    writeln!(
        out,
        "{:>12} {:>12}  {:<10} {:<12} {:>10} {:>12} {:>12}",
        "begin", "end", "type", "compression", "records", "data", "decoded"
    )?;
    for c in &chunks {
        writeln!(
            out,
            "{:>12} {:>12}  {:<10} {:<12} {:>10} {:>12} {:>12}",
            c.begin,
            c.end,
            c.header.chunk_type.name(),
            c.compression.map_or("-", |k| k.name()),
            c.header.num_records,
            c.header.data_size,
            c.header.decoded_data_size
        )?;
    }
    Ok(())
}

/// `--fields`, checked when the command line is parsed (a bad one exits with 2).
fn parse_fields(text: &str) -> std::result::Result<FieldProjection, ProjectionError> {
    FieldProjection::parse(text)
}

fn cat(
    path: &Path,
    format: CatFormat,
    recover: bool,
    raw: bool,
    fields: Option<&FieldProjection>,
) -> Result<()> {
    let footer = if raw {
        None
    } else {
        array_record_layout(path).map(|l| l.footer_offset)
    };
    let mut reader = open(path, recover)?;
    if let Some(fields) = fields {
        reader
            .set_field_projection(fields.clone())
            .with_context(|| format!("reading {}", path.display()))?;
    }
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut index = 0u64;
    loop {
        let position = reader.position();
        let Some(record) = reader
            .read_record()
            .with_context(|| format!("reading {}", path.display()))?
        else {
            break;
        };
        // An ArrayRecord file's footer and postscript follow its records.
        if footer.is_some_and(|f| position.chunk_begin >= f) {
            break;
        }
        match format {
            CatFormat::LenPrefixed => {
                out.write_all(&(record.len() as u64).to_le_bytes())?;
                out.write_all(record)?;
            }
            CatFormat::Hex => {
                for b in record {
                    write!(out, "{b:02x}")?;
                }
                writeln!(out)?;
            }
            CatFormat::Base64 => writeln!(out, "{}", b64.encode(record))?,
            CatFormat::Jsonl => {
                let line = serde_json::json!({
                    "index": index,
                    "position": position.to_string(),
                    "base64": b64.encode(record),
                });
                writeln!(out, "{line}")?;
            }
        }
        index += 1;
    }
    out.flush()?;
    Ok(())
}

fn write(options: &str, array_record: bool, path: &Path) -> Result<()> {
    let mut parsed = if array_record {
        WriterOptions::parse_array_record(options)
    } else {
        WriterOptions::parse(options)
    }
    .with_context(|| format!("options {options:?}"))?;
    // For a fast codec, a file is mapped and its chunks encoded on a thread of their own while
    // the writer copies the next one's records (input/mapped.rs): Snappy from a file -11%, Zstd
    // unchanged. Uncompressed output has nothing to hand off, and Brotli's encoding dwarfs the
    // copy (its records are gathered on the input thread): both keep reading.
    let fast_codec = matches!(
        parsed.compression.kind,
        CompressionType::Snappy | CompressionType::Zstd
    );
    let mapped = if fast_codec {
        MappedRecords::stdin().context("mapping standard input")?
    } else {
        None
    };
    if mapped.is_some() && parsed.parallelism == 0 {
        parsed.parallelism = 1;
    }
    let file = OutputFile::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut writer =
        RecordWriter::new(file, parsed).with_context(|| format!("options {options:?}"))?;
    widen_stdin_pipe();
    // Groups of exactly a chunk's records where the options fix that number (they become the
    // chunk without a copy), else of about 1 MiB.
    let shape = match writer.records_per_chunk() {
        // A group in flight holds a whole chunk: past 64 MiB (array_record's default group of
        // 65,536 records of 1 KiB and more) groups end early and the writer copies their
        // records, so that the two groups in flight never hold more than 128 MiB.
        Some(records) => GroupShape {
            records,
            bytes: 64 << 20,
        },
        None => GroupShape {
            records: u64::MAX,
            bytes: 1 << 20,
        },
    };
    // Brotli costs several times what reading a pipe does (input/mod.rs).
    let slow_codec = writer.options().compression.kind == CompressionType::Brotli;
    let input = match mapped {
        Some(records) => Input::Mapped(records),
        None => Input::stdin(shape, slow_codec),
    };
    let count = match input {
        Input::Mapped(mut records) => write_each(&mut writer, &mut records)?,
        Input::Records(mut records) => write_each(&mut writer, &mut records)?,
        Input::Groups(mut groups) => {
            let mut count = 0;
            while let Some(mut group) = groups.next_group()? {
                count += group.len();
                writer.write_group(&mut group)?;
                groups.recycle(group);
            }
            count
        }
    };
    writer
        .close()
        .and_then(|out| Ok(out.finish()?))
        .with_context(|| format!("writing {}", path.display()))?;
    eprintln!("riegeli-tool: wrote {count} records to {}", path.display());
    Ok(())
}

/// Writes every record of `records`, one at a time; how many there were.
fn write_each<W: std::io::Write>(
    writer: &mut RecordWriter<W>,
    records: &mut impl NextRecord,
) -> Result<u64> {
    let mut count = 0;
    while let Some(record) = records.next_record()? {
        writer.write_record(record)?;
        count += 1;
    }
    Ok(count)
}

/// A pipe holds 64 KiB by default. With its writer on another core, each 64 KiB then costs a
/// wake-up on both sides, more than the copying on an idle machine: 100 MB of records from a
/// producer took 122 ms through 64 KiB and 46 ms through 1 MiB (`riegeli_tool_write`, snappy).
/// 1 MiB is Linux's default limit for unprivileged processes (`/proc/sys/fs/pipe-max-size`).
/// Standard input that is not a pipe, or a lower limit, leaves things as they are.
fn widen_stdin_pipe() {
    #[cfg(target_os = "linux")]
    {
        let _ = rustix::pipe::fcntl_setpipe_size(std::io::stdin(), 1 << 20);
    }
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Info {
            file,
            format,
            recover,
            raw,
        } => info(file, *format, *recover, *raw),
        Command::Cat {
            file,
            format,
            recover,
            raw,
            fields,
        } => cat(file, *format, *recover, *raw, fields.as_ref()),
        Command::Write {
            options,
            array_record,
            out,
        } => write(options, *array_record, out),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return std::process::ExitCode::SUCCESS;
            }
            eprintln!("riegeli-tool: {e:#}");
            std::process::ExitCode::from(1)
        }
    }
}
