-- The benchmark ledger on PostgreSQL: the same tables, columns and meaning as migrations/sqlite
-- (its four migrations in one), in PostgreSQL's types. Append-only: triggers at the end reject
-- UPDATE, DELETE and TRUNCATE on every table; PostgreSQL has no replacing INSERT (an upsert is
-- an UPDATE, which the triggers reject), and the unique keys reject duplicates.
--
-- Every text column uses the "C" collation: names sort and compare byte by byte, as on SQLite
-- and in Rust, whatever the server's default locale.
--
-- Enumerations are stored as permanent integer codes defined in model/src/lib.rs.

CREATE TABLE machines (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    fingerprint    TEXT COLLATE "C" NOT NULL UNIQUE,
    cpu_model      TEXT COLLATE "C" NOT NULL,
    physical_cores BIGINT,
    logical_cores  BIGINT NOT NULL,
    memory_bytes   BIGINT,
    os             TEXT COLLATE "C" NOT NULL,
    arch           TEXT COLLATE "C" NOT NULL
);

CREATE TABLE toolchains (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    fingerprint   TEXT COLLATE "C" NOT NULL UNIQUE,
    rustc_version TEXT COLLATE "C" NOT NULL,
    rustc_commit  TEXT COLLATE "C",
    host          TEXT COLLATE "C" NOT NULL,
    llvm_version  TEXT COLLATE "C",
    rustc_verbose TEXT COLLATE "C" NOT NULL,
    cargo_version TEXT COLLATE "C" NOT NULL
);

CREATE TABLE runs (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created_at      TEXT COLLATE "C" NOT NULL,     -- RFC 3339, UTC (the same text as on SQLite)
    source          BIGINT NOT NULL,               -- model::RunSource code
    suite           TEXT COLLATE "C" NOT NULL,
    package         TEXT COLLATE "C",
    command         TEXT COLLATE "C" NOT NULL,     -- JSON array of argv
    cargo_command   TEXT COLLATE "C",              -- JSON array of argv
    cwd             TEXT COLLATE "C" NOT NULL,
    machine_id      BIGINT NOT NULL REFERENCES machines (id),
    hostname        TEXT COLLATE "C" NOT NULL,
    kernel          TEXT COLLATE "C" NOT NULL,
    toolchain_id    BIGINT REFERENCES toolchains (id),
    profile         TEXT COLLATE "C" NOT NULL,
    features        TEXT COLLATE "C" NOT NULL,     -- JSON array
    feature_flags   TEXT COLLATE "C" NOT NULL,     -- JSON array
    rustflags       TEXT COLLATE "C",
    env             TEXT COLLATE "C" NOT NULL,     -- JSON object of allow-listed variables
    cpu_governor    TEXT COLLATE "C",
    turbo           TEXT COLLATE "C",
    git_commit      TEXT COLLATE "C",
    git_branch      TEXT COLLATE "C",
    git_dirty       BOOLEAN NOT NULL,
    git_commit_time BIGINT,                        -- seconds since the Unix epoch
    git_summary     TEXT COLLATE "C",
    quick           BOOLEAN NOT NULL,
    duration_ms     BIGINT
);
CREATE INDEX runs_by_suite_machine ON runs (suite, machine_id, id);
CREATE INDEX runs_by_commit ON runs (git_commit, id);

CREATE TABLE results (
    id                  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id              BIGINT NOT NULL REFERENCES runs (id),
    benchmark           TEXT COLLATE "C" NOT NULL,
    group_id            TEXT COLLATE "C",
    function_id         TEXT COLLATE "C",
    value_str           TEXT COLLATE "C",
    metric              TEXT COLLATE "C" NOT NULL,
    unit                TEXT COLLATE "C" NOT NULL,
    direction           BIGINT NOT NULL,           -- model::Direction code
    estimate            DOUBLE PRECISION NOT NULL,
    lower               DOUBLE PRECISION,
    upper               DOUBLE PRECISION,
    confidence_level    DOUBLE PRECISION,
    standard_error      DOUBLE PRECISION,
    throughput_kind     BIGINT,                    -- model::ThroughputKind code
    throughput_per_iter BIGINT,
    sample_count        BIGINT NOT NULL,
    UNIQUE (run_id, benchmark, metric)
);
CREATE INDEX results_by_benchmark ON results (benchmark, metric, run_id);

