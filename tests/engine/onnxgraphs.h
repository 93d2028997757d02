#pragma once
// Trained graphs for the ONNX tests (test_onnx, test_onnxchecker): W1 (mlp), W2 (cnn) and
// resnet_small after a few SGD steps, with metadata that an export must carry.
#include <string>

#include "tests/engine/inferencemodels.h"

namespace trainbench::engine::testonnx {

inline graph::Graph trainedGraph(const std::string& presetName, CpuDevice& dev) {
    const ModelSpec spec = testmodels::preset(presetName);
    Model m(spec, {1, 28, 28}, 10, dev, 21);
    testinference::trainSteps(m, presetName == "resnet_small" ? 4 : 2, 300);
    graph::Graph g = testinference::graphOf(m, spec);
    g.metadata.input_scale = 1.0f / 255.0f;
    g.metadata.input_shift = -0.25f;
    g.metadata.class_names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                              "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot \"quoted\""};
    g.metadata.source_run = "run 7 (" + presetName + ") of test";
    return g;
}

// input [1, 4, 4] -> Conv (2 filters, 3x3, pad 1, fused ReLU) -> Gemm [3, 32] reading the conv's
// [2, 4, 4] output directly (the IR flattens it; an export adds a Flatten the import removes).
inline graph::Graph convThenGemm() {
    graph::Graph g;
    g.input = "input";
    g.sample_shape = {1, 4, 4};
    g.output = "dense";
    g.classes = 3;
    graph::Node conv{"conv", graph::OpKind::Conv, {"input", "conv.weight", "conv.bias"}, "conv"};
    conv.kernel = 3;
    conv.pad = 1;
    conv.fused_relu = true;
    g.nodes = {conv, graph::Node{"dense", graph::OpKind::Gemm, {"conv", "dense.weight", "dense.bias"}, "dense"}};
    g.initializers["conv.weight"] = {{2, 1, 3, 3}, testref::randomValues(18, 1)};
    g.initializers["conv.bias"] = {{2}, testref::randomValues(2, 2)};
    g.initializers["dense.weight"] = {{3, 32}, testref::randomValues(96, 3)};
    g.initializers["dense.bias"] = {{3}, testref::randomValues(3, 4)};
    return g;
}

}  // namespace trainbench::engine::testonnx
