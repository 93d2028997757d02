-- Prediction runs (trainbench-cli predict): a step is one batch predicted, its breakdown is input
-- (waiting for the batch), forward (the model) and output (writing the predictions).
-- Schema version 8. docs/run-store.md documents it.
ALTER TABLE steps ADD COLUMN output_seconds REAL;  -- writing the batch's predictions (NULL in training runs' older rows)