CREATE TABLE statistics (
    result_id        BIGINT NOT NULL REFERENCES results (id),
    statistic        BIGINT NOT NULL,              -- model::Statistic code
    point            DOUBLE PRECISION NOT NULL,
    lower            DOUBLE PRECISION,
    upper            DOUBLE PRECISION,
    confidence_level DOUBLE PRECISION,
    standard_error   DOUBLE PRECISION,
    PRIMARY KEY (result_id, statistic)
);

-- Raw samples: iteration counts and measured times (ns), little-endian f64 arrays.
CREATE TABLE samples (
    result_id     BIGINT PRIMARY KEY REFERENCES results (id),
    sampling_mode BIGINT NOT NULL,                 -- model::SamplingMode code
    iters         BYTEA NOT NULL,
    times_ns      BYTEA NOT NULL
);

CREATE TABLE tags (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id     BIGINT NOT NULL REFERENCES runs (id),
    name       TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX tags_by_name ON tags (name, id);
CREATE INDEX tags_by_run ON tags (run_id);

CREATE TABLE annotations (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id     BIGINT NOT NULL REFERENCES runs (id),
    created_at TEXT COLLATE "C" NOT NULL,
    text       TEXT COLLATE "C" NOT NULL
);
CREATE INDEX annotations_by_run ON annotations (run_id);

CREATE TABLE run_conditions (
    run_id            BIGINT PRIMARY KEY REFERENCES runs (id),
    bench_exe_sha256  TEXT COLLATE "C",
    bench_exe_bytes   BIGINT,
    cpus              BIGINT,
    wall_ms           BIGINT,
    load_start_1      DOUBLE PRECISION,
    load_start_5      DOUBLE PRECISION,
    load_start_15     DOUBLE PRECISION,
    load_end_1        DOUBLE PRECISION,
    load_end_5        DOUBLE PRECISION,
    load_end_15       DOUBLE PRECISION,
    own_cpus          DOUBLE PRECISION,
    others_cpus       DOUBLE PRECISION,
    steal_pct         DOUBLE PRECISION,
    per_benchmark     TEXT COLLATE "C"
);

CREATE TABLE pairings (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created_at  TEXT COLLATE "C" NOT NULL,
    base_run_id BIGINT NOT NULL UNIQUE REFERENCES runs (id),
    head_run_id BIGINT NOT NULL UNIQUE REFERENCES runs (id),
    rounds      BIGINT NOT NULL,
    seed        TEXT COLLATE "C" NOT NULL,         -- u64 in decimal, as on SQLite
    side_order  TEXT COLLATE "C" NOT NULL,         -- one letter per round: B base first, H head first
    base_rev    TEXT COLLATE "C" NOT NULL,
    head_rev    TEXT COLLATE "C",
    CHECK (base_run_id <> head_run_id),
    CHECK (length(side_order) = rounds)
);

-- Copies between ledgers (see migrations/sqlite/20261126000001_run_origins.sql).
CREATE TABLE ledger_identity (
    id         BIGINT PRIMARY KEY CHECK (id = 1),
    ledger_id  TEXT COLLATE "C" NOT NULL
);
INSERT INTO ledger_identity (id, ledger_id) VALUES (1, replace(gen_random_uuid()::TEXT, '-', ''));

CREATE TABLE run_origins (
    run_id        BIGINT PRIMARY KEY REFERENCES runs (id),
    origin_ledger TEXT COLLATE "C" NOT NULL,
    origin_run    BIGINT NOT NULL,
    UNIQUE (origin_ledger, origin_run)
);

-- Append-only enforcement: one function, a row trigger for UPDATE and DELETE and a statement
-- trigger for TRUNCATE (which fires no row triggers) on every table.
CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger is append-only: % rows cannot be %', TG_TABLE_NAME,
        CASE TG_OP WHEN 'UPDATE' THEN 'updated' WHEN 'DELETE' THEN 'deleted' ELSE 'truncated' END
        USING ERRCODE = 'restrict_violation';
END;
$$;

DO $$
DECLARE
    t TEXT;
BEGIN
    FOREACH t IN ARRAY ARRAY['machines', 'toolchains', 'runs', 'results', 'statistics', 'samples',
                             'tags', 'annotations', 'run_conditions', 'pairings',
                             'ledger_identity', 'run_origins'] LOOP
        EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE OR DELETE ON %I
                        FOR EACH ROW EXECUTE FUNCTION ledger_append_only()', t || '_no_change', t);
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I
                        FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only()', t || '_no_truncate', t);
    END LOOP;
END;
$$;
