#pragma once
// Starting a model from another run's checkpoint (a warm start, as fine-tuning does): its parameters
// and batch norm running statistics, and on request its optimizer state.
#include <cstdint>

#include "engine/checkpoint/checkpoint.h"
#include "engine/model/model.h"
#include "engine/optim/optimizer.h"

namespace trainbench::engine {

struct WarmStartOptions {
    // Off (the default): a fresh optimizer, so warm-up and Adam's bias correction start at step 1.
    // On: the optimizer's state (Adam's moments, SGD's velocity) comes along with its count of
    // updates, `optimizer_steps`, and training goes on as if the source had not stopped.
    bool carry_optimizer = false;
    int64_t optimizer_steps = 0;
};

// Checks the checkpoint's model layout (checkModelLayout) and every shard size before anything is
// copied: on a CheckpointError the model and optimizer are as they were.
void warmStartFrom(const Checkpoint& checkpoint, Model& model, Optimizer& optimizer, const WarmStartOptions& options);

}  // namespace trainbench::engine
