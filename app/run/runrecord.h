#pragma once
// Stage 2 of a run (runExperiment): what the run starts from and where it is recorded. Every rank
// reads a resumed run's checkpoint or a warm start's source (the same file); the chief (rank 0)
// opens the run in the store, or reopens a resumed one.
#include <memory>
#include <optional>
#include <string>

#include "app/run/runner.h"
#include "app/run/runplan.h"
#include "app/run/warmstartsource.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/strategy/strategy.h"
#include "engine/train/trainer.h"
#include "profiler/store/runwriter.h"

namespace trainbench::app {

struct RunRecord {
    std::optional<engine::Checkpoint> resumeFrom;  // request.resume: train.checkpoint_path, read
    std::optional<engine::TrainProgress> progress;  // where the resumed run stood
    std::optional<WarmStartSource> warm;           // train.warm_start (not when resuming)
    std::unique_ptr<profiler::RunWriter> writer;   // the chief's only (rank 0)
    // Absolute: a warm start by run id reads it from wherever it is started. (The store records it
    // relative to its folder when it lies inside, and reads it back absolute: RunStoreFolder.)
    std::string checkpointPath;

    profiler::RunId runId() const { return writer ? writer->runId() : profiler::RunId{}; }
};

// Throws std::invalid_argument (resume without train.checkpoint_path), CheckpointError, what
// openWarmStart throws, and profiler::StoreError when the store cannot be written.
RunRecord openRunRecord(const RunRequest& request, const RunPlan& plan, int rank);

// Puts the resumed checkpoint or the warm start's source into the strategy's replicas, and says so.
void startFromRecord(engine::Strategy& strategy, const RunRecord& record, const Experiment& x,
                     const std::function<void(const std::string&)>& say);

}  // namespace trainbench::app
