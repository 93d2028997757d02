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

}  // namespace trainbench::engine::testonnx
