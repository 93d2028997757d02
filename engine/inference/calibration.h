#pragma once
// Static post-training quantization: the fp32 graph run on calibration examples (the plain-loop
// reference evaluator, which shows every intermediate value), per-tensor activation ranges from
// them, then the weights and scales of a QuantizedGraph (engine/inference/quantizedgraph.h).
#include <cstdint>

#include "engine/graph/graph.h"
#include "engine/inference/quantizedgraph.h"

namespace trainbench::engine::inference {

struct CalibrationOptions {
    int64_t batches = 4, batch_size = 64;
    std::string method = "minmax";  // or "percentile": the range is that percentile of |x|
    double percentile = 99.99;
    uint64_t seed = 0;              // recorded: the caller drew the examples with it
    // The largest u8 code. Without VNNI, oneDNN multiplies u8 by s8 with vpmaddubsw, whose 16-bit
    // pair sums saturate above 32767 = 2 x 127 x 129: activations keep 7 bits there (as fbgemm's
    // reduce_range does). 0: pick from the CPU (u8Levels()).
    int u8_levels = 0;
};

// 255 where the CPU has VNNI (avx512_core_vnni and above), else 127.
int u8Levels();
// The ISA oneDNN dispatches to on this CPU ("avx512_core", "avx512_core_vnni", ...).
std::string effectiveIsa();

// Quantizes `graph` (optimized for inference first, here) with activation ranges observed on x:
// options.batches x options.batch_size examples of graph.sample_shape, as stored. GraphError naming
// the node for what int8 does not run (an unfolded batch norm, a standalone Relu); invalid_argument
// when x holds fewer examples than asked.
QuantizedGraph quantizeGraph(const graph::Graph& graph, const float* x, int64_t available, const CalibrationOptions& options);

}  // namespace trainbench::engine::inference
