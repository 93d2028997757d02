// Seed groups of stored runs: runs that differ only by seed (and name) are one configuration,
// summarised MLPerf's way; a warm-started group also gives its figures with the pre-training and
// names the group trained from scratch it compares with.
#include <gtest/gtest.h>

#include "profiler/grouping/configkeys.h"
#include "profiler/grouping/seedgroup.h"
#include "profiler/store/runstore.h"
#include "storetestutil.h"
#include "ttatestutil.h"

namespace trainbench::profiler {
namespace {

using testutil::HandRun;
using testutil::TempDir;
using testutil::writeRun;

std::string config(int seed, const std::string& extra = "") {
    return R"({"name":"x-seed)" + std::to_string(seed) + R"(","seed":)" + std::to_string(seed) +
           R"(,"model":{"preset":"mlp"},"train":{"epochs":3)" + extra + "}}";
}

// One step per run of `seconds`, evaluated after it at `accuracy`; $36 an hour ($0.01 a second).
HandRun seedRun(int seed, double seconds, double accuracy, const std::string& extra = "") {
    HandRun h;
    h.name = "x-seed" + std::to_string(seed);
    h.config = config(seed, extra);
    h.stepSeconds = {seconds};
    h.evals = {{1, accuracy}};
    h.pricePerDeviceHour = 36.0;
    return h;
}

std::vector<RunTta> readAll(const std::string& path, double target) {
    RunStore store = RunStore::open(path, OpenMode::ReadOnly);
    std::vector<RunRow> rows = store.listRuns();
    std::reverse(rows.begin(), rows.end());  // oldest first: the order written
    return readTimeToAccuracy(store, rows, TargetAccuracy::fromFraction(target));
}

TEST(SeedGroup, FiveSeedsWithOneUnreachedAverageTheMiddleThree) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    const double seconds[] = {50, 30, 90, 40, 70};
    for (int seed = 0; seed < 5; ++seed) writeRun(path, seedRun(seed, seconds[seed], seed == 2 ? 0.80 : 0.90));
    const auto runs = readAll(path, 0.85);
    const auto groups = groupBySeed(runs);
    ASSERT_EQ(groups.size(), 1u);
    const SeedGroup& g = groups.front();
    EXPECT_EQ(g.label, "x");
    EXPECT_EQ(g.members.size(), 5u);
    EXPECT_EQ(g.time.runs, 5);
    EXPECT_EQ(g.time.reached, 4);
    // 30 (fastest) and the unreached run (slowest) dropped: (40 + 50 + 70) / 3.
    EXPECT_DOUBLE_EQ(*g.time.seconds, 160.0 / 3.0);
    EXPECT_NEAR(*g.time.cost, 1.6 / 3.0, 1e-12);
    EXPECT_DOUBLE_EQ(*g.time.min_seconds, 30.0);
    EXPECT_DOUBLE_EQ(*g.time.max_seconds, 70.0);
    EXPECT_FALSE(g.warm_started);
}

TEST(SeedGroup, DifferentConfigurationsAreDifferentGroupsAndARunningRunWaits) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    writeRun(path, seedRun(1, 10, 0.9));
    writeRun(path, seedRun(2, 20, 0.9));
    writeRun(path, seedRun(1, 5, 0.9, R"(,"batch_size":256)"));
    auto running = testutil::startRun(path, seedRun(3, 1, 0.5));  // not at the target yet
    const auto runs = readAll(path, 0.85);
    const auto groups = groupBySeed(runs);
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups[0].members.size(), 3u);
    EXPECT_EQ(groups[0].pending, 1);
    EXPECT_EQ(groups[0].time.runs, 2);
    EXPECT_DOUBLE_EQ(*groups[0].time.seconds, 15.0);
    EXPECT_EQ(groups[1].members.size(), 1u);
    EXPECT_DOUBLE_EQ(*groups[1].time.seconds, 5.0);
    running->finish(RunStatus::Stopped, {});
}

