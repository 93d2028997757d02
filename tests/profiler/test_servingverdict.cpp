// The serving verdict on load tests whose breakdown puts the time in one place each: the bound it
// names, the point it judges, and the flag changes it proposes (the ones `apply` runs).
#include <gtest/gtest.h>

#include "profiler/verdict/servingverdict.h"

namespace trainbench::profiler {
namespace {

LoadTestPoint point(int64_t index, double qps, double queue, double batch, double compute, double serialise, double rest) {
    LoadTestPoint p;
    p.point = index;
    p.scenario = "concurrency";
    p.concurrency = 4;
    p.queries = 500;
    p.achieved_qps = qps;
    p.p50_ms = queue + batch + compute + serialise + rest;
    p.p99_ms = 2 * *p.p50_ms;
    p.queue_ms = queue;
    p.batch_ms = batch;
    p.compute_ms = compute;
    p.serialize_ms = serialise;
    p.network_ms = rest;
    return p;
}

ServedSettings server(const std::string& precision = "fp32") {
    ServedSettings s;
    s.precision = precision;
    s.enable_batching = true;
    s.max_batch_size = 1000;
    s.batch_timeout_micros = 0;
    s.num_batch_threads = 2;
    s.instances = 2;
    s.threads_per_instance = 1;
    s.param_count = 100'000;
    s.host_cores = 2;
    return s;
}

const FlagChange* change(const ServingAction& a, const std::string& flag) {
    for (const FlagChange& c : a.changes)
        if (c.flag == flag) return &c;
    return nullptr;
}

TEST(ServingVerdict, AClientBoundPointOutranksEverythingAndAsksForClientThreads) {
    std::vector<LoadTestPoint> points = {point(0, 100, 5, 0, 1, 0.1, 0.1), point(1, 900, 0.1, 0, 1, 0.1, 0.1)};
    points[1].client_bound = true;
    const ServingVerdict v = classifyServing(points, server());
    EXPECT_EQ(v.bound, ServingBound::Client);
    EXPECT_EQ(v.point, 1);
    ASSERT_FALSE(v.actions.empty());
    ASSERT_NE(change(v.actions[0], "--client-threads"), nullptr);
    EXPECT_EQ(change(v.actions[0], "--client-threads")->to, "2");
}

TEST(ServingVerdict, ALongBatchTimeoutThatMakesUpTheWaitIsShortened) {
    ServedSettings s = server();
    s.batch_timeout_micros = 8000;
    const ServingVerdict v = classifyServing({point(0, 200, 7.5, 0.2, 1.0, 0.2, 0.3)}, s);
    EXPECT_EQ(v.bound, ServingBound::Queue);
    EXPECT_EQ(v.severity, Severity::High);
    ASSERT_FALSE(v.actions.empty());
    const FlagChange* c = change(v.actions[0], "--batch-timeout-micros");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->from, "8000");
    EXPECT_EQ(c->to, "2000");
}

TEST(ServingVerdict, WaitingForTooFewInstancesAsksForOnePerCore) {
    ServedSettings s = server();
    s.num_batch_threads = 1;
    s.instances = 1;
    s.host_cores = 4;
    const ServingVerdict v = classifyServing({point(0, 300, 3.0, 0.1, 1.0, 0.2, 0.3)}, s);
    EXPECT_EQ(v.bound, ServingBound::Queue);
    EXPECT_NE(v.summary.find("batch thread"), std::string::npos) << v.summary;
    ASSERT_FALSE(v.actions.empty());
    ASSERT_NE(change(v.actions[0], "--instances"), nullptr);
    EXPECT_EQ(change(v.actions[0], "--instances")->to, "4");
}

TEST(ServingVerdict, JsonThatCostsMoreThanTheModelIsSerialisationBound) {
    const ServingVerdict v = classifyServing({point(0, 800, 0.1, 0.05, 0.2, 0.6, 0.3)}, server());
    EXPECT_EQ(v.bound, ServingBound::Serialisation);
    ASSERT_FALSE(v.actions.empty());
    EXPECT_NE(change(v.actions[0], "--request-threads"), nullptr);
}

TEST(ServingVerdict, ComputeWithoutBatchingIsUnderBatchedAndBatchingIsTheAction) {
    ServedSettings s = server();
    s.enable_batching = false;
    const ServingVerdict v = classifyServing({point(0, 500, 0.2, 0.05, 2.0, 0.2, 0.3)}, s);
    EXPECT_EQ(v.bound, ServingBound::UnderBatched);
    ASSERT_FALSE(v.actions.empty());
    EXPECT_EQ(change(v.actions[0], "--enable-batching")->to, "true");
    EXPECT_EQ(change(v.actions[0], "--batch-timeout-micros")->to, "1000");
}

TEST(ServingVerdict, BigFp32WeightsAtSmallBatchesAreMemoryBoundAndInt8IsTheAction) {
    ServedSettings s = server();
    s.param_count = 3'000'000;  // 12 MB of fp32 weights
    LoadTestPoint p = point(0, 150, 0.2, 0.05, 3.0, 0.2, 0.3);
    p.concurrency = 1;
    const ServingVerdict v = classifyServing({p}, s);
    EXPECT_EQ(v.bound, ServingBound::Memory);
    ASSERT_FALSE(v.actions.empty());
    EXPECT_EQ(change(v.actions[0], "--precision")->to, "int8");
}

TEST(ServingVerdict, ASmallModelsComputeIsComputeBoundAndInt8ThenInstancesAreOffered) {
    ServedSettings s = server();
    s.instances = 1;
    s.num_batch_threads = 1;
    const ServingVerdict v = classifyServing({point(0, 150, 0.2, 0.05, 3.0, 0.2, 0.3)}, s);
    EXPECT_EQ(v.bound, ServingBound::Compute);
    ASSERT_EQ(v.actions.size(), 2u);
    EXPECT_NE(change(v.actions[0], "--precision"), nullptr);
    EXPECT_NE(change(v.actions[1], "--instances"), nullptr);
    const ServingVerdict int8 = classifyServing({point(0, 150, 0.2, 0.05, 3.0, 0.2, 0.3)}, server("int8"));
    for (const ServingAction& a : int8.actions) EXPECT_EQ(change(a, "--precision"), nullptr) << "already int8";
}

TEST(ServingVerdict, ThePointJudgedIsTheHighestQpsWithoutErrors) {
    std::vector<LoadTestPoint> points = {point(0, 100, 0.1, 0, 1, 0.1, 0.1), point(1, 400, 0.1, 0, 1, 0.1, 0.1),
                                         point(2, 500, 0.1, 0, 1, 0.1, 0.1)};
    points[2].errors = 3;
    EXPECT_EQ(classifyServing(points, server()).point, 1);
}

TEST(ServingVerdict, AServerWithoutItsOwnTimingGetsNoBoundAndNoServerActions) {
    LoadTestPoint p = point(0, 100, 0, 0, 0, 0, 1);
    p.queue_ms = p.batch_ms = p.compute_ms = p.serialize_ms = std::nullopt;
    const ServingVerdict v = classifyServing({p}, ServedSettings{});
    EXPECT_EQ(v.bound, ServingBound::Balanced);
    EXPECT_TRUE(v.actions.empty());
    EXPECT_NE(v.summary.find("no timing"), std::string::npos) << v.summary;
}

}  // namespace
}  // namespace trainbench::profiler
