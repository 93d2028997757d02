#include "engine/optim/adam.h"

#include <cmath>

#include "engine/util/vectorkernels.h"

namespace trainbench::engine {

Adam::Adam(const OptimizerConfig& config, int64_t paramCount)
    : Optimizer(config), m_(static_cast<size_t>(paramCount)), v_(static_cast<size_t>(paramCount)) {}

void Adam::update(float* params, const float* grads, int64_t begin, int64_t end, int64_t stepIndex) {
    const double t = static_cast<double>(stepsBefore_ + stepIndex);
    const double bc1 = 1.0 - std::pow(static_cast<double>(config_.beta1), t);
    const double bc2 = 1.0 - std::pow(static_cast<double>(config_.beta2), t);
    // p -= lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps), with the per-step factors folded into scalars.
    kernels::AdamScalars s{config_.beta1, config_.beta2, config_.epsilon, config_.weight_decay,
                           static_cast<float>(learningRate(stepIndex) / bc1), static_cast<float>(1.0 / std::sqrt(bc2))};
    float* m = m_.data();
    float* v = v_.data();
    const size_t first = static_cast<size_t>(begin);
    kernels::parallelFor(static_cast<size_t>(end - begin), kGrain, [&](size_t b, size_t e) {
        kernels::adam(params, grads, m, v, first + b, first + e, s);
    });
}

std::vector<OptimizerStateSpan> Adam::state() {
    return {{"adam.m", {m_.data(), m_.size()}}, {"adam.v", {v_.data(), v_.size()}}};
}

}  // namespace trainbench::engine
