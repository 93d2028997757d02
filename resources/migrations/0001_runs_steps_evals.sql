-- runs, steps and evals
-- Schema version 1. docs/run-store.md documents every column; keep the two in step.
-- Never edit a migration that has shipped: add the next file (0002_...sql) instead.
CREATE TABLE schema_migrations (
    version     INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at  TEXT NOT NULL
);

-- AUTOINCREMENT: an id, once deleted, never comes back for another run, so "run 42" in a note or
-- a report keeps meaning the same run.
CREATE TABLE runs (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    name            TEXT    NOT NULL,
    status          TEXT    NOT NULL DEFAULT 'running'
                    CHECK (status IN ('running', 'completed', 'failed', 'interrupted', 'stopped')),
    experiment_file TEXT,
    config_json     TEXT    NOT NULL DEFAULT '{}',
    strategy        TEXT    NOT NULL DEFAULT 'single',
    devices         TEXT    NOT NULL DEFAULT 'cpu:1',
    global_batch    INTEGER,
    threads         INTEGER,
    dataset         TEXT,
    model           TEXT,
    host            TEXT    NOT NULL,
    pid             INTEGER NOT NULL,
    proc_start      INTEGER,
    boot_id         TEXT,
    started_at      TEXT    NOT NULL,
    ended_at        TEXT,
    message         TEXT,
    steps           INTEGER,
    epochs          INTEGER,
    final_loss      REAL,
    final_accuracy  REAL,
    best_accuracy   REAL,
    time_to_target  REAL,
    step_at_target  INTEGER,
    target_accuracy REAL,
    train_seconds   REAL,
    eval_seconds    REAL,
    throughput      REAL,
    stop_reason     TEXT
);
CREATE INDEX runs_by_started ON runs (started_at);
CREATE INDEX runs_by_name ON runs (name, id);
-- What interrupted-run detection scans on every open and listing: only the live ones.
CREATE INDEX runs_running ON runs (host) WHERE status = 'running';

-- WITHOUT ROWID: the rows are stored in (run_id, step) order, which is how they are read.
CREATE TABLE steps (
    run_id             INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step               INTEGER NOT NULL,
    epoch              INTEGER NOT NULL,
    loss               REAL,
    step_seconds       REAL,
    input_seconds      REAL,
    samples            INTEGER,
    samples_per_second REAL,
    learning_rate      REAL,
    wall_seconds       REAL,
    PRIMARY KEY (run_id, step)
) WITHOUT ROWID;

CREATE TABLE evals (
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step         INTEGER NOT NULL,
    epoch        INTEGER NOT NULL,
    split        TEXT    NOT NULL,
    loss         REAL,
    accuracy     REAL,
    samples      INTEGER,
    eval_seconds REAL,
    wall_seconds REAL
);
CREATE INDEX evals_by_run ON evals (run_id, split, step);
