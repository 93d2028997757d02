// The QPS search against a server whose capacity is known: one worker, 4 ms per request, so at
// most 250 QPS; the highest rate meeting a p99 of 40 ms lies below that (the queue's tail grows as
// the load nears capacity) and well above half of it.
#include <gtest/gtest.h>

#include "app/loadtest/loadtest.h"
#include "loopbackoptions.h"
#include "testpredictserver.h"

namespace trainbench::app::loadtest {
namespace {

using namespace std::chrono_literals;

TEST(FindMaxQps, FindsTheCapacityOfAOneWorkerServer) {
    testing::TestPredictServer server({.serviceTime = 4ms});
    LoadTestOptions o = testing::loopbackOptions(server.port());
    o.findMaxQps = true;
    o.targetQps = 50;
    o.latencyBound = 40ms;
    o.minDuration = 1500ms;
    o.minQueryCount = 100;
    o.searchPrecision = 0.1;
    o.maxProbes = 9;
    o.maxIssueLag = 20ms;
    const LoadTestResult result = runLoadTest(o);
    ASSERT_TRUE(result.search);
    const QpsSearch& s = *result.search;
    EXPECT_FALSE(s.clientBound) << s.note;
    const double capacity = 1.0 / 0.004;
    EXPECT_GE(s.bestQps, 0.5 * capacity) << s.note;
    EXPECT_LE(s.bestQps, 1.05 * capacity) << s.note;
    // The best probe met the bound, and a probe above it did not.
    bool bestMet = false, aboveFailed = false;
    for (const QpsProbe& p : s.probes) {
        if (p.qps == s.bestQps) bestMet = p.met && p.result.boundLatency <= 40'000.0;
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
