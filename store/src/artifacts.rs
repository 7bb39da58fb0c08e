//! What both engines share about artifacts (issue 46): checking one before it is written, its
//! digest, and decoding its rows. The SQL is the store's (`sql/mod.rs`).

use crate::LedgerError;
use crate::rows::Cols;
use bench_model::{ArtifactKind, ArtifactSummary, NewArtifact, StoredArtifact};
use sha2::{Digest, Sha256};

/// Checks `artifact` (everything the model can check alone) and returns its digest.
pub(crate) fn check(artifact: &NewArtifact) -> Result<String, LedgerError> {
    artifact.check()?;
    Ok(sha256_hex(&artifact.bytes))
}

/// SHA-256 of `bytes`, 64 lowercase hex digits.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The artifact's size as stored (its length, which the model capped far below `i64::MAX`).
pub(crate) fn size_of(artifact: &NewArtifact) -> i64 {
    i64::try_from(artifact.bytes.len()).unwrap_or(i64::MAX)
}

pub(crate) fn summary_from_row(row: &impl Cols) -> Result<ArtifactSummary, LedgerError> {
    let id = row.int("id")?;
    let code = row.int("kind")?;
    let kind = ArtifactKind::from_code(code)
        .ok_or_else(|| LedgerError::Corrupt(format!("artifact {id} has unknown kind {code}")))?;
    let size = row.int("size")?;
    Ok(ArtifactSummary {
        id,
        run: row.int("run_id")?,
        benchmark: row.text("benchmark")?,
        kind,
        profiler: row.text("profiler")?,
        against: row.opt_int("against_run_id")?,
        media_type: row.text("media_type")?,
        size: u64::try_from(size)
            .map_err(|_| LedgerError::Corrupt(format!("artifact {id} has size {size}")))?,
        sha256: row.text("sha256")?,
        created_at: row.text("created_at")?,
    })
}

/// An artifact row with its bytes, whose digest must still be the one recorded.
pub(crate) fn stored_from_row(row: &impl Cols) -> Result<StoredArtifact, LedgerError> {
    let summary = summary_from_row(row)?;
    let bytes = row.bytes("bytes")?;
    if sha256_hex(&bytes) != summary.sha256 {
        return Err(LedgerError::Corrupt(format!(
            "artifact {} no longer matches its SHA-256",
            summary.id
        )));
    }
    Ok(StoredArtifact { summary, bytes })
}
