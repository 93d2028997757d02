// The training batches as the loops take them (engine/train/traininput.h): a resumed run's first
// epoch skips the batches trained before its checkpoint, and each step records what every pipeline
// stage did since the previous one.
#include <gtest/gtest.h>

#include "engine/train/traininput.h"
#include "tests/engine/numberedpipeline.h"

namespace trainbench::engine {
namespace {

using testpipeline::NumberedPipeline;

int64_t batchNumber(const BatchView& b) { return b.count ? static_cast<int64_t>(b.x[0]) : -1; }

TEST(TrainInput, OnlyTheFirstEpochSkipsTheBatchesTrainedBefore) {
    NumberedPipeline pipeline(3);
    TrainInput input(pipeline, 2);
    EXPECT_EQ(input.startEpoch(4), 2);
    EXPECT_EQ(batchNumber(input.next()), 402);
    EXPECT_EQ(batchNumber(input.next()), -1);
    EXPECT_EQ(input.startEpoch(5), 0);
    EXPECT_EQ(batchNumber(input.next()), 500);
    input.midpoint();
    EXPECT_EQ(pipeline.midpoints, 1);

    // A checkpoint taken after the epoch's last batch: the whole epoch is skipped, no more.
    NumberedPipeline short_(3);
    TrainInput past(short_, 5);
    EXPECT_EQ(past.startEpoch(0), 3);
    EXPECT_EQ(past.next().count, 0);
    EXPECT_EQ(past.startEpoch(1), 0);
    EXPECT_EQ(batchNumber(past.next()), 100);
}

TEST(TrainInput, RecordsEachStagesWorkDuringTheStep) {
    NumberedPipeline pipeline(3);
    StageStats read;
    read.name = "read";
    read.seconds = 1.0;
    read.items = 10;
    read.bytes = 1000;
    pipeline.statsNow.stages = {read};
    TrainInput input(pipeline, 0);  // counts from here

    pipeline.statsNow.stages[0].seconds = 1.5;
    pipeline.statsNow.stages[0].items = 14;
    pipeline.statsNow.stages[0].bytes = 1400;
    pipeline.statsNow.stages[0].fill_sum = 1.5;
    pipeline.statsNow.stages[0].fill_samples = 2;
    StepRecord first;
    input.recordStages(first);
    ASSERT_EQ(first.input_stages.size(), 1u);
    EXPECT_EQ(first.input_stages[0].stage, "read");
    EXPECT_DOUBLE_EQ(first.input_stages[0].seconds, 0.5);
    EXPECT_EQ(first.input_stages[0].items, 4);
    EXPECT_EQ(first.input_stages[0].bytes, 400);
    EXPECT_DOUBLE_EQ(first.input_stages[0].fill, 0.75);

    StepRecord idle;  // nothing happened since, and the queue was not sampled
    input.recordStages(idle);
    ASSERT_EQ(idle.input_stages.size(), 1u);
    EXPECT_DOUBLE_EQ(idle.input_stages[0].seconds, 0.0);
    EXPECT_EQ(idle.input_stages[0].items, 0);
    EXPECT_DOUBLE_EQ(idle.input_stages[0].fill, -1.0);
}

}  // namespace
}  // namespace trainbench::engine
