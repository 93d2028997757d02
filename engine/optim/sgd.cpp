#include "engine/optim/sgd.h"

#include "engine/util/vectorkernels.h"

namespace trainbench::engine {

SGD::SGD(const OptimizerConfig& config, int64_t paramCount)
    : Optimizer(config), velocity_(config.momentum > 0.0f ? static_cast<size_t>(paramCount) : 0) {}

void SGD::update(float* params, const float* grads, int64_t begin, int64_t end, int64_t stepIndex) {
    const float lr = static_cast<float>(learningRate(stepIndex));
    const float wd = config_.weight_decay, mu = config_.momentum;
    const size_t n = static_cast<size_t>(end - begin), o = static_cast<size_t>(begin);
    if (mu <= 0.0f) {
        kernels::parallelFor(n, kGrain, [&](size_t b, size_t e) { kernels::sgd(params, grads, o + b, o + e, lr, wd); });
        return;
    }
    float* v = velocity_.data();
    // The velocity starts as the first gradient; "first" is per step, as spans of one step arrive.
    if (firstStep_ < 0) firstStep_ = stepIndex;
    const bool first = stepIndex == firstStep_;
    kernels::parallelFor(n, kGrain, [&](size_t b, size_t e) {
        kernels::sgdMomentum(params, grads, v, o + b, o + e, lr, wd, mu, config_.nesterov, first);
    });
}

std::vector<OptimizerStateSpan> SGD::state() {
    if (velocity_.size() == 0) return {};
    return {{"sgd.momentum", {velocity_.data(), velocity_.size()}}};
}

// Steps are 1-based, so no step matches 0: every update from now on accumulates into the restored
// velocity. A checkpoint taken before the first step holds a zero velocity, and mu * 0 + g = g is
// exactly the first-step rule, so that case resumes identically too.
void SGD::stateRestored() { firstStep_ = 0; }

}  // namespace trainbench::engine
