#pragma once
// What a training run checkpoints to resume exactly where it stopped: the parameters, the model's
// non-trainable state (batch norm's running statistics) and the optimizer's state. The step to resume at (and epoch, seed, ...) goes into the metadata, which the
// caller writes.
#include <cstdint>
#include <span>

#include "engine/checkpoint/checkpoint.h"
#include "engine/optim/optimizer.h"

namespace trainbench::engine {

// Shards of a training checkpoint: the parameters (float32, the model's one buffer), the names of
// the optimizer's state shards one per line (empty for plain SGD), then those shards (float32).
inline constexpr const char* kParamsShard = "params";
inline constexpr const char* kOptimizerStateShard = "optimizer.state";
// The model's state (Model::state(), float32), present only when the model has some: checkpoints of
// models without batch norm are exactly what they were before the shard existed.
inline constexpr const char* kModelStateShard = "model.state";

void saveTraining(CheckpointWriter& writer, const float* params, int64_t count, Optimizer& optimizer,
                  std::span<const float> modelState = {});

// Restores what saveTraining stored into params (count values), the model state and the optimizer,
// which must be of the kind and size saved. Everything is checked before anything is copied: on a
// CheckpointError (naming the shard and both sizes, or both optimizers' state names, or the missing
// model state) params, model state and optimizer are as they were.
void restoreTraining(const Checkpoint& checkpoint, float* params, int64_t count, Optimizer& optimizer,
                     std::span<float> modelState = {});

// The parameters and the model state alone, for a warm start from another run (with a fresh
// optimizer): the running statistics belong to the parameters they were gathered with.
void restoreParams(const Checkpoint& checkpoint, float* params, int64_t count, std::span<float> modelState = {});

}  // namespace trainbench::engine
