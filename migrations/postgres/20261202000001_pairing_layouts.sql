-- The layouts of a paired A/B run (see migrations/sqlite/20261202000001_pairing_layouts.sql).
CREATE TABLE pairing_layouts (
    pairing_id  BIGINT PRIMARY KEY REFERENCES pairings (id),
    round_seeds TEXT COLLATE "C" NOT NULL
);

CREATE TRIGGER pairing_layouts_no_change BEFORE UPDATE OR DELETE ON pairing_layouts
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER pairing_layouts_no_truncate BEFORE TRUNCATE ON pairing_layouts
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();
