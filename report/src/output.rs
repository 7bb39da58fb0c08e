//! The output formats and the JSON text every report writes. Below the report modules, which all
//! import it.

use serde_json::Value;

/// Output formats shared by the subcommands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum OutputFormat {
    /// Aligned plain-text table.
    #[default]
    Table,
    /// GitHub-flavoured markdown.
    Markdown,
    /// JSON (a stable contract for scripts).
    Json,
}

pub(crate) fn to_json(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".to_owned());
    text.push('\n');
    text
}
