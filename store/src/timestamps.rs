//! How the ledger writes times, the check of a run recorded at a given time, and a trend run's
//! place in commit order (read from its recording time outside git).

use crate::rows;
use crate::{DatedRun, LedgerError, TrendRun};

/// How the ledger writes times: RFC 3339, UTC, milliseconds (`2026-02-14T17:26:18.000Z`).
const TIME_FORMAT: &[time::format_description::BorrowedFormatItem<'static>] = time::macros::format_description!(
    "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
);

/// The current time as the ledger writes it: RFC 3339, UTC, milliseconds.
pub(crate) fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    now.format(TIME_FORMAT)
        .unwrap_or_else(|_| now.unix_timestamp().to_string())
}

/// Checks a [`DatedRun`]: a time in the ledger's own form (what both engines sort and the trend
/// query parses), notes with text, and the run itself.
pub(crate) fn check_dated_run(dated: &DatedRun) -> Result<(), LedgerError> {
    rows::check_new_run(&dated.run)?;
    if time::PrimitiveDateTime::parse(&dated.recorded_at, TIME_FORMAT).is_err() {
        return Err(LedgerError::Invalid(format!(
            "a run's recording time is written like 2026-02-14T17:26:18.000Z (UTC, \
             milliseconds), got {:?}",
            dated.recorded_at.chars().take(40).collect::<String>()
        )));
    }
    for note in &dated.notes {
        rows::check_annotation(note)?;
    }
    Ok(())
}

impl TrendRun {
    /// The run's place in commit order, as the store sorts a trend's runs (with the run id
    /// after it): its commit time, or outside git the second it was recorded. `None` when the
    /// recording time is not in the ledger's form.
    #[must_use]
    pub fn commit_order(&self) -> Option<i64> {
        self.git_commit_time.or_else(|| {
            time::PrimitiveDateTime::parse(&self.created_at, TIME_FORMAT)
                .ok()
                .map(|t| t.assume_utc().unix_timestamp())
        })
    }
}
