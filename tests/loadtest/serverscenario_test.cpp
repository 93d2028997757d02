// The Server scenario against a real single-threaded server on loopback: latency is measured from
// each query's scheduled arrival (a stall shows in it, where send-time measurement hides it), a
// run the client can sustain achieves the target QPS within 1 %, and a client that cannot keep the
// schedule says so.
#include <gtest/gtest.h>

#include <algorithm>

#include "app/loadtest/loadtest.h"
#include "loopbackoptions.h"
#include "testpredictserver.h"

namespace trainbench::app::loadtest {
namespace {

using namespace std::chrono_literals;
using trainbench::testing::TestPredictServer;

TEST(ServerScenario, LatencyCountsTheQueueingBehindAStallFromTheScheduledTime) {
    // 1 ms per request, and the 50th stalls the server for 300 ms; 100 QPS, so ~30 queries are due
    // during the stall. The client has one connection: the classic closed-loop client that sends
    // the next request only when the last one returned, and would time it from then.
    TestPredictServer server({.serviceTime = 1ms, .stallOnRequest = 50, .stallFor = 300ms});
    LoadTestOptions o = trainbench::testing::loopbackOptions(server.port());
    o.scenario = Scenario::Server;
    o.targetQps = 100;
    o.minDuration = 3s;
    o.maxConnections = 1;
    o.maxIssueLag = 20ms;  // a shared machine may delay a thread by a few ms; the rule's threshold is a setting
    const LoadTestResult result = runLoadTest(o);
    ASSERT_EQ(result.runs.size(), 1u);
    const ScenarioResult& r = result.runs[0];
    ASSERT_EQ(r.failed, 0) << r.firstError;
    ASSERT_EQ(r.completed, 300);
    // From the scheduled time: the queries due during the stall waited for it.
    EXPECT_GE(r.latency.p99, 150'000.0);
    EXPECT_GE(r.latency.max, 250'000.0);
    // From the send: only the one query in flight saw the stall, so the tail looks healthy.
    EXPECT_LT(r.service.p99, 100'000.0);
    EXPECT_GE(r.service.max, 250'000.0);
    // The wait was for the connection, not for the client: it is not client-bound.
    EXPECT_GE(r.client.connectionWait.max, 100'000.0);
    EXPECT_FALSE(r.client.clientBound) << r.client.reason;
}

TEST(ServerScenario, ASustainableRunAchievesTheTargetWithinOnePercent) {
    TestPredictServer server({});
    LoadTestOptions o = trainbench::testing::loopbackOptions(server.port());
    o.scenario = Scenario::Server;
    o.targetQps = 200;
    o.minDuration = 5s;  // 1 % of it is 50 ms: the slack a shared machine's last answer may need
    o.maxIssueLag = 20ms;  // a shared machine may delay a thread by a few ms; the rule's threshold is a setting
    const ScenarioResult r = runLoadTest(o).runs.at(0);
    ASSERT_EQ(r.failed, 0) << r.firstError;
    EXPECT_EQ(r.completed, 1000);
    EXPECT_NEAR(r.achievedQps, 200.0, 2.0);
    EXPECT_FALSE(r.client.clientBound) << r.client.reason;
    EXPECT_EQ(server.requests(), 1000);
    // The per-second series covers the run and adds up to it.
    int64_t perSecond = 0;
    for (const SecondPoint& p : r.perSecond) perSecond += p.completed;
    EXPECT_EQ(perSecond, 1000);
}

TEST(ServerScenario, AClientThatCannotKeepTheScheduleReportsItselfAsTheBottleneck) {
    // Every answer is ~90 KB of JSON the client must parse to check it (a few ms); the server only
    // writes a prepared string. One client thread cannot check 2000 of them a second.
    TestPredictServer server({.predictionFloats = 10'000});
    LoadTestOptions o = trainbench::testing::loopbackOptions(server.port());
    o.scenario = Scenario::Server;
    o.client.threads = 1;
    o.targetQps = 2000;
    o.minDuration = 75ms;
    o.minQueryCount = 150;
    const ScenarioResult r = runLoadTest(o).runs.at(0);
    ASSERT_EQ(r.failed, 0) << r.firstError;
    EXPECT_TRUE(r.client.clientBound);
    EXPECT_NE(r.client.reason.find("issue lag"), std::string::npos) << r.client.reason;
    EXPECT_LT(r.achievedQps, 0.99 * 2000);
}

TEST(ServerScenario, TheSameClientAtARateItCanCheckIsNotTheBottleneck) {
    // Two client threads: while one checks an answer, the other issues the next query on time.
    // (Answers a tenth the size: a sanitizer build checks them some 50 times slower.)
    TestPredictServer server({.predictionFloats = 1'000});
    LoadTestOptions o = trainbench::testing::loopbackOptions(server.port());
    o.scenario = Scenario::Server;
    o.client.threads = 2;
    o.targetQps = 10;
    o.minDuration = 2s;
    o.minQueryCount = 20;
    o.maxIssueLag = 20ms;  // a shared machine may delay a thread by a few ms; the rule's threshold is a setting
    const ScenarioResult r = runLoadTest(o).runs.at(0);
    ASSERT_EQ(r.failed, 0) << r.firstError;
    EXPECT_FALSE(r.client.clientBound) << r.client.reason;
    EXPECT_LT(r.client.cpuShare, 0.9);
}

}  // namespace
}  // namespace trainbench::app::loadtest
