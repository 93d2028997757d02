#pragma once
// Optimizer settings from the experiment file.
#include <cstdint>

namespace trainbench::engine {

enum class OptimizerKind { SGD, Adam };

struct OptimizerConfig {
    OptimizerKind kind = OptimizerKind::Adam;
    float learning_rate = 1e-3f;
    float momentum = 0.0f;        // SGD
    bool nesterov = false;        // SGD
    float weight_decay = 0.0f;    // SGD and Adam (L2 added to the gradient)
    float beta1 = 0.9f;           // Adam
    float beta2 = 0.999f;         // Adam
    float epsilon = 1e-7f;        // Adam (Keras' default; PyTorch uses 1e-8)
    int64_t warmup_steps = 0;     // linear warm-up from 0 to learning_rate over this many steps
};

}  // namespace trainbench::engine
