// InMemoryPipeline: with prefetch the batches are the same, in the same order, as made on the
// trainer's thread; epochs restart anywhere; its stages are reported; it stops cleanly.
#include "engine/data/pipeline/inmemorypipeline.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

namespace trainbench::engine {
namespace {

// n examples of 1x3x3; example i's first pixel is i (n < 256), its label i % 5.
ImageDataset makeDataset(int64_t n) {
    ImageDataset ds;
    ds.count = n;
    ds.channels = 1;
    ds.height = 3;
    ds.width = 3;
    ds.num_classes = 5;
    ds.pixels.resize(static_cast<size_t>(n * 9));
    for (int64_t i = 0; i < n; ++i)
        for (int64_t k = 0; k < 9; ++k) ds.pixels[static_cast<size_t>(i * 9 + k)] = static_cast<uint8_t>((i + 3 * k) % 256);
    for (int64_t i = 0; i < n; ++i) ds.labels.push_back(static_cast<int32_t>(i % 5));
    return ds;
}

// Every float and label of one epoch's batches, batch by batch.
struct Batches {
    std::vector<std::vector<float>> x;
    std::vector<std::vector<int32_t>> y;
    bool operator==(const Batches&) const = default;
};

Batches drain(InMemoryPipeline& p, int64_t maxBatches = 1 << 20) {
    Batches out;
    for (int64_t b = 0; b < maxBatches; ++b) {
        const BatchView v = p.next();
        if (v.count == 0) break;
        out.x.emplace_back(v.x, v.x + v.count * p.exampleSize());
        out.y.emplace_back(v.y, v.y + v.count);
        // The trainer may overwrite its batch: the pipeline must not hand the same memory again
        // before the next call, nor rely on what it holds.
        std::fill(v.x, v.x + v.count * p.exampleSize(), -1.0f);
    }
    return out;
}

TEST(InMemoryPipeline, PrefetchedBatchesAreTheOnesMadeOnTheTrainersThread) {
    const ImageDataset ds = makeDataset(103);
    for (const bool dropRemainder : {false, true}) {
        InMemoryPipeline plain(ds, 10, /*shuffle=*/true, dropRemainder, 42, /*prefetch=*/0);
        InMemoryPipeline ahead(ds, 10, /*shuffle=*/true, dropRemainder, 42, /*prefetch=*/3);
        for (int64_t epoch = 0; epoch < 3; ++epoch) {
            plain.startEpoch(epoch);
            ahead.startEpoch(epoch);
            const Batches want = drain(plain);
            ASSERT_EQ(static_cast<int64_t>(want.x.size()), plain.batchesPerEpoch());
            EXPECT_TRUE(drain(ahead) == want) << "epoch " << epoch << (dropRemainder ? " (drop remainder)" : "");
            EXPECT_EQ(ahead.next().count, 0) << "the epoch is over and stays over";
        }
    }
}

TEST(InMemoryPipeline, AnEpochStartedOutOfTurnIsThatEpochsBatches) {
    const ImageDataset ds = makeDataset(60);
    InMemoryPipeline plain(ds, 8, true, false, 7, 0);
    InMemoryPipeline ahead(ds, 8, true, false, 7, 2);
    // A resumed run starts at epoch 4; a run may also leave an epoch half read.
    for (const int64_t epoch : {4, 5, 2, 9}) {
        plain.startEpoch(epoch);
        ahead.startEpoch(epoch);
        const Batches half = drain(plain, 3);
        EXPECT_TRUE(drain(ahead, 3) == half) << "epoch " << epoch;
    }
}

TEST(InMemoryPipeline, ThePrefetchStageSaysHowFullTheQueueWas) {
    const ImageDataset ds = makeDataset(200);
    InMemoryPipeline ahead(ds, 10, true, true, 1, 4);
    ahead.startEpoch(0);
    for (int i = 0; i < 12; ++i) {
        ASSERT_GT(ahead.next().count, 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a step: the producer keeps up
    }
    const PipelineStats s = ahead.stats();
    ASSERT_EQ(s.stages.size(), 2u);
    EXPECT_EQ(s.stages[0].name, "batch");
    EXPECT_GE(s.stages[0].items, 12);
    EXPECT_EQ(s.stages[0].bytes, s.stages[0].items * 10 * 9 * static_cast<int64_t>(sizeof(float)));
    EXPECT_EQ(s.stages[1].name, "prefetch");
    EXPECT_EQ(s.stages[1].items, 12);
    EXPECT_EQ(s.stages[1].capacity, 4);
    ASSERT_EQ(s.stages[1].fill_samples, 12);
    // After the first batch the producer had two steps' time to refill a queue of four.
    EXPECT_GT(s.stages[1].fill_sum / static_cast<double>(s.stages[1].fill_samples), 0.5);

    InMemoryPipeline plain(ds, 10, true, true, 1, 0);
    ASSERT_GT(plain.next().count, 0);
    const PipelineStats p = plain.stats();
    ASSERT_EQ(p.stages.size(), 1u) << "without prefetch there is no queue to report";
    EXPECT_EQ(p.stages[0].items, 1);
}

TEST(InMemoryPipeline, StopsWhileItsProducerWaitsForRoom) {
    const ImageDataset ds = makeDataset(100);
    const auto t0 = std::chrono::steady_clock::now();
    {
        InMemoryPipeline ahead(ds, 5, true, false, 3, 2);
        ahead.startEpoch(0);
        ASSERT_GT(ahead.next().count, 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the queue is full by now
    }
    {
        InMemoryPipeline never(ds, 5, true, false, 3, 2);
        never.startEpoch(0);  // destroyed without a batch taken
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

}  // namespace
}  // namespace trainbench::engine
