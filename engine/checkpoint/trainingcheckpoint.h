#pragma once
// What a training run checkpoints to resume exactly where it stopped: the parameters and the
// optimizer's state. The step to resume at (and epoch, seed, ...) goes into the metadata, which the
// caller writes.
#include <cstdint>

#include "engine/checkpoint/checkpoint.h"
#include "engine/optim/optimizer.h"

namespace trainbench::engine {

// Shards of a training checkpoint: the parameters (float32, the model's one buffer), the names of
// the optimizer's state shards one per line (empty for plain SGD), then those shards (float32).
inline constexpr const char* kParamsShard = "params";
inline constexpr const char* kOptimizerStateShard = "optimizer.state";

void saveTraining(CheckpointWriter& writer, const float* params, int64_t count, Optimizer& optimizer);

// Restores what saveTraining stored into params (count values) and the optimizer, which must be of
// the kind and size saved. Everything is checked before anything is copied: on a CheckpointError
// (naming the shard and both sizes, or both optimizers' state names) params and optimizer are as
// they were.
void restoreTraining(const Checkpoint& checkpoint, float* params, int64_t count, Optimizer& optimizer);

// The parameters alone, for a warm start from another run (with a fresh optimizer).
void restoreParams(const Checkpoint& checkpoint, float* params, int64_t count);

}  // namespace trainbench::engine
