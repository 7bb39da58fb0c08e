-- Idempotent pushes (see migrations/sqlite/20261127000001_ingest_keys.sql).
CREATE TABLE ingest_keys (
    idempotency_key TEXT COLLATE "C" PRIMARY KEY,
    run_id          BIGINT NOT NULL UNIQUE REFERENCES runs (id),
    content_sha256  TEXT COLLATE "C" NOT NULL
);

CREATE TRIGGER ingest_keys_no_change BEFORE UPDATE OR DELETE ON ingest_keys
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER ingest_keys_no_truncate BEFORE TRUNCATE ON ingest_keys
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();
