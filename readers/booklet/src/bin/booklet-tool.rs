//! `booklet-tool`: inspect booklet files (Python booklet 0.12 compatible) from the shell.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use booklet::{Booklet, Flag, JsonValue, Kind, OpenOptions, ReadMode, Serializer, Value};
use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "booklet-tool",
    version,
    about = "Inspect booklet key-value files (compatible with Python booklet 0.12)",
    after_help = "Examples:\n  booklet-tool info data.blt\n  booklet-tool info data.blt --format json\n  \
                  booklet-tool get data.blt apple\n  booklet-tool get data.blt --key-b64 AAEC --format json\n  \
                  booklet-tool get pickled.blt '[\"a\", 1]'\n  \
                  booklet-tool dump data.blt --format jsonl > data.jsonl\n\n\
                  Values are decoded with the file's serializers: None/bytes (raw), str, json, \
                  orjson, pickle (plain values), msgpack, zstd, pickle_zstd, orjson_zstd, \
                  msgpack_zstd, the integer codes and the numpy integer arrays. Other serializers \
                  (pandas, shapely, custom classes) show the stored bytes and a note naming the \
                  serializer.\n\n\
                  Exit codes: 0 success, 1 key not found (get), 2 error."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// Read with positioned reads instead of a memory map.
    #[arg(long, global = true)]
    buffered: bool,
}

