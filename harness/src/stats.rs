//! Statistics (pure).
