-- The layouts of a paired A/B run (`bench-run ab --layouts K`): each side was linked K times in
-- different function orders, and round r of both sides ran under one of them. With the
-- per-round samples of the two runs, this is what lets every later reader (compare, gate, the
-- web's compare page) recompute each benchmark's per-layout medians and layout spread.
-- A pairing measured under one layout has no row here. Append-only like every other table.
CREATE TABLE pairing_layouts (
    pairing_id  INTEGER PRIMARY KEY REFERENCES pairings (id),
    round_seeds TEXT    NOT NULL                       -- the layout seed of each round: u64s in decimal, comma-separated
);

CREATE TRIGGER pairing_layouts_no_update BEFORE UPDATE ON pairing_layouts
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: pairing_layouts rows cannot be updated'); END;
CREATE TRIGGER pairing_layouts_no_delete BEFORE DELETE ON pairing_layouts
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: pairing_layouts rows cannot be deleted'); END;
CREATE TRIGGER pairing_layouts_no_replace BEFORE INSERT ON pairing_layouts
WHEN EXISTS (SELECT 1 FROM pairing_layouts WHERE pairing_id = NEW.pairing_id)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: pairing_layouts rows cannot be replaced'); END;