TEST(SeedGroup, AWarmStartedGroupComparesWithTrainingFromScratch) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    // From scratch, 3 epochs: 100 s and 120 s to 85 %. The source of the warm start is the first.
    const RunId source = writeRun(path, seedRun(1, 100, 0.9));
    writeRun(path, seedRun(2, 120, 0.9));
    // Warm-started, 1 epoch: 20 s and 30 s of their own, plus the source's 100 s each.
    for (int seed = 1; seed <= 2; ++seed) {
        HandRun warm = seedRun(seed, seed == 1 ? 20 : 30, 0.9,
                               R"(,"epochs":1,"warm_start":")" + std::to_string(source.value) + "\"");
        warm.name = "warm-seed" + std::to_string(seed);
        warm.warmStartRun = source.value;
        writeRun(path, warm);
    }
    const auto runs = readAll(path, 0.85);
    const auto groups = groupBySeed(runs);
    ASSERT_EQ(groups.size(), 2u);
    const SeedGroup& warm = groups[1];
    EXPECT_TRUE(warm.warm_started);
    EXPECT_EQ(warm.label, "warm");
    EXPECT_DOUBLE_EQ(*warm.time.seconds, 25.0);
    ASSERT_TRUE(warm.with_pretraining.has_value());
    EXPECT_DOUBLE_EQ(*warm.with_pretraining->seconds, 125.0);
    EXPECT_NEAR(*warm.with_pretraining->cost, 1.25, 1e-12);
    ASSERT_TRUE(warm.from_scratch.has_value());
    EXPECT_EQ(*warm.from_scratch, 0u);
    EXPECT_DOUBLE_EQ(*groups[0].time.seconds, 110.0);
}

TEST(ConfigKeys, SeedGroupKeyIgnoresNameDescriptionAndSeedOnly) {
    EXPECT_EQ(seedGroupKey(config(1)), seedGroupKey(config(2)));
    EXPECT_NE(seedGroupKey(config(1)), seedGroupKey(config(1, R"(,"batch_size":256)")));
    EXPECT_EQ(seedGroupKey(std::string("not json")), "");
    RunRow a, b;
    a.config_json = R"({"name":"a","strategy":{"type":"mirrored","replicas":2}})";
    b.config_json = R"({"name":"b","strategy":{"type":"mirrored","replicas":4}})";
    EXPECT_NE(seedGroupKey(a), seedGroupKey(b));
    EXPECT_EQ(scalingFamilyKey(a), scalingFamilyKey(b));
}

TEST(ConfigKeys, NumericsKeyIgnoresPlacementButNotTheGlobalBatchOrAsynchrony) {
    const std::string tpu = R"({"name":"tpu","model":{"preset":"mlp"},"train":{"batch_size":256,"epochs":3,"threads":2},
        "strategy":{"type":"tpu_pod","slice":"v3-32","replicas":1},"device":{"type":"tpu-v3"}})";
    const std::string gpus = R"({"name":"gpu","model":{"preset":"mlp"},"train":{"batch_size":64,"epochs":1,"threads":8},
        "strategy":{"type":"mirrored","replicas":4,"batch_scope":"per_replica"},"device":{"type":"v100-sxm2-16gb"}})";
    EXPECT_EQ(numericsKey(tpu, 256), numericsKey(gpus, 256));
    EXPECT_NE(numericsKey(tpu, 256), numericsKey(gpus, 512));
    const std::string ps = R"({"model":{"preset":"mlp"},"strategy":{"type":"parameter_server","replicas":4}})";
    const std::string sync = R"({"model":{"preset":"mlp"},"strategy":{"type":"multi_worker","replicas":4}})";
    EXPECT_NE(numericsKey(ps, 256), numericsKey(sync, 256));
    const std::string adam = R"({"model":{"preset":"mlp"},"optimizer":{"type":"adam"}})";
    const std::string sgd = R"({"model":{"preset":"mlp"},"optimizer":{"type":"sgd"}})";
    EXPECT_NE(numericsKey(adam, 256), numericsKey(sgd, 256));
}

}  // namespace
}  // namespace trainbench::profiler
