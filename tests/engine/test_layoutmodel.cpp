// The layout cost model (engine/emulation/layoutmodel.h) on cases checked by hand against the
// formulas of docs/model-parallelism.md: parameters and FLOPs of a decoder, Korthikanti et al.'s
// activation memory, the 1F1B bubble, the FLOP count Narayanan et al. use, and the reasons a layout
// is refused.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/emulation/layoutmodel.h"
#include "tests/engine/catalogdevices.h"

namespace trainbench::engine {
namespace {

const TransformerShape kGpt3{"gpt3-175b", 96, 12288, 96, 2048, 51200, 0};

GpuCluster a100s(int count) {
    GpuCluster c;
    c.device = test::device("a100-sxm4-80gb");
    c.devices = count;
    return c;
}

Layout meshOf(int d, int p, int t, Recompute r = Recompute::None, int64_t b = 1, int v = 1) {
    Layout l;
    l.data = d;
    l.pipeline = p;
    l.tensor = t;
    l.micro_batch = b;
    l.recompute = r;
    l.interleave = v;
    return l;
}

TEST(LayoutModel, Gpt3HasTheParametersAndFlopsOfMegatronsFormulas) {
    const TransformerCosts c = decoderCosts(kGpt3);
    const double h = 12288, s = 2048, l = 96, V = 51200;
    // 12lh^2 (1 + 13/(12h) + (V + s)/(12lh)) (Narayanan et al. 2021, section 5.1), the final layer norm's 2h besides.
    EXPECT_NEAR(c.params(), 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h)) + 2 * h, 1.0);
    EXPECT_NEAR(c.params() / 1e9, 174.6, 0.1);
    EXPECT_DOUBLE_EQ(c.layer_forward_flops, 24 * s * h * h + 4 * s * s * h);
    EXPECT_DOUBLE_EQ(c.head_forward_flops, 2 * s * h * V);

    // With full recomputation the FLOPs counted are the paper's 96 B s l h^2 (1 + s/(6h) + V/(16lh)).
    const double B = 1536;
    const LayoutEstimate e = estimateLayout(c, 1536, a100s(1024), meshOf(8, 16, 8, Recompute::Full));
    EXPECT_NEAR(e.hardware_flops / (96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))), 1.0, 1e-12);
    // Without, Korthikanti et al.'s model FLOPs 72 B s l h^2 (1 + s/(6h) + V/(12lh)).
    EXPECT_NEAR(e.model_flops / (72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))), 1.0, 1e-12);
}

TEST(LayoutModel, ActivationsFollowKorthikantiWithoutSequenceParallelism) {
    // One GPU, one stage, 1 micro-batch in flight: l blocks of s b h (34 + 5 a s / h) bytes.
    const TransformerShape small{"small", 4, 256, 8, 128, 1000, 0};
    const TransformerCosts c = decoderCosts(small);
    const double s = 128, h = 256, a = 8, b = 2, l = 4;
    GpuCluster one = a100s(1);
    LayoutEstimate e = estimateLayout(c, 8, one, meshOf(1, 1, 1, Recompute::None, 2));
    EXPECT_DOUBLE_EQ(e.activation_bytes, l * s * b * h * (34 + 5 * a * s / h));
    // Tensor-parallel over 4: s b h (10 + 24/t + 5 a s / (h t)).
    GpuCluster four = a100s(4);
    e = estimateLayout(c, 8, four, meshOf(1, 1, 4, Recompute::None, 2));
    EXPECT_DOUBLE_EQ(e.activation_bytes, l * s * b * h * (10 + 24.0 / 4 + 5 * a * s / (h * 4)));
    // Selective: without the attention core's 5 a s^2 b / t; full: the 2 s b h input of each block,
    // plus one block's activations live again during its backward.
    e = estimateLayout(c, 8, four, meshOf(1, 1, 4, Recompute::Selective, 2));
    EXPECT_DOUBLE_EQ(e.activation_bytes, l * s * b * h * (10 + 24.0 / 4) + 5 * a * s * s * b / 4);
    e = estimateLayout(c, 8, four, meshOf(1, 1, 4, Recompute::Full, 2));
    EXPECT_DOUBLE_EQ(e.activation_bytes, l * 2 * s * b * h + s * b * h * (10 + 24.0 / 4 + 5 * a * s / (h * 4)) - 2 * s * b * h);
}

