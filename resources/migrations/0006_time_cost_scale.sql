-- Time, cost and scale: which clock a run's seconds are on, what its devices cost, and how big the
-- job was. Schema version 6. docs/run-store.md documents every column; keep the two in step.

-- 'wall': seconds in steps, evals and the summary are this host's wall time. 'virtual': the run
-- trained on emulated devices and those seconds are the virtual clock's (what the target hardware
-- would take); host_seconds then holds the host's own training time.
ALTER TABLE runs ADD COLUMN clock TEXT NOT NULL DEFAULT 'wall';
ALTER TABLE runs ADD COLUMN host_seconds REAL;
-- What is charged: device_count devices of device_type (a device catalog id) at
-- price_per_device_hour, plus the host at host_price_per_hour, over the run's billed time
-- (train_seconds + eval_seconds). NULL prices: not known, so no cost.
ALTER TABLE runs ADD COLUMN device_type TEXT;
ALTER TABLE runs ADD COLUMN device_count INTEGER;
ALTER TABLE runs ADD COLUMN price_per_device_hour REAL;
ALTER TABLE runs ADD COLUMN host_price_per_hour REAL;
ALTER TABLE runs ADD COLUMN cost REAL;
-- Scale: examples trained on (after data.fraction), that fraction, and the model's parameters.
ALTER TABLE runs ADD COLUMN train_examples INTEGER;
ALTER TABLE runs ADD COLUMN data_fraction REAL;
ALTER TABLE runs ADD COLUMN param_count INTEGER;
-- The run whose checkpoint this one started from (train.warm_start); NULL: from scratch.
ALTER TABLE runs ADD COLUMN warm_start_run INTEGER;
