//! Artifacts (profiles) of a run and a benchmark: recorded once, read back byte for byte,
//! refused when too large, malformed or of an unknown run, and never changed.

use super::*;
use bench_model::{ArtifactKind, NewArtifact};
use bench_store::ArtifactIngested;

/// A small real flamegraph: what inferno writes, cut down.
pub const SVG: &[u8] = br#"<?xml version="1.0" standalone="no"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"><svg version="1.1" width="1200" height="38" xmlns="http://www.w3.org/2000/svg"><script type="text/ecmascript"><![CDATA[var x = 1;]]></script><g><title>main (1 samples, 100.00%)</title><rect x="0" y="0" width="1200" height="15"/></g></svg>
"#;

pub fn artifact(
    run: RunId,
    kind: ArtifactKind,
    against: Option<RunId>,
    bytes: &[u8],
) -> NewArtifact {
    NewArtifact::new(run, "g/f/1", kind, "perf", against, bytes.to_vec())
}

/// 16 recordings of one artifact at once (a retried push, a copy beside it): one is stored,
/// and every recording answers its id. Twice: the second round finds the pool's connections
/// open, so the recordings really overlap.
pub async fn concurrent_recordings_of_one_artifact_store_one(f: &Fixture) {
    let run = f
        .ledger
        .record_run(&small_run("s", "m", 1.0))
        .await
        .expect("run");
    for (round, bytes) in [&b"main;f 3\n"[..], b"main;g 5\n"].into_iter().enumerate() {
        let recordings: Vec<_> = (0..16)
            .map(|i| {
                let ledger = f.ledger.clone();
                let a = artifact(run, ArtifactKind::FoldedStacks, None, bytes);
                tokio::spawn(async move {
                    if i % 2 == 0 {
                        ledger.record_artifact_once(&a).await
                    } else {
                        ledger.copy_artifact(&a, "2026-01-01T00:00:00.000Z").await
                    }
                })
            })
            .collect();
        let mut answers = Vec::new();
        for r in recordings {
            answers.push(r.await.expect("join").expect("record"));
        }
        let created = answers.iter().filter(|a| a.created).count();
        assert_eq!(created, 1, "round {round}: {answers:?}");
        assert!(
            answers.iter().all(|a| a.id == answers[0].id),
            "round {round}: {answers:?}"
        );
    }
    assert_eq!(f.count("artifacts").await, 2);
}

/// Every kind reads back as recorded, listed by benchmark then kind; recording the same
/// content again is the artifact already there; a diff is found by its base.
pub async fn artifacts_read_back_once(f: &Fixture) {
    let l = &f.ledger;
    let base = l.record_run(&small_run("s", "m", 1.0)).await.expect("base");
    let head = l.record_run(&small_run("s", "m", 2.0)).await.expect("head");
    let counts = br#"{"unit":"samples","rows":[{"function":"<script>alert(1)</script>","base_share":0.5,"head_share":0.75,"base":10,"head":15,"change":0.25}]}"#;
    let mut other_benchmark = artifact(head, ArtifactKind::FoldedStacks, None, b"main;f 3\n");
    other_benchmark.benchmark = "a/first".to_owned();
    let recorded = [
        artifact(head, ArtifactKind::FunctionCounts, Some(base), counts),
        artifact(head, ArtifactKind::Flamegraph, None, SVG),
        artifact(head, ArtifactKind::DiffFlamegraph, Some(base), SVG),
        other_benchmark,
        artifact(base, ArtifactKind::Flamegraph, None, SVG),
    ];
    let mut ids = Vec::new();
    for a in &recorded {
        let done = l.record_artifact_once(a).await.expect("record");
        assert!(done.created, "{:?}", a.kind);
        ids.push(done.id);
    }
    let listed = l.artifacts(head).await.expect("list");
    let order: Vec<(&str, ArtifactKind)> = listed
        .iter()
        .map(|a| (a.benchmark.as_str(), a.kind))
        .collect();
    assert_eq!(
        order,
        [
            ("a/first", ArtifactKind::FoldedStacks),
            ("g/f/1", ArtifactKind::Flamegraph),
            ("g/f/1", ArtifactKind::DiffFlamegraph),
            ("g/f/1", ArtifactKind::FunctionCounts),
        ]
    );
    for (a, id) in recorded.iter().zip(&ids) {
        let stored = l.artifact(*id).await.expect("read").expect("there");
        assert_eq!(stored.bytes, a.bytes);
        let s = &stored.summary;
        assert_eq!(
            (s.id, s.run, &s.benchmark, s.kind, &s.profiler, s.against),
            (*id, a.run, &a.benchmark, a.kind, &a.profiler, a.against)
        );
        assert_eq!(s.media_type, a.kind.media_type());
        assert_eq!(s.size, a.bytes.len() as u64);
        assert_eq!(s.sha256.len(), 64);
        assert!(s.created_at.ends_with('Z'), "{}", s.created_at);
    }
    // The digest is SHA-256 of the bytes, as `sha256sum` prints it.
    let flamegraph = l.artifact(ids[1]).await.expect("read").expect("there");
    let digest: String = sha2::Digest::finalize(sha2::Digest::chain_update(
        <sha2::Sha256 as sha2::Digest>::new(),
        SVG,
    ))
    .iter()
    .map(|b| format!("{b:02x}"))
    .collect();
    assert_eq!(flamegraph.summary.sha256, digest);
    // The same again, and a copy with its own time: the artifact already there.
    let again = l.record_artifact_once(&recorded[2]).await.expect("again");
    assert_eq!(
        again,
        ArtifactIngested {
            id: ids[2],
            created: false
        }
    );
    let copied = l
        .copy_artifact(&recorded[1], "2026-01-01T00:00:00.000Z")
        .await
        .expect("copy");
    assert!(!copied.created);
    // Other bytes for the same benchmark and kind are another artifact.
    let mut changed = recorded[1].clone();
    changed.bytes.extend_from_slice(b"\n");
    assert!(
        l.record_artifact_once(&changed)
            .await
            .expect("changed")
            .created
    );
    assert_eq!(f.count("artifacts").await, 6);

    let diffs = l.artifacts_against(base, head).await.expect("against");
    let kinds: Vec<ArtifactKind> = diffs.iter().map(|a| a.kind).collect();
    assert_eq!(
        kinds,
        [ArtifactKind::DiffFlamegraph, ArtifactKind::FunctionCounts]
    );
    assert!(
        l.artifacts_against(head, base)
            .await
            .expect("none")
            .is_empty()
    );
    assert!(l.artifact(999_999).await.expect("read").is_none());
    assert!(l.artifacts(999_999).await.expect("list").is_empty());
}

