#pragma once
// An inference graph as the engine's trainable layers: the inverse of graphFromModel, so that an
// imported ONNX model trains on the same layers, kernels and strategies as a preset (issue 22).
//
// A graph trains when it is a chain of ops the engine has a backward for (Conv with group 1, Gemm,
// BatchNormalization, Relu, MaxPool, GlobalAveragePool, Flatten), with ResNet bottlenecks (three
// convolutions with batch norms, an optional projection shortcut, Add and Relu: what torchvision's
// Bottleneck and the engine's bottleneck layer compute) as the one branching structure. The graph's
// initializers become the starting weights, in the order the Model binds them. A Softmax that is the
// graph's output is the loss's own (the engine trains with softmax cross-entropy on the logits), so
// it maps onto nothing.
#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/model/modelspec.h"

namespace trainbench::engine::graph {

struct TrainableLayers {
    std::vector<LayerSpec> layers;
    // Per layer, the ONNX node it comes from ("Conv_0"; a fused ReLU "<node>/relu"; a bottleneck its
    // Add's name): the op paths of the per-op statistics (ModelSpec::layer_names).
    std::vector<std::string> layer_names;
    // The Model's parameter and state buffers for those layers (ModelWeights' order).
    std::vector<float> params;
    std::vector<float> state;
    // The initializer each stretch of `params` came from, in order (the layers' weights and biases,
    // a batch norm's scale and bias): a parameter's ONNX name.
    std::vector<std::string> param_names;
};

// GraphError when the graph does not map: it lists every node without a backward in the engine
// ("3 nodes have no backward in the engine: 'conv_dw' (Conv with group 32), 'relu6' (Clip), 'add_1'
// (Add outside a ResNet bottleneck)") or says where the graph stops being a chain. A graph stripped
// to shapes is refused too: it has no weights to start from.
TrainableLayers layersFromGraph(const Graph& graph);

}  // namespace trainbench::engine::graph
