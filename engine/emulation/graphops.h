#pragma once
// A graph's ops as the emulated devices time them (engine/device/opdesc.h): what `estimate`, the
// planner and the virtual clock take for a model imported from ONNX, where a preset gives its layer
// list (engine/emulation/opgraph.h). The ops are the ones the engine's layers describe for the same
// computation, with the same FLOPs and bytes: a ReLU right after a Conv, Gemm, BatchNormalization,
// MaxPool or Add whose only reader it is runs inside it (inside a BatchNormalization its backward
// too; a ReLU before a MaxPool runs after it), a fused ReLU on an Add is undone by an eltwise backward, and a value read by k nodes has its k
// gradients summed by k - 1 binary adds. Nothing upstream of the first parameter needs an input
// gradient. Dropout is not in an inference graph, so a graph's training step has none.
#include <cstdint>

#include "engine/device/opdesc.h"
#include "engine/graph/graph.h"
#include "engine/optim/optimizerconfig.h"

namespace trainbench::engine {

// One training step of one replica on `batch` examples: forward, backward, and the optimizer's update
// of each node's parameters (one update per node with initializers, last node first, each after its
// backward ops). `graph` must validate (GraphError otherwise).
OpGraph trainingOpGraph(const graph::Graph& graph, int64_t batch, const OptimizerConfig& optimizer);

// One inference batch: the forward pass; its footprint counts the parameters and every value's
// activations (a safe bound on what is in flight).
OpGraph inferenceOpGraph(const graph::Graph& graph, int64_t batch);

}  // namespace trainbench::engine
