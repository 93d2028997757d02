#include "engine/model/model.h"

#include <sstream>

#include "engine/layers/conv2d.h"
#include "engine/layers/dense.h"
#include "engine/layers/dropout.h"
#include "engine/layers/flatten.h"
#include "engine/layers/maxpool2d.h"
#include "engine/layers/relu.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {
std::string shapeText(const Dims& d) {
    std::ostringstream s;
    for (size_t i = 0; i < d.size(); ++i) s << (i ? "x" : "") << d[i];
    return s.str();
}

std::unique_ptr<Layer> makeLayer(const LayerSpec& s, CpuDevice& dev, const Dims& in, size_t index) {
    auto positive = [&](int v, const char* what) {
        if (v <= 0)
            throw ModelError("layer " + std::to_string(index) + " (" + layerKindName(s.kind) + "): " + what +
                             " must be positive, got " + std::to_string(v));
    };
    switch (s.kind) {
        case LayerKind::Dense:
            positive(s.units, "units");
            return std::make_unique<Dense>(dev, in, s.units, s.bias);
        case LayerKind::Conv2D:
            positive(s.filters, "filters");
            positive(s.kernel, "kernel");
            positive(s.stride, "stride");
            if (in.size() != 3)
                throw ModelError("layer " + std::to_string(index) + " (conv2d) needs a [channels, height, width] "
                                 "input but gets " + shapeText(in) + " (is it after a flatten or dense layer?)");
            return std::make_unique<Conv2D>(dev, in, s.filters, s.kernel, s.stride, s.padding, s.bias);
        case LayerKind::MaxPool2D:
            positive(s.kernel, "size");
            if (in.size() != 3)
                throw ModelError("layer " + std::to_string(index) + " (maxpool2d) needs a [channels, height, "
                                 "width] input but gets " + shapeText(in));
            return std::make_unique<MaxPool2D>(dev, in, s.kernel, s.stride);
        case LayerKind::ReLU: return std::make_unique<ReLU>(dev, in);
        case LayerKind::Flatten: return std::make_unique<Flatten>(dev, in);
        case LayerKind::Dropout: return std::make_unique<Dropout>(dev, in, s.rate);
    }
    throw ModelError("unknown layer kind");
}
}  // namespace

std::vector<size_t> Model::executionOrder(const std::vector<LayerSpec>& layers) {
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

Model::Model(const ModelSpec& spec, const Dims& sampleShape, int64_t numClasses, CpuDevice& device, uint64_t seed)
    : device_(device), sampleShape_(sampleShape), numClasses_(numClasses) {
    if (spec.layers.empty()) throw ModelError("the model has no layers");
    Dims shape = sampleShape;
    for (size_t i : executionOrder(spec.layers)) {
        try {
            layers_.push_back(makeLayer(spec.layers[i], device, shape, i));
        } catch (const ModelError& e) {
            std::string msg = e.what();
            if (msg.rfind("layer ", 0) != 0) msg = "layer " + std::to_string(i) + ": " + msg;
            throw ModelError(msg);
        }
        shape = layers_.back()->outputShape();
        paramCount_ += layers_.back()->paramCount();
    }
    if (shape.size() != 1 || shape[0] != numClasses)
        throw ModelError("the last layer outputs " + shapeText(shape) + " values per example but the dataset has " +
                         std::to_string(numClasses) + " classes; end the model with a dense layer of " +
                         std::to_string(numClasses) + " units");
    // A ReLU right after a dense, conv or pooling layer runs inside that layer.
    for (size_t i = 1; i < layers_.size(); ++i) {
        if (auto* relu = dynamic_cast<ReLU*>(layers_[i].get()); relu && layers_[i - 1]->fuseReLU())
            relu->setFusedIntoPrevious(true);
    }
    params_ = AlignedBuffer(static_cast<size_t>(paramCount_));
    grads_ = AlignedBuffer(static_cast<size_t>(paramCount_));
    // Layers before the first one with parameters need no input gradient; neither does that one.
    bool needed = false;
    int64_t offset = 0;
    for (size_t i = 0; i < layers_.size(); ++i) {
        Layer& l = *layers_[i];
        paramOffsets_.push_back(offset);
        l.setNeedsInputGrad(needed);
        if (l.paramCount() > 0) {
            l.bindParams(params_.data() + offset, grads_.data() + offset);
            Rng rng(deriveSeed(seed, kSeedInit, i));
            l.initParams(rng);
            offset += l.paramCount();
            needed = true;
        }
    }
}

Tensor& Model::forward(float* x, int64_t n, bool training, uint64_t stepSeed) {
    Dims d{n};
    d.insert(d.end(), sampleShape_.begin(), sampleShape_.end());
    if (input_.empty() || input_.data() != x || input_.dims() != d)
        input_ = Tensor(Tensor::plainDesc(d), device_.engine(), x);
    Tensor* t = &input_;
    for (size_t i = 0; i < layers_.size(); ++i) {
        if (training) layers_[i]->setStepSeed(deriveSeed(stepSeed, kSeedDropout, i));
        t = &layers_[i]->forward(*t, training);
    }
    return *t;
}

void Model::backward(Tensor& gradLogits, const GradientsReady& onReady) {
    Tensor* g = &gradLogits;
    for (size_t i = layers_.size(); i-- > 0;) {
        g = layers_[i]->backward(*g);
        // The layer is done with its weights (the input gradient used them), so they may change now.
        if (onReady && layers_[i]->paramCount() > 0) {
            device_.stream().wait();
            onReady(paramOffsets_[i], layers_[i]->paramCount());
        }
        if (!g) break;
    }
}

std::vector<std::pair<int64_t, int64_t>> Model::gradientSpans() const {
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (size_t i = layers_.size(); i-- > 0;)
        if (layers_[i]->paramCount() > 0) spans.emplace_back(paramOffsets_[i], layers_[i]->paramCount());
    return spans;
}

std::vector<std::string> Model::summary() const {
    std::vector<std::string> lines;
    for (const auto& l : layers_) {
        std::ostringstream s;
        s << l->describe() << " -> " << shapeText(l->outputShape());
        if (l->paramCount()) s << " (" << l->paramCount() << " params)";
        lines.push_back(s.str());
    }
    return lines;
}

}  // namespace trainbench::engine
