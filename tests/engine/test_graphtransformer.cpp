// A transformer read from ONNX for the layout planner (engine/emulation/graphtransformer.h): the
// GPT-style decoder of tests/fixtures/onnx/full/decoder.py and BERT-base, both stripped to shapes.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "engine/emulation/graphtransformer.h"
#include "engine/emulation/layoutsearch.h"
#include "engine/onnx/onnximport.h"
#include "tests/engine/catalogdevices.h"

namespace trainbench::engine {
namespace {

const std::string kFullFixtures = std::string(TRAINBENCH_SOURCE_DIR) + "/tests/fixtures/onnx/full/";

TEST(GraphTransformer, TheDecoderFixtureIsFourBlocksWithTheirParametersAndFlops) {
    const graph::Graph g = onnx::readOnnx(kFullFixtures + "gpt_small.onnx", {.shapes_only = true});
    const TransformerCosts c = transformerCostsOfGraph(g);
    EXPECT_EQ(c.shape.layers, 4);
    EXPECT_EQ(c.shape.hidden, 128);
    EXPECT_EQ(c.shape.heads, 4);
    EXPECT_EQ(c.shape.sequence, 64);
    EXPECT_EQ(c.shape.vocab, 512);
    EXPECT_EQ(c.shape.ffnWidth(), 512);
    // q, k, v, o with biases, the two feed-forward matrices with biases, two layer norms.
    EXPECT_DOUBLE_EQ(c.layer_params, 4 * (128 * 128 + 128) + (128 * 512 + 512) + (512 * 128 + 128) + 4 * 128);
    // The same block as the analytic decoder's: 2s(4h^2 + 2hf) + 4s^2h.
    EXPECT_DOUBLE_EQ(c.layer_forward_flops, decoderCosts(c.shape).layer_forward_flops);
    // Token and position embeddings first; the final layer norm and the output projection (of the
    // last position only, as the graph computes it) last. All of PyTorch's 933,120 parameters.
    EXPECT_DOUBLE_EQ(c.embedding_params, 512 * 128 + 64 * 128);
    EXPECT_DOUBLE_EQ(c.head_params, 2 * 128 + 512 * 128 + 512);
    EXPECT_DOUBLE_EQ(c.head_forward_flops, 2.0 * 128 * 512);
    EXPECT_DOUBLE_EQ(c.params(), 933120);
    EXPECT_FALSE(c.head_tied_to_embedding);

    // It estimates like any model: two stages of two blocks, two tensor ranks.
    GpuCluster cluster;
    cluster.device = test::device("a100-sxm4-80gb");
    cluster.devices = 4;
    Layout l;
    l.pipeline = 2;
    l.tensor = 2;
    const LayoutEstimate e = estimateLayout(c, 8, cluster, l);
    EXPECT_TRUE(e.fits);
    EXPECT_EQ(e.micro_batches, 8);
    EXPECT_GT(e.bubble_s, 0.0);
}

// GPT-3 175B as an ONNX graph without weights (full/gpt3_175b.py): the same blocks as the description
// file's, an output projection of its own; on 1,024 A100 80 GB the planner ranks Narayanan et al.'s
// mesh among the best three and predicts their layout within 20 % of 140 TFLOP/s (as test_layoutsearch.cpp
// does from the description).
TEST(GraphTransformer, Gpt3FromOnnxIsGpt3AndItsReportedLayoutRanksInTheTopThree) {
    const graph::Graph g = onnx::readOnnx(kFullFixtures + "gpt3_175b.onnx", {.shapes_only = true});
    const TransformerCosts c = transformerCostsOfGraph(g);
    const TransformerCosts described = decoderCosts({"gpt3-175b", 96, 12288, 96, 2048, 51200, 0});
    EXPECT_EQ(c.shape.layers, 96);
    EXPECT_EQ(c.shape.heads, 96);
    EXPECT_EQ(c.shape.ffnWidth(), 49152);
    EXPECT_DOUBLE_EQ(c.layer_params, described.layer_params);
    EXPECT_DOUBLE_EQ(c.layer_forward_flops, described.layer_forward_flops);
    EXPECT_DOUBLE_EQ(c.head_forward_flops, described.head_forward_flops);  // every position's logits
    // Untied: the projection's 51200 x 12288 weights and its bias besides the embedding's.
    EXPECT_DOUBLE_EQ(c.params(), described.params() + 51200.0 * 12288 + 51200);

    GpuCluster cluster;
    cluster.device = test::device("a100-sxm4-80gb");
    cluster.devices = 1024;
    const LayoutSearchResult r = searchLayoutsExhaustive(c, 1536, cluster, LayoutSpace{});
    std::set<std::tuple<int, int, int>> meshes;
    for (const LayoutEstimate& e : r.ranked) {
        if (meshes.size() == 3) break;
        meshes.insert({e.layout.data, e.layout.pipeline, e.layout.tensor});
    }
    EXPECT_TRUE(meshes.count({8, 16, 8}));
    Layout reported;
    reported.data = 8;
    reported.pipeline = 16;
    reported.tensor = 8;
    reported.recompute = Recompute::Full;
    EXPECT_NEAR(estimateLayout(c, 1536, cluster, reported).hardware_tflops_per_gpu, 140.0, 0.2 * 140.0);
}

TEST(GraphTransformer, BertBaseHasTwelveBlocksOfTwelveHeads) {
    const graph::Graph g = onnx::readOnnx(kFullFixtures + "bert_base.onnx", {.shapes_only = true});
    const TransformerCosts c = transformerCostsOfGraph(g);
    EXPECT_EQ(c.shape.layers, 12);
    EXPECT_EQ(c.shape.heads, 12);
    EXPECT_EQ(c.shape.hidden, 768);
    EXPECT_EQ(c.shape.ffnWidth(), 3072);
    EXPECT_EQ(c.shape.sequence, 128);
    EXPECT_EQ(c.shape.vocab, 30522);
    EXPECT_DOUBLE_EQ(c.params(), 109187330);  // docs/onnx.md
}

TEST(GraphTransformer, AModelThatIsNotATransformerSaysWhatIsMissing) {
    const graph::Graph g = onnx::readOnnx(kFullFixtures + "mobilenet_v2.onnx", {.shapes_only = true});
    try {
        transformerCostsOfGraph(g);
        FAIL() << "MobileNetV2 was taken for a transformer";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "the model does not take a sequence of token ids; layout planning splits transformers");
    }
}

}  // namespace
}  // namespace trainbench::engine
