//! A JSON parser for [`JsonValue`] that reads what Python's `json.loads` reads from Python's
//! own output: integers of any length up to 128 bits (`serde_json` turns those beyond 64 bits
//! into floats), and the `NaN`, `Infinity` and `-Infinity` that `json.dumps` writes for
//! non-finite floats. Nesting is capped at [`MAX_DEPTH`]; nothing is allocated beyond what the
//! input holds.

/// A JSON value that keeps object key order, so it can be re-encoded exactly as Python does.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonValue {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// An integer.
    Int(i128),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// An array.
    Array(Vec<JsonValue>),
    /// An object, in stored key order.
    Object(Vec<(String, JsonValue)>),
}

/// Deepest nesting of arrays and objects (as `serde_json`'s default).
pub const MAX_DEPTH: usize = 128;

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

/// Parse one JSON document (surrounding whitespace allowed).
pub(super) fn parse(s: &[u8]) -> Result<JsonValue, String> {
    let mut p = Parser { s, pos: 0 };
    let v = p.value(0)?;
    p.ws();
    if p.pos != s.len() {
        return Err(p.err("trailing characters"));
    }
    Ok(v)
}

impl Parser<'_> {
    fn err(&self, what: &str) -> String {
        format!("{what} at byte {}", self.pos)
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, lit: &[u8]) -> bool {
        if self.s.get(self.pos..self.pos + lit.len()) == Some(lit) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<JsonValue, String> {
        self.ws();
        match self.peek() {
            None => Err(self.err("unexpected end of input")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(JsonValue::Str),
            Some(b'-' | b'0'..=b'9' | b'I' | b'N') => self.number(),
            Some(_) if self.eat(b"null") => Ok(JsonValue::Null),
            Some(_) if self.eat(b"true") => Ok(JsonValue::Bool(true)),
            Some(_) if self.eat(b"false") => Ok(JsonValue::Bool(false)),
            Some(_) => Err(self.err("expected a value")),
        }
    }

    fn enter(&self, depth: usize) -> Result<usize, String> {
        if depth >= MAX_DEPTH {
            return Err(self.err(&format!("nested deeper than {MAX_DEPTH} levels")));
        }
        Ok(depth + 1)
    }

    fn array(&mut self, depth: usize) -> Result<JsonValue, String> {
        let depth = self.enter(depth)?;
        self.pos += 1;
        let mut items = Vec::new();
        self.ws();
        if self.eat(b"]") {
            return Ok(JsonValue::Array(items));
        }
        loop {
            items.push(self.value(depth)?);
            self.ws();
            if self.eat(b",") {
                continue;
            }
            if self.eat(b"]") {
                return Ok(JsonValue::Array(items));
            }
            return Err(self.err("expected , or ]"));
        }
    }

    fn object(&mut self, depth: usize) -> Result<JsonValue, String> {
        let depth = self.enter(depth)?;
        self.pos += 1;
        let mut entries = Vec::new();
        self.ws();
        if self.eat(b"}") {
            return Ok(JsonValue::Object(entries));
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(self.err("expected a string key"));
            }
            let k = self.string()?;
            self.ws();
            if !self.eat(b":") {
                return Err(self.err("expected :"));
            }
            entries.push((k, self.value(depth)?));
            self.ws();
            if self.eat(b",") {
                continue;
            }
            if self.eat(b"}") {
                return Ok(JsonValue::Object(entries));
            }
            return Err(self.err("expected , or }"));
        }
    }

    fn number(&mut self) -> Result<JsonValue, String> {
        let start = self.pos;
        let negative = self.eat(b"-");
        if self.eat(b"Infinity") {
            return Ok(JsonValue::Float(if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }));
        }
        if !negative && self.eat(b"NaN") {
            return Ok(JsonValue::Float(f64::NAN));
        }
        let digits = |p: &mut Self| {
            let from = p.pos;
            while matches!(p.peek(), Some(b'0'..=b'9')) {
                p.pos += 1;
            }
            p.pos - from
        };
        let int_start = self.pos;
        let n = digits(self);
        if n == 0 || (n > 1 && self.s.get(int_start) == Some(&b'0')) {
            return Err(self.err("invalid number"));
        }
        let mut float = false;
        if self.eat(b".") {
            float = true;
            if digits(self) == 0 {
                return Err(self.err("invalid number"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            float = true;
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.err("invalid number"));
            }
        }
        let text = std::str::from_utf8(self.s.get(start..self.pos).unwrap_or_default())
            .map_err(|_| self.err("invalid number"))?;
        if float {
            text.parse()
                .map(JsonValue::Float)
                .map_err(|_| self.err("invalid number"))
        } else {
            text.parse()
                .map(JsonValue::Int)
                .map_err(|_| self.err("integer beyond 128 bits"))
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let h = self
            .s
            .get(self.pos..self.pos + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| self.err("invalid \\u escape"))?;
        self.pos += 4;
        Ok(h)
    }

    fn string(&mut self) -> Result<String, String> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            // Copy the run up to the next quote, backslash or control character at once.
            let rest = self.s.get(self.pos..).unwrap_or_default();
            let run = rest
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .ok_or_else(|| self.err("unterminated string"))?;
            let chunk = std::str::from_utf8(rest.get(..run).unwrap_or_default())
                .map_err(|_| self.err("string is not UTF-8"))?;
            out.push_str(chunk);
            self.pos += run;
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let e = self.peek().ok_or_else(|| self.err("unterminated string"))?;
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xd800..0xdc00).contains(&hi) && self.eat(b"\\u") {
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return Err(self.err("unpaired surrogate"));
                                }
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else {
                                hi
                            };
                            out.push(char::from_u32(c).ok_or_else(|| {
                                self.err("unpaired surrogate (not representable as UTF-8)")
                            })?);
                        }
                        _ => return Err(self.err("invalid escape")),
                    }
                }
                _ => return Err(self.err("control character in string")),
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn python_json_specials() {
        let v = parse(br#" [133810560034326002372498627, -170141183460469231731687303715884105728, NaN, -Infinity, 1e-07, "\ud83d\ude00\u00e9\n", {"a": {}}] "#)
            .unwrap();
        let JsonValue::Array(items) = v else {
            panic!("array")
        };
        assert_eq!(
            items[0],
            JsonValue::Int(133_810_560_034_326_002_372_498_627)
        );
        assert_eq!(items[1], JsonValue::Int(i128::MIN));
        assert!(matches!(items[2], JsonValue::Float(f) if f.is_nan()));
        assert_eq!(items[3], JsonValue::Float(f64::NEG_INFINITY));
        assert_eq!(items[4], JsonValue::Float(1e-7));
        assert_eq!(items[5], JsonValue::Str("\u{1f600}é\n".into()));
    }

    #[test]
    fn malformed_input_is_an_error() {
        let cases: [&[u8]; 16] = [
            b"",
            b"[1,",
            b"[1 2]",
            b"{\"a\" 1}",
            b"{1: 2}",
            b"01",
            b"1.",
            b"1e",
            b"-",
            b"\"abc",
            b"\"\\x\"",
            b"\"\\ud800\"",
            b"\"a\nb\"",
            b"\"\xff\"",
            b"1 2",
            b"170141183460469231731687303715884105728",
        ];
        for (i, c) in cases.into_iter().enumerate() {
            assert!(
                parse(c).is_err(),
                "case {i}: {:?}",
                String::from_utf8_lossy(c)
            );
        }
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(
            parse(deep.as_bytes())
                .unwrap_err()
                .contains("deeper than 128")
        );
        let ok = "[".repeat(128) + &"]".repeat(128);
        assert!(parse(ok.as_bytes()).is_ok());
    }
}
