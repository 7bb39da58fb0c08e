//! The pickle decoder: a stack machine over an arena of shared nodes, then a bounded copy
//! into a [`Value`] tree (see the parent module).

use std::collections::HashMap;
use std::ops::Range;

#[allow(clippy::wildcard_imports, reason = "the opcode table")]
use super::opcodes::*;
use crate::error::{Error, Result};
use crate::serial::Value;
use crate::serial::budget::Budget;

fn err(reason: impl Into<String>) -> Error {
    Error::Decode {
        serializer: NAME,
        reason: reason.into(),
    }
}

/// Why an opcode outside the plain-value subset is refused.
fn unsupported(op: u8) -> Option<&'static str> {
    Some(match op {
        b'c' | 0x93 => "a global (class or function reference)",
        b'R' | b'b' | b'i' | b'o' | 0x81 | 0x92 => {
            "an object built by a class (REDUCE/BUILD/NEWOBJ/INST/OBJ)"
        }
        0x8f..=0x91 => "a set or frozenset",
        b'P' | b'Q' => "a persistent id",
        0x82..=0x84 => "an extension-registry object",
        0x97 | 0x98 => "an out-of-band buffer",
        b'S' | b'T' | b'U' => "a Python 2 str (STRING/BINSTRING)",
        b'V' => "a protocol-0 text unicode string",
        _ => return None,
    })
}

/// A decoded item; containers refer to other nodes by index, as Python objects refer to
/// objects, so the memo and `DUP` share instead of copying.
enum Node {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    /// UTF-8 checked text at this range of the input.
    Str(Range<usize>),
    Bytes(Range<usize>),
    List(Vec<u32>),
    Tuple(Vec<u32>),
    Dict(Vec<(u32, u32)>),
}

struct Machine<'a> {
    data: &'a [u8],
    pos: usize,
    nodes: Vec<Node>,
    stack: Vec<u32>,
    /// Stack lengths at each `MARK`.
    marks: Vec<usize>,
    memo: HashMap<u32, u32>,
}

/// Decode a pickle of a plain value, charging the built tree to `budget`.
pub(in crate::serial) fn decode(data: &[u8], budget: &mut Budget) -> Result<Value> {
    let mut m = Machine {
        data,
        pos: 0,
        nodes: Vec::new(),
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
    };
    let root = m.run()?;
    let mut on_path = vec![false; m.nodes.len()];
    m.build(root, 0, &mut on_path, budget)
}

