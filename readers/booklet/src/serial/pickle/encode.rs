//! The pickle encoder: the bytes of CPython's `pickle.dumps(obj, 5)` (see the parent module).

use std::collections::HashMap;

#[allow(clippy::wildcard_imports, reason = "the opcode table")]
use super::opcodes::*;
use crate::error::{Error, Result};
use crate::serial::Value;

/// Encode `v` as CPython's `pickle.dumps(v, 5)` does (see the module docs for the one case
/// that differs: equal strings that Python would share only by object identity).
pub(in crate::serial) fn encode(v: &Value) -> Result<Vec<u8>> {
    let mut enc = Encoder {
        body: Vec::new(),
        memo_len: 0,
        shared: HashMap::new(),
    };
    enc.save(v, 0)?;
    enc.body.push(STOP);
    let mut out = Vec::with_capacity(enc.body.len() + 11);
    out.extend_from_slice(&[PROTO, 5]);
    // CPython drops a frame shorter than 4 bytes (FRAME_SIZE_MIN).
    if enc.body.len() >= 4 {
        out.push(FRAME);
        out.extend_from_slice(&(enc.body.len() as u64).to_le_bytes());
    }
    out.extend_from_slice(&enc.body);
    Ok(out)
}

/// Objects CPython keeps as singletons, so one pickle refers to them by memo: the empty and
/// one-character Latin-1 strings, the empty and one-byte bytes.
#[derive(Hash, PartialEq, Eq)]
enum Singleton {
    Str(char),
    EmptyStr,
    Bytes(Option<u8>),
}

struct Encoder {
    body: Vec<u8>,
    memo_len: u32,
    shared: HashMap<Singleton, u32>,
}

impl Encoder {
    fn save(&mut self, v: &Value, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(encode_err(format!(
                "containers nested deeper than {MAX_DEPTH} levels"
            )));
        }
        let b = &mut self.body;
        match v {
            Value::None => b.push(NONE),
            Value::Bool(true) => b.push(NEWTRUE),
            Value::Bool(false) => b.push(NEWFALSE),
            Value::Int(i) => save_int(*i, b),
            Value::Float(f) => {
                b.push(BINFLOAT);
                b.extend_from_slice(&f.to_be_bytes());
            }
            Value::Str(s) => {
                let single = singleton_str(s);
                if self.get_shared(single.as_ref()) {
                    return Ok(());
                }
                let b = &mut self.body;
                let n = s.len();
                if n < 256 {
                    b.extend_from_slice(&[SHORT_BINUNICODE, n as u8]);
                } else if let Ok(n) = u32::try_from(n) {
                    b.push(BINUNICODE);
                    b.extend_from_slice(&n.to_le_bytes());
                } else {
                    b.push(BINUNICODE8);
                    b.extend_from_slice(&(n as u64).to_le_bytes());
                }
                b.extend_from_slice(s.as_bytes());
                self.memoize(single);
            }
            Value::Bytes(data) => {
                let single = match data.as_slice() {
                    [] => Some(Singleton::Bytes(None)),
                    [x] => Some(Singleton::Bytes(Some(*x))),
                    _ => None,
                };
                if self.get_shared(single.as_ref()) {
                    return Ok(());
                }
                let b = &mut self.body;
                let n = data.len();
                if n < 256 {
                    b.extend_from_slice(&[SHORT_BINBYTES, n as u8]);
                } else if let Ok(n) = u32::try_from(n) {
                    b.push(BINBYTES);
                    b.extend_from_slice(&n.to_le_bytes());
                } else {
                    b.push(BINBYTES8);
                    b.extend_from_slice(&(n as u64).to_le_bytes());
                }
                b.extend_from_slice(data);
                self.memoize(single);
            }
            Value::Tuple(items) => {
                if items.is_empty() {
                    b.push(EMPTY_TUPLE);
                    return Ok(());
                }
                let short = items.len() <= 3;
                if !short {
                    b.push(MARK);
                }
                for item in items {
                    self.save(item, depth + 1)?;
                }
                self.body.push(match items.len() {
                    1 => TUPLE1,
                    2 => TUPLE2,
                    3 => TUPLE3,
                    _ => TUPLE,
                });
                self.memoize(None);
            }
            Value::List(items) => {
                b.push(EMPTY_LIST);
                self.memoize(None);
                if let [only] = items.as_slice() {
                    self.save(only, depth + 1)?;
                    self.body.push(APPEND);
                } else {
                    for batch in items.chunks(1000) {
                        self.body.push(MARK);
                        for item in batch {
                            self.save(item, depth + 1)?;
                        }
                        self.body.push(APPENDS);
                    }
                }
            }
            Value::Dict(entries) => {
                b.push(EMPTY_DICT);
                self.memoize(None);
                for (k, _) in entries {
                    check_hashable(k)?;
                }
                if let [(k, v)] = entries.as_slice() {
                    self.save(k, depth + 1)?;
                    self.save(v, depth + 1)?;
                    self.body.push(SETITEM);
                } else {
                    for batch in entries.chunks(1000) {
                        self.body.push(MARK);
                        for (k, v) in batch {
                            self.save(k, depth + 1)?;
                            self.save(v, depth + 1)?;
                        }
                        self.body.push(SETITEMS);
                    }
                }
            }
        }
        Ok(())
    }

    /// Write a memo reference if this singleton was already pickled.
    fn get_shared(&mut self, single: Option<&Singleton>) -> bool {
        let Some(idx) = single.and_then(|s| self.shared.get(s)).copied() else {
            return false;
        };
        if let Ok(small) = u8::try_from(idx) {
            self.body.extend_from_slice(&[BINGET, small]);
        } else {
            self.body.push(LONG_BINGET);
            self.body.extend_from_slice(&idx.to_le_bytes());
        }
        true
    }

    fn memoize(&mut self, single: Option<Singleton>) {
        self.body.push(MEMOIZE);
        if let Some(s) = single {
            self.shared.insert(s, self.memo_len);
        }
        self.memo_len += 1;
    }
}

