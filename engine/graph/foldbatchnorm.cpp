#include <cmath>

#include "engine/graph/graphpasses.h"

namespace trainbench::engine::graph {

namespace {

// A name for a new initializer of `node`: `wanted` if free, else with a numbered suffix.
std::string freeName(const Graph& g, const std::string& wanted) {
    std::string name = wanted;
    for (int k = 1; g.initializers.count(name); ++k) name = wanted + "_" + std::to_string(k);
    return name;
}

// Folds bn into producer (a Conv or Gemm whose only reader is bn).
void fold(Graph& g, Node& producer, const Node& bn) {
    const std::vector<float>& scale = g.initializer(bn.inputs[1], bn.name).values;
    const std::vector<float>& shift = g.initializer(bn.inputs[2], bn.name).values;
    const std::vector<float>& mean = g.initializer(bn.inputs[3], bn.name).values;
    const std::vector<float>& var = g.initializer(bn.inputs[4], bn.name).values;
    const Initializer& w = g.initializer(producer.inputs[1], producer.name);
    const size_t channels = scale.size(), perChannel = w.values.size() / channels;

    std::vector<double> s(channels);
    for (size_t c = 0; c < channels; ++c) s[c] = double(scale[c]) / std::sqrt(double(var[c]) + double(bn.epsilon));
    Initializer folded{w.dims, std::vector<float>(w.values.size())};
    for (size_t c = 0; c < channels; ++c)
        for (size_t k = 0; k < perChannel; ++k)
            folded.values[c * perChannel + k] = static_cast<float>(double(w.values[c * perChannel + k]) * s[c]);
    Initializer bias{{static_cast<int64_t>(channels)}, std::vector<float>(channels)};
    for (size_t c = 0; c < channels; ++c) {
        const double b = producer.inputs.size() == 3 ? double(g.initializer(producer.inputs[2], producer.name).values[c]) : 0.0;
        bias.values[c] = static_cast<float>((b - double(mean[c])) * s[c] + double(shift[c]));
    }
    // Weights another node also reads keep their values there; this node gets its own copy.
    auto place = [&](size_t input, const std::string& wanted, Initializer values) {
        if (input < producer.inputs.size() && useCount(g, producer.inputs[input]) == 1) {
            g.initializers[producer.inputs[input]] = std::move(values);
            return;
        }
        const std::string name = freeName(g, wanted);
        g.initializers[name] = std::move(values);
        if (input < producer.inputs.size()) producer.inputs[input] = name;
        else producer.inputs.push_back(name);
    };
    place(1, producer.name + ".weight", std::move(folded));
    place(2, producer.name + ".bias", std::move(bias));
    producer.output = bn.output;
    producer.fused_relu = bn.fused_relu;
}

}  // namespace

Graph foldBatchNorm(Graph g) {
    g.validate();  // the fold trusts the initializers' dims
    for (size_t i = 1; i < g.nodes.size();) {
        const Node& bn = g.nodes[i];
        Node* producer = nullptr;
        if (bn.kind == OpKind::BatchNormalization)
            for (size_t p = 0; p < i; ++p)
                if (g.nodes[p].output == bn.inputs[0]) producer = &g.nodes[p];
        if (!producer || (producer->kind != OpKind::Conv && producer->kind != OpKind::Gemm) || producer->fused_relu ||
            useCount(g, producer->output) != 1) {
            ++i;
            continue;
        }
        fold(g, *producer, bn);
        g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
    }
    pruneInitializers(g);
    return g;
}

}  // namespace trainbench::engine::graph
