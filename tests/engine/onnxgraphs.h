#pragma once
// Trained graphs for the ONNX tests (test_onnx, test_onnxchecker, test_onnxquantized): W1 (mlp), W2
// (cnn) and resnet_small after a few SGD steps, with metadata that an export must carry, and as int8.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "engine/inference/calibration.h"
#include "tests/engine/inferencemodels.h"

namespace trainbench::engine::testonnx {

// A fixture's binary file: little-endian values of type T one after the other (what the make.py
// scripts write with numpy's tofile).
template <typename T>
std::vector<T> readValues(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    EXPECT_TRUE(in) << path;
    std::vector<T> v(static_cast<size_t>(in.tellg()) / sizeof(T));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
    return v;
}

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

// n images of stored pixels (integers 0..255).
inline std::vector<float> pixels(int64_t n, uint64_t seed) {
    std::vector<float> x = testref::randomValues(n * 28 * 28, seed, 0.0f, 255.0f);
    for (float& v : x) v = std::floor(v);
    return x;
}

// trainedGraph(preset) as int8, calibrated on 2 x 16 random images (seed 5; int8 takes no input
// shift, so the metadata's is 0).
inline inference::QuantizedGraph quantizedGraph(const std::string& presetName, CpuDevice& dev) {
    graph::Graph g = trainedGraph(presetName, dev);
    g.metadata.input_shift = 0.0f;
    const std::vector<float> x = pixels(32, 5);
    inference::CalibrationOptions options;
    options.batches = 2;
    options.batch_size = 16;
    options.seed = 5;
    return inference::quantizeGraph(g, x.data(), 32, options);
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

// The same graph: names, wiring, attributes, initializer bytes and metadata.
inline void expectSameGraph(const graph::Graph& got, const graph::Graph& want) {
    EXPECT_EQ(got.input, want.input);
    EXPECT_EQ(got.sample_shape, want.sample_shape);
    EXPECT_EQ(got.integer_input, want.integer_input);
    EXPECT_EQ(got.output, want.output);
    EXPECT_EQ(got.classes, want.classes);
    ASSERT_EQ(got.nodes.size(), want.nodes.size());
    for (size_t i = 0; i < want.nodes.size(); ++i) {
        const graph::Node &a = got.nodes[i], &b = want.nodes[i];
        EXPECT_EQ(a.name, b.name);
        EXPECT_EQ(a.kind, b.kind) << b.name;
        EXPECT_EQ(a.inputs, b.inputs) << b.name;
        EXPECT_EQ(a.output, b.output) << b.name;
        EXPECT_EQ(a.fused_relu, b.fused_relu) << b.name;
        if (b.kind == graph::OpKind::Conv || b.kind == graph::OpKind::MaxPool || b.kind == graph::OpKind::AveragePool) {
            EXPECT_EQ(a.kernel, b.kernel) << b.name;
            EXPECT_EQ(a.stride, b.stride) << b.name;
            EXPECT_EQ(a.pad, b.pad) << b.name;
            EXPECT_EQ(a.group, b.group) << b.name;
            EXPECT_EQ(a.windowText(), b.windowText()) << b.name;  // the width's, every side's pad, dilation
            EXPECT_EQ(a.count_include_pad, b.count_include_pad) << b.name;
        }
        if (b.kind == graph::OpKind::BatchNormalization) {
            EXPECT_EQ(std::memcmp(&a.momentum, &b.momentum, sizeof(float)), 0) << b.name;
        }
        if (b.kind == graph::OpKind::Clip) {
            EXPECT_EQ(std::memcmp(&a.clip_min, &b.clip_min, sizeof(float)), 0) << b.name;
            EXPECT_EQ(std::memcmp(&a.clip_max, &b.clip_max, sizeof(float)), 0) << b.name;
        }
        if (b.kind == graph::OpKind::BatchNormalization || b.kind == graph::OpKind::LayerNormalization) {
            EXPECT_EQ(std::memcmp(&a.epsilon, &b.epsilon, sizeof(float)), 0) << b.name;
        }
        EXPECT_EQ(a.axis, b.axis) << b.name;
        EXPECT_EQ(a.ints, b.ints) << b.name;
        EXPECT_EQ(a.scalar_index, b.scalar_index) << b.name;
    }
    ASSERT_EQ(got.initializers.size(), want.initializers.size());
    for (const auto& [name, init] : want.initializers) {
        const auto it = got.initializers.find(name);
        ASSERT_NE(it, got.initializers.end()) << name;
        EXPECT_EQ(it->second.dims, init.dims) << name;
        ASSERT_EQ(it->second.values.size(), init.values.size()) << name;
        // Bitwise (an int8 graph's weights live elsewhere: its initializers may hold no values).
        if (!init.values.empty()) {
            EXPECT_EQ(std::memcmp(it->second.values.data(), init.values.data(), init.values.size() * sizeof(float)), 0)
                << name;
        }
    }
    EXPECT_EQ(got.metadata.producer, want.metadata.producer);
    EXPECT_EQ(got.metadata.source_run, want.metadata.source_run);
    EXPECT_EQ(std::memcmp(&got.metadata.input_scale, &want.metadata.input_scale, sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(&got.metadata.input_shift, &want.metadata.input_shift, sizeof(float)), 0);
    EXPECT_EQ(got.metadata.class_names, want.metadata.class_names);
}

}  // namespace trainbench::engine::testonnx
