-- Paired A/B runs (`bench-run ab`). Both sides are ordinary runs (sources ab-base and ab-head)
-- whose results carry one sample per round (sampling mode per-process): sample r of the base
-- and sample r of the head were measured in round r, so the paired ratios can always be
-- recomputed from the two runs. This table says which two runs pair up, and how the rounds
-- were ordered. Append-only like every other table.
CREATE TABLE pairings (
    id          INTEGER PRIMARY KEY,
    created_at  TEXT    NOT NULL,                      -- RFC 3339, UTC
    base_run_id INTEGER NOT NULL UNIQUE REFERENCES runs (id),
    head_run_id INTEGER NOT NULL UNIQUE REFERENCES runs (id),
    rounds      INTEGER NOT NULL,
    seed        TEXT    NOT NULL,                      -- u64 in decimal (SQLite integers are i64)
    side_order  TEXT    NOT NULL,                      -- one letter per round: B base first, H head first
    base_rev    TEXT    NOT NULL,                      -- the revision as given
    head_rev    TEXT,                                  -- NULL: the working tree
    CHECK (base_run_id <> head_run_id),
    CHECK (length(side_order) = rounds)
);

CREATE TRIGGER pairings_no_update BEFORE UPDATE ON pairings
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: pairings rows cannot be updated'); END;
CREATE TRIGGER pairings_no_delete BEFORE DELETE ON pairings
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: pairings rows cannot be deleted'); END;
CREATE TRIGGER pairings_no_replace BEFORE INSERT ON pairings
WHEN EXISTS (SELECT 1 FROM pairings WHERE id = NEW.id)
  OR EXISTS (SELECT 1 FROM pairings WHERE base_run_id = NEW.base_run_id OR head_run_id = NEW.head_run_id)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: pairings rows cannot be replaced'); END;
