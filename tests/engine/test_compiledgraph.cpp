// The fp32 executor (engine/inference/compiledgraph.h) against the training model's own evaluation
// forward on the same weights: W1 (mlp), W2 (cnn) and resnet_small after a few training steps,
// folded and unfolded, at batches 1, 7, 37 and 256 (the last two with the convolutional prefix in
// chunks); input scaling; the batch cap and the plan cache.
#include <gtest/gtest.h>
#include <omp.h>

#include <stdexcept>

#include "engine/graph/graphpasses.h"
#include "engine/graph/referenceevaluator.h"
#include "engine/inference/compiledgraph.h"
#include "tests/engine/inferencemodels.h"

namespace trainbench::engine {
namespace {

using namespace testmodels;
using namespace testinference;
using inference::CompiledGraph;

std::vector<float> runCompiled(CompiledGraph& c, const std::vector<float>& x, int64_t n) {
    std::vector<float> logits(static_cast<size_t>(n * c.classes()));
    c.run(x.data(), n, logits.data());
    return logits;
}

struct Case {
    const char* preset;
    int steps;
};

class CompiledGraphMatchesModel : public ::testing::TestWithParam<Case> {};

TEST_P(CompiledGraphMatchesModel, FoldedAndUnfoldedAtBatches1_7_37_256) {
    CpuDevice dev(2);
    const ModelSpec spec = preset(GetParam().preset);
    const Dims shape{1, 28, 28};
    Model m(spec, shape, 10, dev, 21);
    trainSteps(m, GetParam().steps, 300);
    const graph::Graph g = graphOf(m, spec);
    CompiledGraph plain(g, dev);
    CompiledGraph folded(graph::fuseRelu(graph::foldBatchNorm(g)), dev);
    // 37 and 256 run the convolutional prefix in chunks of 16 (CompileOptions::chunk), 37 with a
    // remainder of 5.
    for (int64_t n : {1, 7, 37, 256}) {
        const auto x = testref::randomValues(n * 28 * 28, 40 + static_cast<uint64_t>(n), 0.0f, 1.0f);
        const auto want = modelLogits(m, x, n);
        EXPECT_LE(maxRelativeError(runCompiled(plain, x, n), want), 1e-5) << GetParam().preset << " batch " << n;
        EXPECT_LE(maxRelativeError(runCompiled(folded, x, n), want), 1e-5) << GetParam().preset << " batch " << n << " folded";
    }
    // Runs again at a batch size seen before reuse its plan, with the same answer.
    const auto x = testref::randomValues(7 * 28 * 28, 47, 0.0f, 1.0f);
    EXPECT_EQ(runCompiled(folded, x, 7), runCompiled(folded, x, 7));
    EXPECT_EQ(folded.planCount(), 4u);
}

INSTANTIATE_TEST_SUITE_P(Presets, CompiledGraphMatchesModel,
                         ::testing::Values(Case{"mlp", 2}, Case{"cnn", 2}, Case{"resnet_small", 4}),
                         [](const auto& p) { return std::string(p.param.preset); });

// Pixels as stored (0..255) with the metadata's scale 1/255: folded into the first convolution's
// weights (no shift) or applied as a first step (with a shift), the logits are those of the scaled
// input, and the reference evaluator agrees.
TEST(CompiledGraph, AppliesTheMetadataInputScaling) {
    CpuDevice dev(2);
    const ModelSpec spec = preset("cnn");
    Model m(spec, {1, 28, 28}, 10, dev, 5);
    trainSteps(m, 1, 7);
    graph::Graph g = graphOf(m, spec);
    const int64_t n = 5;
    std::vector<float> pixels = testref::randomValues(n * 28 * 28, 8, 0.0f, 255.0f);
    for (float& v : pixels) v = std::floor(v);
    for (float shift : {0.0f, -0.5f}) {
        g.metadata.input_scale = 1.0f / 255.0f;
        g.metadata.input_shift = shift;
        std::vector<float> x = pixels;
        for (float& v : x) v = v * (1.0f / 255.0f) + shift;
        const auto want = modelLogits(m, x, n);
        CompiledGraph c(g, dev);
        EXPECT_LE(maxRelativeError(runCompiled(c, pixels, n), want), 1e-5) << "shift " << shift;
        EXPECT_LE(maxRelativeError(graph::evaluateReference(g, pixels.data(), n), want), 1e-5) << "shift " << shift;
    }
}

// A Flatten of the input read by something other than a Gemm is a view of the caller's examples,
// pointed at them on each run like the input itself; a Gemm after a convolution reads its nhwc
// input as a matrix with its weights permuted to match.
TEST(CompiledGraph, ViewsOfTheInputAndPermutedGemmWeightsGiveTheModelsLogits) {
    CpuDevice dev(2);
    for (const ModelSpec& spec : {custom({flatten, relu, dense(10)}), custom({conv(16, 3), relu, flatten, dense(10)})}) {
        Model m(spec, {1, 28, 28}, 10, dev, 9);
        CompiledGraph c(graph::optimizeForInference(graphOf(m, spec)), dev);
        for (int64_t n : {1, 3, 40}) {
            const auto x = testref::randomValues(n * 784, 60 + static_cast<uint64_t>(n), -1.0f, 1.0f);
            EXPECT_LE(maxRelativeError(runCompiled(c, x, n), modelLogits(m, x, n)), 1e-5) << spec.layers.size() << " " << n;
        }
    }
}

// A batch of one W1 example runs on one thread (CompileOptions::macs_per_thread) and gives the
// caller its OpenMP budget back.
TEST(CompiledGraph, SmallBatchesLeaveTheCallersThreadBudgetAsItWas) {
    CpuDevice dev(2);
    bindComputeThreads(2);
    const ModelSpec spec = preset("mlp");
    Model m(spec, {1, 28, 28}, 10, dev, 5);
    CompiledGraph c(graphOf(m, spec), dev);
    const auto x = testref::randomValues(256 * 784, 3, 0.0f, 1.0f);
    for (int64_t n : {1, 256}) {
        EXPECT_LE(maxRelativeError(runCompiled(c, x, n), modelLogits(m, x, n)), 1e-5) << n;
        EXPECT_EQ(omp_get_max_threads(), 2) << n;
    }
}

TEST(CompiledGraph, RefusesBatchesOutsideItsCapBeforeAllocating) {
    CpuDevice dev(1);
    const ModelSpec spec = preset("mlp");
    Model m(spec, {1, 28, 28}, 10, dev, 5);
    inference::CompileOptions options;
    options.max_batch = 64;
    options.max_plans = 2;
    CompiledGraph c(graphOf(m, spec), dev, options);
    std::vector<float> x(65 * 784), logits(65 * 10);
    EXPECT_THROW(c.run(x.data(), 65, logits.data()), std::invalid_argument);
    EXPECT_THROW(c.run(x.data(), 0, logits.data()), std::invalid_argument);
    EXPECT_EQ(c.planCount(), 0u);
    for (int64_t n : {1, 2, 3, 1}) c.run(x.data(), n, logits.data());
    EXPECT_EQ(c.planCount(), 2u);  // the least recently used went
}

TEST(CompiledGraph, RefusesAnInvalidGraphNamingTheNode) {
    CpuDevice dev(1);
    const ModelSpec spec = preset("mlp");
    Model m(spec, {1, 28, 28}, 10, dev, 5);
    graph::Graph g = graphOf(m, spec);
    g.nodes[1].inputs[1] = "missing.weight";
    try {
        CompiledGraph c(g, dev);
        ADD_FAILURE() << "compiled an invalid graph";
    } catch (const graph::GraphError& e) {
        EXPECT_NE(std::string(e.what()).find("node 'dense_1' (Gemm)"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace trainbench::engine
