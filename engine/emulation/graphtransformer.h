#pragma once
// A transformer imported from ONNX as the layout planner needs it (docs/model-parallelism.md): its
// repeated blocks are the layers, found by the block index PyTorch writes into node names
// ("/layers.3/q/MatMul", "/h.11/attn/..."); each block's parameters and forward matrix FLOPs are
// counted from the graph's ops (graphops.h), the embedding is what comes before the first block and
// the head what follows the last. A graph stripped to shapes is enough.
#include "engine/emulation/transformershape.h"
#include "engine/graph/graph.h"

namespace trainbench::engine {

// std::invalid_argument saying what is missing when the graph is not a stack of identical blocks
// over token ids: no integer input, no numbered blocks, blocks that differ, no heads' Reshape.
TransformerCosts transformerCostsOfGraph(const graph::Graph& graph);

}  // namespace trainbench::engine
