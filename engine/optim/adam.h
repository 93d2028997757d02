#pragma once
// Adam (Kingma & Ba) with PyTorch's formulation: m and v are bias-corrected and epsilon is added to
// sqrt(v_hat): p -= lr * m_hat / (sqrt(v_hat) + eps). Weight decay is L2 added to the gradient.
#include "engine/optim/optimizer.h"

namespace trainbench::engine {

class Adam : public Optimizer {
public:
    Adam(const OptimizerConfig& config, int64_t paramCount);
    void update(float* params, const float* grads, int64_t begin, int64_t end, int64_t step) override;
    // "adam.m", "adam.v". Adam needs no stateRestored(): its bias correction follows the step index
    // the caller passes, which resumes with the checkpoint's step.
    std::vector<OptimizerStateSpan> state() override;
    // Reads p, g, m, v and writes p, m, v; about 15 operations per parameter (sqrt and divide included).
    const char* updateKind() const override { return "adam_update"; }
    double flopsPerParam() const override { return 15.0; }
    double bytesPerParam() const override { return 28.0; }

private:
    AlignedBuffer m_, v_;
};

}  // namespace trainbench::engine
