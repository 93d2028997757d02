// The engine's instrumentation: step phases, trace zones and counters in per-thread buffers, and
// per-op statistics. Timing checks compare with clocks read around the code, never with fixed
// durations, so a slow or loaded machine cannot fail them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "engine/instrument/instrument.h"
#include "engine/instrument/opstats.h"

namespace trainbench::engine::prof {
namespace {

// Busy for at least `ns` on the steady clock.
void spin(int64_t ns) {
    const int64_t until = nowNs() + ns;
    while (nowNs() < until) {
    }
}

double seconds(int64_t ns) { return static_cast<double>(ns) * 1e-9; }

// One thread's events, as a drain hands them over.
struct Batch {
    TraceThread thread;
    std::vector<TraceEvent> events;
};

class CollectingSink : public TraceSink {
public:
    void events(const TraceThread& thread, std::span<const TraceEvent> events) override {
        batches.push_back({thread, {events.begin(), events.end()}});
    }
    // Everything drained for one thread index, in drain order.
    std::vector<TraceEvent> of(int index) const {
        std::vector<TraceEvent> all;
        for (const Batch& b : batches)
            if (b.thread.index == index) all.insert(all.end(), b.events.begin(), b.events.end());
        return all;
    }
    uint64_t droppedOf(int index) const {
        uint64_t n = 0;
        for (const Batch& b : batches)
            if (b.thread.index == index) n += b.thread.dropped;
        return n;
    }
    const Batch* named(const std::string& name) const {
        for (const Batch& b : batches)
            if (b.thread.name == name) return &b;
        return nullptr;
    }
    std::vector<Batch> batches;
};

class NullSink : public TraceSink {
public:
    void events(const TraceThread&, std::span<const TraceEvent>) override {}
};

// The thread index the calling thread records under (records one counter to find out).
int thisThreadIndex() {
    static constexpr ZoneSite probe{"probe", "test"};
    NullSink discard;
    drainTrace(discard);
    setTracing(true);
    counter(&probe, 0.0);
    setTracing(false);
    CollectingSink sink;
    drainTrace(sink);
    for (const Batch& b : sink.batches)
        for (const TraceEvent& e : b.events)
            if (e.site == &probe) return b.thread.index;
    ADD_FAILURE() << "the probe counter was not drained";
    return -1;
}

// Tracing is process-wide: each test starts and ends with it off and the buffers empty.
class TraceTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!kEnabled) GTEST_SKIP() << "built with TRAINBENCH_PROFILING=OFF";
        setTracing(false);
        NullSink discard;
        drainTrace(discard);
    }
    void TearDown() override {
        setTracing(false);
        NullSink discard;
        drainTrace(discard);
    }
};

// ---------------------------------------------------------------------------------------------
// Phases

class Phases : public ::testing::Test {
protected:
    void SetUp() override {
        if (!kEnabled) GTEST_SKIP() << "built with TRAINBENCH_PROFILING=OFF";
    }
};

TEST_F(Phases, NestedScopeChargesTheInnerPhaseOnly) {
    resetPhases();
    int64_t inner = 0;
    const int64_t o0 = nowNs();
    {
        PhaseScope forward(Phase::Forward);
        spin(2'000'000);
        {
            PhaseScope comm(Phase::Communication);
            const int64_t i0 = nowNs();
            spin(5'000'000);
            inner = nowNs() - i0;
        }
        spin(2'000'000);
    }
    const int64_t outer = nowNs() - o0;
    const PhaseTimes t = takePhases();
    // Communication holds at least the time measured inside its scope; Forward at most the outer
    // scope minus that: had the outer phase been charged for the inner one, it would hold it all.
    EXPECT_GE(t[Phase::Communication], seconds(inner));
    EXPECT_GE(t[Phase::Forward], seconds(4'000'000));
    EXPECT_LE(t[Phase::Forward], seconds(outer - inner));
    EXPECT_EQ(t[Phase::Backward], 0.0);
    EXPECT_EQ(t[Phase::Input], 0.0);
}

