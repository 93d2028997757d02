#pragma once
// The inference graph of a trained model: its spec's layers as graph nodes, its parameter buffer and
// batch norm running statistics as initializers (copied: the graph owns its weights).
#include <cstdint>
#include <span>

#include "engine/graph/graph.h"
#include "engine/model/modelspec.h"

namespace trainbench::engine::graph {

// params and state are a Model's buffers (Model::params(), Model::state()) for `spec` on inputs of
// sampleShape with `classes` logits. Nodes are named "<layer kind>_<spec index>" ("dense_5"), a
// bottleneck's parts "bottleneck_3/conv_a", ".../bn_a", ".../relu_a", ..., ".../add" (the residual
// sum with fused ReLU); initializers "<node>.weight", ".bias" (Gemm, Conv), ".scale", ".bias",
// ".mean", ".var" (BatchNormalization). Dropout is left out (the identity at inference); ReLUs stay
// nodes (fuseRelu folds them). A global_avg_pool is followed by a Flatten, as ONNX needs. The
// graph's input is "input", its output the last node's; metadata keeps its defaults (scale 1).
// GraphError when the buffers' sizes are not the model's (both sizes named) or a layer does not fit.
Graph graphFromModel(const ModelSpec& spec, const Dims& sampleShape, int64_t classes, std::span<const float> params,
                     std::span<const float> state);

}  // namespace trainbench::engine::graph
