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

}  // namespace trainbench::engine
