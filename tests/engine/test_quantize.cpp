// Post-training int8 (engine/inference/calibration.h, int8compiledgraph.h) on W1 (mlp), W2 (cnn)
// and resnet_small after a few training steps: the int8 executor against the fp32 one at batches
// 1, 7 and 256, the weights' size, the calibration record, and what int8 refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <thread>

#include "engine/graph/graphpasses.h"
#include "engine/inference/calibration.h"
#include "engine/inference/compiledgraph.h"
#include "engine/inference/int8compiledgraph.h"
#include "tests/engine/inferencemodels.h"

namespace trainbench::engine {
namespace {

using namespace testmodels;
using namespace testinference;
using inference::CalibrationOptions;
using inference::Int8CompiledGraph;
using inference::quantizeGraph;

// n examples of stored pixels (integers 0..255) for a graph that scales them by 1/255.
std::vector<float> pixels(int64_t n, uint64_t seed) {
    std::vector<float> x = testref::randomValues(n * 28 * 28, seed, 0.0f, 255.0f);
    for (float& v : x) v = std::floor(v);
    return x;
}

template <typename Executor>
std::vector<float> logitsOf(Executor& e, const std::vector<float>& x, int64_t n) {
    std::vector<float> out(static_cast<size_t>(n * e.classes()));
    e.run(x.data(), n, out.data());
    return out;
}

struct QuantizeCase {
    const char* preset;
    int steps;
    double tolerance;  // of int8 logits against fp32's, relative to the largest fp32 logit
};

class Int8MatchesFp32 : public ::testing::TestWithParam<QuantizeCase> {};

TEST_P(Int8MatchesFp32, LogitsCloseAtBatches1_7_256AndWeightsSmaller) {
    CpuDevice dev(2);
    const ModelSpec spec = preset(GetParam().preset);
    Model m(spec, {1, 28, 28}, 10, dev, 21);
    trainSteps(m, GetParam().steps, 300);
    graph::Graph g = graphOf(m, spec);
    g.metadata.input_scale = 1.0f / 255.0f;
    const std::vector<float> calibration = pixels(64, 9);
    CalibrationOptions options;
    options.batches = 2;
    options.batch_size = 32;
    options.seed = 9;
    const inference::QuantizedGraph q = quantizeGraph(g, calibration.data(), 64, options);
    EXPECT_EQ(q.calibration.examples, 64);
    EXPECT_EQ(q.calibration.method, "minmax");
    EXPECT_EQ(q.calibration.u8_levels, inference::u8Levels());
    const graph::Graph fp32 = graph::optimizeForInference(g);
    EXPECT_GE(double(inference::fp32WeightBytes(fp32)) / double(q.weightBytes()), 3.5) << GetParam().preset;
    inference::CompiledGraph reference(fp32, dev);
    Int8CompiledGraph int8(q, dev);
    for (int64_t n : {1, 7, 256}) {
        const auto x = pixels(n, 40 + static_cast<uint64_t>(n));
        const auto want = logitsOf(reference, x, n);
        const auto got = logitsOf(int8, x, n);
        const double err = maxRelativeError(got, want);
        EXPECT_LE(err, GetParam().tolerance) << GetParam().preset << " batch " << n;
        std::printf("%s batch %lld: int8 logits within %.4f of fp32's largest\n", GetParam().preset,
                    static_cast<long long>(n), err);
    }
    EXPECT_EQ(int8.planCount(), 3u);
}

// A served model's instance runs on whichever batch thread takes it: plans built on one thread must
// run on another and give the same logits (oneDNN's default scratchpad belongs to the thread that
// created a primitive; the plans give each primitive its own: "could not execute a primitive" before).
TEST(Int8CompiledGraph, APlanBuiltOnOneThreadRunsOnAnother) {
    for (const char* name : {"mlp", "cnn"}) {
        CpuDevice dev(1);
        const ModelSpec spec = preset(name);
        Model m(spec, {1, 28, 28}, 10, dev, 21);
        graph::Graph g = graphOf(m, spec);
        g.metadata.input_scale = 1.0f / 255.0f;
        const std::vector<float> calibration = pixels(64, 9);
        CalibrationOptions options;
        options.batches = 2;
        options.batch_size = 32;
        const inference::QuantizedGraph q = quantizeGraph(g, calibration.data(), 64, options);
        Int8CompiledGraph int8(q, dev);
        inference::CompiledGraph fp32(graph::optimizeForInference(g), dev);
        const auto x = pixels(3, 5);
        std::vector<float> here8, here32, there8, there32;
        std::thread([&] {
            dev.bindThreads();
            here8 = logitsOf(int8, x, 3);
            here32 = logitsOf(fp32, x, 3);
        }).join();
        std::string error;
        std::thread([&] {
            dev.bindThreads();
            try {
                there8 = logitsOf(int8, x, 3);
                there32 = logitsOf(fp32, x, 3);
            } catch (const std::exception& e) {
                error = e.what();
            }
        }).join();
        EXPECT_EQ(error, "") << name;
        EXPECT_EQ(there8, here8) << name;
        EXPECT_EQ(there32, here32) << name;
    }
}

INSTANTIATE_TEST_SUITE_P(Presets, Int8MatchesFp32,
                         ::testing::Values(QuantizeCase{"mlp", 2, 0.05}, QuantizeCase{"cnn", 2, 0.05}, QuantizeCase{"resnet_small", 4, 0.1}),
                         [](const auto& p) { return std::string(p.param.preset); });

}  // namespace
}  // namespace trainbench::engine
