#pragma once
// The oracle the executors are tested against: a graph run with plain loops, one example at a time,
// sums in double. Slow on purpose-free code: no layouts, no fusions, nothing shared with oneDNN.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace trainbench::engine::graph {

// x: n examples of graph.sample_shape, as stored (the metadata's input scale and shift are applied
// here, as an executor applies them). Returns the logits, [n, classes] row-major. Validates the graph
// first (GraphError).
std::vector<float> evaluateReference(const Graph& graph, const float* x, int64_t n);

// Every value an example computes, as it is computed: observe(value name, its values) for the
// (scaled) input and each node's output, example after example. What post-training quantization
// calibrates its activation ranges on (engine/inference/calibration.h).
using ValueObserver = std::function<void(const std::string& value, const std::vector<double>& values)>;
void observeReference(const Graph& graph, const float* x, int64_t n, const ValueObserver& observe);

}  // namespace trainbench::engine::graph
