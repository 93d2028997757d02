#pragma once
// The layers of a ModelSpec as they run: in execution order, ReLUs fused into the layer before them,
// and each layer told whether its input gradient is needed. A Model trains such a stack; an op graph
// (engine/emulation/opgraph.h) describes one without allocating a parameter, so that a model too large
// for this machine can still be timed on an emulated device.
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/device/cpudevice.h"
#include "engine/layers/layer.h"
#include "engine/model/modelspec.h"

namespace trainbench::engine {

struct LayerStack {
    std::vector<std::unique_ptr<Layer>> layers;
    int64_t paramCount = 0;
    int64_t stateCount = 0;  // non-trainable state (batch norm running statistics)
};

// Throws ModelError naming the layer (its index in the spec) when the layers do not fit the input,
// or when the last one does not produce `numClasses` logits.
// `reluApart` (indexed like the stack's layers): a layer marked true does not take the ReLU after it
// into itself (tensor parallelism sums that layer's output first).
LayerStack buildLayerStack(const ModelSpec& spec, const Dims& sampleShape, int64_t numClasses, CpuDevice& device,
                           const std::vector<bool>* reluApart = nullptr);

// The order the spec's layers run in: the spec's own, except that ReLU -> MaxPool2D runs as
// MaxPool2D -> ReLU (the same function and gradient, on 1/size^2 of the data).
std::vector<size_t> layerExecutionOrder(const std::vector<LayerSpec>& layers);

// "1x28x28"
std::string dimsText(const Dims& dims);

}  // namespace trainbench::engine
