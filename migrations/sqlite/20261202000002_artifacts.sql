-- Artifacts of a run and one of its benchmarks (issue 46): profiles that explain a verdict,
-- such as collapsed stacks, flamegraphs, a differential flamegraph against a base run, and
-- per-function counts. The bytes are kept whole with their SHA-256 (checked when read back);
-- the kind fixes the media type (model::ArtifactKind), so nothing stored is served as HTML.
-- One artifact is recorded once: the same content for the same run, benchmark, kind,
-- profiler and base is the row already there (a retried push, a second `ledger copy`).
-- Append-only like every other table.
CREATE TABLE artifacts (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id          INTEGER NOT NULL REFERENCES runs (id),
    benchmark       TEXT    NOT NULL,
    kind            INTEGER NOT NULL,               -- model::ArtifactKind code
    profiler        TEXT    NOT NULL,               -- perf, callgrind, pprof
    against_run_id  INTEGER REFERENCES runs (id),   -- the base run of a diff
    media_type      TEXT    NOT NULL,
    size            INTEGER NOT NULL,
    sha256          TEXT    NOT NULL,               -- 64 lowercase hex digits
    created_at      TEXT    NOT NULL,               -- RFC 3339, UTC
    bytes           BLOB    NOT NULL,
    CHECK (size = length(bytes)),
    CHECK (against_run_id IS NULL OR against_run_id <> run_id)
);

CREATE UNIQUE INDEX artifacts_once
    ON artifacts (run_id, benchmark, kind, profiler, COALESCE(against_run_id, 0), sha256);
CREATE INDEX artifacts_against ON artifacts (against_run_id) WHERE against_run_id IS NOT NULL;

CREATE TRIGGER artifacts_no_update BEFORE UPDATE ON artifacts
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: artifacts rows cannot be updated'); END;
CREATE TRIGGER artifacts_no_delete BEFORE DELETE ON artifacts
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: artifacts rows cannot be deleted'); END;
CREATE TRIGGER artifacts_no_replace BEFORE INSERT ON artifacts
WHEN EXISTS (SELECT 1 FROM artifacts WHERE id = NEW.id)
  OR EXISTS (SELECT 1 FROM artifacts WHERE run_id = NEW.run_id AND benchmark = NEW.benchmark
             AND kind = NEW.kind AND profiler = NEW.profiler
             AND COALESCE(against_run_id, 0) = COALESCE(NEW.against_run_id, 0)
             AND sha256 = NEW.sha256)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: artifacts rows cannot be replaced'); END;
