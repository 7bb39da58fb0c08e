-- Projects (issue 48): a project is a named history. Every run belongs to one; runs, suites,
-- baselines, tags and testbeds are read per project. Runs recorded before projects existed
-- belong to the implicit project `default`, which is also where a local ledger records.
-- A constant default is stored in the catalogue: no row is rewritten, the append-only
-- triggers stay untouched and nothing stored changes.
ALTER TABLE runs ADD COLUMN project TEXT COLLATE "C" NOT NULL DEFAULT 'default';
CREATE INDEX runs_by_project_suite_machine ON runs (project, suite, machine_id, id);
