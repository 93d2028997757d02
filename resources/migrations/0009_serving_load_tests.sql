-- What kind of run a row is, and the load tests of served models (trainbench-cli loadtest): one row
-- per measured point (a scenario at a target QPS or a concurrency), and per point a series of seconds.
-- Schema version 9. docs/run-store.md documents every column; keep the two in step.
ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'train';  -- 'train', 'predict' or 'serve' (a load test)

-- Prediction runs written before this version are known by their attributes.
UPDATE runs SET kind = 'predict'
    WHERE id IN (SELECT run_id FROM run_attributes WHERE key = 'predict.source_run');

CREATE TABLE loadtest_points (
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    point         INTEGER NOT NULL,  -- 0, 1, ... in the order measured (a QPS search's probes, a sweep's levels)
    scenario      TEXT NOT NULL,     -- 'single-stream', 'server', 'offline', 'concurrency'
    target_qps    REAL,              -- server: the arrival rate asked for; NULL otherwise
    concurrency   INTEGER,           -- concurrency sweep: outstanding queries; NULL otherwise
    queries       INTEGER NOT NULL,  -- queries answered (errors not counted)
    achieved_qps  REAL NOT NULL,     -- answered queries per second of the point
    p50_ms        REAL,              -- latency percentiles, client side (send to full answer)
    p90_ms        REAL,
    p95_ms        REAL,
    p99_ms        REAL,
    p999_ms       REAL,
    queue_ms      REAL,              -- mean breakdown of a query's latency: waiting for a batch thread
    batch_ms      REAL,              -- forming the batch (the batch timeout)
    compute_ms    REAL,              -- the model call
    serialize_ms  REAL,              -- decoding the request and encoding the answer
    network_ms    REAL,              -- the rest: client, kernel and wire
    client_bound  INTEGER NOT NULL DEFAULT 0,  -- 1: the load generator, not the server, was the limit
    errors        INTEGER NOT NULL DEFAULT 0,  -- queries that failed (non-200, bad answer, timeout)
    PRIMARY KEY (run_id, point)
) WITHOUT ROWID;

CREATE TABLE loadtest_seconds (
    run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    point     INTEGER NOT NULL,
    second    INTEGER NOT NULL,  -- 0-based second of the point's run
    completed INTEGER NOT NULL,  -- queries answered in that second
    errors    INTEGER NOT NULL DEFAULT 0,  -- of those that ended in that second
    p50_ms    REAL,              -- of the queries answered in that second; NULL when none was
    p99_ms    REAL,
    PRIMARY KEY (run_id, point, second)
) WITHOUT ROWID;
