#pragma once
// A trained model as the inference server's servable (engine/serving/servable.h): every model
// instance is a CompiledGraph of its own (oneDNN fp32, engine/inference/compiledgraph.h) on a
// CpuDevice with the instance's thread budget. Lives in app/ because engine/serving must not know
// graphs and engine/inference must not know the server.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/inference/quantizedgraph.h"
#include "engine/serving/servable.h"

namespace trainbench::app {

struct GraphServableOptions {
    std::string name;              // /v1/models/NAME; must not be empty
    int threads_per_instance = 1;  // OpenMP budget of each instance's batch thread; 0: every core
    int64_t max_batch = 1000;      // the server's max_batch_size (padded sizes included)
};

// `graph` as trained or already optimized: it is optimized for inference (batch norm folded, ReLUs
// fused) once here, and each instance compiles its own copy. Clients send examples of the graph's
// sample shape ({1, 28, 28} for Fashion-MNIST) as the data stores them (pixels 0-255): the graph's
// input scaling is applied by the compiled graph. Answers are the logits, one per class.
// std::invalid_argument for an empty name or a thread budget below 0.
engine::serving::Servable graphServable(const engine::graph::Graph& graph, const GraphServableOptions& options);

// The batch sizes an instance compiles plans for, up to `maxBatch`: 1 to 8, then about +25 % a step
// (multiples of 4), then maxBatch — 30 sizes for 1000. A batch runs at the next of them, padded; so
// at most 25 % of a batch's work is padding, and the plans are built once each.
std::vector<int64_t> planSizes(int64_t maxBatch);

// The same model in int8: each instance an Int8CompiledGraph of `quantized` (engine/inference/
// calibration.h's quantizeGraph made it). Same input (stored pixels) and answers (fp32 logits).
engine::serving::Servable int8Servable(const engine::inference::QuantizedGraph& quantized,
                                       const GraphServableOptions& options);

}  // namespace trainbench::app
