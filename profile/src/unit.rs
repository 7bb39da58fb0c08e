//! What a profile counts. Below the profile model and its errors, which both name it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a profile counts.
///
/// Stored with profiles as artifacts: the codes of [`Unit::code`] and the names of
/// [`Unit::as_str`] are permanent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// perf `cpu-clock` samples: wall time spent on a CPU, one sample per tick.
    Samples = 1,
    /// Instructions executed (callgrind's `Ir`), exact.
    Instructions = 2,
}

impl Unit {
    /// The permanent integer code.
    #[must_use]
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The unit of a permanent code.
    #[must_use]
    pub const fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(Self::Samples),
            2 => Some(Self::Instructions),
            _ => None,
        }
    }

    /// The permanent name (`samples`, `instructions`).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Samples => "samples",
            Self::Instructions => "instructions",
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn unit_codes_and_names_are_permanent() {
        assert_eq!(Unit::Samples.code(), 1);
        assert_eq!(Unit::Instructions.code(), 2);
        assert_eq!(Unit::from_code(1), Some(Unit::Samples));
        assert_eq!(Unit::from_code(2), Some(Unit::Instructions));
        assert_eq!(Unit::from_code(0), None);
        assert_eq!(
            serde_json::to_string(&Unit::Instructions).unwrap(),
            "\"instructions\""
        );
        assert_eq!(Unit::Samples.to_string(), "samples");
    }
}
