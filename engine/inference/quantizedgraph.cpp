#include "engine/inference/quantizedgraph.h"

#include <algorithm>
#include <cmath>

#include "engine/graph/graphpasses.h"

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

void checkInt8Ops(const graph::Graph& g) {
    for (const graph::Node& n : g.nodes) {
        const std::string where = "node '" + n.name + "' (" + graph::opKindName(n.kind) + ")";
        if (n.kind == graph::OpKind::BatchNormalization || n.kind == graph::OpKind::Relu)
            throw graph::GraphError(where + ": int8 runs batch norm only folded into the Conv or Gemm before it and ReLU "
                                    "only fused into the op before it");
        if (n.kind == graph::OpKind::Clip)
            throw graph::GraphError(where + ": int8 does not run Clip (ReLU6) yet; serve this model in fp32");
        const bool int8Op = n.kind == graph::OpKind::Conv || n.kind == graph::OpKind::Gemm || n.kind == graph::OpKind::MaxPool ||
                            n.kind == graph::OpKind::GlobalAveragePool || n.kind == graph::OpKind::Flatten ||
                            n.kind == graph::OpKind::Add;
        if (!int8Op)
            throw graph::GraphError(where + ": int8 does not run " + graph::opKindName(n.kind) + " yet; serve this model in fp32");
        if (n.kind == graph::OpKind::Add && !g.nodes.empty() && n.inputs.size() == 2 && g.initializers.count(n.inputs[1]))
            throw graph::GraphError(where + ": int8 adds two values only, not a constant ('" + n.inputs[1] +
                                    "'); serve this model in fp32");
        if ((n.kind == graph::OpKind::Conv || n.kind == graph::OpKind::MaxPool) && !n.squareWindow())
            throw graph::GraphError(where + ": int8 runs square windows with the same padding on every side only, this one "
                                    "has a " + n.windowText() + "; serve this model in fp32");
        if (n.kind == graph::OpKind::Conv && n.group != 1)
            throw graph::GraphError(where + ": int8 runs convolutions of group 1 only, this one has group " +
                                    std::to_string(n.group) + "; serve this model in fp32");
    }
}

std::map<std::string, std::string> activationSources(const graph::Graph& g) {
    std::map<std::string, std::string> source{{g.input, g.input}};
    for (const graph::Node& n : g.nodes) {
        const bool ownCodes = n.kind == graph::OpKind::Conv || n.kind == graph::OpKind::Gemm || n.kind == graph::OpKind::Add;
        if (ownCodes && n.output == g.output && graph::useCount(g, g.output) == 1) continue;  // fp32 logits
        const auto in = n.inputs.empty() ? source.end() : source.find(n.inputs[0]);
        source[n.output] = ownCodes || in == source.end() ? n.output : in->second;
    }
    return source;
}

int64_t fp32WeightBytes(const graph::Graph& graph) { return graph.parameterCount() * static_cast<int64_t>(sizeof(float)); }

}  // namespace trainbench::engine::inference
