#pragma once
// The training batches as a loop takes them: epochs started (the first one of a resumed run skips
// the batches trained before its checkpoint), each batch fetched as the step's Input phase, and what
// each pipeline stage did during a step.
#include <cstdint>

#include "engine/data/pipeline/inputpipeline.h"
#include "engine/telemetry/runrecords.h"

namespace trainbench::engine {

class TrainInput {
public:
    // `train` must outlive this. `skipBatches`: batches of the first epoch started to pass over.
    TrainInput(InputPipeline& train, int64_t skipBatches);

    // Starts `epoch`; returns how many of its batches were skipped (only the first epoch skips).
    int64_t startEpoch(int64_t epoch);
    // The next batch (count 0: the epoch is over), timed as the Input phase.
    BatchView next();
    // The step is half-way (forward pass done): the pipeline may prepare the next batch.
    void midpoint() { train_.stepMidpoint(); }
    // What each stage did since the previous call (or since this was made).
    void recordStages(StepRecord& rec);
    int64_t skippedRecords() const { return train_.stats().skipped_records; }

private:
    InputPipeline& train_;
    int64_t skipBatches_;
    PipelineStats before_;
};

}  // namespace trainbench::engine
