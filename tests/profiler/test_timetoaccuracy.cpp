// Time- and cost-to-accuracy of stored runs for any target, against figures worked out by hand from
// the steps, evaluations and prices written into the store.
#include <gtest/gtest.h>

#include <stdexcept>

#include "profiler/tta/runtta.h"
#include "profiler/store/runstore.h"
#include "storetestutil.h"
#include "ttatestutil.h"

namespace trainbench::profiler {
namespace {

using testutil::HandRun;
using testutil::TempDir;
using testutil::writeRun;

// Steps of 0.5, 1.0, ... 3.0 s; test accuracy 50 % after step 2, 80 % after 4, 90 % after 6.
// Two devices at $3.60 an hour: $0.002 a second.
HandRun sixSteps() {
    HandRun h;
    h.stepSeconds = {0.5, 1.0, 1.5, 2.0, 2.5, 3.0};
    h.evals = {{2, 0.50}, {4, 0.80}, {6, 0.90}};
    h.pricePerDeviceHour = 3.6;
    h.devices = 2;
    return h;
}

RunTta readOne(const std::string& path, RunId id, double target) {
    RunStore store = RunStore::open(path, OpenMode::ReadOnly);
    return readTimeToAccuracy(store, {*store.run(id)}, TargetAccuracy::fromFraction(target)).front();
}

TEST(TimeToAccuracy, AnyTargetCountsTheStepsUpToTheFirstEvaluationReachingIt) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    const RunId id = writeRun(path, sixSteps());

    const RunTta at80 = readOne(path, id, 0.80);  // reached exactly at step 4: 0.5 + 1 + 1.5 + 2
    ASSERT_TRUE(at80.tta.reached);
    EXPECT_EQ(at80.tta.step, 4);
    EXPECT_DOUBLE_EQ(*at80.tta.seconds, 5.0);
    EXPECT_DOUBLE_EQ(*at80.tta.eval_seconds, 0.5);  // the evaluations at steps 2 and 4, 0.25 s each
    EXPECT_NEAR(*at80.tta.cost, 0.010, 1e-12);      // 5 s x $0.002
    EXPECT_EQ(at80.tta.evaluations, 3);
    EXPECT_DOUBLE_EQ(*at80.tta.best_accuracy, 0.90);

    const RunTta at85 = readOne(path, id, 0.85);  // first reached at step 6: all 10.5 s
    EXPECT_EQ(at85.tta.step, 6);
    EXPECT_DOUBLE_EQ(*at85.tta.seconds, 10.5);
    EXPECT_NEAR(*at85.tta.cost, 0.021, 1e-12);

    const RunTta at50 = readOne(path, id, 0.5);
    EXPECT_EQ(at50.tta.step, 2);
    EXPECT_DOUBLE_EQ(*at50.tta.seconds, 1.5);

    const RunTta at95 = readOne(path, id, 0.95);
    EXPECT_FALSE(at95.tta.reached);
    EXPECT_FALSE(at95.tta.seconds.has_value());
    EXPECT_FALSE(at95.tta.cost.has_value());
    EXPECT_DOUBLE_EQ(*at95.tta.best_accuracy, 0.90);
}

TEST(TimeToAccuracy, TheTimeIsTheStepsOwnSecondsNotTheEvaluationsRecord) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    HandRun h = sixSteps();
    h.evalWallSeconds = 999.0;  // whatever an evaluation says, the steps up to it count
    const RunTta r = readOne(path, writeRun(path, h), 0.8);
    EXPECT_DOUBLE_EQ(*r.tta.seconds, 5.0);
}

TEST(TimeToAccuracy, StepsMissingFromTheStoreFallBackToTheEvaluationsRecord) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    HandRun h = sixSteps();
    h.stepSeconds = {0.5, 1.0};  // steps 3 and 4 lost
    h.evals = {{2, 0.5}, {4, 0.8}};
    h.evalWallSeconds = 7.5;
    const RunTta r = readOne(path, writeRun(path, h), 0.8);
    EXPECT_EQ(r.tta.step, 4);
    EXPECT_DOUBLE_EQ(*r.tta.seconds, 7.5);
}

TEST(TimeToAccuracy, HostPriceIsChargedWithTheDevices) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    HandRun h = sixSteps();
    h.hostPricePerHour = 0.36;  // 2 x $3.60 + $0.36 = $7.56 an hour
    const RunId id = writeRun(path, h);
    EXPECT_NEAR(*readOne(path, id, 0.8).tta.cost, 5.0 * 7.56 / 3600.0, 1e-12);
}

TEST(TimeToAccuracy, WithoutAPriceTheCostIsUnknownNotZero) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    HandRun h = sixSteps();
    h.pricePerDeviceHour.reset();
    const RunId id = writeRun(path, h);
    const RunTta r = readOne(path, id, 0.8);
    EXPECT_DOUBLE_EQ(*r.tta.seconds, 5.0);
    EXPECT_FALSE(r.tta.cost.has_value());
}

TEST(TimeToAccuracy, ARunWithoutEvaluationsNeverReachesAndHasNoBestAccuracy) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    HandRun h = sixSteps();
    h.evals.clear();
    const RunTta r = readOne(path, writeRun(path, h), 0.1);
    EXPECT_FALSE(r.tta.reached);
    EXPECT_EQ(r.tta.evaluations, 0);
    EXPECT_FALSE(r.tta.best_accuracy.has_value());
}

