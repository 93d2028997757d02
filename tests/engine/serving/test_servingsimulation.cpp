// The dynamic batcher on a virtual clock against queueing theory and against the batching policy's
// own rules: M/D/1 waiting time (Pollaczek-Khinchine), the timeout a lone query waits, full batches
// under load, refusals and the capacity an overloaded server still delivers, padding.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "engine/serving/servingsimulation.h"

namespace trainbench::engine::serving {
namespace {

ServingSimulation base(double qps, double serviceSeconds) {
    ServingSimulation s;
    s.qps = qps;
    s.queries = 200000;
    s.batching.max_batch_size = 1;
    s.batching.batch_timeout_micros = 0;
    s.batching.max_enqueued_batches = 1000000;
    s.batchSeconds = [serviceSeconds](int64_t) { return serviceSeconds; };
    return s;
}

TEST(ServingSimulation, UnbatchedServingWaitsAsAnMD1QueueDoes) {
    // M/D/1: mean wait in queue W = rho * D / (2 (1 - rho)) (Pollaczek-Khinchine with a deterministic
    // service time D); at rho = 0.5, D = 1 ms: W = 0.5 ms, mean latency 1.5 ms.
    for (const double rho : {0.3, 0.5, 0.8}) {
        const double d = 1e-3;
        const ServingSimResult r = simulateServing(base(rho / d, d));
        const double expected = rho * d / (2 * (1 - rho)) + d;
        EXPECT_NEAR(r.mean, expected, 0.02 * expected) << "rho " << rho;
        EXPECT_NEAR(r.utilisation, rho, 0.01) << "rho " << rho;
        EXPECT_EQ(r.refused, 0);
        EXPECT_DOUBLE_EQ(r.mean_batch, 1.0);
        EXPECT_GE(r.p99, r.p90);
        EXPECT_GE(r.p90, r.p50);
        EXPECT_GE(r.p50, d);
    }
}

TEST(ServingSimulation, ALoneQueryWaitsTheBatchTimeoutThenRuns) {
    // 1 query/s against a 5 ms timeout: nearly every batch holds one query that waited the timeout.
    ServingSimulation s = base(1.0, 2e-3);
    s.queries = 2000;
    s.batching.max_batch_size = 32;
    s.batching.batch_timeout_micros = 5000;
    const ServingSimResult r = simulateServing(s);
    EXPECT_NEAR(r.p50, 7e-3, 1e-9);
    EXPECT_LT(r.mean_batch, 1.02);
    // With no timeout a free instance takes the query at once.
    s.batching.batch_timeout_micros = 0;
    EXPECT_NEAR(simulateServing(s).p50, 2e-3, 1e-9);
}

TEST(ServingSimulation, UnderLoadBatchesFillAndBatchingRaisesCapacity) {
    // A batch costs 1 ms + 0.1 ms per example: one at a time serves 909/s at most, batches of 32 up to
    // 7,619/s. At 3,000 qps the unbatched server is overloaded and refuses; the batching one is not.
    ServingSimulation s = base(3000, 0);
    s.queries = 60000;
    s.batching.max_enqueued_batches = 64;
    s.batchSeconds = [](int64_t n) { return 1e-3 + 1e-4 * static_cast<double>(n); };
    const ServingSimResult single = simulateServing(s);
    EXPECT_GT(single.refused, 0);
    // Overloaded, it still delivers its capacity.
    EXPECT_NEAR(single.achieved_qps, 1 / 1.1e-3, 0.03 / 1.1e-3);
    s.batching.max_batch_size = 32;
    s.batching.batch_timeout_micros = 2000;
    const ServingSimResult batched = simulateServing(s);
    EXPECT_EQ(batched.refused, 0);
    EXPECT_GT(batched.mean_batch, 3.0);
    EXPECT_NEAR(batched.achieved_qps, 3000, 0.03 * 3000);
    EXPECT_LT(batched.p99, 20e-3);
}

TEST(ServingSimulation, FullBatchesRunAtOnceWithoutWaitingForTheTimeout) {
    ServingSimulation s = base(100000, 0);
    s.queries = 8000;
    s.batching.max_batch_size = 8;
    s.batching.batch_timeout_micros = 1000000;  // 1 s: only full batches can run before it
    s.batchSeconds = [](int64_t n) { return 1e-5 * static_cast<double>(n); };
    const ServingSimResult r = simulateServing(s);
    EXPECT_DOUBLE_EQ(r.mean_batch, 8.0);
    EXPECT_LT(r.p99, 1e-3);
}

TEST(ServingSimulation, AFullBatchStartsWhenItsLastQueryArrives) {
    // 10,000 qps into batches of 8 that take 8 us: the model is idle most of the time, and a query
    // waits for the ones after it to fill its batch — on average 3.5 gaps of 100 us — then 8 us.
    ServingSimulation s = base(10000, 0);
    s.queries = 80000;
    s.batching.max_batch_size = 8;
    s.batching.batch_timeout_micros = 1000000;
    s.batchSeconds = [](int64_t n) { return 1e-6 * static_cast<double>(n); };
    const ServingSimResult r = simulateServing(s);
    EXPECT_NEAR(r.mean, 3.5e-4 + 8e-6, 0.03 * 3.5e-4);
    EXPECT_GE(r.p50, 8e-6);  // no answer before its question
}

TEST(ServingSimulation, BatchesRunAtTheirPaddedSize) {
    ServingSimulation s = base(1.0, 0);
    s.queries = 200;
    s.batching.max_batch_size = 8;
    s.batching.allowed_batch_sizes = {4, 8};
    std::set<int64_t> seen;
    s.batchSeconds = [&seen](int64_t n) {
        seen.insert(n);
        return 1e-3;
    };
    simulateServing(s);
    EXPECT_EQ(seen, (std::set<int64_t>{4}));
}

TEST(ServingSimulation, MoreInstancesShareTheLoad) {
    ServingSimulation s = base(1500, 1e-3);  // rho 1.5 on one instance
    s.batching.max_enqueued_batches = 100;
    s.queries = 50000;
    EXPECT_GT(simulateServing(s).refused, 0);
    s.instances = 2;
    const ServingSimResult two = simulateServing(s);
    EXPECT_EQ(two.refused, 0);
    EXPECT_NEAR(two.utilisation, 0.75, 0.02);
}

TEST(ServingSimulation, AConfigurationThatCannotRunIsRefused) {
    ServingSimulation s = base(10, 1e-3);
    s.instances = 0;
    EXPECT_THROW(simulateServing(s), std::invalid_argument);
    s = base(0, 1e-3);
    EXPECT_THROW(simulateServing(s), std::invalid_argument);
    s = base(10, 1e-3);
    s.batching.max_batch_size = 0;
    EXPECT_THROW(simulateServing(s), std::invalid_argument);
    s = base(10, 1e-3);
    s.batchSeconds = nullptr;
    EXPECT_THROW(simulateServing(s), std::invalid_argument);
}

}  // namespace
}  // namespace trainbench::engine::serving
