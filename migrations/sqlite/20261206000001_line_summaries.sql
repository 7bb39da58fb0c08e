-- Line summaries (issue 48): what the dashboard, the run lists and the project and testbed
-- menus count, per project, suite and machine, kept as runs are recorded (in the run's own
-- transaction, `SqlStore::insert_run`) instead of counted over every run on every view: over
-- 60k runs each such count took 30 to 40 ms, on every view while runs were being pushed.
-- A summary is derived, never a result: it is the one table whose rows change, and it can
-- always be counted again from `runs` (as below).
CREATE TABLE line_summaries (
    project         TEXT NOT NULL,
    suite           TEXT NOT NULL,
    machine_id      INTEGER NOT NULL REFERENCES machines (id),
    runs            INTEGER NOT NULL,    -- every run of the line
    line_runs       INTEGER NOT NULL,    -- those on the line: not quick, not an A/B side,
                                         -- confirmation or profile (RunSource::is_on_the_line)
    latest_run      INTEGER NOT NULL REFERENCES runs (id),
    latest_line_run INTEGER REFERENCES runs (id),
    PRIMARY KEY (project, suite, machine_id)
);

INSERT INTO line_summaries
    (project, suite, machine_id, runs, line_runs, latest_run, latest_line_run)
SELECT project, suite, machine_id, COUNT(*),
       SUM(CASE WHEN NOT quick AND source NOT IN (8, 9, 10, 13, 14, 15) THEN 1 ELSE 0 END),
       MAX(id),
       MAX(CASE WHEN NOT quick AND source NOT IN (8, 9, 10, 13, 14, 15) THEN id END)
FROM runs GROUP BY project, suite, machine_id;

-- A summary counts its line's runs up and is never removed: deleting is refused, and an
-- update that is not a count up is refused too.
CREATE TRIGGER line_summaries_no_delete BEFORE DELETE ON line_summaries
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: line_summaries rows cannot be deleted'); END;
CREATE TRIGGER line_summaries_only_up BEFORE UPDATE ON line_summaries
WHEN NEW.project IS NOT OLD.project OR NEW.suite IS NOT OLD.suite
     OR NEW.machine_id IS NOT OLD.machine_id OR NEW.runs <= OLD.runs
     OR NEW.line_runs < OLD.line_runs OR NEW.latest_run < OLD.latest_run
     OR NEW.latest_line_run < OLD.latest_line_run
     OR (NEW.latest_line_run IS NULL AND OLD.latest_line_run IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'ledger is append-only: line_summaries rows only count their runs up'); END;
