-- The benchmark ledger. Append-only: triggers at the end of this file reject UPDATE and DELETE on
-- every table, and reject an INSERT that would replace an existing row (INSERT OR REPLACE deletes
-- without firing DELETE triggers). A correction to a run is a new annotation row.
--
-- Enumerations are stored as permanent integer codes defined in harness/src/model.rs.

-- A machine, deduplicated by its hardware fingerprint (see harness/src/provenance.rs).
CREATE TABLE machines (
    id             INTEGER PRIMARY KEY,
    fingerprint    TEXT    NOT NULL UNIQUE,
    cpu_model      TEXT    NOT NULL,
    physical_cores INTEGER,
    logical_cores  INTEGER NOT NULL,
    memory_bytes   INTEGER,
    os             TEXT    NOT NULL,
    arch           TEXT    NOT NULL
);

-- A toolchain, deduplicated by a hash of `rustc -vV` and `cargo -V`.
CREATE TABLE toolchains (
    id            INTEGER PRIMARY KEY,
    fingerprint   TEXT NOT NULL UNIQUE,
    rustc_version TEXT NOT NULL,
    rustc_commit  TEXT,
    host          TEXT NOT NULL,
    llvm_version  TEXT,
    rustc_verbose TEXT NOT NULL,
    cargo_version TEXT NOT NULL
);

-- One invocation that produced results, with everything needed to know where they came from.
CREATE TABLE runs (
    id              INTEGER PRIMARY KEY,
    created_at      TEXT    NOT NULL,              -- RFC 3339, UTC
    source          INTEGER NOT NULL,              -- model::RunSource code
    suite           TEXT    NOT NULL,
    package         TEXT,
    command         TEXT    NOT NULL,              -- JSON array of argv
    cargo_command   TEXT,                          -- JSON array of argv
    cwd             TEXT    NOT NULL,
    machine_id      INTEGER NOT NULL REFERENCES machines (id),
    hostname        TEXT    NOT NULL,
    kernel          TEXT    NOT NULL,
    toolchain_id    INTEGER REFERENCES toolchains (id),
    profile         TEXT    NOT NULL,
    features        TEXT    NOT NULL,              -- JSON array
    feature_flags   TEXT    NOT NULL,              -- JSON array
    rustflags       TEXT,
    env             TEXT    NOT NULL,              -- JSON object of allow-listed variables
    cpu_governor    TEXT,
    turbo           TEXT,
    git_commit      TEXT,
    git_branch      TEXT,
    git_dirty       INTEGER NOT NULL,
    git_commit_time INTEGER,                       -- seconds since the Unix epoch
    git_summary     TEXT,
    quick           INTEGER NOT NULL,
    duration_ms     INTEGER
);
CREATE INDEX runs_by_suite_machine ON runs (suite, machine_id, id);
CREATE INDEX runs_by_commit ON runs (git_commit, id);

-- One measured quantity of one benchmark in one run; the headline estimate with its bounds.
CREATE TABLE results (
    id                  INTEGER PRIMARY KEY,
    run_id              INTEGER NOT NULL REFERENCES runs (id),
    benchmark           TEXT    NOT NULL,          -- full id, e.g. group/function/value
    group_id            TEXT,
    function_id         TEXT,
    value_str           TEXT,
    metric              TEXT    NOT NULL,
    unit                TEXT    NOT NULL,
    direction           INTEGER NOT NULL,          -- model::Direction code
    estimate            REAL    NOT NULL,
    lower               REAL,
    upper               REAL,
    confidence_level    REAL,
    standard_error      REAL,
    throughput_kind     INTEGER,                   -- model::ThroughputKind code
    throughput_per_iter INTEGER,
    sample_count        INTEGER NOT NULL,
    UNIQUE (run_id, benchmark, metric)
);
CREATE INDEX results_by_benchmark ON results (benchmark, metric, run_id);

-- Every summary statistic the tool reported (criterion: mean, median, slope, std dev, MAD).
CREATE TABLE statistics (
    result_id        INTEGER NOT NULL REFERENCES results (id),
    statistic        INTEGER NOT NULL,             -- model::Statistic code
    point            REAL    NOT NULL,
    lower            REAL,
    upper            REAL,
    confidence_level REAL,
    standard_error   REAL,
    PRIMARY KEY (result_id, statistic)
) WITHOUT ROWID;

-- Raw samples: iteration counts and measured times (ns), little-endian f64 arrays.
CREATE TABLE samples (
    result_id     INTEGER PRIMARY KEY REFERENCES results (id),
    sampling_mode INTEGER NOT NULL,                -- model::SamplingMode code
    iters         BLOB    NOT NULL,
    times_ns      BLOB    NOT NULL
);

