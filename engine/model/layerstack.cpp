#include "engine/model/layerstack.h"

#include "engine/layers/batchnorm.h"
#include "engine/layers/bottleneck.h"
#include "engine/layers/conv2d.h"
#include "engine/layers/dense.h"
#include "engine/layers/dropout.h"
#include "engine/layers/flatten.h"
#include "engine/layers/globalavgpool.h"
#include "engine/layers/maxpool2d.h"
#include "engine/layers/relu.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {
std::unique_ptr<Layer> makeLayer(const LayerSpec& s, CpuDevice& dev, const Dims& in, size_t index, int64_t numClasses) {
    const std::string where = "layer " + std::to_string(index) + " (" + layerKindName(s.kind) + ")";
    auto positive = [&](int v, const char* what) {
        if (v <= 0) throw ModelError(where + ": " + what + " must be positive, got " + std::to_string(v));
    };
    auto image = [&](const char* hint) {
        if (in.size() != 3)
            throw ModelError(where + " needs a [channels, height, width] input but gets " + dimsText(in) + hint);
    };
    switch (s.kind) {
        case LayerKind::Dense: {
            const int units = s.units == LayerSpec::kUnitsPerClass ? static_cast<int>(numClasses) : s.units;
            positive(units, "units");
            return std::make_unique<Dense>(dev, in, units, s.bias);
        }
        case LayerKind::Conv2D:
            positive(s.filters, "filters");
            positive(s.kernel, "kernel");
            positive(s.stride, "stride");
            image(" (is it after a flatten or dense layer?)");
            return std::make_unique<Conv2D>(dev, in, s.filters, s.kernel, s.stride, s.padding, s.bias);
        case LayerKind::MaxPool2D:
            positive(s.kernel, "size");
            image("");
            return std::make_unique<MaxPool2D>(dev, in, s.kernel, s.stride, s.padding);
        case LayerKind::ReLU: return std::make_unique<ReLU>(dev, in);
        case LayerKind::Flatten: return std::make_unique<Flatten>(dev, in);
        case LayerKind::Dropout: return std::make_unique<Dropout>(dev, in, s.rate);
        case LayerKind::BatchNorm: return std::make_unique<BatchNorm>(dev, in, s.momentum, s.epsilon);
        case LayerKind::GlobalAvgPool:
            image(" (is it after a flatten, dense or another global_avg_pool layer?)");
            return std::make_unique<GlobalAvgPool>(dev, in);
        case LayerKind::Bottleneck:
            positive(s.filters, "filters");
            positive(s.stride, "stride");
            image(" (is it after a flatten, dense or global_avg_pool layer?)");
            return std::make_unique<Bottleneck>(dev, in, s.filters, s.stride, s.momentum, s.epsilon);
    }
    throw ModelError("unknown layer kind");
}
}  // namespace

std::vector<size_t> layerExecutionOrder(const std::vector<LayerSpec>& layers) {
    // ReLU then max-pooling equals max-pooling then ReLU, exactly: ReLU is monotonic, so it commutes
    // with max, and the gradients agree too (where a window's max is <= 0 both give 0, elsewhere both
    // route the gradient to the same arg-max). After pooling, the ReLU touches 1/(size^2) of the
    // data: for W2 that removes a memory-bound pass over its largest activation in each direction.
    std::vector<size_t> order(layers.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (size_t i = 0; i + 1 < order.size(); ++i) {
        if (layers[order[i]].kind == LayerKind::ReLU && layers[order[i + 1]].kind == LayerKind::MaxPool2D) {
            std::swap(order[i], order[i + 1]);
            ++i;
        }
    }
    return order;
}

LayerStack buildLayerStack(const ModelSpec& spec, const Dims& sampleShape, int64_t numClasses, CpuDevice& device,
                           const std::vector<bool>* reluApart) {
    if (!spec.onnx.empty() && spec.layers.empty())
        throw ModelError("model.onnx " + spec.onnx + ": the imported graph was not resolved into layers "
                         "(engine/graph/layersfromgraph.h) before the model was built");
    if (spec.layers.empty()) throw ModelError("the model has no layers");
    LayerStack stack;
    auto& layers = stack.layers;
    Dims shape = sampleShape;
    for (size_t i : layerExecutionOrder(spec.layers)) {
        try {
            layers.push_back(makeLayer(spec.layers[i], device, shape, i, numClasses));
        } catch (const ModelError& e) {
            std::string msg = e.what();
            if (msg.rfind("layer ", 0) != 0) msg = "layer " + std::to_string(i) + ": " + msg;
            throw ModelError(msg);
        }
        // Composite layers name their sub-ops in the per-op statistics after their place in the model;
        // an imported model's layers after their ONNX nodes.
        if (i < spec.layer_names.size() && !spec.layer_names[i].empty())
            layers.back()->setOpPath(spec.layer_names[i]);
        else if (spec.layers[i].kind == LayerKind::Bottleneck)
            layers.back()->setOpPath(std::string(layerKindName(spec.layers[i].kind)) + "_" + std::to_string(i));
        shape = layers.back()->outputShape();
        stack.paramCount += layers.back()->paramCount();
        stack.stateCount += layers.back()->stateCount();
    }
    if (shape.size() != 1 || shape[0] != numClasses)
        throw ModelError("the last layer outputs " + dimsText(shape) + " values per example but the dataset has " +
                         std::to_string(numClasses) + " classes; end the model with a dense layer of " +
                         std::to_string(numClasses) + " units");
    // A ReLU right after a dense, conv, pooling or batch norm layer runs inside that layer.
    for (size_t i = 1; i < layers.size(); ++i) {
        if (reluApart && i - 1 < reluApart->size() && (*reluApart)[i - 1]) continue;
        if (auto* relu = dynamic_cast<ReLU*>(layers[i].get()); relu && layers[i - 1]->fuseReLU())
            relu->setFusedIntoPrevious(true, layers[i - 1]->fusedReLUBackward());
    }
    // Layers before the first one with parameters need no input gradient; neither does that one.
    bool needed = false;
    for (auto& l : layers) {
        l->setNeedsInputGrad(needed);
        if (l->paramCount() > 0) needed = true;
    }
    return stack;
}

}  // namespace trainbench::engine
