-- This host as an emulated device (device type cpu-host): kernel rates fitted to probe models and
-- the measured links between replicas, per host and thread count, as one JSON document
-- (profiler/machine/hostmodel.h). Schema version 7. docs/run-store.md documents it.
CREATE TABLE host_models (
    host        TEXT    NOT NULL,
    threads     INTEGER NOT NULL,
    measured_at TEXT    NOT NULL,
    model_json  TEXT    NOT NULL,
    PRIMARY KEY (host, threads)
) WITHOUT ROWID;