impl Machine<'_> {
    fn run(&mut self) -> Result<u32> {
        loop {
            let at = self.pos;
            let op = self.byte()?;
            match op {
                PROTO => {
                    let v = self.byte()?;
                    if v > 5 {
                        return Err(err(format!("unsupported pickle protocol {v}")));
                    }
                }
                // Frames only group opcodes for buffered reading; the whole input is here.
                FRAME => {
                    self.take(8)?;
                }
                STOP => return self.pop(),
                MARK => self.marks.push(self.stack.len()),
                POP => {
                    if self.marks.last() == Some(&self.stack.len()) {
                        self.marks.pop();
                    } else {
                        self.pop()?;
                    }
                }
                POP_MARK => {
                    self.pop_mark()?;
                }
                DUP => {
                    let top = self.top()?;
                    self.stack.push(top);
                }
                PUT => {
                    let idx = self.text_line()?;
                    let idx = parse_decimal(idx).and_then(|v| u32::try_from(v).ok());
                    let idx = idx.ok_or_else(|| err(format!("bad PUT index at offset {at}")))?;
                    self.memo_put(idx)?;
                }
                BINPUT => {
                    let idx = self.byte()?;
                    self.memo_put(u32::from(idx))?;
                }
                LONG_BINPUT => {
                    let idx = self.u32()?;
                    self.memo_put(idx)?;
                }
                MEMOIZE => {
                    let idx = u32::try_from(self.memo.len()).map_err(|_| err("memo too large"))?;
                    self.memo_put(idx)?;
                }
                GET => {
                    let idx = self.text_line()?;
                    let idx = parse_decimal(idx).and_then(|v| u32::try_from(v).ok());
                    let idx = idx.ok_or_else(|| err(format!("bad GET index at offset {at}")))?;
                    self.memo_get(idx, at)?;
                }
                BINGET => {
                    let idx = self.byte()?;
                    self.memo_get(u32::from(idx), at)?;
                }
                LONG_BINGET => {
                    let idx = self.u32()?;
                    self.memo_get(idx, at)?;
                }
                NONE => self.push(Node::None),
                NEWTRUE => self.push(Node::Bool(true)),
                NEWFALSE => self.push(Node::Bool(false)),
                INT => {
                    let line = self.text_line()?;
                    let node = match line {
                        b"01" => Node::Bool(true),
                        b"00" => Node::Bool(false),
                        _ => Node::Int(
                            parse_decimal(line)
                                .ok_or_else(|| err(format!("bad INT literal at offset {at}")))?,
                        ),
                    };
                    self.push(node);
                }
                LONG => {
                    let line = self.text_line()?;
                    let digits = line.strip_suffix(b"L").unwrap_or(line);
                    let v = parse_decimal(digits).ok_or_else(|| {
                        err(format!(
                            "LONG literal at offset {at} is not a 128-bit integer"
                        ))
                    })?;
                    self.push(Node::Int(v));
                }
                FLOAT => {
                    let line = self.text_line()?;
                    let v = std::str::from_utf8(line)
                        .ok()
                        .and_then(|s| s.parse::<f64>().ok())
                        .ok_or_else(|| err(format!("bad FLOAT literal at offset {at}")))?;
                    self.push(Node::Float(v));
                }
                BININT => {
                    let b = self.array::<4>()?;
                    self.push(Node::Int(i128::from(i32::from_le_bytes(b))));
                }
                BININT1 => {
                    let b = self.byte()?;
                    self.push(Node::Int(i128::from(b)));
                }
                BININT2 => {
                    let b = self.array::<2>()?;
                    self.push(Node::Int(i128::from(u16::from_le_bytes(b))));
                }
                LONG1 => {
                    let n = usize::from(self.byte()?);
                    let b = self.take(n)?;
                    let v = long_from_le(b).ok_or_else(|| {
                        err(format!("integer at offset {at} is wider than 128 bits"))
                    })?;
                    self.push(Node::Int(v));
                }
                LONG4 => {
                    let n = self.array::<4>()?;
                    let n = usize::try_from(i32::from_le_bytes(n))
                        .map_err(|_| err(format!("negative LONG4 length at offset {at}")))?;
                    let b = self.take(n)?;
                    let v = long_from_le(b).ok_or_else(|| {
                        err(format!("integer at offset {at} is wider than 128 bits"))
                    })?;
                    self.push(Node::Int(v));
                }
                BINFLOAT => {
                    let b = self.array::<8>()?;
                    self.push(Node::Float(f64::from_be_bytes(b)));
                }
                SHORT_BINUNICODE => {
                    let n = u64::from(self.byte()?);
                    self.text(n, at)?;
                }
                BINUNICODE => {
                    let n = u64::from(self.u32()?);
                    self.text(n, at)?;
                }
                BINUNICODE8 => {
                    let n = u64::from_le_bytes(self.array::<8>()?);
                    self.text(n, at)?;
                }
                SHORT_BINBYTES => {
                    let n = u64::from(self.byte()?);
                    self.bytes(n)?;
                }
                BINBYTES => {
                    let n = u64::from(self.u32()?);
                    self.bytes(n)?;
                }
                BINBYTES8 | BYTEARRAY8 => {
                    let n = u64::from_le_bytes(self.array::<8>()?);
                    self.bytes(n)?;
                }
                EMPTY_TUPLE => self.push(Node::Tuple(Vec::new())),
                TUPLE1 | TUPLE2 | TUPLE3 => {
                    let n = usize::from(op - TUPLE1 + 1);
                    let base = self.fence();
                    if self.stack.len() < base + n {
                        return Err(err(format!("stack underflow at offset {at}")));
                    }
                    let items = self.stack.split_off(self.stack.len() - n);
                    self.push(Node::Tuple(items));
                }
                TUPLE => {
                    let items = self.pop_mark()?;
                    self.push(Node::Tuple(items));
                }
                EMPTY_LIST => self.push(Node::List(Vec::new())),
                LIST => {
                    let items = self.pop_mark()?;
                    self.push(Node::List(items));
                }
                APPEND => {
                    let v = self.pop()?;
                    self.list_top(at)?.push(v);
                }
                APPENDS => {
                    let items = self.pop_mark()?;
                    self.list_top(at)?.extend(items);
                }
                EMPTY_DICT => self.push(Node::Dict(Vec::new())),
                DICT => {
                    let items = self.pop_mark()?;
                    let pairs = pairs(&items, at)?;
                    self.push(Node::Dict(pairs));
                }
                SETITEM => {
                    let v = self.pop()?;
                    let k = self.pop()?;
                    self.dict_top(at)?.push((k, v));
                }
                SETITEMS => {
                    let items = self.pop_mark()?;
                    let new = pairs(&items, at)?;
                    self.dict_top(at)?.extend(new);
                }
                other => {
                    return Err(err(match unsupported(other) {
                        Some(what) => format!(
                            "opcode 0x{other:02x} at offset {at} builds {what}; only plain values \
                             (None, bool, int, float, str, bytes, list, tuple, dict) are supported"
                        ),
                        None => format!("unknown opcode 0x{other:02x} at offset {at}"),
                    }));
                }
            }
        }
    }

    fn byte(&mut self) -> Result<u8> {
        let b = *self.data.get(self.pos).ok_or_else(|| {
            err(format!(
                "truncated: no STOP before the end ({} bytes)",
                self.data.len()
            ))
        })?;
        self.pos += 1;
        Ok(b)
    }

    /// `n` bytes of input, checked against what is left before anything is copied.
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| {
                err(format!(
                    "truncated: {n} bytes wanted at offset {}, {} left",
                    self.pos,
                    self.data.len().saturating_sub(self.pos)
                ))
            })?;
        let s = self.data.get(self.pos..end).unwrap_or_default();
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut b = [0u8; N];
        b.copy_from_slice(self.take(N)?);
        Ok(b)
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array::<4>()?))
    }

    /// A protocol-0 argument: the bytes up to the next newline.
    fn text_line(&mut self) -> Result<&[u8]> {
        let rest = self.data.get(self.pos..).unwrap_or_default();
        let n = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| err(format!("truncated text argument at offset {}", self.pos)))?;
        let line = rest.get(..n).unwrap_or_default();
        self.pos += n + 1;
        Ok(line.strip_suffix(b"\r").unwrap_or(line))
    }

    fn range(&mut self, n: u64) -> Result<Range<usize>> {
        let n = usize::try_from(n).map_err(|_| err(format!("length {n} too large")))?;
        let start = self.pos;
        self.take(n)?;
        Ok(start..start + n)
    }

    fn text(&mut self, n: u64, at: usize) -> Result<()> {
        let r = self.range(n)?;
        let s = self.data.get(r.clone()).unwrap_or_default();
        if simdutf8::basic::from_utf8(s).is_err() {
            return Err(err(format!("string at offset {at} is not UTF-8")));
        }
        self.push(Node::Str(r));
        Ok(())
    }

    fn bytes(&mut self, n: u64) -> Result<()> {
        let r = self.range(n)?;
        self.push(Node::Bytes(r));
        Ok(())
    }

    fn push(&mut self, node: Node) {
        // At most one node per input byte, so the index fits while the input is below 4 GiB;
        // beyond, nodes would alias, which `build` still bounds (budget, depth, cycles).
        let id = self.nodes.len() as u32;
        self.nodes.push(node);
        self.stack.push(id);
    }

    /// The stack length below which the innermost `MARK` fences items off.
    fn fence(&self) -> usize {
        self.marks.last().copied().unwrap_or(0)
    }

    fn pop(&mut self) -> Result<u32> {
        if self.stack.len() <= self.fence() {
            return Err(err(format!("stack underflow at offset {}", self.pos - 1)));
        }
        self.stack
            .pop()
            .ok_or_else(|| err(format!("stack underflow at offset {}", self.pos - 1)))
    }

    fn top(&self) -> Result<u32> {
        if self.stack.len() <= self.fence() {
            return Err(err(format!("stack underflow at offset {}", self.pos - 1)));
        }
        self.stack
            .last()
            .copied()
            .ok_or_else(|| err(format!("stack underflow at offset {}", self.pos - 1)))
    }

    fn pop_mark(&mut self) -> Result<Vec<u32>> {
        let m = self
            .marks
            .pop()
            .ok_or_else(|| err(format!("no MARK before offset {}", self.pos - 1)))?;
        Ok(self.stack.split_off(m.min(self.stack.len())))
    }

    fn memo_put(&mut self, idx: u32) -> Result<()> {
        let top = self.top()?;
        self.memo.insert(idx, top);
        Ok(())
    }

    fn memo_get(&mut self, idx: u32, at: usize) -> Result<()> {
        let id = *self.memo.get(&idx).ok_or_else(|| {
            err(format!(
                "memo entry {idx} read at offset {at} was never stored"
            ))
        })?;
        self.stack.push(id);
        Ok(())
    }

    fn list_top(&mut self, at: usize) -> Result<&mut Vec<u32>> {
        let id = self.top()?;
        match self.nodes.get_mut(id as usize) {
            Some(Node::List(items)) => Ok(items),
            _ => Err(err(format!(
                "APPEND(S) at offset {at} onto something not a list"
            ))),
        }
    }

    fn dict_top(&mut self, at: usize) -> Result<&mut Vec<(u32, u32)>> {
        let id = self.top()?;
        match self.nodes.get_mut(id as usize) {
            Some(Node::Dict(items)) => Ok(items),
            _ => Err(err(format!(
                "SETITEM(S) at offset {at} onto something not a dict"
            ))),
        }
    }

    /// The value tree of node `id`: shared nodes are copied per reference, charged to the
    /// budget before each copy.
    fn build(
        &self,
        id: u32,
        depth: usize,
        on_path: &mut [bool],
        budget: &mut Budget,
    ) -> Result<Value> {
        if depth > MAX_DEPTH {
            return Err(err(format!(
                "containers nested deeper than {MAX_DEPTH} levels"
            )));
        }
        let node = self
            .nodes
            .get(id as usize)
            .ok_or_else(|| err("node index out of range"))?;
        budget.charge(NAME, std::mem::size_of::<Value>())?;
        let slice = |r: &Range<usize>| self.data.get(r.clone()).unwrap_or_default();
        Ok(match node {
            Node::None => Value::None,
            Node::Bool(b) => Value::Bool(*b),
            Node::Int(i) => Value::Int(*i),
            Node::Float(f) => Value::Float(*f),
            Node::Str(r) => {
                budget.charge(NAME, r.len())?;
                Value::Str(String::from_utf8_lossy(slice(r)).into_owned())
            }
            Node::Bytes(r) => {
                budget.charge(NAME, r.len())?;
                Value::Bytes(slice(r).to_vec())
            }
            Node::List(items) | Node::Tuple(items) => {
                let is_list = matches!(node, Node::List(_));
                let slot = self.enter(id, on_path)?;
                let mut out = Vec::with_capacity(items.len());
                for &c in items {
                    out.push(self.build(c, depth + 1, on_path, budget)?);
                }
                leave(on_path, slot);
                if is_list {
                    Value::List(out)
                } else {
                    Value::Tuple(out)
                }
            }
            Node::Dict(entries) => {
                let slot = self.enter(id, on_path)?;
                let mut out = Vec::with_capacity(entries.len());
                for &(k, v) in entries {
                    let k = self.build(k, depth + 1, on_path, budget)?;
                    let v = self.build(v, depth + 1, on_path, budget)?;
                    out.push((k, v));
                }
                leave(on_path, slot);
                Value::Dict(out)
            }
        })
    }

    /// Mark container `id` as being built; a container reached again while it is being built
    /// holds itself, which a tree cannot represent.
    fn enter(&self, id: u32, on_path: &mut [bool]) -> Result<usize> {
        let i = id as usize;
        let flag = on_path
            .get_mut(i)
            .ok_or_else(|| err("node index out of range"))?;
        if *flag {
            return Err(err(
                "a container holds itself (recursive structure); plain values cannot represent it",
            ));
        }
        *flag = true;
        Ok(i)
    }
}

