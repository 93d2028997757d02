// Collective times worked out by hand (the numbers are typed in, not computed), what one node costs,
// bad arguments, the memoizing clock, and how long the simulator takes on the largest slices
// (printed, not asserted: timing goals belong in benchmarks).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "engine/emulation/collectiveclock.h"
#include "engine/emulation/collectivemodel.h"
#include "engine/emulation/collectivesimulator.h"
#include "engine/emulation/tpuslice.h"
#include "tests/engine/collectivelinks.h"

namespace trainbench::engine {
namespace {

// α = 5 µs, 10 GB/s per direction; 4 MB = 4e6 bytes, so one byte costs 1e-10 s.
using test::kLink;
const double k4MB = 4e6;

// Both the closed form and the simulator must land on the hand-computed figure (to 0.1 %).
void expectSeconds(const Topology& t, double bytes, double expected_s) {
    EXPECT_NEAR(allReduceSeconds(t, bytes), expected_s, 1e-3 * expected_s) << t.describe();
    EXPECT_NEAR(simulateAllReduce(t, bytes).seconds, expected_s, 1e-3 * expected_s) << t.describe();
}

TEST(CollectiveModelWorked, RingOfFour) {
    // 2·3·5 µs + 2·(3/4)·4e6 B · 1e-10 s/B = 30 µs + 600 µs.
    expectSeconds(ringTopology(4, kLink), k4MB, 630e-6);
}

TEST(CollectiveModelWorked, BidirectionalRingOfFourHalvesTheBandwidthTerm) {
    // 30 µs + (3/4)·4e6·1e-10 = 30 + 300 µs.
    expectSeconds(bidirectionalRingTopology(4, kLink), k4MB, 330e-6);
}

TEST(CollectiveModelWorked, Switch) {
    // p = 4: recursive halving + doubling, 2·log2(4)·5 µs + 2·(3/4)·400 µs = 20 + 600 µs.
    expectSeconds(switchTopology(4, kLink), k4MB, 620e-6);
    // p = 3: the ring, 2·2·5 µs + 2·(2/3)·400 µs = 20 + 533.33 µs.
    expectSeconds(switchTopology(3, kLink), k4MB, 553.3333e-6);
}

TEST(CollectiveModelWorked, LineOfFourPaysTheReturnPath) {
    // Each pass: 2 one-link steps (5 + 100 µs) and one step back over 3 links (15 + 100 µs) = 325 µs;
    // reduce-scatter and all-gather: 650 µs.
    expectSeconds(torusTopology({4}, {false}, kLink), k4MB, 650e-6);
}

TEST(CollectiveModelWorked, TorusFourByFour) {
    // With wrap-around: reduce-scatter x 3·(5 + 4e6/8·1e-10 s) = 165 µs, reduce-scatter y on 1e6 B
    // 3·(5 + 12.5) = 52.5 µs, all-gather y 52.5 µs, all-gather x 165 µs: 435 µs.
    expectSeconds(torusTopology({4, 4}, {true, true}, kLink), k4MB, 435e-6);
    // Without: x passes 25 + 300 µs each, y passes 25 + 75 µs each: 850 µs.
    expectSeconds(torusTopology({4, 4}, {false, false}, kLink), k4MB, 850e-6);
}

TEST(CollectiveModelWorked, TorusTwoByTwoByTwoWithWrapAround) {
    // 8 MB; passes over x, y, z move 8e6, 4e6, 2e6 B: each 5 µs + n/4·1e-10 s = 205, 105, 55 µs,
    // twice each: 730 µs.
    expectSeconds(torusTopology({2, 2, 2}, {true, true, true}, kLink), 8e6, 730e-6);
}

TEST(CollectiveModelWorked, SliceReducesOnChipThenOnTheTorus) {
    // v3-32: 4x4 chips, no wrap-around (850 µs above), 2 cores per chip joined by 1 µs, 50 GB/s
    // links: on-chip reduce-scatter 1 µs + 2e6·2e-11 s = 41 µs, all-gather 41 µs: 932 µs.
    const Topology slice = sliceTopology(parseTpuSlice("v3-32"), kLink, LinkParams::fromBandwidth(1e-6, 50e9));
    expectSeconds(slice, k4MB, 932e-6);
    const CollectiveTime phases = allReduceTime(slice, k4MB);
    ASSERT_EQ(phases.phases.size(), 6u);
    EXPECT_EQ(phases.phases.front().name, "on-chip reduce-scatter");
    EXPECT_EQ(phases.phases[1].name, "reduce-scatter x");
    EXPECT_EQ(phases.phases.back().name, "on-chip all-gather");
}

TEST(CollectiveModelWorked, BroadcastAndPointToPoint) {
    // Ring of 4, two segments: (4 + 2 - 2) steps of 5 µs + 2e6·1e-10 s = 4·205 µs.
    EXPECT_NEAR(broadcastTime(ringTopology(4, kLink), k4MB, 2).seconds(), 820e-6, 1e-9);
    EXPECT_NEAR(simulateBroadcast(ringTopology(4, kLink), k4MB, 2).seconds, 820e-6, 1e-9);
    // 1 MB over three links, cut-through: 3·5 µs + 100 µs.
    EXPECT_NEAR(pointToPointSeconds(kLink, 1e6, 3), 115e-6, 1e-12);
    EXPECT_NEAR(simulatePointToPoint(kLink, 1e6, 3).seconds, 115e-6, 1e-12);
}

TEST(CollectiveModelWorked, OneNodeCostsNothing) {
    const std::vector<Topology> single = {ringTopology(1, kLink), bidirectionalRingTopology(1, kLink),
                                          switchTopology(1, kLink), torusTopology({1, 1}, {true, false}, kLink),
                                          torusTopology({1, 1, 1}, {false, false, false}, kLink)};
    for (const Topology& t : single) {
        EXPECT_EQ(allReduceSeconds(t, 1e9), 0.0) << t.describe();
        const SimulatedCollective sim = simulateAllReduce(t, 1e9);
        EXPECT_EQ(sim.seconds, 0.0) << t.describe();
        EXPECT_EQ(sim.messages, 0) << t.describe();
    }
    EXPECT_EQ(broadcastTime(ringTopology(1, kLink), 1e9, 4).seconds(), 0.0);
    // Zero bytes still pay the latency of every step.
    EXPECT_NEAR(allReduceSeconds(ringTopology(4, kLink), 0.0), 30e-6, 1e-12);
}

TEST(CollectiveModelWorked, BadArgumentsAreRejected) {
    EXPECT_THROW(allReduceSeconds(ringTopology(4, kLink), -1.0), std::invalid_argument);
    EXPECT_THROW(simulateAllReduce(ringTopology(4, kLink), -1.0), std::invalid_argument);
    const Topology chips = withOnChip(ringTopology(4, kLink), 2, kLink);
    EXPECT_THROW(reduceScatterTime(chips, 1e6), std::invalid_argument);
    EXPECT_THROW(broadcastTime(switchTopology(4, kLink), 1e6, 1), std::invalid_argument);
    EXPECT_THROW(broadcastTime(ringTopology(4, kLink), 1e6, 0), std::invalid_argument);
    EXPECT_THROW(pointToPointSeconds(kLink, 1e6, 0), std::invalid_argument);
}

TEST(CollectiveClock, MemoizesByByteSize) {
    CollectiveClock clock(torusTopology({4, 4}, {true, true}, kLink));
    EXPECT_NEAR(clock.allReduceSeconds(4000000), 435e-6, 1e-9);
    EXPECT_NEAR(clock.allReduceSeconds(4000000), 435e-6, 1e-9);
    EXPECT_EQ(clock.cachedSizes(), 1u);
    EXPECT_DOUBLE_EQ(clock.allReduceSeconds(1024), allReduceSeconds(clock.topology(), 1024));
    EXPECT_EQ(clock.cachedSizes(), 2u);
    EXPECT_THROW(CollectiveClock(torusTopology({4, 4}, {true, true}, LinkParams{-1.0, 0.0})), std::invalid_argument);
}

// Benchmark-style: prints how long the simulator and a first clock call take on the biggest
// slices; asserts only that they ran.
TEST(CollectiveSimulatorSpeed, LargestSlicesOneGigabyte) {
    const LinkParams onChip = LinkParams::fromBandwidth(1e-6, 50e9);
    for (const char* name : {"v3-2048", "v4-4096"}) {
        const Topology t = sliceTopology(parseTpuSlice(name), kLink, onChip);
        const auto t0 = std::chrono::steady_clock::now();
        const SimulatedCollective sim = simulateAllReduce(t, 1e9);
        const auto t1 = std::chrono::steady_clock::now();
        CollectiveClock clock(t);
        const double charged = clock.allReduceSeconds(1000000000);
        const auto t2 = std::chrono::steady_clock::now();
        std::printf("[ speed    ] %s (%s): simulated 1 GB all-reduce %.6f s in %.1f ms wall, %lld messages; "
                    "clock's first call %.1f us\n",
                    name, t.describe().c_str(), sim.seconds, std::chrono::duration<double, std::milli>(t1 - t0).count(),
                    static_cast<long long>(sim.messages), std::chrono::duration<double, std::micro>(t2 - t1).count());
        EXPECT_GT(sim.messages, 0);
        EXPECT_NEAR(sim.seconds, charged, 0.01 * charged);
    }
}

}  // namespace
}  // namespace trainbench::engine
