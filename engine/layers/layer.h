#pragma once
// One step of a model: forward and backward on a batch. Shapes other than the batch are fixed when
// the layer is built; the oneDNN primitives for each (batch size, training) pair are created on first
// use and reused after that ("plans").
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/device/cpudevice.h"
#include "engine/device/opdesc.h"
#include "engine/tensor/tensor.h"
#include "engine/util/rng.h"

namespace trainbench::engine {

class Layer {
public:
    // sampleShape: the per-example input shape ({C, H, W} or {features}).
    Layer(CpuDevice& device, Dims sampleShape) : device_(device), in_(std::move(sampleShape)) {}
    virtual ~Layer() = default;
    Layer(const Layer&) = delete;
    Layer& operator=(const Layer&) = delete;

    virtual std::string describe() const = 0;
    virtual const char* kind() const = 0;
    const Dims& inputShape() const { return in_; }
    const Dims& outputShape() const { return out_; }

    virtual int64_t paramCount() const { return 0; }
    // Points the layer at its slices of the model's contiguous parameter and gradient buffers.
    virtual void bindParams(float* /*params*/, float* /*grads*/) {}
    virtual void initParams(Rng& /*rng*/) {}
    // Non-trainable state (batch norm's running statistics): how many floats, and a slice of the
    // model's state buffer to keep them in, set to their initial values by bindState.
    virtual int64_t stateCount() const { return 0; }
    virtual void bindState(float* /*state*/) {}

    // Runs the layer on a batch; the returned tensor is owned by the layer (or is `input` itself for
    // in-place layers) and stays valid until the next forward with the same batch size and mode.
    virtual Tensor& forward(Tensor& input, bool training) = 0;
    // Given the gradient of the loss w.r.t. the output of the last training forward, writes the
    // parameter gradients (overwriting) and returns the gradient w.r.t. the input, or nullptr when
    // the input gradient is not needed (first layer).
    virtual Tensor* backward(Tensor& gradOutput) = 0;

    // The first layer of a model needs no input gradient: skipping it saves a whole GEMM. Set it
    // before the first forward: plans are built with it.
    virtual void setNeedsInputGrad(bool needs) { needsInputGrad_ = needs; }
    bool needsInputGrad() const { return needsInputGrad_; }
    // Seed for per-step randomness (dropout masks).
    virtual void setStepSeed(uint64_t /*seed*/) {}
    // The ops a forward (and, when training, the backward) of `batch` examples runs in this layer,
    // from its shapes alone: what its plans register in the per-op statistics (layout reorders,
    // which depend on the machine, left out), each with the matrix shape of a matrix product. An
    // emulated device times a step from these (engine/emulation/opgraph.h). Call after the model has
    // fused ReLUs and decided input gradients.
    virtual void describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const = 0;
    // Asks the layer to apply ReLU to its own output (a oneDNN post-op, saving a pass over the
    // activations); true if it will. Call before the first forward.
    virtual bool fuseReLU() { return false; }
    // True when the fused ReLU's gradient is applied by this layer's backward too (batch norm's
    // fused ReLU keeps a mask for it), so a fused ReLU layer after it has nothing left to do.
    virtual bool fusedReLUBackward() const { return false; }
    // Training batches are normalised in n equal consecutive shards, each with its own statistics
    // (what n accelerator cores computing batch norm on their own part of the batch do).
    virtual void setStatisticsShards(int /*n*/) {}
    // A name put before the shapes of this layer's per-op statistics ("bottleneck_4/conv_b"), so
    // the sub-ops of a composite layer can be told apart. Call before the first forward.
    virtual void setOpPath(std::string path) { opPath_ = std::move(path); }
    const std::string& opPath() const { return opPath_; }

protected:
    static int64_t batchOf(const Tensor& t) { return t.desc().dims()[0]; }
    Dims batchDims(int64_t batch, const Dims& sample) const {
        Dims d{batch};
        d.insert(d.end(), sample.begin(), sample.end());
        return d;
    }

    // Registers an op of this layer in the device's per-op statistics, under its op path if any
    // (and `part` of it: "bottleneck_4/add").
    prof::OpStat* addOp(prof::OpCost cost, const char* part = nullptr) {
        std::string path = opPath_;
        if (part) path += (path.empty() ? "" : "/") + std::string(part);
        if (!path.empty()) cost.shape = path + ": " + cost.shape;
        return device_.ops().add(std::move(cost));
    }

    // An op of this layer for describeOps(), its shape under the op path as addOp() registers it.
    OpDesc describedOp(prof::OpCost cost, StepPart part, MatrixShape matrix = {}, const char* sub = nullptr,
                       int64_t calls = 1) const {
        std::string path = opPath_;
        if (sub) path += (path.empty() ? "" : "/") + std::string(sub);
        if (!path.empty()) cost.shape = path + ": " + cost.shape;
        OpDesc op(std::move(cost), part, matrix);
        op.calls = calls;
        return op;
    }

    CpuDevice& device_;
    std::string opPath_;
    Dims in_;
    Dims out_;
    bool needsInputGrad_ = true;
};

// Primitive attributes applying ReLU to a primitive's output when `relu` is set.
inline dnnl::primitive_attr reluAttr(bool relu) {
    dnnl::primitive_attr attr;
    if (relu) {
        dnnl::post_ops ops;
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        attr.set_post_ops(ops);
    }
    return attr;
}

// Plans keyed by (batch size, training); a layer keeps the plan its last forward used for backward.
// Layers whose primitives depend on the input's layout pass `fits`: a cached plan built for another
// layout is rebuilt rather than silently misread.
template <typename Plan>
class PlanCache {
public:
    template <typename Make>
    Plan& get(int64_t batch, bool training, Make&& make) {
        return get(batch, training, std::forward<Make>(make), [](const Plan&) { return true; });
    }
    template <typename Make, typename Fits>
    Plan& get(int64_t batch, bool training, Make&& make, Fits&& fits) {
        auto key = std::make_pair(batch, training);
        auto it = plans_.find(key);
        if (it == plans_.end()) it = plans_.emplace(key, make()).first;
        else if (!fits(*it->second)) it->second = make();
        current_ = it->second.get();
        return *current_;
    }
    Plan* current() const { return current_; }

private:
    std::map<std::pair<int64_t, bool>, std::unique_ptr<Plan>> plans_;
    Plan* current_ = nullptr;
};

}  // namespace trainbench::engine
