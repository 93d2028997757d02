-- parameter_server: the updates each asynchronous step made on each parameter server
-- Schema version 4. docs/run-store.md documents every column; keep the two in step.

CREATE TABLE ps_updates (
    run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step      INTEGER NOT NULL,
    server    INTEGER NOT NULL,  -- 0-based parameter server index
    worker    INTEGER NOT NULL,  -- the worker (cluster spec index) whose push it was
    attempt   INTEGER NOT NULL,  -- 0; n when the step ran again after n lost workers
    staleness INTEGER NOT NULL,  -- updates the server applied between that worker's pull and its push
    PRIMARY KEY (run_id, step, server)
) WITHOUT ROWID;