fn leave(on_path: &mut [bool], i: usize) {
    if let Some(flag) = on_path.get_mut(i) {
        *flag = false;
    }
}

fn pairs(items: &[u32], at: usize) -> Result<Vec<(u32, u32)>> {
    if !items.len().is_multiple_of(2) {
        return Err(err(format!("odd number of dict items at offset {at}")));
    }
    Ok(items.chunks_exact(2).map(|p| (p[0], p[1])).collect())
}

fn parse_decimal(s: &[u8]) -> Option<i128> {
    std::str::from_utf8(s).ok()?.trim().parse().ok()
}

/// A little-endian two's complement integer of up to 16 bytes (`LONG1` / `LONG4`).
fn long_from_le(b: &[u8]) -> Option<i128> {
    if b.is_empty() {
        return Some(0);
    }
    let negative = b.last().is_some_and(|&x| x & 0x80 != 0);
    let fill = if negative { 0xff } else { 0 };
    // Bytes beyond 16 must be pure sign extension.
    if b.len() > 16 {
        let (low, high) = b.split_at(16);
        if high.iter().any(|&x| x != fill)
            || (low.last().is_some_and(|&x| x & 0x80 != 0) != negative)
        {
            return None;
        }
        return long_from_le(low);
    }
    let mut buf = [fill; 16];
    buf.get_mut(..b.len())?.copy_from_slice(b);
    Some(i128::from_le_bytes(buf))
}