#[derive(Subcommand)]
enum Cmd {
    /// Header facts: version, serializers, bucket count, key count, layout.
    Info {
        /// The booklet file.
        file: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = InfoFormat::Text)]
        format: InfoFormat,
    },
    /// Print the value of one key (encoded with the file's key serializer).
    Get {
        /// The booklet file.
        file: PathBuf,
        /// The key as text: str/bytes/zstd keys as UTF-8, integer keys as a number; json, orjson,
        /// pickle and msgpack keys as JSON when the text parses as JSON (`7`, `["a", 1]`,
        /// `"7"` for the string), else as a str. Tuples and bytes need --key-b64.
        #[arg(required_unless_present = "key_b64")]
        key: Option<String>,
        /// The stored key bytes in base64 instead.
        #[arg(long, conflicts_with = "key")]
        key_b64: Option<String>,
        /// `text`: the decoded value (str as text, json as Python's json.dumps, other typed
        /// values as a Python repr, raw bytes for byte serializers); `json`: an object with
        /// `value_b64`, `value` when the value is plain JSON, else `value_repr`.
        #[arg(long, value_enum, default_value_t = GetFormat::Text)]
        format: GetFormat,
    },
    /// Every item, one JSON object per line: `key_b64`, `value_b64` (stored bytes), the decoded
    /// `key` / `value` when they are plain JSON (else `key_repr` / `value_repr`, a Python repr,
    /// for typed serializers), and `timestamp` (µs) when the file has them.
    Dump {
        /// The booklet file.
        file: PathBuf,
        /// Output format (only jsonl).
        #[arg(long, value_enum, default_value_t = DumpFormat::Jsonl)]
        format: DumpFormat,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum InfoFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum GetFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum DumpFormat {
    Jsonl,
}

fn open(file: &PathBuf, buffered: bool) -> Result<Booklet> {
    let mode = if buffered {
        ReadMode::Buffered
    } else {
        ReadMode::Mmap
    };
    OpenOptions::new()
        .read_mode(mode)
        .open(file, Flag::Read)
        .with_context(|| format!("opening {}", file.display()))
}

fn ser_name(code: u16) -> String {
    Serializer::from_code(code).map_or_else(|| format!("unknown({code})"), |s| s.name().to_owned())
}

fn info(db: &Booklet, format: InfoFormat) -> Result<()> {
    let h = db.header();
    let (kind, value_len) = match h.kind {
        Kind::Variable => ("variable", None),
        Kind::Fixed { value_len } => ("fixed", Some(value_len)),
    };
    let uuid: String = h.uuid.iter().map(|b| format!("{b:02x}")).collect();
    let doc = serde_json::json!({
        "path": db.path(),
        "kind": kind,
        "version": h.version,
        "file_size": db.file_len(),
        "n_buckets": h.n_buckets,
        "n_keys": db.len(),
        "unclean_close_marker": db.was_unclean(),
        "key_serializer": {"code": h.key_serializer, "name": ser_name(h.key_serializer)},
        "value_serializer": {"code": h.value_serializer, "name": ser_name(h.value_serializer)},
        "value_len": value_len,
        "timestamps": h.timestamps,
        "file_timestamp_us": h.file_timestamp,
        "uuid": uuid,
        "index_offset": h.index_offset,
        "first_data_block_pos": h.first_data_block_pos,
    });
    match format {
        InfoFormat::Json => println!("{}", serde_json::to_string_pretty(&doc)?),
        InfoFormat::Text => {
            println!("path:                 {}", db.path().display());
            println!(
                "kind:                 {kind}{}",
                value_len
                    .map(|v| format!(" (value length {v})"))
                    .unwrap_or_default()
            );
            println!("format version:       {}", h.version);
            println!("file size:            {} bytes", db.file_len());
            println!(
                "keys:                 {}{}",
                db.len(),
                if db.was_unclean() {
                    " (recounted: unclean-close marker set)"
                } else {
                    ""
                }
            );
            println!("buckets:              {}", h.n_buckets);
            println!(
                "key serializer:       {} ({})",
                ser_name(h.key_serializer),
                h.key_serializer
            );
            println!(
                "value serializer:     {} ({})",
                ser_name(h.value_serializer),
                h.value_serializer
            );
            println!("item timestamps:      {}", h.timestamps);
            println!("created (µs):         {}", h.file_timestamp);
            println!("uuid:                 {uuid}");
            println!("index offset:         {}", h.index_offset);
            println!("first data block:     {}", h.first_data_block_pos);
        }
    }
    Ok(())
}

fn encode_key(ser: Serializer, text: &str) -> Result<Vec<u8>> {
    use Serializer as S;
    let key = match ser {
        S::None | S::Bytes | S::Zstd => Value::Bytes(text.as_bytes().to_vec()),
        S::Str => Value::Str(text.to_owned()),
        // JSON when the text parses as JSON (`7`, `["a", 1]`, `"7"`), else the text as a str.
        S::Json
        | S::Orjson
        | S::OrjsonZstd
        | S::Pickle
        | S::PickleZstd
        | S::Msgpack
        | S::MsgpackZstd => JsonValue::parse(text.as_bytes())
            .map_or_else(|_| Value::Str(text.to_owned()), JsonValue::into_value),
        other if other.is_supported() => Value::Int(
            text.trim()
                .parse()
                .with_context(|| format!("key {text:?} is not an integer"))?,
        ),
        other => bail!(
            "cannot encode a key for serializer {} (code {}); pass the stored bytes with --key-b64",
            other.name(),
            other.code()
        ),
    };
    Ok(ser.encode(&key)?)
}

/// The file's key and value serializers; a value serializer without a codec is reported once
/// on stderr (its stored bytes are printed instead).
fn codecs(db: &Booklet) -> (Option<Serializer>, Option<Serializer>) {
    let note = |e: booklet::Error| {
        eprintln!("booklet-tool: note: {e}");
        None
    };
    let k = db.key_codec().map_or_else(note, Some);
    let v = db.value_codec().map_or_else(note, Some);
    (k, v)
}

/// Whether the decoded value is just the stored bytes (raw-bytes serializers).
fn is_raw(ser: Serializer) -> bool {
    matches!(ser, Serializer::None | Serializer::Bytes)
}

/// `"name":<plain JSON>` or `"name_repr":"<repr>"` for a decoded key or value.
fn push_decoded(line: &mut String, name: &str, ser: Serializer, v: &Value) {
    if let Some(j) = v.to_plain_json() {
        line.push_str(&format!(",\"{name}\":{j}"));
    } else if !is_raw(ser) {
        let repr = serde_json::to_string(&v.to_repr()).unwrap_or_default();
        line.push_str(&format!(",\"{name}_repr\":{repr}"));
    }
}

fn get(
    db: &mut Booklet,
    key: Option<String>,
    key_b64: Option<String>,
    format: GetFormat,
) -> Result<bool> {
    let (kser, vser) = codecs(db);
    let key = match (key, key_b64) {
        (_, Some(b)) => B64
            .decode(b.trim())
            .context("--key-b64 is not valid base64")?,
        (Some(k), None) => {
            let code = db.header().key_serializer;
            let ser = kser
                .or_else(|| Serializer::from_code(code))
                .unwrap_or(Serializer::Custom);
            encode_key(ser, &k)?
        }
        (None, None) => bail!("give a KEY or --key-b64"),
    };
    let Some(value) = db.get(&key)? else {
        eprintln!("booklet-tool: key not found");
        return Ok(false);
    };
    let decoded = match vser {
        Some(s) => Some((s, db.decode_value(&value).context("decoding the value")?)),
        None => None,
    };
    let mut out = std::io::stdout().lock();
    match format {
        GetFormat::Json => {
            let mut line = format!(
                "{{\"key_b64\":\"{}\",\"value_b64\":\"{}\"",
                B64.encode(&key),
                B64.encode(&value)
            );
            if let Some((s, v)) = &decoded {
                push_decoded(&mut line, "value", *s, v);
            }
            line.push('}');
            writeln!(out, "{line}")?;
        }
        GetFormat::Text => match decoded {
            Some((_, Value::Str(s))) => writeln!(out, "{s}")?,
            Some((Serializer::Json, v)) => match JsonValue::parse(&value) {
                Ok(j) => writeln!(out, "{}", j.to_python_json())?,
                Err(_) => writeln!(out, "{v}")?,
            },
            Some((s, v)) if !is_raw(s) && !matches!(v, Value::Bytes(_)) => writeln!(out, "{v}")?,
            _ => out.write_all(&value)?,
        },
    }
    Ok(true)
}

fn dump(db: &mut Booklet) -> Result<()> {
    let (kser, vser) = codecs(db);
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut line = String::new();
    for e in db.iter()? {
        let e = e.context("reading items")?;
        line.clear();
        line.push_str("{\"key_b64\":\"");
        line.push_str(&B64.encode(&e.key));
        line.push_str("\",\"value_b64\":\"");
        line.push_str(&B64.encode(&e.value));
        line.push('"');
        if let Some(s) = kser {
            let k = s
                .decode(&e.key)
                .with_context(|| format!("decoding the key at offset {}", e.offset))?;
            push_decoded(&mut line, "key", s, &k);
        }
        if let Some(s) = vser {
            let v = s
                .decode(&e.value)
                .with_context(|| format!("decoding the value at offset {}", e.offset))?;
            push_decoded(&mut line, "value", s, &v);
        }
        if let Some(t) = e.timestamp {
            line.push_str(",\"timestamp\":");
            line.push_str(&t.to_string());
        }
        line.push('}');
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(())
}

fn run(cli: Cli) -> Result<bool> {
    match cli.cmd {
        Cmd::Info { file, format } => {
            let db = open(&file, cli.buffered)?;
            info(&db, format)?;
            Ok(true)
        }
        Cmd::Get {
            file,
            key,
            key_b64,
            format,
        } => {
            let mut db = open(&file, cli.buffered)?;
            get(&mut db, key, key_b64, format)
        }
        Cmd::Dump {
            file,
            format: DumpFormat::Jsonl,
        } => {
            let mut db = open(&file, cli.buffered)?;
            dump(&mut db)?;
            Ok(true)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("booklet-tool: {e:#}");
            ExitCode::from(2)
        }
    }
}
