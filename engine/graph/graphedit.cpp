#include <set>

#include "engine/graph/graphpasses.h"

namespace trainbench::engine::graph {

int useCount(const Graph& g, const std::string& value) {
    int n = g.output == value ? 1 : 0;
    for (const Node& node : g.nodes)
        for (const std::string& in : node.inputs) n += in == value ? 1 : 0;
    return n;
}

Graph optimizeForInference(Graph g) { return fuseRelu(foldBatchNorm(std::move(g))); }

void pruneInitializers(Graph& g) {
    std::set<std::string> read;
    for (const Node& node : g.nodes) read.insert(node.inputs.begin(), node.inputs.end());
    std::erase_if(g.initializers, [&](const auto& entry) { return !read.count(entry.first); });
}

}  // namespace trainbench::engine::graph
