-- strategies: gradient exchange per step and per replica
-- Schema version 3. docs/run-store.md documents every column; keep the two in step.

-- Per step, means over the replicas (0 on one device); NULL in runs recorded before schema 3.
ALTER TABLE steps ADD COLUMN comm_seconds REAL;  -- in collectives moving and summing data, hidden or not
ALTER TABLE steps ADD COLUMN wait_seconds REAL;  -- in collectives waiting for slower replicas to arrive

ALTER TABLE runs ADD COLUMN replicas INTEGER;      -- data-parallel replicas (1: one device)
ALTER TABLE runs ADD COLUMN comm_seconds REAL;     -- totals of the step columns above
ALTER TABLE runs ADD COLUMN wait_seconds REAL;

-- Where each replica's part of each synchronous step went (none for one device).
CREATE TABLE replica_steps (
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step            INTEGER NOT NULL,
    rank            INTEGER NOT NULL,  -- 0-based replica (or worker) index
    samples         INTEGER NOT NULL,  -- its share of the global batch
    compute_seconds REAL    NOT NULL,  -- the step minus the time blocked on the gradient exchange
    comm_seconds    REAL    NOT NULL,  -- in collectives moving and summing data
    wait_seconds    REAL    NOT NULL,  -- in collectives waiting for slower replicas
    PRIMARY KEY (run_id, step, rank)
) WITHOUT ROWID;