-- Names for runs. A name may be given again to a later run; the newest row wins.
CREATE TABLE tags (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER NOT NULL REFERENCES runs (id),
    name       TEXT    NOT NULL,
    created_at TEXT    NOT NULL
);
CREATE INDEX tags_by_name ON tags (name, id);
CREATE INDEX tags_by_run ON tags (run_id);

-- Free-text notes on runs: how a stored result is corrected without rewriting it.
CREATE TABLE annotations (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER NOT NULL REFERENCES runs (id),
    created_at TEXT    NOT NULL,
    text       TEXT    NOT NULL
);
CREATE INDEX annotations_by_run ON annotations (run_id);

-- Append-only enforcement.

CREATE TRIGGER machines_no_update BEFORE UPDATE ON machines
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: machines rows cannot be updated'); END;
CREATE TRIGGER machines_no_delete BEFORE DELETE ON machines
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: machines rows cannot be deleted'); END;
CREATE TRIGGER machines_no_replace BEFORE INSERT ON machines
WHEN EXISTS (SELECT 1 FROM machines WHERE id = NEW.id) OR EXISTS (SELECT 1 FROM machines WHERE fingerprint = NEW.fingerprint)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: machines rows cannot be replaced'); END;

CREATE TRIGGER toolchains_no_update BEFORE UPDATE ON toolchains
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: toolchains rows cannot be updated'); END;
CREATE TRIGGER toolchains_no_delete BEFORE DELETE ON toolchains
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: toolchains rows cannot be deleted'); END;
CREATE TRIGGER toolchains_no_replace BEFORE INSERT ON toolchains
WHEN EXISTS (SELECT 1 FROM toolchains WHERE id = NEW.id) OR EXISTS (SELECT 1 FROM toolchains WHERE fingerprint = NEW.fingerprint)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: toolchains rows cannot be replaced'); END;

CREATE TRIGGER runs_no_update BEFORE UPDATE ON runs
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: runs rows cannot be updated'); END;
CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: runs rows cannot be deleted'); END;
CREATE TRIGGER runs_no_replace BEFORE INSERT ON runs
WHEN EXISTS (SELECT 1 FROM runs WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: runs rows cannot be replaced'); END;

CREATE TRIGGER results_no_update BEFORE UPDATE ON results
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: results rows cannot be updated'); END;
CREATE TRIGGER results_no_delete BEFORE DELETE ON results
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: results rows cannot be deleted'); END;
CREATE TRIGGER results_no_replace BEFORE INSERT ON results
WHEN EXISTS (SELECT 1 FROM results WHERE id = NEW.id) OR EXISTS (SELECT 1 FROM results WHERE run_id = NEW.run_id AND benchmark = NEW.benchmark AND metric = NEW.metric)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: results rows cannot be replaced'); END;

CREATE TRIGGER statistics_no_update BEFORE UPDATE ON statistics
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: statistics rows cannot be updated'); END;
CREATE TRIGGER statistics_no_delete BEFORE DELETE ON statistics
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: statistics rows cannot be deleted'); END;
CREATE TRIGGER statistics_no_replace BEFORE INSERT ON statistics
WHEN EXISTS (SELECT 1 FROM statistics WHERE result_id = NEW.result_id AND statistic = NEW.statistic)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: statistics rows cannot be replaced'); END;

CREATE TRIGGER samples_no_update BEFORE UPDATE ON samples
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: samples rows cannot be updated'); END;
CREATE TRIGGER samples_no_delete BEFORE DELETE ON samples
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: samples rows cannot be deleted'); END;
CREATE TRIGGER samples_no_replace BEFORE INSERT ON samples
WHEN EXISTS (SELECT 1 FROM samples WHERE result_id = NEW.result_id)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: samples rows cannot be replaced'); END;

CREATE TRIGGER tags_no_update BEFORE UPDATE ON tags
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: tags rows cannot be updated'); END;
CREATE TRIGGER tags_no_delete BEFORE DELETE ON tags
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: tags rows cannot be deleted'); END;
CREATE TRIGGER tags_no_replace BEFORE INSERT ON tags
WHEN EXISTS (SELECT 1 FROM tags WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: tags rows cannot be replaced'); END;

CREATE TRIGGER annotations_no_update BEFORE UPDATE ON annotations
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: annotations rows cannot be updated'); END;
CREATE TRIGGER annotations_no_delete BEFORE DELETE ON annotations
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: annotations rows cannot be deleted'); END;
CREATE TRIGGER annotations_no_replace BEFORE INSERT ON annotations
WHEN EXISTS (SELECT 1 FROM annotations WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: annotations rows cannot be replaced'); END;
