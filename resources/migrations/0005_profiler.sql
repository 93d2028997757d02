-- The profiler: where each step's time went, per-op statistics, the machine's roofs, and the
-- verdict with its evidence and actions.
-- Schema version 5. docs/run-store.md documents every column; keep the two in step.

-- Per-step breakdown, exclusive seconds on the training thread (replica 0 of a mirrored run):
-- input_seconds + forward + backward + optimizer + exposed_comm + other = step_seconds.
ALTER TABLE steps ADD COLUMN forward_seconds REAL;       -- forward pass and loss
ALTER TABLE steps ADD COLUMN backward_seconds REAL;      -- backward pass (optimizer updates inside it excluded)
ALTER TABLE steps ADD COLUMN optimizer_seconds REAL;     -- optimizer updates
ALTER TABLE steps ADD COLUMN exposed_comm_seconds REAL;  -- blocked on the gradient exchange (moving data or waiting for peers)
ALTER TABLE steps ADD COLUMN other_seconds REAL;         -- the rest of the step (bookkeeping, handing work over)
-- Outside step_seconds: what ran after this step and before the next one.
ALTER TABLE steps ADD COLUMN eval_seconds REAL;          -- test-set evaluation after this step (0: none)
ALTER TABLE steps ADD COLUMN checkpoint_seconds REAL;    -- checkpoint written after this step (0: none)

ALTER TABLE replica_steps ADD COLUMN forward_seconds REAL;
ALTER TABLE replica_steps ADD COLUMN backward_seconds REAL;
ALTER TABLE replica_steps ADD COLUMN optimizer_seconds REAL;
ALTER TABLE replica_steps ADD COLUMN exposed_comm_seconds REAL;

-- Per-op statistics: every op of one kind and shape, summed over the run (and over the replicas of
-- one process). FLOPs and bytes are per call, from the shapes.
CREATE TABLE op_stats (
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    rank    INTEGER NOT NULL DEFAULT 0,  -- the process (multi_worker rank) that measured them
    kind    TEXT    NOT NULL,            -- e.g. inner_product_forward, adam_update
    shape   TEXT    NOT NULL,            -- e.g. 'src 128x784, weights 512x784, dst 128x512'
    calls   INTEGER NOT NULL,
    seconds REAL    NOT NULL,            -- total over the calls
    flops   REAL    NOT NULL,            -- per call
    bytes   REAL    NOT NULL,            -- per call: each tensor read or written once
    PRIMARY KEY (run_id, rank, kind, shape)
) WITHOUT ROWID;

-- The roofline's roofs, measured once per host and thread count.
CREATE TABLE machines (
    host          TEXT    NOT NULL,
    threads       INTEGER NOT NULL,
    cpu_model     TEXT,
    peak_gflops   REAL    NOT NULL,  -- fp32, large oneDNN matmul
    bandwidth_gbs REAL    NOT NULL,  -- STREAM-triad-like, arrays far larger than the caches
    measured_at   TEXT    NOT NULL,
    details_json  TEXT    NOT NULL DEFAULT '{}',
    PRIMARY KEY (host, threads)
) WITHOUT ROWID;

-- The verdict (seq 0) and further findings about the whole run, and the per-window timeline.
CREATE TABLE findings (
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,  -- 0: the run's verdict; run findings next, then windows in step order
    scope         TEXT    NOT NULL CHECK (scope IN ('run', 'window')),
    first_step    INTEGER,
    last_step     INTEGER,
    kind          TEXT    NOT NULL
                  CHECK (kind IN ('input', 'compute', 'memory_bandwidth', 'memory_capacity', 'communication',
                                  'balanced')),
    severity      TEXT    NOT NULL CHECK (severity IN ('high', 'moderate', 'low')),
    summary       TEXT    NOT NULL,  -- one sentence
    evidence_json TEXT    NOT NULL,  -- [{"name": ..., "value": ..., "unit": ..., "text": ...}, ...]
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- Ranked actions: concrete changes to the run's experiment (trainbench-cli apply RUN --action N).
CREATE TABLE actions (
    run_id           INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    number           INTEGER NOT NULL,  -- 1-based rank
    finding_kind     TEXT    NOT NULL,  -- the kind of bound it addresses
    title            TEXT    NOT NULL,
    changes_json     TEXT    NOT NULL,  -- [{"key": "data.pipeline.prefetch", "from": 0, "to": 4}, ...]
    expected         TEXT,              -- the expected effect, in words
    expected_speedup REAL,              -- estimated throughput factor, where it can be estimated
    rationale        TEXT,
    PRIMARY KEY (run_id, number)
) WITHOUT ROWID;

ALTER TABLE runs ADD COLUMN verdict TEXT;  -- kind and severity of findings seq 0, e.g. 'input (high)'
