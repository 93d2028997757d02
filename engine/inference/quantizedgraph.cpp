#include "engine/inference/quantizedgraph.h"

#include <algorithm>
#include <cmath>

namespace trainbench::engine::inference {

QuantizedWeight quantizeWeight(const graph::Initializer& weight) {
    QuantizedWeight q;
    q.dims = weight.dims;
    const size_t out = static_cast<size_t>(weight.dims.at(0));
    const size_t per = out ? weight.values.size() / out : 0;
    q.values.resize(weight.values.size());
    q.scales.resize(out);
    for (size_t o = 0; o < out; ++o) {
        float largest = 0.0f;
        for (size_t i = 0; i < per; ++i) largest = std::max(largest, std::abs(weight.values[o * per + i]));
        // An all-zero channel keeps scale 1: its codes are 0 whatever the scale.
        const float scale = largest > 0.0f ? largest / 127.0f : 1.0f;
        q.scales[o] = scale;
        for (size_t i = 0; i < per; ++i) {
            const float code = std::nearbyint(weight.values[o * per + i] / scale);
            q.values[o * per + i] = static_cast<int8_t>(std::clamp(code, -127.0f, 127.0f));
        }
    }
    return q;
}

int64_t QuantizedGraph::weightBytes() const {
    int64_t bytes = 0;
    for (const auto& [name, w] : weights)
        bytes += static_cast<int64_t>(w.values.size() + w.scales.size() * sizeof(float));
    for (const auto& [name, init] : graph.initializers)
        if (!weights.count(name)) bytes += static_cast<int64_t>(init.values.size() * sizeof(float));
    return bytes;
}

graph::Graph QuantizedGraph::dequantized() const {
    graph::Graph g = graph;
    for (const auto& [name, w] : weights) {
        graph::Initializer& init = g.initializers[name];
        init.dims = w.dims;
        init.values.resize(w.values.size());
        const size_t per = w.values.size() / w.scales.size();
        for (size_t i = 0; i < w.values.size(); ++i) init.values[i] = float(w.values[i]) * w.scales[i / per];
    }
    return g;
}

int64_t fp32WeightBytes(const graph::Graph& graph) { return graph.parameterCount() * static_cast<int64_t>(sizeof(float)); }

}  // namespace trainbench::engine::inference