TEST(TimeToAccuracy, OnlyTestEvaluationsCount) {
    StepSample s;
    s.step = 1;
    s.step_seconds = 2.0;
    EvalSample train;
    train.step = 1;
    train.split = "train";
    train.accuracy = 0.99;
    RunRow row;
    const RunTimeToAccuracy r = timeToAccuracy(row, {s}, {train}, TargetAccuracy::fromFraction(0.9));
    EXPECT_FALSE(r.reached);
    EXPECT_EQ(r.evaluations, 0);
}

TEST(TimeToAccuracy, ATargetOutsideZeroToOneIsRefusedWithTheValue) {
    for (double bad : {0.0, -0.1, 1.5, std::nan("")}) EXPECT_THROW(TargetAccuracy::fromFraction(bad), std::invalid_argument) << bad;
    try {
        TargetAccuracy::fromFraction(1.5);
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("1.5 is outside (0, 1]"), std::string::npos) << e.what();
    }
    EXPECT_DOUBLE_EQ(TargetAccuracy::fromFraction(1.0).fraction(), 1.0);
    EXPECT_DOUBLE_EQ(TargetAccuracy::parse("85%").fraction(), 0.85);
    EXPECT_DOUBLE_EQ(TargetAccuracy::parse("0.9").fraction(), 0.9);
    EXPECT_THROW(TargetAccuracy::parse("85"), std::invalid_argument);
    EXPECT_THROW(TargetAccuracy::parse("high"), std::invalid_argument);
    EXPECT_THROW(TargetAccuracy::parse("0.9x"), std::invalid_argument);
}

// The source ran 10 steps of 1 s at $3.60/h ($0.001/s); the warm-started run continues from its
// step-4 checkpoint with 3 steps of 2 s at $7.20/h ($0.002/s) and reaches 90 % after its step 3.
TEST(TimeToAccuracy, AWarmStartedRunAddsItsSourcesTrainingUpToTheCheckpoint) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    HandRun source;
    source.name = "source";
    source.stepSeconds.assign(10, 1.0);
    source.evals = {{10, 0.7}};
    source.pricePerDeviceHour = 3.6;
    const RunId sourceId = writeRun(path, source);
    HandRun warm;
    warm.name = "warm";
    warm.stepSeconds = {2.0, 2.0, 2.0};
    warm.evals = {{3, 0.9}};
    warm.pricePerDeviceHour = 7.2;
    warm.warmStartRun = sourceId.value;
    warm.warmStartStep = "4";
    const RunTta r = readOne(path, writeRun(path, warm), 0.85);
    EXPECT_DOUBLE_EQ(*r.tta.seconds, 6.0);
    EXPECT_NEAR(*r.tta.cost, 0.012, 1e-12);
    ASSERT_TRUE(r.tta.pretraining.has_value());
    EXPECT_EQ(r.tta.pretraining->source, sourceId);
    EXPECT_EQ(r.tta.pretraining->step, 4);
    EXPECT_DOUBLE_EQ(*r.tta.pretraining->seconds, 4.0);
    EXPECT_DOUBLE_EQ(*r.tta.secondsWithPretraining(), 10.0);
    EXPECT_NEAR(*r.tta.costWithPretraining(), 0.016, 1e-12);

    // Without warm_start.step the checkpoint is the source's last: all its 10 s.
    warm.name = "warm-from-last";
    warm.warmStartStep.reset();
    const RunTta last = readOne(path, writeRun(path, warm), 0.85);
    EXPECT_EQ(last.tta.pretraining->step, 10);
    EXPECT_DOUBLE_EQ(*last.tta.secondsWithPretraining(), 16.0);
    EXPECT_NEAR(*last.tta.costWithPretraining(), 0.012 + 0.010, 1e-12);

    // A warm-started run that numbers its steps on from the source's (5, 6, 7) counts its own alone.
    warm.name = "warm-numbered-on";
    warm.warmStartStep = "4";
    warm.firstStep = 5;
    warm.evals = {{7, 0.9}};
    const RunTta on = readOne(path, writeRun(path, warm), 0.85);
    EXPECT_DOUBLE_EQ(*on.tta.seconds, 6.0);
    EXPECT_DOUBLE_EQ(*on.tta.secondsWithPretraining(), 10.0);
}

TEST(TimeToAccuracy, PretrainingOfAMissingSourceIsUnknownAndSaysWhy) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    HandRun warm = sixSteps();
    warm.warmStartRun = 999;
    const RunTta r = readOne(path, writeRun(path, warm), 0.8);
    EXPECT_DOUBLE_EQ(*r.tta.seconds, 5.0);
    ASSERT_TRUE(r.tta.pretraining.has_value());
    EXPECT_FALSE(r.tta.secondsWithPretraining().has_value());
    EXPECT_NE(r.tta.pretraining->problem.find("run 999"), std::string::npos) << r.tta.pretraining->problem;
}

TEST(TimeToAccuracy, AnUnpricedSourceLeavesTheTotalCostUnknown) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    HandRun source;
    source.name = "source";
    source.stepSeconds = {1.0, 1.0};
    const RunId sourceId = writeRun(path, source);
    HandRun warm = sixSteps();
    warm.warmStartRun = sourceId.value;
    const RunTta r = readOne(path, writeRun(path, warm), 0.8);
    EXPECT_DOUBLE_EQ(*r.tta.secondsWithPretraining(), 7.0);
    EXPECT_TRUE(r.tta.cost.has_value());
    EXPECT_FALSE(r.tta.costWithPretraining().has_value());
}

}  // namespace
}  // namespace trainbench::profiler
