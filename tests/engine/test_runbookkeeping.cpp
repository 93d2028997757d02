// The books both training loops keep (engine/train/runbookkeeping.h), driven step by step as a loop
// drives them: stop conditions, the evaluation and checkpoint schedule, the summary's totals, a
// resumed run's counts, and the observer calls around each step. Durations come from a clock of
// fixed charges, so totals are exact.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/train/runbookkeeping.h"
#include "engine/train/trainer.h"
#include "tests/engine/numberedpipeline.h"

namespace trainbench::engine {
namespace {

// Every step takes 0.5 s (0.125 s of it input), every evaluation 0.25 s.
class FixedClock final : public StepClock {
public:
    void step(StepRecord& r) override {
        r.step_seconds = 0.5;
        r.input_seconds = 0.125;
        ++steps;
    }
    void eval(EvalRecord& r) override { r.eval_seconds = 0.25; }
    int steps = 0;
};

class BookkeepingLog final : public TrainObserver {
public:
    void onStepBegin(int64_t step) override { calls.push_back("begin " + std::to_string(step)); }
    void onStepEnd(int64_t step) override { calls.push_back("end " + std::to_string(step)); }
    void onStep(const StepRecord& s) override {
        calls.push_back("step " + std::to_string(s.step));
        steps.push_back(s);
    }
    void onEval(const EvalRecord& e) override {
        calls.push_back("eval " + std::to_string(e.step));
        evals.push_back(e);
    }
    bool stopRequested() override {
        ++polls;
        return stopAfterPolls > 0 && polls >= stopAfterPolls;
    }
    std::vector<std::string> calls;
    std::vector<StepRecord> steps;
    std::vector<EvalRecord> evals;
    int polls = 0, stopAfterPolls = 0;
};

// One step as a synchronous loop takes it, finished and recorded at once.
StepRecord oneStep(RunBookkeeping& b, TrainInput& input, int64_t samples = 8, double comm = 0.0) {
    EXPECT_TRUE(b.mayStep());
    EXPECT_GT(b.beginStep(input).count, 0);
    StepRecord rec = b.startStep(samples);
    rec.loss = 1.0 / static_cast<double>(rec.step);
    rec.comm_seconds = comm;
    rec.wait_seconds = comm / 2;
    b.endStep(rec);
    b.record(rec);
    return rec;
}

EvalRecord evaluation(const RunBookkeeping& b, double accuracy) {
    EvalRecord e;
    e.step = b.step();
    e.epoch = b.epoch();
    e.accuracy = accuracy;
    return e;
}

// What a run's books need, around an epoch of `batches` batches.
struct Books {
    explicit Books(int64_t batches = 1000) : pipeline(batches) {}
    TrainConfig config;
    BookkeepingLog log;
    FixedClock clock;
    testpipeline::NumberedPipeline pipeline;
    TrainInput input{pipeline, 0};
    std::vector<TrainProgress> checkpoints;
    RunBookkeeping make(const TrainProgress* resume = nullptr, bool withHook = false) {
        RunBookkeeping::CheckpointHook hook;
        if (withHook) hook = [this](const TrainProgress& p) { checkpoints.push_back(p); };
        return RunBookkeeping(config, log, &clock, resume, hook);
    }
};

TEST(RunBookkeeping, StopsAtMaxStepsWithinAnEpoch) {
    Books t;
    t.config.epochs = 0;
    t.config.max_steps = 3;
    RunBookkeeping b = t.make();
    EXPECT_TRUE(b.epochRemains(0));
    EXPECT_TRUE(b.epochRemains(1000)) << "epochs 0: no epoch limit";
    b.startEpoch(0, 0);
    for (int i = 0; i < 3; ++i) oneStep(b, t.input);
    EXPECT_FALSE(b.mayStep());
    EXPECT_TRUE(b.stopped());
    EXPECT_FALSE(b.epochRemains(1));
    b.trainingEnded(0);
    const RunSummary s = b.summary();
    EXPECT_EQ(s.stop_reason, StopReason::MaxSteps);
    EXPECT_EQ(s.steps, 3);
    EXPECT_EQ(s.epochs_completed, 0);
}

TEST(RunBookkeeping, RunsOutOfEpochs) {
    Books t;
    t.config.epochs = 2;
    t.config.eval_at_epoch_end = false;
    RunBookkeeping b = t.make();
    int64_t epoch = b.firstEpoch();
    for (; b.epochRemains(epoch); ++epoch) {
        b.startEpoch(epoch, 0);
        oneStep(b, t.input);
        oneStep(b, t.input);
        EXPECT_FALSE(b.epochCompleted(epoch)) << "no evaluation at epoch end asked for";
    }
    EXPECT_EQ(epoch, 2);
    b.trainingEnded(5);
    const RunSummary s = b.summary();
    EXPECT_EQ(s.stop_reason, StopReason::Epochs);
    EXPECT_EQ(s.epochs_completed, 2);
    EXPECT_EQ(s.skipped_records, 5);
    EXPECT_FALSE(b.finalEvaluationDue()) << "the run does not evaluate at all";
}

TEST(RunBookkeeping, StopsWhenAskedAfterTheStepAndPollsNoMore) {
    Books t;
    t.log.stopAfterPolls = 2;
    RunBookkeeping b = t.make();
    b.startEpoch(0, 0);
    oneStep(b, t.input);
    b.pollStop(false);
    EXPECT_FALSE(b.stopped());
    oneStep(b, t.input);
    b.pollStop(false);
    EXPECT_TRUE(b.stopped());
    EXPECT_FALSE(b.mayStep());
    b.pollStop(false);
    EXPECT_EQ(t.log.polls, 2) << "a stopped run does not ask again";
    b.trainingEnded(0);
    EXPECT_EQ(b.summary().stop_reason, StopReason::Stopped);

    // The processes of a job agreeing to stop ends the run the same way.
    Books u;
    RunBookkeeping c = u.make();
    c.startEpoch(0, 0);
    oneStep(c, u.input);
    c.pollStop(true);
    EXPECT_TRUE(c.stopped());
    EXPECT_EQ(u.log.polls, 0);
    c.trainingEnded(0);
    EXPECT_EQ(c.summary().stop_reason, StopReason::Stopped);
}

TEST(RunBookkeeping, TimeToTargetOnTheTrainingClockAndStopAtTarget) {
    for (const bool stopAtTarget : {false, true}) {
        Books t;
        t.config.target_accuracy = 0.8;
        t.config.stop_at_target = stopAtTarget;
        t.config.eval_every_steps = 2;
        RunBookkeeping b = t.make();
        b.startEpoch(0, 0);
        for (const double accuracy : {0.5, 0.85, 0.9}) {
            oneStep(b, t.input);
            EXPECT_FALSE(b.evaluationDue());
            oneStep(b, t.input);
            ASSERT_TRUE(b.evaluationDue());
            EvalRecord e = evaluation(b, accuracy);
            b.evaluated(e, RunBookkeeping::Clock::now());
            if (b.stopped()) break;
        }
        b.trainingEnded(0);
        const RunSummary s = b.summary();
        ASSERT_TRUE(s.time_to_target.has_value());
        EXPECT_DOUBLE_EQ(*s.time_to_target, 2.0) << "4 steps of 0.5 s; evaluations excluded";
        EXPECT_EQ(s.step_at_target, 4);
        EXPECT_EQ(s.stop_reason, stopAtTarget ? StopReason::TargetAccuracy : StopReason::Epochs);
        EXPECT_EQ(s.evaluations, stopAtTarget ? 2 : 3);
        EXPECT_DOUBLE_EQ(s.best_accuracy, stopAtTarget ? 0.85 : 0.9);
        EXPECT_FALSE(b.finalEvaluationDue()) << "the last step was evaluated";
    }
}

TEST(RunBookkeeping, EvaluationScheduleEveryNStepsAtEpochEndAndWhereTheRunEnded) {
    Books t;
    t.config.epochs = 0;
    t.config.max_steps = 7;
    t.config.eval_every_steps = 3;
    t.config.eval_at_epoch_end = true;
    RunBookkeeping b = t.make();
    std::vector<int64_t> due;
    b.startEpoch(0, 0);
    for (int i = 0; i < 3; ++i) {
        oneStep(b, t.input);
        if (b.evaluationDue()) {
            due.push_back(b.step());
            EvalRecord e = evaluation(b, 0.1);
            b.evaluated(e, RunBookkeeping::Clock::now());
        }
    }
    EXPECT_FALSE(b.epochCompleted(0)) << "step 3 was just evaluated";
    b.startEpoch(1, 0);
    for (int i = 0; i < 2; ++i) {
        oneStep(b, t.input);
        if (b.evaluationDue()) due.push_back(b.step());
    }
    EXPECT_TRUE(b.epochCompleted(1)) << "step 5 has no evaluation yet";
    EvalRecord e = evaluation(b, 0.2);
    b.evaluated(e, RunBookkeeping::Clock::now());
    b.startEpoch(2, 0);
    while (b.mayStep()) {
        oneStep(b, t.input);
        if (b.evaluationDue()) due.push_back(b.step());
    }
    EXPECT_EQ(due, (std::vector<int64_t>{3, 6}));
    b.trainingEnded(0);
    EXPECT_TRUE(b.finalEvaluationDue()) << "step 7, where the run ended, has no evaluation";
    EXPECT_EQ(b.summary().epochs_completed, 2);
}

TEST(RunBookkeeping, CheckpointsWithAHookOnlyAndCarryTheProgress) {
    Books t;
    t.config.checkpoint_every_steps = 2;
    t.config.checkpoint_at_end = true;
    t.config.eval_every_steps = 2;
    {
        RunBookkeeping none = t.make();
        none.startEpoch(0, 0);
        oneStep(none, t.input);
        oneStep(none, t.input);
        EXPECT_FALSE(none.checkpointDue()) << "no hook";
        EXPECT_FALSE(none.finalCheckpointDue());
    }
    RunBookkeeping b = t.make(nullptr, /*withHook=*/true);
    b.startEpoch(3, 4);  // a resumed epoch, 4 of its batches trained before
    oneStep(b, t.input);
    EXPECT_FALSE(b.checkpointDue());
    oneStep(b, t.input);
    ASSERT_TRUE(b.checkpointDue());
    EvalRecord e = evaluation(b, 0.5);
    b.evaluated(e, RunBookkeeping::Clock::now());
    b.checkpoint(RunBookkeeping::Clock::now());
    ASSERT_EQ(t.checkpoints.size(), 1u);
    const TrainProgress& p = t.checkpoints[0];
    EXPECT_EQ(p.step, 2);
    EXPECT_EQ(p.epoch, 3);
    EXPECT_EQ(p.batch_in_epoch, 6);
    EXPECT_TRUE(p.evaluated_at_step);
    EXPECT_EQ(p.summary.steps, 2);
    EXPECT_EQ(p.summary.evaluations, 1);
    EXPECT_DOUBLE_EQ(p.summary.train_seconds, 1.0);
    EXPECT_FALSE(b.finalCheckpointDue()) << "the last step was just checkpointed";
    oneStep(b, t.input);
    EXPECT_TRUE(b.finalCheckpointDue());
}

TEST(RunBookkeeping, SummaryTotalsAndSteadyThroughput) {
    Books t;
    t.config.epochs = 0;
    RunBookkeeping b = t.make();
    b.startEpoch(0, 0);
    // The first Trainer::kWarmupSteps steps (8 samples) are left out of the steady-state throughput.
    for (int64_t i = 0; i < Trainer::kWarmupSteps; ++i) oneStep(b, t.input, 8, 0.01);
    const double warm = b.summary().throughput;
    EXPECT_DOUBLE_EQ(warm, 16.0) << "no steady steps yet: all samples over the training time";
    for (int i = 0; i < 5; ++i) oneStep(b, t.input, 4, 0.01);
    b.trainingEnded(0);
    const RunSummary s = b.summary();
    const int64_t steps = Trainer::kWarmupSteps + 5;
    EXPECT_EQ(s.steps, steps);
    EXPECT_DOUBLE_EQ(s.throughput, 8.0);
    EXPECT_DOUBLE_EQ(s.train_seconds, 0.5 * static_cast<double>(steps));
    EXPECT_DOUBLE_EQ(s.input_seconds, 0.125 * static_cast<double>(steps));
    EXPECT_NEAR(s.comm_seconds, 0.01 * static_cast<double>(steps), 1e-12);
    EXPECT_NEAR(s.wait_seconds, 0.005 * static_cast<double>(steps), 1e-12);
    EXPECT_DOUBLE_EQ(s.final_loss, 1.0 / static_cast<double>(steps));
    EXPECT_GT(s.host_seconds, 0.0) << "on a clock, the host's own time is kept apart";
    EXPECT_EQ(t.clock.steps, steps);
    const StepRecord& last = t.log.steps.back();
    EXPECT_DOUBLE_EQ(last.wall_seconds, s.train_seconds);
    EXPECT_DOUBLE_EQ(last.samples_per_second, 8.0);
}

TEST(RunBookkeeping, EvaluationTimeGoesToTheNextStepNotTheTrainingTime) {
    Books t;
    t.config.eval_every_steps = 1;
    RunBookkeeping b = t.make();
    b.startEpoch(0, 0);
    oneStep(b, t.input);
    EvalRecord e = evaluation(b, 0.3);
    b.evaluated(e, RunBookkeeping::Clock::now());
    EXPECT_DOUBLE_EQ(e.eval_seconds, 0.25);
    EXPECT_DOUBLE_EQ(e.wall_seconds, 0.5);
    const StepRecord next = oneStep(b, t.input);
    EXPECT_DOUBLE_EQ(next.eval_seconds, 0.25);
    EXPECT_DOUBLE_EQ(next.wall_seconds, 1.0);
    const RunSummary s = b.summary();
    EXPECT_DOUBLE_EQ(s.train_seconds, 1.0);
    EXPECT_DOUBLE_EQ(s.eval_seconds, 0.25);
    // Waiting for steps in flight is training time; on a clock the host's own.
    const double host = s.host_seconds;
    b.waited(2.0);
    EXPECT_DOUBLE_EQ(b.summary().train_seconds, 1.0);
    EXPECT_DOUBLE_EQ(b.summary().host_seconds, host + 2.0);
    TrainConfig config;
    BookkeepingLog log;
    RunBookkeeping wall(config, log, nullptr, nullptr, {});
    wall.waited(2.0);
    EXPECT_DOUBLE_EQ(wall.summary().train_seconds, 2.0);
    EXPECT_DOUBLE_EQ(wall.summary().host_seconds, 0.0);
}

TEST(RunBookkeeping, ResumesFromACheckpointsProgress) {
    TrainProgress at;
    at.step = 7;
    at.epoch = 1;
    at.batch_in_epoch = 3;
    at.evaluated_at_step = true;
    at.summary.steps = 7;
    at.summary.train_seconds = 3.5;
    at.summary.evaluations = 2;
    at.summary.stop_reason = StopReason::MaxSteps;
    Books t;
    t.config.epochs = 2;
    t.config.checkpoint_at_end = true;
    RunBookkeeping b = t.make(&at, /*withHook=*/true);
    EXPECT_EQ(b.firstEpoch(), 1);
    EXPECT_EQ(b.step(), 7);
    EXPECT_FALSE(b.finalEvaluationDue()) << "step 7 was evaluated before the checkpoint";
    EXPECT_FALSE(b.finalCheckpointDue()) << "step 7 is the checkpoint resumed from";
    b.startEpoch(1, 3);
    const StepRecord rec = oneStep(b, t.input);
    EXPECT_EQ(rec.step, 8);
    EXPECT_EQ(rec.epoch, 1);
    EXPECT_DOUBLE_EQ(rec.wall_seconds, 4.0);
    EXPECT_TRUE(b.epochCompleted(1));
    b.trainingEnded(0);
    const RunSummary s = b.summary();
    EXPECT_EQ(s.stop_reason, StopReason::Epochs) << "the checkpoint's stop reason is not carried on";
    EXPECT_EQ(s.evaluations, 2);
    b.checkpoint(RunBookkeeping::Clock::now());
    ASSERT_EQ(t.checkpoints.size(), 1u);
    EXPECT_EQ(t.checkpoints[0].batch_in_epoch, 4);
}

TEST(RunBookkeeping, ObserverCallsAroundEachStep) {
    Books t(/*batches=*/1);
    RunBookkeeping b = t.make();
    b.startEpoch(0, 0);
    oneStep(b, t.input);
    EXPECT_EQ(b.beginStep(t.input).count, 0);  // the epoch ended instead of step 2
    EXPECT_EQ(t.log.calls, (std::vector<std::string>{"begin 1", "end 1", "step 1", "begin 2", "end 2"}));
    EXPECT_EQ(b.step(), 1);
}

}  // namespace
}  // namespace trainbench::engine
