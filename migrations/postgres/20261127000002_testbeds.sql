-- A machine's testbed (see migrations/sqlite/20261127000002_testbeds.sql).
ALTER TABLE machines ADD COLUMN testbed TEXT COLLATE "C";
