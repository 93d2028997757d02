// The trainer with a synchronous strategy, on a pipeline of numbered batches (no data set needed):
// which batches make which steps, when it evaluates, how a stop the processes of a job agreed on
// ends the run, and where a resumed run carries on.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/device/cpudevice.h"
#include "engine/train/trainer.h"
#include "tests/engine/modelspecs.h"
#include "tests/engine/numberedpipeline.h"

namespace trainbench::engine {
namespace {

using testmodels::custom;
using testmodels::dense;
using testmodels::flatten;

using testpipeline::kFeatures;
using testpipeline::NumberedPipeline;

// A synchronous strategy that trains nothing: it notes which batch each step got, calls the midpoint,
// reports the step number as the loss, and asks to stop after step `stopAt` (as the processes of a
// multi-worker job do when one of them is told to stop). Evaluation runs a real (tiny) model.
class NotingStrategy final : public Strategy {
public:
    explicit NotingStrategy(int64_t stopAt)
        : dev_(1),
          model_(custom({flatten, dense(2)}), {1, 1, kFeatures}, 2, dev_, 7),
          opt_(Optimizer::create(OptimizerConfig{}, model_.paramCount())),
          stopAt_(stopAt) {}
    std::string name() const override { return "noting"; }
    int replicas() const override { return 1; }
    std::string devices() const override { return "cpu:1"; }
    Model& model() override { return model_; }
    Optimizer& optimizer() override { return *opt_; }
    void bindThreads() override {}
    StrategyStep step(const BatchView& b, int64_t step, uint64_t, const std::function<void()>& midpoint) override {
        batches.push_back(static_cast<int64_t>(b.x[0]));
        midpoint();
        StrategyStep r;
        r.loss = static_cast<double>(step);
        r.stop_requested = step == stopAt_;
        return r;
    }
    void fetchState(bool optimizerToo) override { (optimizerToo ? checkpointFetches : evalFetches)++; }

    std::vector<int64_t> batches;  // 100 epoch + batch, per step
    int evalFetches = 0, checkpointFetches = 0;

private:
    CpuDevice dev_;
    Model model_;
    std::unique_ptr<Optimizer> opt_;
    int64_t stopAt_;
};

EvalSet smallTestSet() {
    EvalSet test;
    test.count = 3;
    test.width = kFeatures;
    test.num_classes = 2;
    test.x.assign(test.count * kFeatures, 0.5f);
    test.labels.assign(test.count, 1);
    return test;
}

class SyncLog final : public TrainObserver {
public:
    void onStep(const StepRecord& s) override { steps.push_back(s.step); }
    void onEval(const EvalRecord& e) override { evals.push_back(e.step); }
    std::vector<int64_t> steps, evals;
};

TEST(SyncTrainer, StepsTakeTheBatchesInOrderAndEvaluateAtEpochEnds) {
    NumberedPipeline pipeline(3);
    NotingStrategy strategy(/*stopAt=*/0);
    const EvalSet test = smallTestSet();
    TrainConfig config;
    config.epochs = 2;
    Trainer trainer(strategy, pipeline, test, config);
    SyncLog log;
    const RunSummary s = trainer.run(log);
    EXPECT_EQ(strategy.batches, (std::vector<int64_t>{0, 1, 2, 100, 101, 102}));
    EXPECT_EQ(pipeline.epochs, (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(pipeline.midpoints, 6);
    EXPECT_EQ(log.steps, (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(log.evals, (std::vector<int64_t>{3, 6}));
    EXPECT_EQ(strategy.evalFetches, 2);
    EXPECT_EQ(s.stop_reason, StopReason::Epochs);
    EXPECT_EQ(s.epochs_completed, 2);
    EXPECT_EQ(s.steps, 6);
    EXPECT_DOUBLE_EQ(s.final_loss, 6.0);
    EXPECT_EQ(s.evaluations, 2);
}

TEST(SyncTrainer, AStopTheJobAgreedOnEndsTheRunAfterThatStep) {
    NumberedPipeline pipeline(3);
    NotingStrategy strategy(/*stopAt=*/4);
    const EvalSet test = smallTestSet();
    TrainConfig config;
    config.epochs = 3;
    Trainer trainer(strategy, pipeline, test, config);
    SyncLog log;
    const RunSummary s = trainer.run(log);
    EXPECT_EQ(log.steps, (std::vector<int64_t>{1, 2, 3, 4}));
    EXPECT_EQ(log.evals, (std::vector<int64_t>{3, 4})) << "epoch 0's end, and where the run stopped";
    EXPECT_EQ(s.stop_reason, StopReason::Stopped);
    EXPECT_EQ(s.epochs_completed, 1);
}

TEST(SyncTrainer, AResumedRunSkipsTheBatchesTrainedAndCheckpointsAtItsEnd) {
    NumberedPipeline pipeline(3);
    NotingStrategy strategy(/*stopAt=*/0);
    const EvalSet test = smallTestSet();
    TrainConfig config;
    config.epochs = 2;
    config.eval_at_epoch_end = false;
    config.checkpoint_at_end = true;
    Trainer trainer(strategy, pipeline, test, config);
    TrainProgress at;
    at.step = 4;
    at.epoch = 1;
    at.batch_in_epoch = 1;
    at.summary.steps = 4;
    SyncLog log;
    std::vector<TrainProgress> checkpoints;
    const RunSummary s = trainer.run(log, &at, [&](const TrainProgress& p) { checkpoints.push_back(p); });
    EXPECT_EQ(pipeline.epochs, (std::vector<int64_t>{1}));
    EXPECT_EQ(strategy.batches, (std::vector<int64_t>{101, 102}));
    EXPECT_EQ(log.steps, (std::vector<int64_t>{5, 6}));
    EXPECT_TRUE(log.evals.empty());
    ASSERT_EQ(checkpoints.size(), 1u);
    EXPECT_EQ(checkpoints[0].step, 6);
    EXPECT_EQ(checkpoints[0].epoch, 1);
    EXPECT_EQ(checkpoints[0].batch_in_epoch, 3);
    EXPECT_EQ(strategy.checkpointFetches, 1);
    EXPECT_EQ(s.steps, 6);
    EXPECT_EQ(s.epochs_completed, 2);
}

}  // namespace
}  // namespace trainbench::engine
