#include "engine/optim/sgd.h"

namespace trainbench::engine {

SGD::SGD(const OptimizerConfig& config, int64_t paramCount)
    : Optimizer(config), velocity_(config.momentum > 0.0f ? static_cast<size_t>(paramCount) : 0) {}

void SGD::step(float* params, const float* grads, int64_t count, int64_t stepIndex) {
    const float lr = static_cast<float>(learningRate(stepIndex));
    const float wd = config_.weight_decay, mu = config_.momentum;
    if (mu <= 0.0f) {
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < count; ++i) params[i] -= lr * (grads[i] + wd * params[i]);
        return;
    }
    float* v = velocity_.data();
    const bool first = !started_;
    const bool nesterov = config_.nesterov;
    started_ = true;
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < count; ++i) {
        const float g = grads[i] + wd * params[i];
        v[i] = first ? g : mu * v[i] + g;
        params[i] -= lr * (nesterov ? g + mu * v[i] : v[i]);
    }
}

}  // namespace trainbench::engine
