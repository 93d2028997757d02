#include "engine/optim/sgd.h"

#include "engine/util/vectorkernels.h"

namespace trainbench::engine {

SGD::SGD(const OptimizerConfig& config, int64_t paramCount)
    : Optimizer(config), velocity_(config.momentum > 0.0f ? static_cast<size_t>(paramCount) : 0) {}

void SGD::step(float* params, const float* grads, int64_t count, int64_t stepIndex) {
    const float lr = static_cast<float>(learningRate(stepIndex));
    const float wd = config_.weight_decay, mu = config_.momentum;
    const size_t n = static_cast<size_t>(count);
    if (mu <= 0.0f) {
        kernels::parallelFor(n, kGrain, [&](size_t b, size_t e) { kernels::sgd(params, grads, b, e, lr, wd); });
        return;
    }
    float* v = velocity_.data();
    const bool first = !started_;
    started_ = true;
    kernels::parallelFor(n, kGrain, [&](size_t b, size_t e) {
        kernels::sgdMomentum(params, grads, v, b, e, lr, wd, mu, config_.nesterov, first);
    });
}

}  // namespace trainbench::engine