TEST(LayoutModel, OneF1BKeepsPMicroBatchesInFlightAndItsBubbleIsPMinus1OverM) {
    const TransformerCosts c = decoderCosts({"small", 8, 256, 8, 128, 1000, 0});
    const GpuCluster cluster = a100s(4);
    // p = 4 stages of 2 blocks, 16 micro-batches: the first stage holds 4 micro-batches of 2 blocks.
    const LayoutEstimate e = estimateLayout(c, 16, cluster, meshOf(1, 4, 1));
    EXPECT_EQ(e.micro_batches, 16);
    EXPECT_DOUBLE_EQ(e.activation_bytes, 2 * 4 * 128 * 1 * 256 * (34 + 5 * 8 * 128 / 256.0));
    // The bubble is (p - 1) micro-batch times of the slowest stage: (p - 1) / m of the pipeline's work.
    const double work = e.compute_s + e.recompute_s + e.tensor_comm_s;
    EXPECT_NEAR(e.bubble_s, 3.0 / 16.0 * work, 1e-12 * work);
    // Interleaving v = 2 chunks halves it.
    const LayoutEstimate v2 = estimateLayout(c, 16, cluster, meshOf(1, 4, 1, Recompute::None, 1, 2));
    EXPECT_NEAR(v2.bubble_s, e.bubble_s / 2, 1e-12);
    // The parts add up to the step.
    EXPECT_NEAR(e.step_s, e.compute_s + e.recompute_s + e.bubble_s + e.tensor_comm_s + e.pipeline_comm_s + e.data_comm_s +
                              e.optimizer_s + e.overhead_s, 1e-12);
}

TEST(LayoutModel, TensorParallelAllReducesAreTheCollectiveModelsOnTheNvlinkSwitch) {
    // t = 8 in one DGX node: 4 all-reduces of b s h bf16 values per block and micro-batch (6 with
    // full recomputation), recursive halving and doubling on a switch of 300 GB/s x 0.8 each way.
    const TransformerCosts c = decoderCosts({"small", 2, 1024, 16, 512, 1000, 0});
    const LayoutEstimate e = estimateLayout(c, 4, a100s(8), meshOf(1, 1, 8));
    const double n = 1.0 * 512 * 1024 * 2, alpha = 2e-6, beta = 1.0 / (300e9 * 0.8);
    const double one = 2 * 3 * alpha + 2 * 7.0 / 8.0 * n * beta;
    EXPECT_NEAR(e.tensor_comm_s, 4 /*micro-batches*/ * 2 /*blocks*/ * 4 * one, 1e-12);
    const LayoutEstimate full = estimateLayout(c, 4, a100s(8), meshOf(1, 1, 8, Recompute::Full));
    EXPECT_NEAR(full.tensor_comm_s, 4 * 2 * 6 * one, 1e-12);
}

TEST(LayoutModel, ALayoutThatDoesNotFitSaysWhatMemoryItNeeds) {
    // GPT-3 on 64 GPUs as t = 8, p = 8: the weights and Adam's state alone are 5.4 x 16 bytes.
    const LayoutEstimate e = estimateLayout(decoderCosts(kGpt3), 1536, a100s(64), meshOf(1, 8, 8));
    EXPECT_FALSE(e.fits);
    EXPECT_NE(e.why_not.find("GiB > 80.0 GiB per device (weights "), std::string::npos) << e.why_not;
    EXPECT_NE(e.why_not.find("optimizer "), std::string::npos) << e.why_not;
    EXPECT_NE(e.why_not.find("activations "), std::string::npos) << e.why_not;
}

TEST(LayoutModel, ALayoutThatCannotSplitTheModelSaysWhy) {
    const TransformerCosts c = decoderCosts(kGpt3);
    EXPECT_EQ(layoutProblem(c, 1536, a100s(1024), meshOf(1, 16, 64)), "t=64 does not divide 96 heads");
    EXPECT_EQ(layoutProblem(c, 1536, a100s(1280), meshOf(16, 5, 16)), "p=5 does not divide 96 layers");
    EXPECT_EQ(layoutProblem(c, 1536, a100s(1024), meshOf(4, 16, 8)), "d x p x t = 512, not the 1024 devices");
    EXPECT_EQ(layoutProblem(c, 1536, a100s(1024), meshOf(1024, 1, 1)), "d=1024 does not divide the global batch 1536");
    EXPECT_EQ(layoutProblem(c, 1536, a100s(1024), meshOf(8, 16, 8, Recompute::None, 5)),
              "micro-batch 5 does not divide the batch per replica 192");
    EXPECT_EQ(layoutProblem(c, 1536, a100s(1024), meshOf(8, 16, 8, Recompute::None, 1, 4)),
              "v=4 chunks do not divide the 6 layers of a stage");
    EXPECT_THROW(estimateLayout(c, 1536, a100s(1024), meshOf(1, 16, 64)), std::invalid_argument);
    GpuCluster tpu = a100s(8);
    tpu.device = test::device("tpu-v3");
    try {
        estimateLayout(c, 1536, tpu, meshOf(1, 1, 8));
        FAIL() << "a TPU was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "layout planning needs a GPU with NVLink figures; tpu-v3 is a tpu");
    }
}

}  // namespace
}  // namespace trainbench::engine
