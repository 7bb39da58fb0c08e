//! A small Rust lexer: just enough tokens to find module declarations, items, `use` trees and
//! paths. Comments are dropped; string literals are kept (for `#[path = "..."]`); numbers, chars
//! and lifetimes become opaque tokens so that their text is never read as a path.

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An identifier or keyword (`$crate` is read as `crate`; a raw identifier keeps its `r#`).
    Ident,
    /// A string literal's contents, escapes left as written.
    Str,
    /// `::`, or any single punctuation character.
    Punct,
    /// A number, char literal or lifetime.
    Other,
}

/// One token and the line it starts on.
#[derive(Clone, Debug)]
pub struct Token {
    pub kind: Kind,
    pub text: String,
    pub line: usize,
}

impl Token {
    pub fn is(&self, text: &str) -> bool {
        self.kind != Kind::Str && self.kind != Kind::Other && self.text == text
    }

    pub fn ident(&self) -> Option<&str> {
        (self.kind == Kind::Ident).then_some(self.text.as_str())
    }
}

fn ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Splits `src` into tokens.
pub fn tokenize(src: &str) -> Vec<Token> {
    let s: Vec<char> = src.chars().collect();
    let at = |i: usize| s.get(i).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let mut push = |kind, text: String, line| out.push(Token { kind, text, line });
    while i < s.len() {
        let c = s[i];
        let start_line = line;
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            // Block comments nest in Rust.
            let mut depth = 0;
            while i < s.len() {
                if s[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if s[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(s[i] == '\n');
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(&s, i) {
            let text: String = s[i..end].iter().collect();
            line += text.matches('\n').count();
            push(Kind::Str, text, start_line);
            i = end;
        } else if c == '"' || (matches!(c, 'b' | 'c') && at(i + 1) == '"') {
            i += if c == '"' { 1 } else { 2 };
            let from = i;
            while i < s.len() && s[i] != '"' {
                if s[i] == '\\' {
                    i += 1;
                }
                line += usize::from(at(i) == '\n');
                i += 1;
            }
            push(
                Kind::Str,
                s[from..i.min(s.len())].iter().collect(),
                start_line,
            );
            i += 1;
        } else if c == '\'' || (c == 'b' && at(i + 1) == '\'') {
            // A char literal ('a', '\n', b'x') or a lifetime ('a).
            let q = if c == 'b' { i + 1 } else { i };
            if at(q + 1) == '\\' {
                // Skip the escaped character: it may be the quote itself.
                i = q + 3;
                while i < s.len() && s[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(q + 2) == '\'' {
                i = q + 3;
            } else {
                i = q + 1;
                while i < s.len() && ident_char(s[i]) {
                    i += 1;
                }
            }
            push(Kind::Other, String::new(), start_line);
        } else if c == 'r' && at(i + 1) == '#' && ident_start(at(i + 2)) {
            let from = i;
            i += 2;
            while i < s.len() && ident_char(s[i]) {
                i += 1;
            }
            push(Kind::Ident, s[from..i].iter().collect(), start_line);
        } else if ident_start(c) {
            let from = i;
            while i < s.len() && ident_char(s[i]) {
                i += 1;
            }
            push(Kind::Ident, s[from..i].iter().collect(), start_line);
        } else if c == '$' && ident_start(at(i + 1)) {
            let from = i + 1;
            i += 1;
            while i < s.len() && ident_char(s[i]) {
                i += 1;
            }
            let name: String = s[from..i].iter().collect();
            // `$crate` is the crate root; any other `$name` is a macro variable.
            if name == "crate" {
                push(Kind::Ident, name, start_line);
            } else {
                push(Kind::Other, String::new(), start_line);
            }
        } else if c.is_ascii_digit() {
            while i < s.len() && (ident_char(s[i]) || (s[i] == '.' && at(i + 1).is_ascii_digit())) {
                i += 1;
            }
            push(Kind::Other, String::new(), start_line);
        } else if c == ':' && at(i + 1) == ':' {
            push(Kind::Punct, "::".to_owned(), start_line);
            i += 2;
        } else {
            push(Kind::Punct, c.to_string(), start_line);
            i += 1;
        }
    }
    out
}

/// The end of a raw string literal (`r"…"`, `r#"…"#`, `br"…"`, `cr"…"`) starting at `i`.
fn raw_string_end(s: &[char], i: usize) -> Option<usize> {
    let at = |i: usize| s.get(i).copied().unwrap_or('\0');
    let mut j = i;
    if matches!(at(j), 'b' | 'c') {
        j += 1;
    }
    if at(j) != 'r' {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while at(j) == '#' {
        hashes += 1;
        j += 1;
    }
    if at(j) != '"' {
        return None;
    }
    j += 1;
    while j < s.len() {
        if s[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#') {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<String> {
        tokenize(src)
            .into_iter()
            .filter(|t| t.kind != Kind::Other)
            .map(|t| t.text)
            .collect()
    }

    #[test]
    fn comments_strings_chars_and_lifetimes_hide_their_text() {
        let src = "// use crate::a;\n/* crate::b /* nested */ crate::c */ let x = \"crate::d\";\n\
                   let y = r#\"crate::e\"#; let z = '\\''; fn f<'a>(ch: char) {}";
        let t = texts(src);
        assert!(!t.contains(&"a".to_owned()), "{t:?}");
        assert!(!t.contains(&"b".to_owned()), "{t:?}");
        assert!(!t.contains(&"c".to_owned()), "{t:?}");
        assert!(
            t.contains(&"crate::d".to_owned()),
            "string kept as one token: {t:?}"
        );
        assert!(t.contains(&"r#\"crate::e\"#".to_owned()), "{t:?}");
        assert!(t.contains(&"char".to_owned()), "{t:?}");
    }

    #[test]
    fn lines_are_counted_through_comments_and_strings() {
        let toks = tokenize("/*\n\n*/ \"a\nb\"\nx");
        let x = toks.iter().find(|t| t.is("x")).map(|t| t.line);
        assert_eq!(x, Some(5));
    }

    #[test]
    fn dollar_crate_is_the_crate() {
        let t = texts("$crate::rows::X; $name");
        assert_eq!(t, ["crate", "::", "rows", "::", "X", ";"]);
    }
}
