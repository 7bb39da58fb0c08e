-- Pushes to a server (`POST /api/runs`) carry an idempotency key: a push retried after a lost
-- answer is recorded once. The key is kept with the run it recorded and a digest of what was
-- pushed, so the same key sent with other content is refused instead of answered with a run it
-- does not describe.
CREATE TABLE ingest_keys (
    idempotency_key TEXT    PRIMARY KEY,
    run_id          INTEGER NOT NULL UNIQUE REFERENCES runs (id),
    content_sha256  TEXT    NOT NULL              -- 64 lowercase hex digits
);

CREATE TRIGGER ingest_keys_no_update BEFORE UPDATE ON ingest_keys
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: ingest_keys rows cannot be updated'); END;
CREATE TRIGGER ingest_keys_no_delete BEFORE DELETE ON ingest_keys
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: ingest_keys rows cannot be deleted'); END;
CREATE TRIGGER ingest_keys_no_replace BEFORE INSERT ON ingest_keys
WHEN EXISTS (SELECT 1 FROM ingest_keys WHERE idempotency_key = NEW.idempotency_key)
  OR EXISTS (SELECT 1 FROM ingest_keys WHERE run_id = NEW.run_id)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: ingest_keys rows cannot be replaced'); END;
