#include "engine/optim/optimizer.h"

#include "engine/optim/adam.h"
#include "engine/optim/sgd.h"

namespace trainbench::engine {

double Optimizer::learningRate(int64_t runStep) const {
    const int64_t step = stepsBefore_ + runStep;
    if (config_.warmup_steps > 0 && step < config_.warmup_steps)
        return config_.learning_rate * static_cast<double>(step) / static_cast<double>(config_.warmup_steps);
    return config_.learning_rate;
}

std::unique_ptr<Optimizer> Optimizer::create(const OptimizerConfig& config, int64_t paramCount) {
    if (config.kind == OptimizerKind::SGD) return std::make_unique<SGD>(config, paramCount);
    return std::make_unique<Adam>(config, paramCount);
}

}  // namespace trainbench::engine
