#include "engine/optim/adam.h"

#include <cmath>

namespace trainbench::engine {

Adam::Adam(const OptimizerConfig& config, int64_t paramCount)
    : Optimizer(config), m_(static_cast<size_t>(paramCount)), v_(static_cast<size_t>(paramCount)) {}

void Adam::step(float* params, const float* grads, int64_t count, int64_t stepIndex) {
    const double t = static_cast<double>(stepIndex);
    const float b1 = config_.beta1, b2 = config_.beta2, eps = config_.epsilon, wd = config_.weight_decay;
    const double bc1 = 1.0 - std::pow(static_cast<double>(b1), t);
    const double bc2 = 1.0 - std::pow(static_cast<double>(b2), t);
    // p -= lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps), folded into two per-step scalars.
    const float stepSize = static_cast<float>(learningRate(stepIndex) / bc1);
    const float invSqrtBc2 = static_cast<float>(1.0 / std::sqrt(bc2));
    float* m = m_.data();
    float* v = v_.data();
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < count; ++i) {
        const float g = grads[i] + wd * params[i];
        m[i] = b1 * m[i] + (1.0f - b1) * g;
        v[i] = b2 * v[i] + (1.0f - b2) * g * g;
        params[i] -= stepSize * m[i] / (std::sqrt(v[i]) * invSqrtBc2 + eps);
    }
}

}  // namespace trainbench::engine
