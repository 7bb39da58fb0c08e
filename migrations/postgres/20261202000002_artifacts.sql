-- Artifacts of a run and one of its benchmarks (see migrations/sqlite/20261202000002_artifacts.sql).
CREATE TABLE artifacts (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id          BIGINT NOT NULL REFERENCES runs (id),
    benchmark       TEXT COLLATE "C" NOT NULL,
    kind            BIGINT NOT NULL,
    profiler        TEXT COLLATE "C" NOT NULL,
    against_run_id  BIGINT REFERENCES runs (id),
    media_type      TEXT COLLATE "C" NOT NULL,
    size            BIGINT NOT NULL,
    sha256          TEXT COLLATE "C" NOT NULL,
    created_at      TEXT COLLATE "C" NOT NULL,
    bytes           BYTEA NOT NULL,
    CHECK (size = octet_length(bytes)),
    CHECK (against_run_id IS NULL OR against_run_id <> run_id)
);

CREATE UNIQUE INDEX artifacts_once
    ON artifacts (run_id, benchmark, kind, profiler, COALESCE(against_run_id, 0), sha256);
CREATE INDEX artifacts_against ON artifacts (against_run_id) WHERE against_run_id IS NOT NULL;

CREATE TRIGGER artifacts_no_change BEFORE UPDATE OR DELETE ON artifacts
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER artifacts_no_truncate BEFORE TRUNCATE ON artifacts
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();
