-- Copies between ledgers (`bench-run ledger copy`). Every ledger gets a random identity, and a
-- run copied from another ledger records where it came from: that ledger's identity and the
-- run's id there. A second copy of the same ledger finds the runs it already holds and adds
-- only the new ones, whatever path or URL either ledger is reached by.
CREATE TABLE ledger_identity (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    ledger_id  TEXT    NOT NULL                   -- 32 lowercase hex digits
);
INSERT INTO ledger_identity (id, ledger_id) VALUES (1, lower(hex(randomblob(16))));

CREATE TABLE run_origins (
    run_id        INTEGER PRIMARY KEY REFERENCES runs (id),
    origin_ledger TEXT    NOT NULL,               -- ledger_identity.ledger_id of the source
    origin_run    INTEGER NOT NULL,               -- the run's id in the source
    UNIQUE (origin_ledger, origin_run)
);

CREATE TRIGGER ledger_identity_no_update BEFORE UPDATE ON ledger_identity
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: ledger_identity rows cannot be updated'); END;
CREATE TRIGGER ledger_identity_no_delete BEFORE DELETE ON ledger_identity
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: ledger_identity rows cannot be deleted'); END;
CREATE TRIGGER ledger_identity_no_replace BEFORE INSERT ON ledger_identity
WHEN EXISTS (SELECT 1 FROM ledger_identity)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: ledger_identity rows cannot be replaced'); END;

CREATE TRIGGER run_origins_no_update BEFORE UPDATE ON run_origins
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: run_origins rows cannot be updated'); END;
CREATE TRIGGER run_origins_no_delete BEFORE DELETE ON run_origins
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: run_origins rows cannot be deleted'); END;
CREATE TRIGGER run_origins_no_replace BEFORE INSERT ON run_origins
WHEN EXISTS (SELECT 1 FROM run_origins WHERE run_id = NEW.run_id)
  OR EXISTS (SELECT 1 FROM run_origins WHERE origin_ledger = NEW.origin_ledger AND origin_run = NEW.origin_run)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: run_origins rows cannot be replaced'); END;
