#pragma once
// Rewrites of an inference graph that keep what it computes: what a served model runs instead of
// its training-time layers.
#include "engine/graph/graph.h"

namespace trainbench::engine::graph {

// A BatchNormalization whose input is a Conv's or Gemm's output (read by nothing else, and without a
// fused ReLU of its own) is folded into that node's weight and bias: per output channel c,
// s = scale[c] / sqrt(var[c] + epsilon), W'[c] = s W[c], B'[c] = s (B[c] - mean[c]) + bias[c]
// (computed in double). The node takes the BN's output name and fused ReLU; initializers no node
// reads any more are dropped. Predictions change by rounding only (tests: <= 1e-5 relative).
Graph foldBatchNorm(Graph graph);

// A Relu whose input is a Conv's, Gemm's, BatchNormalization's or Add's output (read by nothing
// else) becomes that node's fused_relu; the node takes the Relu's output name.
Graph fuseRelu(Graph graph);

// What a served model runs: fuseRelu(foldBatchNorm(graph)).
Graph optimizeForInference(Graph graph);

// How many node inputs read `value`, plus one if it is the graph's output.
int useCount(const Graph& graph, const std::string& value);
// Drops the initializers no node reads.
void pruneInitializers(Graph& graph);

}  // namespace trainbench::engine::graph