fn singleton_str(s: &str) -> Option<Singleton> {
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (None, _) => Some(Singleton::EmptyStr),
        (Some(c), None) if u32::from(c) < 256 => Some(Singleton::Str(c)),
        _ => None,
    }
}

/// CPython refuses to unpickle a dict whose key is a list or dict (unhashable), so neither is
/// written.
fn check_hashable(k: &Value) -> Result<()> {
    match k {
        Value::List(_) | Value::Dict(_) => Err(encode_err(format!(
            "a dict key of type {} is unhashable in Python",
            k.type_name()
        ))),
        Value::Tuple(items) => items.iter().try_for_each(check_hashable),
        _ => Ok(()),
    }
}

fn encode_err(reason: String) -> Error {
    Error::Encode {
        serializer: NAME,
        reason,
    }
}

/// CPython's `save_long` for protocol 2 and later.
fn save_int(i: i128, b: &mut Vec<u8>) {
    if (0..=0xff).contains(&i) {
        b.extend_from_slice(&[BININT1, i as u8]);
    } else if (0..=0xffff).contains(&i) {
        b.push(BININT2);
        b.extend_from_slice(&(i as u16).to_le_bytes());
    } else if let Ok(small) = i32::try_from(i) {
        b.push(BININT);
        b.extend_from_slice(&small.to_le_bytes());
    } else {
        // The shortest little-endian two's complement that keeps the sign.
        let bytes = i.to_le_bytes();
        let mut n = 16;
        while n > 1 {
            let top = bytes[n - 1];
            let below_sign = bytes[n - 2] & 0x80 != 0;
            if (top == 0 && !below_sign) || (top == 0xff && below_sign) {
                n -= 1;
            } else {
                break;
            }
        }
        b.extend_from_slice(&[LONG1, n as u8]);
        b.extend_from_slice(&bytes[..n]);
    }
}
