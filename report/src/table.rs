//! A minimal table: rendered aligned for terminals and as GitHub-flavoured markdown.

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text columns.
    Left,
    /// Number columns.
    Right,
}

/// A table of strings.
#[derive(Debug, Clone, Default)]
pub struct Table {
    headers: Vec<String>,
    aligns: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns.
    #[must_use]
    pub fn new(columns: &[(&str, Align)]) -> Self {
        Self {
            headers: columns.iter().map(|(h, _)| (*h).to_owned()).collect(),
            aligns: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; missing cells are empty, extra cells are dropped.
    pub fn push(&mut self, mut row: Vec<String>) {
        row.resize(self.headers.len(), String::new());
        self.rows.push(row);
    }

    /// Number of rows.
    #[must_use]
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the table has no rows.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn widths(&self, cell: impl Fn(&str) -> String) -> Vec<usize> {
        let mut widths: Vec<usize> = self
            .headers
            .iter()
            .map(|h| cell(h).chars().count())
            .collect();
        for row in &self.rows {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell(c).chars().count());
            }
        }
        widths
    }

    /// Aligned plain text, two spaces between columns, a rule under the header.
    #[must_use]
    pub fn to_terminal(&self) -> String {
        let clean = |s: &str| s.replace(['\n', '\r'], " ");
        let widths = self.widths(clean);
        let line = |cells: &[String]| {
            let parts: Vec<String> = cells
                .iter()
                .zip(&widths)
                .zip(&self.aligns)
                .map(|((c, w), a)| pad(&clean(c), *w, *a))
                .collect();
            parts.join("  ").trim_end().to_owned()
        };
        let mut out = line(&self.headers);
        out.push('\n');
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&rule.join("  "));
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row));
            out.push('\n');
        }
        out
    }

    /// A GitHub-flavoured markdown table (pipes and newlines in cells escaped).
    #[must_use]
    pub fn to_markdown(&self) -> String {
        let widths = self.widths(escape_markdown_cell);
        let line = |cells: &[String]| {
            let parts: Vec<String> = cells
                .iter()
                .zip(&widths)
                .zip(&self.aligns)
                .map(|((c, w), a)| pad(&escape_markdown_cell(c), *w, *a))
                .collect();
            format!("| {} |", parts.join(" | "))
        };
        let mut out = line(&self.headers);
        out.push('\n');
        let rule: Vec<String> = widths
            .iter()
            .zip(&self.aligns)
            .map(|(w, a)| match a {
                Align::Left => "-".repeat((*w).max(3)),
                Align::Right => format!("{}:", "-".repeat((*w).max(3) - 1)),
            })
            .collect();
        out.push_str(&format!("| {} |", rule.join(" | ")));
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row));
            out.push('\n');
        }
        out
    }
}

fn pad(text: &str, width: usize, align: Align) -> String {
    let fill = width.saturating_sub(text.chars().count());
    match align {
        Align::Left => format!("{text}{}", " ".repeat(fill)),
        Align::Right => format!("{}{text}", " ".repeat(fill)),
    }
}

/// Escapes text for a markdown table cell: pipes, newlines, and HTML-significant characters
/// (a benchmark may be named `<script>`; a pull-request comment must show it as text).
/// Backticks are left alone so callers can wrap plain names in code spans ([`code_span`]).
#[must_use]
pub fn escape_markdown_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            _ => out.push(c),
        }
    }
    out
}

/// `` `name` `` for names that are safe inside a code span, else the name as plain text (a
/// code span would show HTML entities literally, and a backtick would end it early).
#[must_use]
pub fn code_span(name: &str) -> String {
    if name.contains(['`', '<', '>', '&', '|', '\n', '\r']) || name.is_empty() {
        name.to_owned()
    } else {
        format!("`{name}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_and_markdown_rendering() {
        let mut t = Table::new(&[("name", Align::Left), ("value", Align::Right)]);
        t.push(vec!["a|b".into(), "1.0".into()]);
        t.push(vec!["<script>".into(), "10.25".into()]);
        assert_eq!(
            t.to_terminal(),
            "name      value\n--------  -----\na|b         1.0\n<script>  10.25\n"
        );
        let md = t.to_markdown();
        assert!(md.contains("| a\\|b "), "{md}");
        assert!(md.contains("&lt;script&gt;"), "{md}");
        assert_eq!(code_span("sum/1000"), "`sum/1000`");
        assert_eq!(code_span("<script>"), "<script>");
        assert!(
            md.lines().nth(1).is_some_and(|l| l.ends_with(": |")),
            "{md}"
        );
    }
}
