#include "engine/graph/graphpasses.h"

namespace trainbench::engine::graph {

namespace {
bool takesRelu(OpKind k) {
    return k == OpKind::Conv || k == OpKind::Gemm || k == OpKind::BatchNormalization || k == OpKind::Add;
}
}  // namespace

Graph fuseRelu(Graph g) {
    for (size_t i = 1; i < g.nodes.size();) {
        const Node& relu = g.nodes[i];
        Node* producer = nullptr;
        if (relu.kind == OpKind::Relu && relu.inputs.size() == 1)
            for (size_t p = 0; p < i; ++p)
                if (g.nodes[p].output == relu.inputs[0]) producer = &g.nodes[p];
        // The producer's output is renamed to the Relu's: nothing else may read it.
        if (!producer || !takesRelu(producer->kind) || producer->fused_relu || useCount(g, producer->output) != 1) {
            ++i;
            continue;
        }
        producer->fused_relu = true;
        producer->output = relu.output;
        g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
    }
    return g;
}

}  // namespace trainbench::engine::graph
