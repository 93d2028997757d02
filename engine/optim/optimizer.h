#pragma once
// Updates the model's parameters in place from its gradients; both are one contiguous buffer each, so
// an optimizer step is a single pass over a span (and later strategies all-reduce that same span).
#include <cstddef>
#include <cstdint>
#include <memory>

#include "engine/optim/optimizerconfig.h"
#include "engine/tensor/tensor.h"

namespace trainbench::engine {

class Optimizer {
public:
    explicit Optimizer(const OptimizerConfig& config) : config_(config) {}
    virtual ~Optimizer() = default;

    // Applies one update; `step` is 1-based and drives warm-up and Adam's bias correction.
    virtual void step(float* params, const float* grads, int64_t count, int64_t step) = 0;
    // Learning rate in effect at a 1-based step: linear warm-up, then constant.
    double learningRate(int64_t step) const;
    const OptimizerConfig& config() const { return config_; }

    static std::unique_ptr<Optimizer> create(const OptimizerConfig& config, int64_t paramCount);

protected:
    // Below this many parameters per thread, splitting the update costs more than it saves.
    static constexpr size_t kGrain = 32768;
    OptimizerConfig config_;
};

}  // namespace trainbench::engine
