#pragma once
// The optimizer configurations the engine's tests train with.

#include <cstdint>

#include "engine/optim/optimizerconfig.h"

namespace trainbench::engine::test {

// Adam at learning rate 0.01, with optional warm-up steps and weight decay.
inline OptimizerConfig adam(int64_t warmup_steps = 0, float weight_decay = 0.0f) {
    OptimizerConfig c;
    c.kind = OptimizerKind::Adam;
    c.learning_rate = 0.01f;
    c.warmup_steps = warmup_steps;
    c.weight_decay = weight_decay;
    return c;
}

}  // namespace trainbench::engine::test
