// The dynamic batcher on its own: requests that arrive while the batch threads are busy run
// together; batch_timeout_micros holds an underfull batch; allowed_batch_sizes pads; a full
// queue refuses at once; answers are the model's, request by request.
#include <gtest/gtest.h>

#include <future>

#include "engine/serving/batchscheduler.h"
#include "tests/engine/becomestrue.h"
#include "tests/engine/serving/denseservable.h"

namespace trainbench::engine::serving {
namespace {

using trainbench::testing::becomesTrue;
using namespace std::chrono_literals;

struct Done {
    std::promise<std::unique_ptr<BatchTask>> promise;
    std::future<std::unique_ptr<BatchTask>> future = promise.get_future();
};

std::unique_ptr<BatchTask> task(float first, Done& done, int64_t size = 1) {
    auto t = std::make_unique<BatchTask>();
    t->size = size;
    for (int64_t e = 0; e < size; ++e)
        for (float v : {first + e, 1.0f, -2.0f, 0.5f}) t->input.push_back(v);
    t->done = [&done](std::unique_ptr<BatchTask> finished) { done.promise.set_value(std::move(finished)); };
    return t;
}

BatchingParameters params(int64_t maxBatch, int64_t threads, int64_t queue, int64_t timeout = 0) {
    BatchingParameters p;
    p.max_batch_size = maxBatch;
    p.num_batch_threads = threads;
    p.max_enqueued_batches = queue;
    p.batch_timeout_micros = timeout;
    return p;
}

void expectAnswers(const BatchTask& t) {
    ASSERT_EQ(t.error, "");
    const std::vector<double> want = test::expectedDense(t.input, 4, 3);
    ASSERT_EQ(t.output.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.output[i], want[i], 1e-5) << i;
}

TEST(BatchScheduler, RequestsArrivingWhileTheThreadIsBusyRunAsOneBatch) {
    auto gate = std::make_shared<test::Gate>();
    std::vector<std::tuple<int64_t, int64_t>> batches;
    std::mutex m;
    BatchScheduler s(test::denseServable({4}, 3, {}, gate), params(8, 1, 4), 1, [&](int64_t n, int64_t padded, int64_t) {
        std::lock_guard lock(m);
        batches.emplace_back(n, padded);
    });
    Done first;
    auto t = task(0, first);
    ASSERT_EQ(s.schedule(t), BatchScheduler::Admission::Accepted);
    ASSERT_TRUE(becomesTrue([&] { return gate->entered() == 1; }, 10s)) << "the first request runs alone";
    std::vector<Done> rest(5);
    for (size_t i = 0; i < rest.size(); ++i) {
        auto r = task(float(i + 1), rest[i]);
        ASSERT_EQ(s.schedule(r), BatchScheduler::Admission::Accepted);
    }
    EXPECT_EQ(s.enqueuedBatches(), 1);
    EXPECT_EQ(s.enqueuedTasks(), 5);
    gate->open();
    expectAnswers(*first.future.get());
    for (auto& d : rest) {
        auto t2 = d.future.get();
        expectAnswers(*t2);
        EXPECT_EQ(t2->batchExamples, 5);
    }
    std::lock_guard lock(m);
    EXPECT_EQ(batches, (std::vector<std::tuple<int64_t, int64_t>>{{1, 1}, {5, 5}}));
}

// enable_batching off (TF Serving's server flag): the same requests as above each run alone, and
// the queue counts requests, refusing the one past max_enqueued_batches at once.
TEST(BatchScheduler, WithoutBatchingEveryRequestRunsAloneAndTheQueueCountsRequests) {
    auto gate = std::make_shared<test::Gate>();
    std::vector<std::tuple<int64_t, int64_t>> batches;
    std::mutex m;
    BatchingParameters p = params(8, 1, 4);
    p.enable_batching = false;
    BatchScheduler s(test::denseServable({4}, 3, {}, gate), p, 1, [&](int64_t n, int64_t padded, int64_t) {
        std::lock_guard lock(m);
        batches.emplace_back(n, padded);
    });
    Done first;
    auto t = task(0, first);
    ASSERT_EQ(s.schedule(t), BatchScheduler::Admission::Accepted);
    ASSERT_TRUE(becomesTrue([&] { return gate->entered() == 1; }, 10s));
    std::vector<Done> rest(4);
    for (size_t i = 0; i < rest.size(); ++i) {
        auto r = task(float(i + 1), rest[i], i == 3 ? 2 : 1);
        ASSERT_EQ(s.schedule(r), BatchScheduler::Admission::Accepted) << i;
    }
    EXPECT_EQ(s.enqueuedBatches(), 4);
    Done refused;
    auto over = task(9, refused);
    EXPECT_EQ(s.schedule(over), BatchScheduler::Admission::QueueFull);
    ASSERT_NE(over, nullptr) << "a refused task stays with the caller";
    gate->open();
    expectAnswers(*first.future.get());
    for (auto& d : rest) {
        auto t2 = d.future.get();
        expectAnswers(*t2);
        EXPECT_EQ(t2->batchExamples, t2->size);
    }
    std::lock_guard lock(m);
    EXPECT_EQ(batches, (std::vector<std::tuple<int64_t, int64_t>>{{1, 1}, {1, 1}, {1, 1}, {1, 1}, {2, 2}}));
}

TEST(BatchScheduler, AFullQueueRefusesAtOnceAndAnOversizedRequestIsRefused) {
    auto gate = std::make_shared<test::Gate>();
    BatchScheduler s(test::denseServable({4}, 3, {}, gate), params(2, 1, 1), 1, nullptr);
    Done a, b, c, d;
    auto ta = task(0, a);
    ASSERT_EQ(s.schedule(ta), BatchScheduler::Admission::Accepted);
    ASSERT_TRUE(becomesTrue([&] { return gate->entered() == 1; }, 10s));
    auto tb = task(1, b, 2);  // fills the one batch the queue may hold
    ASSERT_EQ(s.schedule(tb), BatchScheduler::Admission::Accepted);
    auto tc = task(2, c);
    EXPECT_EQ(s.schedule(tc), BatchScheduler::Admission::QueueFull);
    ASSERT_TRUE(tc) << "a refused task stays with the caller";
    auto td = task(3, d, 3);
    EXPECT_EQ(s.schedule(td), BatchScheduler::Admission::TooLarge);
    gate->open();
    expectAnswers(*a.future.get());
    expectAnswers(*b.future.get());
}

TEST(BatchScheduler, ATimeoutHoldsAnUnderfullBatchForLaterRequests) {
    std::vector<int64_t> sizes;
    std::mutex m;
    // 2 s: far longer than scheduling three requests takes, even on a loaded machine.
    BatchScheduler s(test::denseServable(), params(3, 1, 4, 2'000'000), 1, [&](int64_t n, int64_t, int64_t) {
        std::lock_guard lock(m);
        sizes.push_back(n);
    });
    std::vector<Done> done(3);
    for (size_t i = 0; i < done.size(); ++i) {
        auto t = task(float(i), done[i]);
        ASSERT_EQ(s.schedule(t), BatchScheduler::Admission::Accepted);
    }
    for (auto& d : done) expectAnswers(*d.future.get());
    {
        std::lock_guard lock(m);
        EXPECT_EQ(sizes, std::vector<int64_t>{3}) << "the batch went when full, not at its timeout";
    }

    Done lone;
    const auto start = std::chrono::steady_clock::now();
    auto t = task(9, lone);
    ASSERT_EQ(s.schedule(t), BatchScheduler::Admission::Accepted);
    auto finished = lone.future.get();
    EXPECT_GE(std::chrono::steady_clock::now() - start, 2s) << "an underfull batch waits for its timeout";
    EXPECT_GE(finished->queueMicros, 2'000'000);
}

TEST(BatchScheduler, AllowedBatchSizesPadWithCopiesOfTheFirstExample) {
    auto gate = std::make_shared<test::Gate>();
    BatchingParameters p = params(8, 1, 4);
    p.allowed_batch_sizes = {2, 4, 8};
    ASSERT_EQ(p.validate(), "");
    std::vector<std::tuple<int64_t, int64_t>> batches;
    std::mutex m;
    BatchScheduler s(test::denseServable({4}, 3, {}, gate), p, 1, [&](int64_t n, int64_t padded, int64_t) {
        std::lock_guard lock(m);
        batches.emplace_back(n, padded);
    });
    Done first;
    auto t = task(0, first);
    ASSERT_EQ(s.schedule(t), BatchScheduler::Admission::Accepted);
    ASSERT_TRUE(becomesTrue([&] { return gate->entered() == 1; }, 10s));
    std::vector<Done> rest(3);
    for (size_t i = 0; i < rest.size(); ++i) {
        auto r = task(float(i + 5), rest[i], i == 0 ? 2 : 1);  // 4 examples in 3 requests... plus one: 5 → 8
        ASSERT_EQ(s.schedule(r), BatchScheduler::Admission::Accepted);
    }
    gate->open();
    expectAnswers(*first.future.get());
    for (auto& d : rest) {
        auto r = d.future.get();
        expectAnswers(*r);
        EXPECT_EQ(r->batchPadded, 4);
    }
    std::lock_guard lock(m);
    EXPECT_EQ(batches, (std::vector<std::tuple<int64_t, int64_t>>{{1, 2}, {4, 4}}));
}

TEST(BatchingParameters, DefaultsAreTfServingsAndBadValuesAreNamed) {
    const BatchingParameters p;
    EXPECT_EQ(p.max_batch_size, 1000);
    EXPECT_EQ(p.batch_timeout_micros, 0);
    EXPECT_EQ(p.max_enqueued_batches, 10);
    EXPECT_EQ(p.resolved().num_batch_threads, static_cast<int64_t>(std::thread::hardware_concurrency()));
    BatchingParameters bad = p;
    bad.allowed_batch_sizes = {8, 4, 1000};
    EXPECT_EQ(bad.validate(), "allowed_batch_sizes[1] is 4, expected more than 8 (the sizes must increase)");
    bad.allowed_batch_sizes = {8, 512};
    EXPECT_EQ(bad.validate(), "allowed_batch_sizes ends with 512, expected max_batch_size (1000)");
    bad = p;
    bad.max_batch_size = 0;
    EXPECT_EQ(bad.validate(), "max_batch_size is 0, expected 1 to 65536");
}

}  // namespace
}  // namespace trainbench::engine::serving
