#pragma once
// Trained models and their logits for the inference tests (test_graph, test_compiledgraph): a few
// SGD steps on random batches, so batch norm's running statistics and the weights are no longer
// their initial values.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/graph/graphfrommodel.h"
#include "engine/layers/softmaxcrossentropy.h"
#include "engine/model/model.h"
#include "tests/engine/modelspecs.h"

namespace trainbench::engine::testinference {

inline void trainSteps(Model& m, int steps, uint64_t seed, float rate = 0.05f) {
    for (int s = 0; s < steps; ++s) {
        testmodels::Batch b = testmodels::randomBatch(m, 32, seed + static_cast<uint64_t>(s));
        Tensor& logits = m.forward(b.x.data(), b.n, true);
        Tensor grad(Tensor::plainDesc({b.n, m.numClasses()}), m.device().engine());
        m.device().stream().wait();
        SoftmaxCrossEntropy::compute(logits, b.y.data(), &grad);
        m.backward(grad);
        m.device().stream().wait();
        for (int64_t i = 0; i < m.paramCount(); ++i) m.params()[i] -= rate * m.grads()[i];
    }
}

// The model's evaluation logits for x (copied: the model may overwrite its input).
inline std::vector<float> modelLogits(Model& m, std::vector<float> x, int64_t n) {
    Tensor& logits = m.forward(x.data(), n, false);
    m.device().stream().wait();
    return {logits.data(), logits.data() + n * m.numClasses()};
}

inline graph::Graph graphOf(const Model& m, const ModelSpec& spec) {
    return graph::graphFromModel(spec, m.sampleShape(), m.numClasses(), {m.params(), static_cast<size_t>(m.paramCount())},
                                 m.state());
}

// The largest difference relative to the largest expected magnitude (logits near 0 have no
// meaningful relative error of their own).
inline double maxRelativeError(const std::vector<float>& got, const std::vector<float>& want) {
    double diff = 0.0, scale = 1e-30;
    for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
        diff = std::max(diff, std::abs(double(got[i]) - double(want[i])));
        scale = std::max(scale, std::abs(double(want[i])));
    }
    return got.size() == want.size() ? diff / scale : INFINITY;
}

}  // namespace trainbench::engine::testinference
