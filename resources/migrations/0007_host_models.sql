-- This host as an emulated device (device type cpu-host): kernel rates fitted to probe models and
-- the measured links between replicas, per host and thread count, as one JSON document
-- (profiler/machine/hostmodel.h). Schema version 7. docs/run-store.md documents it.
CREATE TABLE host_models (
    host        TEXT    NOT NULL,
    threads     INTEGER NOT NULL,  -- compute threads of one replica
    replicas    INTEGER NOT NULL,  -- replicas probing the host at once
    measured_at TEXT    NOT NULL,
    model_json  TEXT    NOT NULL,
    PRIMARY KEY (host, threads, replicas)
) WITHOUT ROWID;

-- The host input pipeline's measured time per global batch (the infeed of runs on emulated
-- devices), per host, data section and batch: measured by the first run, reused by the next, so
-- that the same experiment gets the same virtual-time curve whatever the host's load later.
CREATE TABLE infeed_rates (
    host              TEXT    NOT NULL,
    pipeline          TEXT    NOT NULL,  -- the experiment's resolved data section, JSON
    global_batch      INTEGER NOT NULL,
    seconds_per_batch REAL    NOT NULL,
    measured_at       TEXT    NOT NULL,
    PRIMARY KEY (host, pipeline, global_batch)
) WITHOUT ROWID;
