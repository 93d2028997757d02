// The QPS search against a server whose capacity is known: one worker, 10 ms per request, so at
// most 1 / 10 ms = 100 QPS; the highest rate meeting a p99 of 100 ms lies below that (the queue's
// tail grows without bound as the load nears capacity; for this M/D/1 queue the bound holds up to
// about 80 % of it) and well above half of it. A loaded machine oversleeps the 10 ms, so the
// capacity is taken from the service time the server really spent.
#include <gtest/gtest.h>

#include <cstdio>

#include "app/loadtest/loadtest.h"
#include "loopbackoptions.h"
#include "testpredictserver.h"

namespace trainbench::app::loadtest {
namespace {

using namespace std::chrono_literals;

TEST(FindMaxQps, FindsTheCapacityOfAOneWorkerServer) {
    trainbench::testing::TestPredictServer server({.serviceTime = 10ms});
    LoadTestOptions o = trainbench::testing::loopbackOptions(server.port());
    o.findMaxQps = true;
    o.targetQps = 25;
    o.latencyBound = 100ms;
    o.minDuration = 1500ms;
    o.minQueryCount = 100;
    o.searchPrecision = 0.1;
    o.maxProbes = 9;
    o.maxIssueLag = 50ms;  // a shared machine delays the client's thread too; lag stays in the latency
    const LoadTestResult result = runLoadTest(o);
    ASSERT_TRUE(result.search);
    const QpsSearch& s = *result.search;
    std::printf("find-max-qps: %.1f QPS after %zu probes; %s\n", s.bestQps, s.probes.size(), s.note.c_str());
    for (const QpsProbe& p : s.probes)
        std::printf("  probe %.1f QPS: p99 %.0f us, achieved %.1f, failed %lld, issue lag p99 %.0f us, service p50 %.0f us%s\n",
                    p.qps, p.result.boundLatency, p.result.achievedQps, static_cast<long long>(p.result.failed),
                    p.result.client.issueLag.p99, p.result.service.p50, p.met ? "" : " (not met)");
    EXPECT_FALSE(s.clientBound) << s.note;
    const double capacity = 1e6 / static_cast<double>(server.meanServiceTime().count());
    std::printf("capacity %.1f QPS (mean service %lld us)\n", capacity,
                static_cast<long long>(server.meanServiceTime().count()));
    EXPECT_GE(s.bestQps, 0.5 * capacity) << s.note;
    EXPECT_LE(s.bestQps, 1.05 * capacity) << s.note;
    // The best probe met the bound, and a probe above it did not.
    bool bestMet = false, aboveFailed = false;
    for (const QpsProbe& p : s.probes) {
        if (p.qps == s.bestQps) bestMet = p.met && p.result.boundLatency <= 100'000.0;
        if (p.qps > s.bestQps && !p.met) aboveFailed = true;
    }
    EXPECT_TRUE(bestMet);
    EXPECT_TRUE(aboveFailed);
    EXPECT_EQ(result.runs.size(), s.probes.size());
}

TEST(FindMaxQps, BracketsDownwardWhenTheFirstRateFails) {
    // A fake probe is enough here: the bracketing logic, with a known threshold.
    const auto probe = [](double qps) {
        ScenarioResult r;
        r.boundMet = qps <= 130;
        return r;
    };
    const QpsSearch s = findMaxQps(1000, 0.05, 20, probe);
    EXPECT_GE(s.bestQps, 130 / 1.05);
    EXPECT_LE(s.bestQps, 130);
    EXPECT_EQ(s.probes.front().qps, 1000);
    EXPECT_FALSE(s.probes.front().met);
}

}  // namespace
}  // namespace trainbench::app::loadtest
