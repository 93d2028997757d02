#pragma once
// A sequential model built from a ModelSpec: the layers, one contiguous parameter buffer, one
// contiguous gradient buffer and one buffer of non-trainable state (each layer holds views into
// them), forward and backward over a batch.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/device/cpudevice.h"
#include "engine/layers/layer.h"
#include "engine/model/modelspec.h"
#include "engine/tensor/tensor.h"

namespace trainbench::engine {

class Model {
public:
    // sampleShape: per-example input, e.g. {1, 28, 28}. Throws ModelError when the layers do not fit
    // the input or the last layer does not produce `numClasses` logits.
    Model(const ModelSpec& spec, const Dims& sampleShape, int64_t numClasses, CpuDevice& device, uint64_t seed);

    int64_t paramCount() const { return paramCount_; }
    float* params() { return params_.data(); }
    const float* params() const { return params_.data(); }
    float* grads() { return grads_.data(); }
    // Non-trainable state: the running mean and variance of every batch norm, layer after layer
    // (within a layer: mean then variance, per channel). Empty without batch norm. Checkpoints keep it.
    std::span<float> state() { return {state_.data(), static_cast<size_t>(stateCount_)}; }
    std::span<const float> state() const { return {state_.data(), static_cast<size_t>(stateCount_)}; }

    // Training batches are normalised in n equal consecutive shards, each with its own batch norm
    // statistics: what n data-parallel cores each holding 1/n of the global batch compute (a TPU
    // pod's replicas). The running statistics move towards the mean over shards. n = 1 (the
    // default) normalises the whole batch together. A training batch not divisible by n is a
    // ModelError. Evaluation is not sharded (it uses the running statistics).
    void setStatisticsShards(int n);
    int statisticsShards() const { return statisticsShards_; }

    // x: n examples, plain NCHW floats. Returns the logits [n, classes], plain. The pointer must stay
    // valid until backward(), and x may be overwritten (in-place layers such as ReLU or Dropout first).
    Tensor& forward(float* x, int64_t n, bool training, uint64_t stepSeed = 0);
    // Called during backward() as soon as a layer's gradients are final, with that layer's span of
    // the flat buffers [offset, offset + count), last layer first. Used to update (or all-reduce) a
    // layer while its gradients are still in cache, overlapping the rest of the backward pass.
    using GradientsReady = std::function<void(int64_t offset, int64_t count)>;
    // Back-propagates d(loss)/d(logits) (plain [n, classes]) and fills grads().
    void backward(Tensor& gradLogits, const GradientsReady& onReady = {});

    // The [offset, count) spans of the flat buffers that backward() reports ready, in its order.
    std::vector<std::pair<int64_t, int64_t>> gradientSpans() const;

    int64_t numClasses() const { return numClasses_; }
    const Dims& sampleShape() const { return sampleShape_; }
    const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
    // One line per layer: kind, output shape, parameter count.
    std::vector<std::string> summary() const;
    CpuDevice& device() { return device_; }
    // The order the spec's layers run in: the spec's own, except that ReLU -> MaxPool2D runs as
    // MaxPool2D -> ReLU (the same function and gradient, on 1/size^2 of the data).
    static std::vector<size_t> executionOrder(const std::vector<LayerSpec>& layers);

private:
    CpuDevice& device_;
    Dims sampleShape_;
    int64_t numClasses_;
    std::vector<std::unique_ptr<Layer>> layers_;
    std::vector<int64_t> paramOffsets_;  // per layer, into params_/grads_
    int64_t paramCount_ = 0;
    int64_t stateCount_ = 0;
    int statisticsShards_ = 1;
    AlignedBuffer params_, grads_, state_;
    Tensor input_;
};

}  // namespace trainbench::engine
