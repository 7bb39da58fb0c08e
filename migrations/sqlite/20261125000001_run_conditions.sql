-- What a run's bench executable was and how busy the machine was while it ran
-- (model::RunProvenance::bench_exe and ::conditions; see harness/src/conditions.rs).
--
-- A side table rather than new columns on `runs`: only runs that bench-run built and ran have
-- these facts (imports and interleaved runs do not), so "no row" says "not recorded" for every
-- run older than this migration and for every import alike; the INSERT into `runs` stays as it
-- was; and the table carries the same append-only triggers as the others. One row per run at
-- most (the primary key), written in the run's own transaction by Ledger::record_run.
CREATE TABLE run_conditions (
    run_id            INTEGER PRIMARY KEY REFERENCES runs (id),
    bench_exe_sha256  TEXT,                -- 64 lowercase hex digits; NULL when not recorded
    bench_exe_bytes   INTEGER,
    -- The rest is NULL when conditions were not recorded (not Linux, /proc unreadable).
    cpus              INTEGER,             -- `cpuN` lines of /proc/stat
    wall_ms           INTEGER,             -- wall time of the benchmark process
    load_start_1      REAL,                -- /proc/loadavg at the start: 1, 5, 15 minutes
    load_start_5      REAL,
    load_start_15     REAL,
    load_end_1        REAL,                -- and at the end
    load_end_5        REAL,
    load_end_15       REAL,
    own_cpus          REAL,                -- average CPUs used by bench-run and the benchmark
    others_cpus       REAL,                -- average CPUs other processes kept busy
    steal_pct         REAL,                -- percent of CPU time stolen by the hypervisor
    per_benchmark     TEXT                 -- JSON array of model::BenchmarkConditions
);

CREATE TRIGGER run_conditions_no_update BEFORE UPDATE ON run_conditions
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: run_conditions rows cannot be updated'); END;
CREATE TRIGGER run_conditions_no_delete BEFORE DELETE ON run_conditions
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: run_conditions rows cannot be deleted'); END;
CREATE TRIGGER run_conditions_no_replace BEFORE INSERT ON run_conditions
WHEN EXISTS (SELECT 1 FROM run_conditions WHERE run_id = NEW.run_id)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: run_conditions rows cannot be replaced'); END;
