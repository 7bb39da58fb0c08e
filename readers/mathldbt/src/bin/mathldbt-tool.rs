//! `mathldbt-tool`: write the benchmark fixture, inspect and validate
//! MATHLDBT files.
//!
//! Exit codes: 0 success; 1 the file is not a valid MATHLDBT message (or
//! wire frame); 2 usage or I/O error.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use mathldbt::{
    ColumnValues, ColumnarBatch, Compression, DecodeError, DecodeOptions, Decoder, EncodeOptions,
    Encoder, WireFormat, detect_wire_format, fixture, inspect,
};

const EXAMPLES: &str = "\
Examples:
  mathldbt-tool sample --rows 100000 --checksum --out bars.mldbt
  mathldbt-tool sample --rows 2000 --dict-delta --compression zstd --out bars.mldbt.zst
  mathldbt-tool inspect bars.mldbt
  mathldbt-tool decode bars.mldbt.zst --head 5

Exit codes: 0 success, 1 invalid MATHLDBT input, 2 usage or I/O error.";

#[derive(Debug, Parser)]
#[command(
    name = "mathldbt-tool",
    version,
    about = "Write, inspect and validate MATHLDBT v1 files",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum CompressionArg {
    None,
    Zstd,
    Gzip,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write the deterministic "bars" benchmark fixture.
    #[command(
        after_help = "Example:\n  mathldbt-tool sample --rows 100000 --dict-delta --out bars.mldbt"
    )]
    Sample {
        /// Number of rows.
        #[arg(long)]
        rows: usize,
        /// Use DictUtf8 for text and DeltaVarintI64 for null-free i64/timestamps.
        #[arg(long)]
        dict_delta: bool,
        /// Append an XXH3-64 checksum trailer.
        #[arg(long)]
        checksum: bool,
        /// Wire compression of the whole message.
        #[arg(long, value_enum, default_value = "none")]
        compression: CompressionArg,
        /// Output file.
        #[arg(long)]
        out: PathBuf,
    },
    /// Print the schema, encodings and buffer sizes of a file.
    #[command(after_help = "Example:\n  mathldbt-tool inspect bars.mldbt")]
    Inspect {
        /// A MATHLDBT message, or one compressed as a zstd frame or gzip member.
        file: PathBuf,
        /// Refuse to decompress beyond this many bytes.
        #[arg(long, default_value_t = 1 << 30)]
        max_uncompressed_len: usize,
    },
    /// Validate a file completely (exit 0), or print why it is invalid (exit 1).
    #[command(after_help = "Example:\n  mathldbt-tool decode bars.mldbt --head 3")]
    Decode {
        /// A MATHLDBT message, or one compressed as a zstd frame or gzip member.
        file: PathBuf,
        /// Refuse to decompress beyond this many bytes.
        #[arg(long, default_value_t = 1 << 30)]
        max_uncompressed_len: usize,
        /// Print the first N rows as tab-separated values.
        #[arg(long, default_value_t = 0)]
        head: usize,
    },
}

/// A decode failure: the input is invalid (exit 1), as opposed to an I/O or
/// usage problem (exit 2).
#[derive(Debug)]
struct Invalid(DecodeError);

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid MATHLDBT input: {}", self.0)
    }
}

impl std::error::Error for Invalid {}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            if e.chain().any(|c| c.downcast_ref::<Invalid>().is_some()) {
                ExitCode::from(1)
            } else {
                ExitCode::from(2)
            }
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Sample {
            rows,
            dict_delta,
            checksum,
            compression,
            out,
        } => sample(rows, dict_delta, checksum, compression, &out),
        Command::Inspect {
            file,
            max_uncompressed_len,
        } => inspect_file(&file, max_uncompressed_len),
        Command::Decode {
            file,
            max_uncompressed_len,
            head,
        } => decode_file(&file, max_uncompressed_len, head),
    }
}

fn sample(
    rows: usize,
    dict_delta: bool,
    checksum: bool,
    compression: CompressionArg,
    out: &Path,
) -> Result<()> {
    let options = if dict_delta {
        EncodeOptions::dict_delta()
    } else {
        EncodeOptions::plain()
    }
    .with_checksum(checksum);
    let compression = match compression {
        CompressionArg::None => Compression::None,
        CompressionArg::Zstd => Compression::ZSTD_DEFAULT,
        CompressionArg::Gzip => Compression::GZIP_DEFAULT,
    };
    let batch = fixture::bars(rows);
    let mut encoder = Encoder::new(options);
    let bytes = encoder
        .encode_compressed(&batch, compression)
        .context("encoding the bars fixture")?;
    std::fs::write(out, bytes).with_context(|| format!("writing {}", out.display()))?;
    println!(
        "wrote {} ({} rows, {} bytes, {})",
        out.display(),
        rows,
        bytes.len(),
        compression.label()
    );
    Ok(())
}

