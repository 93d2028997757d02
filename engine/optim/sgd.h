#pragma once
// Stochastic gradient descent with optional (Nesterov) momentum and L2 weight decay, with PyTorch's
// semantics: g += wd*p; v = mu*v + g (v = g on the first step); p -= lr * (nesterov ? g + mu*v : v).
#include "engine/optim/optimizer.h"

namespace trainbench::engine {

class SGD : public Optimizer {
public:
    SGD(const OptimizerConfig& config, int64_t paramCount);
    void update(float* params, const float* grads, int64_t begin, int64_t end, int64_t step) override;
    // "sgd.momentum" when momentum is on; nothing otherwise.
    std::vector<OptimizerStateSpan> state() override;
    void stateRestored() override;
    // Plain: reads p, g, writes p. With momentum also reads and writes the velocity.
    const char* updateKind() const override { return config_.momentum > 0 ? "sgd_momentum_update" : "sgd_update"; }
    double flopsPerParam() const override { return config_.momentum > 0 ? 6.0 : 3.0; }
    double bytesPerParam() const override { return config_.momentum > 0 ? 20.0 : 12.0; }

private:
    AlignedBuffer velocity_;
    int64_t firstStep_ = -1;  // the step whose update initialises the velocity
};

}  // namespace trainbench::engine
