//! What a command concluded, mapped to the exit code by `main`.

/// What a command concluded, beyond success or error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Done; nothing to report through the exit code.
    Ok,
    /// `gate` found a regression.
    Regression,
    /// The runs cannot be compared (machine, toolchain, profile or features differ).
    Incomparable,
    /// `ratio` found a median ratio below the bar.
    BelowBar,
    /// `push` could not deliver every run.
    PushFailed,
}
