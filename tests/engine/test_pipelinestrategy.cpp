// strategy "pipeline": the schedules (GPipe, 1F1B) as orders of ops and played out in time; stages
// balanced and user boundaries checked; and the numbers that matter: K stages on threads with M
// micro-batches follow one device's loss curve on the same global batch (W1's MLP and W2's CNN),
// keep the parameters a single device would, and 1F1B holds fewer micro-batches than GPipe.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "engine/model/modelspec.h"
#include "engine/model/pipelineschedule.h"
#include "engine/strategy/pipelinestrategy.h"
#include "engine/model/stagepartition.h"
#include "engine/strategy/strategy.h"
#include "engine/util/rng.h"
#include "tests/engine/strategycurves.h"

namespace trainbench::engine {
namespace {

using testing::Batches;
using testing::lossCurve;
using testing::makeBatches;
using testing::relativeParamDistance;
using testing::replicaOf;
using testing::worstRelative;

TEST(PipelineSchedule, EveryStageRunsEachMicroBatchForwardThenBackwardOnce) {
    for (PipelineSchedule s : {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB})
        for (int K : {1, 2, 3, 4})
            for (int M : {1, 2, 4, 8}) {
                const auto ops = pipelineOps(s, K, M);
                ASSERT_EQ(ops.size(), static_cast<size_t>(K));
                for (int k = 0; k < K; ++k) {
                    std::set<int> forwarded, backwarded;
                    int inFlight = 0, most = 0;
                    for (const PipelineOp& op : ops[static_cast<size_t>(k)]) {
                        if (op.forward) {
                            EXPECT_TRUE(forwarded.insert(op.micro).second);
                            most = std::max(most, ++inFlight);
                        } else {
                            EXPECT_TRUE(forwarded.count(op.micro)) << "backward before forward";
                            EXPECT_TRUE(backwarded.insert(op.micro).second);
                            --inFlight;
                        }
                    }
                    EXPECT_EQ(forwarded.size(), static_cast<size_t>(M));
                    EXPECT_EQ(backwarded.size(), static_cast<size_t>(M));
                    EXPECT_EQ(most, microBatchesInFlight(s, K, M, k)) << pipelineScheduleName(s) << " K=" << K << " M=" << M;
                }
            }
}

TEST(PipelineSchedule, OneFOneBHoldsFewerMicroBatchesThanGPipe) {
    EXPECT_EQ(microBatchesInFlight(PipelineSchedule::GPipe, 4, 8, 0), 8);
    EXPECT_EQ(microBatchesInFlight(PipelineSchedule::OneFOneB, 4, 8, 0), 4);
    EXPECT_EQ(microBatchesInFlight(PipelineSchedule::OneFOneB, 4, 8, 3), 1);
}

// Equal stages, backward twice the forward, no hand-off cost: the idle fraction is (K-1)/(M+K-1)
// (GPipe, Huang et al.; the same for 1F1B), within a point; and the step is (M+K-1) slots.
TEST(PipelineSchedule, TheSimulatedBubbleIsTheTextbookOne) {
    for (PipelineSchedule s : {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB})
        for (int K : {2, 4, 8})
            for (int M : {1, 4, 8, 32}) {
                const PipelineTimeline t = simulatePipeline(s, K, M, std::vector<double>(static_cast<size_t>(K), 1.0),
                                                            std::vector<double>(static_cast<size_t>(K), 2.0));
                EXPECT_NEAR(t.bubbleFraction(), idealBubbleFraction(K, M), 0.01)
                    << pipelineScheduleName(s) << " K=" << K << " M=" << M;
                EXPECT_NEAR(t.stepSeconds, 3.0 * (M + K - 1), 1e-9);
                EXPECT_EQ(t.events.size(), static_cast<size_t>(2 * K * M));
            }
    // A slow stage sets the pace: the others wait for it.
    const PipelineTimeline slow = simulatePipeline(PipelineSchedule::OneFOneB, 2, 8, {1.0, 2.0}, {2.0, 4.0});
    EXPECT_NEAR(slow.stepSeconds, 8 * 6.0 + 3.0, 1e-9);
    EXPECT_GT(slow.bubbleFraction(), idealBubbleFraction(2, 8) + 0.1);
}

TEST(StagePartition, BalancesTheCostliestStageAndChecksBoundaries) {
    EXPECT_EQ(balanceStages({1, 1, 1, 1}, 2), (std::vector<int>{0, 2}));
    EXPECT_EQ(balanceStages({8, 1, 1, 1, 1, 1, 1, 1, 1}, 2), (std::vector<int>{0, 1}));
    EXPECT_EQ(balanceStages({1, 2, 3, 4, 5, 6}, 3), (std::vector<int>{0, 3, 5}));
    EXPECT_THROW(balanceStages({1, 2}, 3), std::invalid_argument);
    ModelSpec mlp;
    mlp.preset = "mlp";
    mlp.layers = presetLayers("mlp");
    CpuDevice device(1);
    Model model(mlp, {1, 28, 28}, 10, device, 1);
    try {
        stageStarts(model.layers(), 3, {3, 2}, 32);
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("strategy.stage_boundaries[1]: 2 must be after 3"), std::string::npos) << e.what();
    }
    EXPECT_THROW(stageStarts(model.layers(), 2, {99}, 32), std::invalid_argument);
    EXPECT_THROW(stageStarts(model.layers(), 3, {1}, 32), std::invalid_argument);
    EXPECT_EQ(stageStarts(model.layers(), 2, {2}, 32), (std::vector<int>{0, 2}));
}

// The acceptance grid: K = 2, 4; M = 1, 4, 8; both schedules; W1's MLP and W2's CNN; 50 steps.
TEST(PipelineStrategy, FollowsOneDevicesLossCurveOnTheSameGlobalBatch) {
    constexpr int kSteps = 50;
    for (const char* preset : {"mlp", "cnn"}) {
        const int64_t batch = preset == std::string("mlp") ? 64 : 32;
        const Batches data = makeBatches(kSteps, batch, 28 * 28);
        SingleStrategy single(replicaOf(preset));
        const std::vector<double> reference = lossCurve(single, data, batch);
        for (int K : {2, 4})
            for (int M : {1, 4, 8})
                for (PipelineSchedule s : {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB}) {
                    PipelineStrategy pipe(replicaOf(preset), PipelineSpec{K, M, s, {}});
                    const std::vector<double> losses = lossCurve(pipe, data, batch);
                    EXPECT_LT(worstRelative(losses, reference), 1e-5)
                        << preset << " K=" << K << " M=" << M << " " << pipelineScheduleName(s);
                    // The parameters after 50 updates are a single device's too, up to float noise that
                    // Adam amplifies on parameters whose gradients are ~0 (it divides by their size).
                    EXPECT_LT(relativeParamDistance(pipe.model(), single.model()), 1e-3)
                        << preset << " K=" << K << " M=" << M;
                }
    }
}

TEST(PipelineStrategy, RecordsEveryStageAndKeepsItsSlots) {
    const Batches data = makeBatches(3, 64, 28 * 28);
    PipelineStrategy gpipe(replicaOf("mlp"), PipelineSpec{2, 8, PipelineSchedule::GPipe, {}});
    PipelineStrategy oneF(replicaOf("mlp"), PipelineSpec{2, 8, PipelineSchedule::OneFOneB, {}});
    EXPECT_EQ(gpipe.slotsOf(0), 8);
    EXPECT_EQ(oneF.slotsOf(0), 2);
    EXPECT_EQ(oneF.slotsOf(1), 1);
    EXPECT_EQ(oneF.devices(), "cpu:1x2");
    std::vector<float> x = data.x[0];
    const StrategyStep r = oneF.step({x.data(), data.y[0].data(), 64}, 1, 5, {});
    ASSERT_EQ(r.replicas.size(), 2u);
    for (int k = 0; k < 2; ++k) {
        EXPECT_EQ(r.replicas[static_cast<size_t>(k)].rank, k);
        EXPECT_EQ(r.replicas[static_cast<size_t>(k)].samples, 64);
        EXPECT_GT(r.replicas[static_cast<size_t>(k)].compute_seconds, 0.0);
    }
    EXPECT_EQ(oneF.stageStarts().front(), 0);
}

TEST(PipelineStrategy, ABatchSmallerThanTheMicroBatchesIsAnError) {
    PipelineStrategy pipe(replicaOf("mlp"), PipelineSpec{2, 8, PipelineSchedule::OneFOneB, {}});
    const Batches data = makeBatches(1, 4, 28 * 28);
    std::vector<float> x = data.x[0];
    try {
        pipe.step({x.data(), data.y[0].data(), 4}, 1, 1, {});
        FAIL();
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("a batch of 4 examples cannot make 8 micro-batches"), std::string::npos)
            << e.what();
    }
    EXPECT_THROW(PipelineStrategy(replicaOf("mlp"), PipelineSpec{40, 1, PipelineSchedule::GPipe, {}}), std::invalid_argument);
}

