-- input pipeline: per-step stage figures, run attributes, input totals
-- Schema version 2. docs/run-store.md documents every column; keep the two in step.

-- What each input-pipeline stage did during each step (deltas of the stage's counters).
CREATE TABLE input_stages (
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step    INTEGER NOT NULL,
    stage   TEXT    NOT NULL,  -- read, map, shuffle, batch, prefetch
    seconds REAL    NOT NULL,  -- busy time of the stage's threads, summed
    items   INTEGER NOT NULL,  -- records read / examples decoded / batches made or delivered
    bytes   INTEGER NOT NULL,
    fill    REAL,              -- mean queue fill 0..1 sampled during the step; NULL if not sampled
    PRIMARY KEY (run_id, step, stage)
) WITHOUT ROWID;

-- Free-form facts about a run that are not part of its configuration: what the input pipeline
-- autotuned to, the storage it read from, and so on. Keys are dotted ("input.prefetch").
CREATE TABLE run_attributes (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key    TEXT    NOT NULL,
    value  TEXT    NOT NULL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

ALTER TABLE runs ADD COLUMN input_seconds REAL;      -- total input wait over the run
ALTER TABLE runs ADD COLUMN skipped_records INTEGER; -- corrupt records skipped (skip_corrupt)
