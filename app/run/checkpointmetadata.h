#pragma once
// The metadata a run writes into its checkpoints (JSON): the run it belongs to and where training
// stood, so that a restarted job resumes the same run and a warm start knows its source.
#include <cstdint>
#include <string>

#include "engine/checkpoint/checkpoint.h"
#include "engine/train/trainer.h"

namespace trainbench::app {

// `optimizerStepsBefore`: updates the run's optimizer state had taken before its step 1 (a warm
// start that carried it); written only when not 0.
std::string progressMetadata(const engine::TrainProgress& progress, int64_t runId, int64_t optimizerStepsBefore = 0);

// CheckpointError naming the file when the metadata is not JSON or lacks what is asked for.
int64_t runIdFromMetadata(const engine::Checkpoint& checkpoint);
engine::TrainProgress progressFromMetadata(const engine::Checkpoint& checkpoint);
int64_t optimizerStepsBeforeFromMetadata(const engine::Checkpoint& checkpoint);  // 0 when absent

}  // namespace trainbench::app