fn read(file: &Path) -> Result<Vec<u8>> {
    std::fs::read(file).with_context(|| format!("reading {}", file.display()))
}

fn wire_label(bytes: &[u8]) -> &'static str {
    match detect_wire_format(bytes) {
        Some(WireFormat::Raw) => "MATHLDBT message",
        Some(WireFormat::Zstd) => "zstd frame",
        Some(WireFormat::Gzip) => "gzip member",
        None => "unrecognized",
    }
}

fn inspect_file(file: &Path, max: usize) -> Result<()> {
    let wire = read(file)?;
    let mut decoder = Decoder::new(DecodeOptions::default());
    let raw = decoder
        .decompress(&wire, max)
        .map_err(Invalid)
        .with_context(|| format!("decompressing {}", file.display()))?;
    let info = inspect(raw)
        .map_err(Invalid)
        .with_context(|| format!("inspecting {}", file.display()))?;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} ({} bytes{})",
        file.display(),
        wire_label(&wire),
        wire.len(),
        if raw.len() == wire.len() {
            String::new()
        } else {
            format!(", {} bytes uncompressed", raw.len())
        }
    );
    let _ = writeln!(
        s,
        "version {}, {} rows, {} columns, metadata {} bytes, checksum {}",
        info.version,
        info.num_rows,
        info.columns.len(),
        info.metadata_len,
        info.checksum
            .map_or_else(|| "none".to_owned(), |c| format!("xxh3-64 {c:016x}"))
    );
    let name_w = info
        .columns
        .iter()
        .map(|c| c.name.len())
        .chain([4])
        .max()
        .unwrap_or(4);
    let _ = writeln!(
        s,
        "{:>3}  {:<name_w$}  {:<18}  {:<16}  {:<8}  {:>8}  {:>12}  buffers",
        "#", "name", "type", "encoding", "nullable", "nulls", "bytes"
    );
    for (i, c) in info.columns.iter().enumerate() {
        let buffers: Vec<String> = c
            .buffers
            .iter()
            .map(|b| format!("{}={}", b.name, b.len))
            .collect();
        let _ = writeln!(
            s,
            "{:>3}  {:<name_w$}  {:<18}  {:<16}  {:<8}  {:>8}  {:>12}  {}{}",
            i,
            c.name,
            c.data_type.name(),
            c.encoding.name(),
            if c.nullable { "yes" } else { "no" },
            c.null_count,
            c.buffer_bytes(),
            buffers.join(" "),
            if c.param != 0 {
                format!(" (index width {})", c.param)
            } else {
                String::new()
            }
        );
    }
    print!("{s}");
    Ok(())
}

fn decode_file(file: &Path, max: usize, head: usize) -> Result<()> {
    let wire = read(file)?;
    let mut decoder = Decoder::new(DecodeOptions::default());
    let batch = decoder
        .decode_compressed(&wire, max)
        .map_err(Invalid)
        .with_context(|| format!("decoding {}", file.display()))?;
    println!(
        "ok: {} ({}), {} rows, {} columns",
        file.display(),
        wire_label(&wire),
        batch.num_rows(),
        batch.num_columns()
    );
    if head > 0 {
        print!("{}", format_head(&batch, head));
    }
    Ok(())
}

fn format_value(values: &ColumnValues, row: usize) -> String {
    match values {
        ColumnValues::Bool(v) => v.get(row).map(ToString::to_string),
        ColumnValues::I32(v) | ColumnValues::Date32(v) => v.get(row).map(ToString::to_string),
        ColumnValues::I64(v) | ColumnValues::TimestampTzMicros(v) => {
            v.get(row).map(ToString::to_string)
        }
        ColumnValues::F32(v) => v.get(row).map(ToString::to_string),
        ColumnValues::F64(v) => v.get(row).map(ToString::to_string),
        ColumnValues::Utf8(v) | ColumnValues::JsonbText(v) => {
            v.get(row).map(|s| s.escape_debug().to_string())
        }
        ColumnValues::Binary(v) => v
            .get(row)
            .map(|b| b.iter().map(|x| format!("{x:02x}")).collect()),
    }
    .unwrap_or_default()
}

fn format_head(batch: &ColumnarBatch, head: usize) -> String {
    let mut s = String::new();
    let names: Vec<&str> = batch.schema().fields().iter().map(|f| f.name()).collect();
    let _ = writeln!(s, "{}", names.join("\t"));
    for row in 0..head.min(batch.num_rows()) {
        let cells: Vec<String> = batch
            .columns()
            .iter()
            .map(|c| {
                if c.is_null(row) {
                    "NULL".to_owned()
                } else {
                    format_value(c.values(), row)
                }
            })
            .collect();
        let _ = writeln!(s, "{}", cells.join("\t"));
    }
    s
}
