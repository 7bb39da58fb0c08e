//! Comparisons and verdicts (pure).
