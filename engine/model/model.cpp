#include "engine/model/model.h"

#include <algorithm>

#include "engine/model/layerstack.h"
#include "engine/util/errors.h"

#include <sstream>

namespace trainbench::engine {

std::vector<size_t> Model::executionOrder(const std::vector<LayerSpec>& layers) { return layerExecutionOrder(layers); }

Model::Model(const ModelSpec& spec, const Dims& sampleShape, int64_t numClasses, CpuDevice& device, uint64_t seed)
    : device_(device), sampleShape_(sampleShape), numClasses_(numClasses) {
    LayerStack stack = buildLayerStack(spec, sampleShape, numClasses, device);
    layers_ = std::move(stack.layers);
    paramCount_ = stack.paramCount;
    stateCount_ = stack.stateCount;
    params_ = AlignedBuffer(static_cast<size_t>(paramCount_));
    grads_ = AlignedBuffer(static_cast<size_t>(paramCount_));
    state_ = AlignedBuffer(static_cast<size_t>(stateCount_));
    int64_t stateAt = 0;
    for (auto& l : layers_) {
        l->bindState(state_.data() + stateAt);
        stateAt += l->stateCount();
    }
    int64_t offset = 0;
    for (size_t i = 0; i < layers_.size(); ++i) {
        Layer& l = *layers_[i];
        paramOffsets_.push_back(offset);
        if (l.paramCount() > 0) {
            l.bindParams(params_.data() + offset, grads_.data() + offset);
            Rng rng(deriveSeed(seed, kSeedInit, i));
            l.initParams(rng);
            offset += l.paramCount();
        }
    }
    if (spec.initial) {
        const ModelWeights& w = *spec.initial;
        if (static_cast<int64_t>(w.params.size()) != paramCount_ || static_cast<int64_t>(w.state.size()) != stateCount_)
            throw ModelError(w.origin + ": its weights hold " + std::to_string(w.params.size()) + " parameters and " +
                             std::to_string(w.state.size()) + " state values, the model's layers " +
                             std::to_string(paramCount_) + " and " + std::to_string(stateCount_));
        std::copy(w.params.begin(), w.params.end(), params_.data());
        std::copy(w.state.begin(), w.state.end(), state_.data());
    }
}

void Model::setStatisticsShards(int n) {
    if (n < 1) throw ModelError("statistics shards must be at least 1, got " + std::to_string(n));
    for (auto& l : layers_) l->setStatisticsShards(n);
    statisticsShards_ = n;
}

Tensor& Model::forward(float* x, int64_t n, bool training, uint64_t stepSeed) {
    if (training && n % statisticsShards_ != 0)
        throw ModelError("a training batch of " + std::to_string(n) + " examples does not split into " +
                         std::to_string(statisticsShards_) + " equal statistics shards (one per core)");
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
        s << l->describe() << " -> " << dimsText(l->outputShape());
        if (l->paramCount()) s << " (" << l->paramCount() << " params)";
        lines.push_back(s.str());
    }
    return lines;
}

}  // namespace trainbench::engine