TEST_F(Phases, SumOfPhasesIsTheTimeBetweenTakes) {
    takePhases();
    const int64_t outside0 = nowNs();
    takePhases();  // starts the interval
    const int64_t inside0 = nowNs();
    {
        PhaseScope input(Phase::Input);
        spin(1'000'000);
    }
    spin(500'000);  // in phase Other
    {
        PhaseScope opt(Phase::Optimizer);
        spin(1'000'000);
        PhaseScope ckpt(Phase::Checkpoint);
        spin(1'000'000);
    }
    const int64_t inside1 = nowNs();
    const PhaseTimes t = takePhases();
    const int64_t outside1 = nowNs();
    EXPECT_GE(t.total(), seconds(inside1 - inside0) - 1e-9);
    EXPECT_LE(t.total(), seconds(outside1 - outside0) + 1e-9);
    EXPECT_GE(t[Phase::Other], seconds(500'000));
    EXPECT_GE(t[Phase::Input], seconds(1'000'000));
    EXPECT_GE(t[Phase::Optimizer], seconds(1'000'000));
    EXPECT_GE(t[Phase::Checkpoint], seconds(1'000'000));
}

TEST_F(Phases, TakeStartsAFreshInterval) {
    PhaseScope fwd(Phase::Forward);
    spin(2'000'000);
    const int64_t before = nowNs();
    takePhases();  // inside the scope: Forward is charged up to now and goes on from here
    const int64_t t0 = nowNs();
    spin(1'000'000);
    const int64_t t1 = nowNs();
    const PhaseTimes t = takePhases();
    const int64_t after = nowNs();
    EXPECT_GE(t[Phase::Forward], seconds(t1 - t0));
    EXPECT_LE(t.total(), seconds(after - before) + 1e-9);  // none of the 2 ms before the first take
    EXPECT_EQ(t.total(), t[Phase::Forward]);
}

TEST_F(Phases, FreshThreadStartsInOtherAndPhasesArePerThread) {
    resetPhases();
    PhaseTimes theirs;
    std::thread t([&] {
        EXPECT_EQ(takePhases().total(), 0.0);  // first take: nothing yet, starts the clock
        spin(1'000'000);
        PhaseScope bwd(Phase::Backward);
        spin(1'000'000);
        theirs = takePhases();
    });
    t.join();
    EXPECT_GE(theirs[Phase::Other], seconds(1'000'000));
    EXPECT_GE(theirs[Phase::Backward], seconds(1'000'000));
    const PhaseTimes mine = takePhases();
    EXPECT_EQ(mine[Phase::Backward], 0.0);  // the other thread's phases are not this one's
}

TEST(PhaseNames, AreTheBreakdownCategories) {
    EXPECT_STREQ(phaseName(Phase::Input), "input");
    EXPECT_STREQ(phaseName(Phase::Communication), "communication");
    EXPECT_STREQ(phaseName(Phase::Other), "other");
    PhaseTimes a, b;
    a[Phase::Forward] = 1.0;
    b[Phase::Forward] = 2.0;
    b[Phase::Other] = 0.5;
    a += b;
    EXPECT_DOUBLE_EQ(a[Phase::Forward], 3.0);
    EXPECT_DOUBLE_EQ(a.total(), 3.5);
}

// ---------------------------------------------------------------------------------------------
// Zones and counters

TEST_F(TraceTest, ZonesAreRecordedOnlyWhileTracing) {
    static constexpr ZoneSite before{"before", "test"}, during{"during", "test"}, after{"after", "test"};
    const int me = thisThreadIndex();
    { ZoneScope z(&before); }
    setTracing(true);
    EXPECT_TRUE(tracing());
    { ZoneScope z(&during); }
    setTracing(false);
    { ZoneScope z(&after); }
    counter(&after, 1.0);
    CollectingSink sink;
    drainTrace(sink);
    const std::vector<TraceEvent> events = sink.of(me);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].site, &during);
}

TEST_F(TraceTest, DrainHandsOverEventsInEndOrderWithTheThreadsName) {
    std::vector<TraceEvent> events;
    TraceThread info;
    std::thread t([&] {
        setThreadName("instrument test");
        setTracing(true);
        {
            TB_ZONE_ARG("step", "step", 7);
            {
                TB_ZONE("test", "first");
                spin(100'000);
            }
            {
                TB_ZONE("test", "second");
                spin(100'000);
            }
        }
        setTracing(false);
    });
    t.join();
    CollectingSink sink;
    drainTrace(sink);
    const Batch* b = sink.named("instrument test");
    ASSERT_NE(b, nullptr);
    ASSERT_EQ(b->events.size(), 3u);
    const TraceEvent& first = b->events[0];
    const TraceEvent& second = b->events[1];
    const TraceEvent& step = b->events[2];
    EXPECT_STREQ(first.site->name, "first");
    EXPECT_STREQ(second.site->name, "second");
    EXPECT_STREQ(step.site->name, "step");
    EXPECT_STREQ(step.site->category, "step");
    EXPECT_EQ(step.value, 7.0);
    EXPECT_TRUE(std::isnan(first.value));
    for (const TraceEvent& e : b->events) {
        EXPECT_EQ(e.kind, TraceEvent::Kind::Zone);
        EXPECT_LE(e.begin_ns, e.end_ns);
    }
    EXPECT_LE(step.begin_ns, first.begin_ns);
    EXPECT_LE(first.end_ns, second.begin_ns);
    EXPECT_LE(second.end_ns, step.end_ns);
    EXPECT_EQ(b->thread.dropped, 0u);

    CollectingSink again;
    drainTrace(again);
    EXPECT_EQ(again.named("instrument test"), nullptr);  // drained once
}

TEST_F(TraceTest, PhaseMacroRecordsAZoneOfThePhasesName) {
    const int me = thisThreadIndex();
    setTracing(true);
    {
        TB_PHASE(Backward);
        spin(10'000);
    }
    setTracing(false);
    CollectingSink sink;
    drainTrace(sink);
    const std::vector<TraceEvent> events = sink.of(me);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_STREQ(events[0].site->name, "backward");
    EXPECT_STREQ(events[0].site->category, "phase");
}

TEST_F(TraceTest, EventsOfSeveralThreadsKeepTheirThreads) {
    static constexpr ZoneSite work{"work", "test"};
    constexpr int kThreads = 4;
    setTracing(true);
    std::vector<std::thread> threads;
    for (int k = 0; k < kThreads; ++k) {
        threads.emplace_back([k] {
            setThreadName("worker " + std::to_string(k));
            for (int i = 0; i <= k; ++i) {
                ZoneScope z(&work, k * 100 + i);
            }
        });
    }
    for (std::thread& t : threads) t.join();  // their events outlive them until drained
    setTracing(false);
    CollectingSink sink;
    drainTrace(sink);
    std::map<int, std::string> indexOf;
    for (int k = 0; k < kThreads; ++k) {
        const Batch* b = sink.named("worker " + std::to_string(k));
        ASSERT_NE(b, nullptr) << k;
        EXPECT_TRUE(indexOf.emplace(b->thread.index, b->thread.name).second) << "two threads share an index";
        ASSERT_EQ(b->events.size(), static_cast<size_t>(k + 1));
        for (int i = 0; i <= k; ++i) EXPECT_EQ(b->events[static_cast<size_t>(i)].value, k * 100 + i);
    }
}

TEST_F(TraceTest, DrainWhileAnotherThreadRecordsLosesNothingUncounted) {
    static constexpr ZoneSite tick{"tick", "test"};
    constexpr int kEvents = 300'000;  // several times a buffer
    std::atomic<bool> done{false};
    int index = -1;
    setTracing(true);
    std::thread t([&] {
        setThreadName("instrument producer");
        for (int i = 0; i < kEvents; ++i) counter(&tick, i);
        done = true;
    });
    CollectingSink sink;
    while (!done) {
        drainTrace(sink);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    t.join();
    setTracing(false);
    drainTrace(sink);
    const Batch* b = sink.named("instrument producer");
    ASSERT_NE(b, nullptr);
    index = b->thread.index;
    const std::vector<TraceEvent> events = sink.of(index);
    EXPECT_EQ(events.size() + sink.droppedOf(index), static_cast<size_t>(kEvents));
    for (size_t i = 1; i < events.size(); ++i) ASSERT_LT(events[i - 1].value, events[i].value) << i;
}

TEST_F(TraceTest, AFullBufferDropsAndCountsOnce) {
    static constexpr ZoneSite fill{"fill", "test"};
    constexpr size_t kOver = 100;
    setTracing(true);
    std::thread t([&] {
        setThreadName("instrument overflow");
        for (size_t i = 0; i < kTraceBufferEvents + kOver; ++i) counter(&fill, static_cast<double>(i));
    });
    t.join();
    CollectingSink sink;
    drainTrace(sink);
    const Batch* b = sink.named("instrument overflow");
    ASSERT_NE(b, nullptr);
    ASSERT_EQ(b->events.size(), kTraceBufferEvents);
    EXPECT_EQ(b->thread.dropped, kOver);
    EXPECT_EQ(b->events.front().value, 0.0);  // the first ones are kept, the late ones dropped
    EXPECT_EQ(b->events.back().value, static_cast<double>(kTraceBufferEvents - 1));

    CollectingSink again;
    drainTrace(again);
    EXPECT_EQ(again.named("instrument overflow"), nullptr);  // the drops were reported, once
    setTracing(false);
}

TEST_F(TraceTest, CountersAreSamplesWithTheirValue) {
    static constexpr ZoneSite queue{"queue fill", "pipeline"};
    const int me = thisThreadIndex();
    setTracing(true);
    const int64_t t0 = nowNs();
    counter(&queue, 3.5);
    counter(&queue, -1.0);
    const int64_t t1 = nowNs();
    setTracing(false);
    CollectingSink sink;
    drainTrace(sink);
    const std::vector<TraceEvent> events = sink.of(me);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].kind, TraceEvent::Kind::Counter);
    EXPECT_EQ(events[0].site, &queue);
    EXPECT_EQ(events[0].value, 3.5);
    EXPECT_EQ(events[1].value, -1.0);
    EXPECT_EQ(events[0].begin_ns, events[0].end_ns);
    EXPECT_GE(events[0].begin_ns, t0);
    EXPECT_LE(events[1].begin_ns, t1);
}

// ---------------------------------------------------------------------------------------------
// Op statistics

TEST_F(TraceTest, OpTimerCountsCallsAndTimeAndIsAZoneWhileTracing) {
    OpStats stats;
    OpStat* op = stats.add({"inner_product_forward", "src 2x3, weights 4x3, dst 2x4", 48.0, 80.0});
    const int me = thisThreadIndex();
    int64_t inside = 0;
    const int64_t o0 = nowNs();
    for (int i = 0; i < 3; ++i) {
        const int64_t i0 = nowNs();
        {
            OpTimer timer(op);
            spin(200'000);
        }
        inside += nowNs() - i0;
        if (i == 1) setTracing(true);  // the third call only is traced
    }
    const int64_t outer = nowNs() - o0;
    setTracing(false);
    { OpTimer nothing(nullptr); }
    EXPECT_EQ(op->calls(), 3);
    EXPECT_GE(op->nanoseconds(), 3 * 200'000);
    EXPECT_LE(op->nanoseconds(), inside);
    EXPECT_LE(inside, outer);

    CollectingSink sink;
    drainTrace(sink);
    const std::vector<TraceEvent> events = sink.of(me);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].site, op->site());
    EXPECT_STREQ(events[0].site->name, "inner_product_forward src 2x3, weights 4x3, dst 2x4");
    EXPECT_STREQ(events[0].site->category, "op");
    EXPECT_GE(events[0].end_ns - events[0].begin_ns, 200'000);
}

TEST(OpStatsSnapshot, SumsByKindAndShapeInOrderOfRegistration) {
    OpStats stats;
    OpStat* a = stats.add({"convolution_forward", "src 8x1x28x28", 100.0, 10.0});
    OpStat* b = stats.add({"eltwise_relu_forward", "8x32", 256.0, 2048.0});
    OpStat* c = stats.add({"convolution_forward", "src 8x1x28x28", 100.0, 10.0});  // another layer, same shape
    OpStat* d = stats.add({"convolution_forward", "src 8x32x14x14", 400.0, 40.0});
    stats.add({"reorder", "8x32", 0.0, 2048.0});  // never called: left out
    a->add(1'000);
    a->add(1'000);
    b->add(500);
    c->add(3'000);
    d->add(4'000);
    const std::vector<OpRow> rows = stats.snapshot();
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0].kind, "convolution_forward");
    EXPECT_EQ(rows[0].shape, "src 8x1x28x28");
    EXPECT_EQ(rows[0].calls, 3);
    EXPECT_DOUBLE_EQ(rows[0].seconds, 5e-6);
    EXPECT_EQ(rows[0].flops, 100.0);  // per call, not summed
    EXPECT_EQ(rows[1].kind, "eltwise_relu_forward");
    EXPECT_EQ(rows[1].calls, 1);
    EXPECT_EQ(rows[2].shape, "src 8x32x14x14");
    EXPECT_DOUBLE_EQ(rows[0].gflops(), 100.0 * 3 / 5e-6 * 1e-9);
    EXPECT_DOUBLE_EQ(rows[1].gbytesPerSecond(), 2048.0 / 500e-9 * 1e-9);
    EXPECT_DOUBLE_EQ(rows[0].intensity(), 10.0);
    EXPECT_EQ(OpRow{}.gflops(), 0.0);
    EXPECT_EQ(OpRow{}.intensity(), 0.0);
}

TEST(OpStatsSnapshot, MergeOpRowsSumsDevices) {
    std::vector<OpRow> one = {{"matmul", "2x2", 4, 1.0, 8.0, 32.0}, {"relu", "2", 2, 0.5, 2.0, 16.0}};
    std::vector<OpRow> two = {{"relu", "2", 3, 0.25, 2.0, 16.0}, {"matmul", "2x2", 1, 0.5, 8.0, 32.0},
                              {"adam_update", "10", 1, 0.1, 40.0, 160.0}};
    const std::vector<OpRow> rows = mergeOpRows({one, two});
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0].kind, "matmul");
    EXPECT_EQ(rows[0].calls, 5);
    EXPECT_DOUBLE_EQ(rows[0].seconds, 1.5);
    EXPECT_EQ(rows[0].flops, 8.0);
    EXPECT_EQ(rows[1].kind, "relu");
    EXPECT_EQ(rows[1].calls, 5);
    EXPECT_DOUBLE_EQ(rows[1].seconds, 0.75);
    EXPECT_EQ(rows[2].kind, "adam_update");
    EXPECT_TRUE(mergeOpRows({}).empty());
}

// What a run measured after its warm-up: the totals minus the snapshot taken when warm-up ended.
TEST(OpStatsSnapshot, RowsSinceAnEarlierSnapshotLeaveOutItsCallsAndTime) {
    const std::vector<OpRow> before = {{"matmul", "2x2", 1, 0.020, 8.0, 32.0}, {"relu", "2", 1, 0.001, 2.0, 16.0},
                                       {"setup_only", "3", 1, 0.5, 1.0, 1.0}};
    const std::vector<OpRow> total = {{"matmul", "2x2", 5, 0.024, 8.0, 32.0}, {"relu", "2", 5, 0.005, 2.0, 16.0},
                                      {"setup_only", "3", 1, 0.5, 1.0, 1.0}, {"adam_update", "10", 4, 0.4, 40.0, 160.0}};
    const std::vector<OpRow> rows = opRowsSince(total, before);
    ASSERT_EQ(rows.size(), 3u) << "an op not called since is left out";
    EXPECT_EQ(rows[0].kind, "matmul");
    EXPECT_EQ(rows[0].calls, 4);
    EXPECT_NEAR(rows[0].seconds, 0.004, 1e-12) << "the first call's 20 ms of set-up is gone";
    EXPECT_EQ(rows[0].flops, 8.0);
    EXPECT_EQ(rows[1].kind, "relu");
    EXPECT_EQ(rows[1].calls, 4);
    EXPECT_EQ(rows[2].kind, "adam_update");
    EXPECT_EQ(rows[2].calls, 4) << "an op first called after the snapshot keeps all its calls";
    EXPECT_DOUBLE_EQ(rows[2].seconds, 0.4);
    EXPECT_EQ(opRowsSince(total, {}).size(), total.size());
}

TEST(OpStatsSnapshot, DimsText) {
    EXPECT_EQ(dimsText({128, 784}), "128x784");
    EXPECT_EQ(dimsText({7}), "7");
    EXPECT_EQ(dimsText({}), "");
}

}  // namespace
}  // namespace trainbench::engine::prof
