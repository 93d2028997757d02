// The closed-form α-β times (collectivemodel.h) against the message-level simulator
// (collectivesimulator.h), which shares none of their arithmetic: it plays each algorithm out as
// messages on links with queues. Every topology and algorithm, 2 to 64 nodes (and the 32x32 and
// 16x16x16 tori), 1 KiB to 1 GiB, with link figures that put 1 KiB in the latency-bound regime and
// 1 GiB in the bandwidth-bound one. Numbers worked out by hand: test_collectivemodel_worked.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/emulation/collectivemodel.h"
#include "engine/emulation/collectivesimulator.h"
#include "engine/emulation/topology.h"
#include "tests/engine/collectivelinks.h"

namespace trainbench::engine {
namespace {

// 5 µs per message, 10 GB/s per direction (an ICI link's order of magnitude); the on-chip links
// 1 µs and 50 GB/s. With these a 1 KiB collective is all latency and a 1 GiB one all bandwidth.
using test::kLink;
const LinkParams kOnChip = LinkParams::fromBandwidth(1e-6, 50e9);
const double kKiB = 1024.0;
const double kSizes[] = {kKiB, 32 * kKiB, 1024 * kKiB, 32 * 1024 * kKiB, 1024 * 1024 * kKiB};

// Simulated and closed-form times within 1 %, in total and phase by phase.
void expectAgree(const CollectiveTime& model, const SimulatedCollective& sim, const std::string& what) {
    EXPECT_NEAR(sim.seconds, model.seconds(), 0.01 * model.seconds() + 1e-15) << what;
    ASSERT_EQ(sim.phases.size(), model.phases.size()) << what;
    for (size_t i = 0; i < sim.phases.size(); ++i) {
        EXPECT_EQ(sim.phases[i].name, model.phases[i].name) << what;
        EXPECT_NEAR(sim.phases[i].seconds, model.phases[i].seconds(), 0.01 * model.phases[i].seconds() + 1e-15)
            << what << ", phase " << model.phases[i].name;
    }
}

// At 1 KiB the α term must dominate, at 1 GiB the β term: the comparison covers both regimes.
void expectRegime(const CollectiveTime& model, double bytes, const std::string& what) {
    if (bytes <= kKiB) {
        EXPECT_GT(model.latency_s(), 10.0 * model.bandwidth_s()) << what << ": not latency-bound";
    }
    if (bytes >= 1024 * 1024 * kKiB) {
        EXPECT_GT(model.bandwidth_s(), 10.0 * model.latency_s()) << what << ": not bandwidth-bound";
    }
}

void checkAllReduce(const Topology& t) {
    for (double bytes : kSizes) {
        const std::string what = t.describe() + ", " + std::to_string(bytes) + " bytes";
        const CollectiveTime model = allReduceTime(t, bytes);
        expectAgree(model, simulateAllReduce(t, bytes), "all-reduce on " + what);
        expectRegime(model, bytes, "all-reduce on " + what);
    }
}

const int kNodes[] = {2, 3, 4, 5, 7, 8, 16, 31, 64};

TEST(CollectiveModelVsSimulator, RingAllReduce) {
    for (int p : kNodes) checkAllReduce(ringTopology(p, kLink));
}

TEST(CollectiveModelVsSimulator, BidirectionalRingAllReduce) {
    for (int p : kNodes) checkAllReduce(bidirectionalRingTopology(p, kLink));
}

TEST(CollectiveModelVsSimulator, SwitchAllReduceHalvingAndRing) {
    for (int p : kNodes) checkAllReduce(switchTopology(p, kLink));
}

TEST(CollectiveModelVsSimulator, TorusOneDimension) {
    for (int p : {2, 3, 5, 8, 64})
        for (bool wrap : {false, true}) checkAllReduce(torusTopology({p}, {wrap}, kLink));
}

TEST(CollectiveModelVsSimulator, TorusTwoDimensionsEveryWrapCombination) {
    const std::vector<std::vector<int>> shapes = {{2, 2}, {2, 3}, {3, 5}, {4, 4}, {4, 8}, {8, 4}, {8, 8}, {1, 8}, {8, 1}};
    for (const auto& dims : shapes)
        for (bool wx : {false, true})
            for (bool wy : {false, true}) checkAllReduce(torusTopology(dims, {wx, wy}, kLink));
}

TEST(CollectiveModelVsSimulator, TorusThreeDimensions) {
    const std::vector<std::vector<int>> shapes = {{2, 2, 2}, {2, 3, 4}, {4, 4, 4}, {4, 2, 8}, {2, 2, 1}, {3, 3, 3}};
    const std::vector<std::vector<bool>> wraps = {{false, false, false}, {true, true, true}, {true, false, true}, {false, true, false}};
    for (const auto& dims : shapes)
        for (const auto& wrap : wraps) checkAllReduce(torusTopology(dims, wrap, kLink));
}

TEST(CollectiveModelVsSimulator, CoresPerChipReduceOnChipFirst) {
    checkAllReduce(withOnChip(ringTopology(8, kLink), 2, kOnChip));
    checkAllReduce(withOnChip(switchTopology(6, kLink), 2, kOnChip));
    checkAllReduce(withOnChip(torusTopology({4, 4}, {true, true}, kLink), 2, kOnChip));
    checkAllReduce(withOnChip(torusTopology({4, 4}, {false, false}, kLink), 2, kOnChip));
    checkAllReduce(withOnChip(torusTopology({2, 2, 4}, {false, false, false}, kLink), 4, kOnChip));
}

// The slices the issue names as the largest: v3-2048's 32x32 chips, and a 16x16x16 cube.
TEST(CollectiveModelVsSimulator, LargestTori) {
    for (double bytes : {kKiB, 1024 * 1024 * kKiB}) {
        for (bool wrap : {true, false}) {
            const Topology t = torusTopology({32, 32}, {wrap, wrap}, kLink);
            const CollectiveTime model = allReduceTime(t, bytes);
            expectAgree(model, simulateAllReduce(t, bytes), t.describe());
            expectRegime(model, bytes, t.describe());
        }
        const Topology cube = torusTopology({16, 16, 16}, {true, true, true}, kLink);
        const CollectiveTime model = allReduceTime(cube, bytes);
        expectAgree(model, simulateAllReduce(cube, bytes), cube.describe());
        expectRegime(model, bytes, cube.describe());
    }
}

TEST(CollectiveModelVsSimulator, ReduceScatterAndAllGather) {
    std::vector<Topology> topologies;
    for (int p : {2, 3, 8, 64}) {
        topologies.push_back(ringTopology(p, kLink));
        topologies.push_back(bidirectionalRingTopology(p, kLink));
        topologies.push_back(switchTopology(p, kLink));
    }
    topologies.push_back(torusTopology({4, 8}, {false, true}, kLink));
    topologies.push_back(torusTopology({2, 3, 4}, {true, false, true}, kLink));
    for (const Topology& t : topologies)
        for (double bytes : kSizes) {
            const std::string what = t.describe() + ", " + std::to_string(bytes) + " bytes";
            expectAgree(reduceScatterTime(t, bytes), simulateReduceScatter(t, bytes), "reduce-scatter on " + what);
            expectAgree(allGatherTime(t, bytes), simulateAllGather(t, bytes), "all-gather on " + what);
            expectRegime(reduceScatterTime(t, bytes), bytes, "reduce-scatter on " + what);
        }
}

TEST(CollectiveModelVsSimulator, PipelinedBroadcastOnRings) {
    for (int p : {2, 3, 8, 64})
        for (const Topology& t : {ringTopology(p, kLink), bidirectionalRingTopology(p, kLink)})
            for (double bytes : kSizes)
                for (int segments : {1, 4, broadcastSegments(t, bytes)}) {
                    const std::string what = "broadcast on " + t.describe() + ", " + std::to_string(bytes) +
                                             " bytes in " + std::to_string(segments) + " segments";
                    expectAgree(broadcastTime(t, bytes, segments), simulateBroadcast(t, bytes, segments), what);
                }
}

TEST(CollectiveModelVsSimulator, PointToPoint) {
    for (int hops : {1, 3, 10})
        for (double bytes : kSizes)
            EXPECT_NEAR(simulatePointToPoint(kLink, bytes, hops).seconds, pointToPointSeconds(kLink, bytes, hops),
                        0.01 * pointToPointSeconds(kLink, bytes, hops));
}

// Not the model's own split: the simulator alone reacts to α at 1 KiB and to β at 1 GiB.
TEST(CollectiveModelVsSimulator, SimulatedRegimesFollowTheDominantTerm) {
    const LinkParams slowLatency{2 * kLink.alpha_s, kLink.beta_s_per_byte};
    const LinkParams slowBandwidth{kLink.alpha_s, 2 * kLink.beta_s_per_byte};
    for (const auto& make : {+[](LinkParams l) { return ringTopology(16, l); },
                             +[](LinkParams l) { return torusTopology({4, 4}, {false, false}, l); },
                             +[](LinkParams l) { return switchTopology(16, l); }}) {
        const double small = kKiB, large = 1024 * 1024 * kKiB;
        const double base = simulateAllReduce(make(kLink), small).seconds;
        EXPECT_GT(simulateAllReduce(make(slowLatency), small).seconds, 1.9 * base);
        EXPECT_LT(simulateAllReduce(make(slowBandwidth), small).seconds, 1.1 * base);
        const double baseLarge = simulateAllReduce(make(kLink), large).seconds;
        EXPECT_GT(simulateAllReduce(make(slowBandwidth), large).seconds, 1.9 * baseLarge);
        EXPECT_LT(simulateAllReduce(make(slowLatency), large).seconds, 1.1 * baseLarge);
    }
}

TEST(CollectiveModel, TorusWithoutWrapAroundIsSlower) {
    const std::vector<std::vector<int>> shapes = {{4}, {4, 4}, {8, 8}, {32, 32}, {4, 4, 4}};
    for (const auto& dims : shapes)
        for (double bytes : kSizes) {
            const std::vector<bool> on(dims.size(), true), off(dims.size(), false);
            const double with = allReduceSeconds(torusTopology(dims, on, kLink), bytes);
            const double without = allReduceSeconds(torusTopology(dims, off, kLink), bytes);
            EXPECT_GT(without, 1.2 * with) << torusTopology(dims, off, kLink).describe() << ", " << bytes << " bytes";
            if (dims.size() == 2 && dims[0] <= 8) {
                std::vector<bool> half = off;
                half[0] = true;
                const double partial = allReduceSeconds(torusTopology(dims, half, kLink), bytes);
                EXPECT_GT(without, partial);
                EXPECT_GT(partial, with);
            }
        }
}

}  // namespace
}  // namespace trainbench::engine
