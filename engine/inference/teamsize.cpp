#include "engine/inference/teamsize.h"

#include <algorithm>

namespace trainbench::engine::inference {

int64_t macsPerExample(const graph::Graph& g, const std::map<std::string, graph::Dims>& shapes) {
    int64_t macs = 0;
    for (const graph::Node& node : g.nodes) {
        if (node.kind == graph::OpKind::MatMul) {  // [.., M, K] x [K, P] or a batch of them: K per output
            int64_t outputs = 1;
            for (int64_t d : shapes.at(node.output)) outputs *= d;
            macs += outputs * shapes.at(node.inputs[0]).back();
            continue;
        }
        if (node.kind != graph::OpKind::Conv && node.kind != graph::OpKind::Gemm) continue;
        const graph::Dims& w = g.initializers.at(node.inputs[1]).dims;
        int64_t perOutput = 1, outputs = 1;
        for (size_t i = 1; i < w.size(); ++i) perOutput *= w[i];
        for (int64_t d : shapes.at(node.output)) outputs *= d;
        macs += outputs * perOutput;
    }
    return macs;
}

int teamFor(int64_t n, int64_t macsPerExample, int64_t macsPerThread) {
    const int64_t perThread = std::max<int64_t>(1, macsPerThread);
    return static_cast<int>(std::clamp<int64_t>(n * macsPerExample / perThread, 1, omp_get_max_threads()));
}

}  // namespace trainbench::engine::inference
