#pragma once
// The oracle the executors are tested against: a graph run with plain loops, one example at a time,
// sums in double. Slow on purpose-free code: no layouts, no fusions, nothing shared with oneDNN.
#include <cstdint>
#include <vector>

#include "engine/graph/graph.h"

namespace trainbench::engine::graph {

// x: n examples of graph.sample_shape, as stored (the metadata's input scale and shift are applied
// here, as an executor applies them). Returns the logits, [n, classes] row-major. Validates the graph
// first (GraphError).
std::vector<float> evaluateReference(const Graph& graph, const float* x, int64_t n);

}  // namespace trainbench::engine::graph