/// An artifact of an unknown run or base, over the size cap, of a media type not its kind's or
/// of malformed content is refused with the reason, and nothing is stored.
pub async fn bad_artifacts_store_nothing(f: &Fixture) {
    let l = &f.ledger;
    let run = l.record_run(&small_run("s", "m", 1.0)).await.expect("run");
    let unknown_run = l
        .record_artifact(&artifact(run + 100, ArtifactKind::Flamegraph, None, SVG))
        .await
        .expect_err("unknown run");
    assert!(
        matches!(unknown_run, LedgerError::NoSuchRun(r) if r == run + 100),
        "{unknown_run}"
    );
    let unknown_base = l
        .record_artifact(&artifact(
            run,
            ArtifactKind::DiffFlamegraph,
            Some(run + 7),
            SVG,
        ))
        .await
        .expect_err("unknown base");
    assert!(
        matches!(unknown_base, LedgerError::NoSuchRun(r) if r == run + 7),
        "{unknown_base}"
    );
    let too_large = vec![b'a'; bench_model::MAX_ARTIFACT_BYTES + 1];
    let err = l
        .record_artifact(&artifact(run, ArtifactKind::FoldedStacks, None, &too_large))
        .await
        .expect_err("too large");
    assert!(
        matches!(
            err,
            LedgerError::Artifact(ArtifactError::TooLarge { size, .. })
                if size == bench_model::MAX_ARTIFACT_BYTES + 1
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("larger than the ledger keeps"),
        "{err}"
    );
    let mut html = artifact(run, ArtifactKind::Flamegraph, None, SVG);
    html.media_type = "text/html".to_owned();
    let err = l.record_artifact(&html).await.expect_err("html");
    assert!(
        matches!(err, LedgerError::Artifact(ArtifactError::MediaType { .. })),
        "{err}"
    );
    let err = l
        .record_artifact(&artifact(
            run,
            ArtifactKind::FunctionCounts,
            None,
            b"{\"rows\": 1}",
        ))
        .await
        .expect_err("malformed");
    assert!(
        matches!(err, LedgerError::Artifact(ArtifactError::Content { .. })),
        "{err}"
    );
    assert_eq!(f.count("artifacts").await, 0);
}

/// The database itself refuses to change or remove an artifact.
pub async fn artifacts_are_append_only(f: &Fixture) {
    let l = &f.ledger;
    let base = l.record_run(&small_run("s", "m", 1.0)).await.expect("base");
    let head = l.record_run(&small_run("s", "m", 2.0)).await.expect("head");
    let id = l
        .record_artifact(&artifact(
            head,
            ArtifactKind::DiffFlamegraph,
            Some(base),
            SVG,
        ))
        .await
        .expect("record");
    let mut refused = vec![
        "UPDATE artifacts SET bytes = bytes || bytes".to_owned(),
        "UPDATE artifacts SET media_type = 'text/html'".to_owned(),
        "DELETE FROM artifacts".to_owned(),
    ];
    if f.is_postgres() {
        refused.push("TRUNCATE artifacts CASCADE".to_owned());
        refused.push(
            "INSERT INTO artifacts (run_id, benchmark, kind, profiler, against_run_id, \
             media_type, size, sha256, created_at, bytes)
             SELECT run_id, benchmark, kind, profiler, against_run_id, media_type, size, sha256, \
             created_at, bytes FROM artifacts"
                .to_owned(),
        );
    } else {
        // A replacing insert deletes without firing DELETE triggers: refused too.
        refused.push("INSERT OR REPLACE INTO artifacts SELECT * FROM artifacts".to_owned());
        refused.push(
            "REPLACE INTO artifacts (id, run_id, benchmark, kind, profiler, media_type, size, \
             sha256, created_at, bytes)
             SELECT id, run_id, benchmark, kind, profiler, 'text/html', 1, sha256, created_at, \
             x'41' FROM artifacts"
                .to_owned(),
        );
    }
    for sql in &refused {
        let err = f.execute(sql).await.expect_err(sql);
        assert!(err.is_append_only_refusal(), "{sql}: {err}");
    }
    assert_eq!(f.count("artifacts").await, 1);
    let stored = l.artifact(id).await.expect("read").expect("there");
    assert_eq!(stored.bytes, SVG);
    assert_eq!(stored.summary.media_type, "image/svg+xml");
}
