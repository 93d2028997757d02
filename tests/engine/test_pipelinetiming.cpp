// A pipeline on emulated GPUs (engine/emulation/pipelinetiming.h): equal stages idle the textbook
// fraction (K-1)/(M+K-1) of the step, within a point, with the activations' hand-offs charged on
// NVLink; the hand-offs cost what the link says; 1F1B keeps fewer activations than GPipe and
// recomputation fewer still, for a second forward; and a layout the model cannot take is refused.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/emulation/pipelinetiming.h"
#include "engine/model/pipelineschedule.h"
#include "tests/engine/catalogdevices.h"
#include "tests/engine/modelspecs.h"
#include "tests/engine/optimizerconfigs.h"

namespace trainbench::engine {
namespace {

using test::adam;
using test::device;
using namespace testmodels;

// A small first layer (16 features in: it needs no input gradient, so the layers after it all do
// the same work), then eight equal dense layers of 32768 features: any K of 2, 4 or 8 cuts them
// into equal stages, the small layer (a few microseconds of fixed per-op costs) with the first.
constexpr int kWidth = 32768;
ModelSpec equalLayers() {
    std::vector<LayerSpec> layers{dense(kWidth)};
    for (int i = 0; i < 8; ++i) layers.push_back(dense(kWidth));
    return custom(layers);
}

// The link between two A100s of a node: NVLink, one direction.
LinkParams nvlink(const DeviceSpec& gpu) {
    const GpuLinks links = gpu.links.value();
    return LinkParams::fromBandwidth(links.latency_s, links.nvlink_bytes_per_s / 2);
}

PipelineStepCost cost(int K, int M, PipelineSchedule s, bool recompute = false, int64_t batch = 1024,
                      std::vector<int> boundaries = {}, std::optional<LinkParams> link = std::nullopt) {
    const DeviceSpec& a100 = device("a100-sxm4-80gb");
    return pipelineStepCost(equalLayers(), {16}, kWidth, batch, adam(), a100, Precision::Bf16,
                            PipelineLayout{K, M, s, std::move(boundaries), recompute, link.value_or(nvlink(a100))});
}

// The bubble is the schedule's: on an ideal interconnect equal stages idle (K-1)/(M+K-1) within a
// point. NVLink's hand-offs then lengthen the step by at least the fill's and the drain's crossings
// of every boundary (2 (K-1) hand-offs), and the stages idle that much longer.
TEST(PipelineTiming, EqualStagesIdleTheTextbookBubbleWithinAPoint) {
    for (PipelineSchedule s : {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB})
        for (int K : {2, 4, 8})
            for (int M : {4, 8, 16}) {
                const PipelineStepCost ideal = cost(K, M, s, false, 1024, {}, LinkParams{});
                ASSERT_EQ(ideal.starts.size(), static_cast<size_t>(K));
                for (int k = 1; k < K; ++k) EXPECT_EQ(ideal.starts[static_cast<size_t>(k)], 1 + k * 8 / K) << "equal stages";
                EXPECT_NEAR(ideal.timeline.bubbleFraction(), idealBubbleFraction(K, M), 0.01)
                    << pipelineScheduleName(s) << " K=" << K << " M=" << M;
                const PipelineStepCost real = cost(K, M, s);
                ASSERT_GT(real.handoff_s.front(), 0.0) << "activations cross NVLink";
                EXPECT_GE(real.timeline.stepSeconds - ideal.timeline.stepSeconds,
                          2.0 * (K - 1) * real.handoff_s.front() * (1 - 1e-9))
                    << pipelineScheduleName(s) << " K=" << K << " M=" << M;
                EXPECT_GT(real.timeline.bubbleFraction(), ideal.timeline.bubbleFraction());
            }
}

TEST(PipelineTiming, HandOffsCostTheLinksTimeForTheBoundaryActivations) {
    const PipelineStepCost c = cost(2, 4, PipelineSchedule::OneFOneB);
    const DeviceSpec& a100 = device("a100-sxm4-80gb");
    const LinkParams link = nvlink(a100);
    // kWidth bf16 features of 256 examples.
    const double bytes = double{kWidth} * 256 * 2;
    ASSERT_EQ(c.micro_batch, 256);
    ASSERT_EQ(c.handoff_s.size(), 1u);
    EXPECT_NEAR(c.handoff_s[0], link.alpha_s + bytes * link.beta_s_per_byte, 1e-12);
    // A slower link lengthens the step by at least two hand-offs (one each way on the critical path).
    PipelineLayout slow{2, 4, PipelineSchedule::OneFOneB, {}, false, LinkParams::fromBandwidth(1e-5, 1e9)};
    const PipelineStepCost s = pipelineStepCost(equalLayers(), {16}, kWidth, 1024, adam(), a100, Precision::Bf16, slow);
    const double slowHandoff = 1e-5 + bytes / 1e9;
    EXPECT_GE(s.stepSeconds() - c.stepSeconds(), 2 * (slowHandoff - c.handoff_s[0]) * 0.99);
}

TEST(PipelineTiming, OneFOneBKeepsFewerActivationsThanGPipeAndRecomputationFewerStill) {
    const PipelineStepCost gpipe = cost(4, 16, PipelineSchedule::GPipe);
    const PipelineStepCost oneF = cost(4, 16, PipelineSchedule::OneFOneB);
    const PipelineStepCost again = cost(4, 16, PipelineSchedule::OneFOneB, /*recompute=*/true);
    for (size_t k = 0; k < 4; ++k) {
        EXPECT_EQ(gpipe.memory[k].params_bytes, oneF.memory[k].params_bytes);
        // GPipe holds all 16 micro-batches; 1F1B stage k at most 4-k.
        EXPECT_NEAR(gpipe.memory[k].activation_bytes / oneF.memory[k].activation_bytes, 16.0 / (4.0 - static_cast<double>(k)), 1e-9)
            << "stage " << k;
        // Recomputing keeps the inputs of the micro-batches in flight and one micro-batch's activations:
        // less wherever a stage holds more than one (1F1B's last stage holds one either way).
        if (k < 3) EXPECT_LT(again.memory[k].activation_bytes, oneF.memory[k].activation_bytes) << "stage " << k;
        else EXPECT_EQ(again.memory[k].activation_bytes, oneF.memory[k].activation_bytes);
        // The recomputed forward is charged in backward.
        EXPECT_NEAR(again.backward_s[k], oneF.backward_s[k] + oneF.forward_s[k], 1e-12);
    }
    EXPECT_GT(again.stepSeconds(), oneF.stepSeconds());
    // Stage 1 holds two of the eight equal layers' fp32 parameters.
    const double w = kWidth;
    EXPECT_NEAR(oneF.memory[1].params_bytes * 4, 8.0 * (w * w + w) * 4, 1.0);
}

TEST(PipelineTiming, ALayoutTheModelCannotTakeIsRefused) {
    EXPECT_THROW(cost(16, 4, PipelineSchedule::GPipe), std::invalid_argument);  // 9 layers, 16 stages
    try {
        cost(2, 8, PipelineSchedule::GPipe, false, 4);
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("a batch of 4 examples cannot make 8 micro-batches"), std::string::npos) << e.what();
    }
    EXPECT_THROW(cost(2, 4, PipelineSchedule::GPipe, false, 1024, {9}), std::invalid_argument);
    // User boundaries are kept: an unequal cut idles more than the textbook bubble.
    const PipelineStepCost uneven = cost(2, 8, PipelineSchedule::OneFOneB, false, 1024, {2});
    EXPECT_EQ(uneven.starts, (std::vector<int>{0, 2}));  // 2 layers, then 7
    EXPECT_GT(uneven.timeline.bubbleFraction(), idealBubbleFraction(2, 8) + 0.1);
}

}  // namespace
}  // namespace trainbench::engine