// Activation recomputation keeps one set of layers per stage and runs each micro-batch's forward
// again before its backward: the loss curve is the one without it (so one device's), dropout draws
// the same masks the second time, and batch norm's running statistics are updated once per
// micro-batch, not twice.
TEST(PipelineStrategy, RecomputationKeepsOneSetOfLayersAndTheSameNumbers) {
    constexpr int kSteps = 20;
    const Batches data = makeBatches(kSteps, 32, 28 * 28);
    SingleStrategy single(replicaOf("cnn"));
    const std::vector<double> reference = lossCurve(single, data, 32);
    for (PipelineSchedule s : {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB})
        for (int K : {2, 4}) {
            PipelineStrategy pipe(replicaOf("cnn"), PipelineSpec{K, 4, s, {}, /*recompute=*/true});
            for (int k = 0; k < K; ++k) EXPECT_EQ(pipe.slotsOf(k), 1);
            const std::vector<double> losses = lossCurve(pipe, data, 32);
            EXPECT_LT(worstRelative(losses, reference), 1e-5) << pipelineScheduleName(s) << " K=" << K;
            // Stage 0 runs every micro-batch's forward again (its set holds one at a time), except the
            // one it holds when that micro-batch's backward comes.
            EXPECT_GE(pipe.recomputedOf(0), 3) << pipelineScheduleName(s) << " K=" << K;
        }

    // Dropout and batch norm: recomputing equals keeping the activations, statistics included.
    ReplicaSpec spec = replicaOf("cnn");
    LayerSpec bn;
    bn.kind = LayerKind::BatchNorm;
    bn.momentum = 0.9f;
    LayerSpec drop;
    drop.kind = LayerKind::Dropout;
    drop.rate = 0.3f;
    spec.model.preset.clear();
    spec.model.layers.insert(spec.model.layers.begin() + 1, bn);
    spec.model.layers.insert(spec.model.layers.end() - 1, drop);
    PipelineStrategy kept(spec, PipelineSpec{2, 4, PipelineSchedule::GPipe, {2}, false});
    PipelineStrategy again(spec, PipelineSpec{2, 4, PipelineSchedule::GPipe, {2}, true});
    const Batches few = makeBatches(6, 32, 28 * 28);
    const std::vector<double> a = lossCurve(kept, few, 32), b = lossCurve(again, few, 32);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "step " << i + 1;
    const auto sa = kept.model().state(), sb = again.model().state();
    ASSERT_EQ(sa.size(), sb.size());
    ASSERT_GT(sa.size(), 0u);
    for (size_t i = 0; i < sa.size(); ++i) EXPECT_EQ(sa[i], sb[i]) << "batch norm state " << i;
    EXPECT_GT(again.recomputedOf(0), 0);
}

}  // namespace
}  // namespace trainbench::engine
