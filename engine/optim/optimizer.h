#pragma once
// Updates the model's parameters in place from its gradients; both are one contiguous buffer each, so
// an optimizer step is a single pass over a span (and later strategies all-reduce that same span).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/optim/optimizerconfig.h"
#include "engine/tensor/tensor.h"

namespace trainbench::engine {

// One named part of an optimizer's state (e.g. Adam's first moments): a view of the optimizer's own
// buffer, one value per parameter.
struct OptimizerStateSpan {
    std::string name;
    std::span<float> values;
};

class Optimizer {
public:
    explicit Optimizer(const OptimizerConfig& config) : config_(config) {}
    virtual ~Optimizer() = default;

    // Applies one update to the whole buffer; `step` is 1-based and, counted on from stepsBefore(),
    // drives warm-up and Adam's bias correction.
    void step(float* params, const float* grads, int64_t count, int64_t step) { update(params, grads, 0, count, step); }
    // The same update on the elements [begin, end) only: a step may be applied span by span (e.g.
    // layer by layer during backward), with the same result as one whole-buffer call.
    virtual void update(float* params, const float* grads, int64_t begin, int64_t end, int64_t step) = 0;
    // Learning rate in effect at a 1-based step: linear warm-up, then constant.
    double learningRate(int64_t step) const;
    const OptimizerConfig& config() const { return config_; }

    // Updates the state took before this run's step 1: a warm start that carries another run's
    // optimizer state carries its count of updates too (as TF's optimizer.iterations and PyTorch's
    // Adam 'step' do), so warm-up and Adam's bias correction go on from there. 0 otherwise.
    void setStepsBefore(int64_t steps) { stepsBefore_ = steps; }
    int64_t stepsBefore() const { return stepsBefore_; }

    // The state an update carries from step to step, for checkpoints: Adam's "adam.m" and "adam.v",
    // SGD's "sgd.momentum" (with momentum only); nothing for plain SGD. The spans are the optimizer's
    // own buffers: copy out of them to save; to resume, copy into them and then call stateRestored().
    virtual std::vector<OptimizerStateSpan> state() { return {}; }
    // The state() buffers now hold state saved after some steps: the next update continues from it
    // instead of starting afresh (SGD would otherwise take its velocity from the next gradient).
    virtual void stateRestored() {}

    // What one update of `params` parameters costs (per-op statistics): its kind and the FLOPs and
    // bytes per parameter.
    virtual const char* updateKind() const = 0;
    virtual double flopsPerParam() const = 0;
    virtual double bytesPerParam() const = 0;

    static std::unique_ptr<Optimizer> create(const OptimizerConfig& config, int64_t paramCount);

protected:
    // Below this many parameters per thread, splitting the update costs more than it saves.
    static constexpr size_t kGrain = 32768;
    OptimizerConfig config_;
    int64_t stepsBefore_ = 0;
};

}  // namespace trainbench::engine
