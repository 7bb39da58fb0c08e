//! Which functions' self time changed between a base and a head profile of one benchmark.
//!
//! * **Samples** (perf): the two runs last different lengths and take different numbers of
//!   samples, so counts are not comparable; each function's self count is taken as a share of
//!   its profile's total, and functions are ranked by the change of that share. A function that
//!   went from 0% to 40% of the benchmark ranks above one that went from 30% to 20%.
//! * **Instructions** (callgrind): counts are exact and both runs execute the benchmark once, so
//!   functions are ranked by the absolute change of their self instructions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::ProfileError;
use crate::model::{Profile, share};
use crate::unit::Unit;

/// One function's self cost in base and head.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionChange {
    /// The function.
    pub name: String,
    /// Its self count in base (0: absent).
    pub base_self: u64,
    /// Its self count in head (0: absent).
    pub head_self: u64,
    /// Its self count as a share of the base benchmark's total, in 0..=1.
    pub base_share: f64,
    /// Its self count as a share of the head benchmark's total, in 0..=1.
    pub head_share: f64,
}

impl FunctionChange {
    /// `head_share - base_share`: the change in the fraction of the benchmark spent here.
    #[must_use]
    pub fn share_change(&self) -> f64 {
        self.head_share - self.base_share
    }

    /// `head_self - base_self`, exact.
    #[must_use]
    pub fn self_delta(&self) -> i128 {
        i128::from(self.head_self) - i128::from(self.base_self)
    }
}

/// Every function of either profile with its change, largest change first (see the module
/// docs for what "largest" means per unit); ties by name.
///
/// # Errors
/// [`ProfileError::UnitMismatch`] when the profiles count different things.
pub fn diff(base: &Profile, head: &Profile) -> Result<Vec<FunctionChange>, ProfileError> {
    if base.unit != head.unit {
        return Err(ProfileError::UnitMismatch {
            base: base.unit,
            head: head.unit,
        });
    }
    let mut both: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for f in &base.functions {
        both.entry(&f.name).or_default().0 += f.self_count;
    }
    for f in &head.functions {
        both.entry(&f.name).or_default().1 += f.self_count;
    }
    let mut changes: Vec<FunctionChange> = both
        .into_iter()
        .map(|(name, (b, h))| FunctionChange {
            name: name.to_owned(),
            base_self: b,
            head_self: h,
            base_share: share(b, base.total),
            head_share: share(h, head.total),
        })
        .collect();
    // BTreeMap order is by name, and the sort is stable: ties stay in name order.
    match base.unit {
        Unit::Samples => {
            changes.sort_by(|a, b| b.share_change().abs().total_cmp(&a.share_change().abs()))
        }
        Unit::Instructions => {
            changes.sort_by_key(|c| std::cmp::Reverse(c.self_delta().unsigned_abs()));
        }
    }
    Ok(changes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn profile(unit: Unit, folded: &str) -> Profile {
        Profile::from_folded(unit, folded.to_owned(), "t").unwrap()
    }

    #[test]
    fn samples_rank_by_share_not_count() {
        // Head ran twice as long and added `new`: `f` has twice the samples but a smaller
        // share, `g` as many samples and a share cut by more.
        let base = profile(Unit::Samples, "b;f 60\nb;g 40\n");
        let head = profile(Unit::Samples, "b;f 120\nb;g 40\nb;new 60\n");
        let changes = diff(&base, &head).unwrap();
        let names: Vec<&str> = changes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["new", "g", "f"]);
        let new = &changes[0];
        assert_eq!((new.base_self, new.head_self), (0, 60));
        assert!((new.head_share - 60.0 / 220.0).abs() < 1e-12);
        assert!((new.share_change() - 60.0 / 220.0).abs() < 1e-12);
        let f = &changes[2];
        assert!(
            (f.share_change() - (120.0 / 220.0 - 0.6)).abs() < 1e-12,
            "{f:?}"
        );
    }

    #[test]
    fn instructions_rank_by_exact_delta() {
        let base = profile(Unit::Instructions, "m;a 1000\nm;b 500\nm;gone 20\n");
        let head = profile(Unit::Instructions, "m;a 1000\nm;b 900\n");
        let changes = diff(&base, &head).unwrap();
        let deltas: Vec<(&str, i128)> = changes
            .iter()
            .map(|c| (c.name.as_str(), c.self_delta()))
            .collect();
        assert_eq!(deltas, [("b", 400), ("gone", -20), ("a", 0)]);
    }

    #[test]
    fn units_must_match() {
        let a = profile(Unit::Samples, "f 1\n");
        let b = profile(Unit::Instructions, "f 1\n");
        assert!(matches!(
            diff(&a, &b),
            Err(ProfileError::UnitMismatch { .. })
        ));
    }
}
