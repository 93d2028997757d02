#pragma once
// What the synchronous and the asynchronous training loops (synchronousloop.h, asynchronousloop.h)
// share: where the run stands (step, epoch, batch of the epoch; carried on from a checkpoint's
// progress when resuming), when to evaluate and checkpoint, when to stop (config.epochs,
// config.max_steps, the target accuracy, a stop request), the observer calls, trace zone and clock
// around each step, and the run's totals. The loops run the steps and the evaluations; this class
// keeps the books, so that both loops count, schedule and stop alike.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include "engine/instrument/instrument.h"
#include "engine/telemetry/runrecords.h"
#include "engine/telemetry/stepclock.h"
#include "engine/train/trainconfig.h"
#include "engine/train/traininput.h"
#include "engine/train/trainobserver.h"

namespace trainbench::engine {

struct TrainProgress;

class RunBookkeeping {
public:
    using Clock = std::chrono::steady_clock;
    using CheckpointHook = std::function<void(const TrainProgress&)>;

    // `config` and `observer` must outlive this. `resume` (may be null): the progress of the
    // checkpoint a resumed run starts from. `clock` (may be null: the host's wall clock) and
    // `checkpoint` (may be empty: none) as in Trainer::run.
    RunBookkeeping(const TrainConfig& config, TrainObserver& observer, StepClock* clock, const TrainProgress* resume,
                   const CheckpointHook& checkpoint);

    // Epochs. The first is the resumed one (0 for a new run); an epoch runs while the run has not
    // stopped and config.epochs allows it. `skipped`: its batches a resumed run trained before.
    int64_t firstEpoch() const { return firstEpoch_; }
    bool epochRemains(int64_t epoch) const { return !stop_ && (config_.epochs == 0 || epoch < config_.epochs); }
    void startEpoch(int64_t epoch, int64_t skipped);
    // The epoch ran to its end (the run did not stop in it): counted; true when config asks for an
    // evaluation at its end and its last step has none yet.
    bool epochCompleted(int64_t epoch);

    // One step: mayStep() (false once stopped, or at config.max_steps: stop reason "max_steps");
    // beginStep() fetches its batch (the observer's onStepBegin first; the step's trace zone and time
    // start before the fetch) and returns it, or a batch of count 0 when the epoch ended instead (no
    // such step: onStepEnd follows at once); startStep() counts the step and starts its record;
    // endStep() once the step is done or handed over; record() when its figures are final, in step
    // order; pollStop() after any evaluation and checkpoint that follow it.
    bool mayStep();
    BatchView beginStep(TrainInput& input);
    StepRecord startStep(int64_t samples);
    uint64_t stepSeed() const;
    // Its time (since beginStep) and breakdown, charged on the clock; the evaluation and checkpoint
    // time since the previous step; the observer's onStepEnd; the totals. wall_seconds: the training
    // time so far, this step included.
    void endStep(StepRecord& rec);
    // Its throughput, the totals of its figures, and to the observer (onStep).
    void record(StepRecord& rec);
    // Ends the run after this step (stop reason "stopped") when `agreed` (the processes of a job
    // agreed to stop) or the observer asks for it.
    void pollStop(bool agreed);
    bool stopped() const { return stop_; }

    // Evaluation and checkpoint schedule, after a step: every config.eval_every_steps and every
    // config.checkpoint_every_steps (given a hook).
    bool evaluationDue() const;
    bool checkpointDue() const;
    // An evaluation ran, from `start` (what the loop waited for before it included): charged on the
    // clock, counted, given to the observer; reaching the target may stop the run.
    void evaluated(EvalRecord& eval, Clock::time_point start);
    // Calls the checkpoint hook with the progress so far; the time from `start` goes to the next step.
    void checkpoint(Clock::time_point start);

    // The loop left its epochs (and has no step in flight): the stop reason ("epochs" unless another
    // one ended the run) and the corrupt records the input skipped. Then, if due, an evaluation where
    // the run ended (it evaluates at all, its last step has none, it did not stop at the target) and
    // a checkpoint of the parameters it ended with, for other runs to start from (config asks for
    // one, the last step has none; its time is in no step: there is no next step to charge it to).
    // Last the summary, with the steady-state throughput.
    void trainingEnded(int64_t skippedRecords);
    bool finalEvaluationDue() const;
    bool finalCheckpointDue() const;
    RunSummary summary() const;

    static double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

    // Steps done (the last one started), and the epoch it belongs to.
    int64_t step() const { return step_; }
    int64_t epoch() const { return currentEpoch_; }
    StepClock* clock() const { return clock_; }
    double trainSeconds() const { return s_.train_seconds; }
    // The loop waited `seconds` for steps in flight to finish: training time (on a clock, the host's
    // own: the clock's steps already hold the workers' time).
    void waited(double seconds);

private:
    const TrainConfig& config_;
    TrainObserver& observer_;
    StepClock* clock_;
    CheckpointHook checkpoint_;
    RunSummary s_;
    bool stop_ = false;
    int64_t step_ = 0, currentEpoch_ = 0, batchInEpoch_ = 0, firstEpoch_ = 0;
    int64_t lastEvalStep_ = -1, lastCheckpointStep_ = -1;
    // Steps after the warm-up (Trainer::kWarmupSteps) make the steady-state throughput.
    double steadySeconds_ = 0.0;
    int64_t steadySamples_ = 0, allSamples_ = 0;
    // Evaluation and checkpoint time since the last step, recorded with the next step.
    double evalSecondsSinceStep_ = 0.0, checkpointSecondsSinceStep_ = 0.0;
    // The step under way: its trace zone (from its batch to its update) and when it began.
    std::optional<prof::ZoneScope> stepZone_;
    Clock::time_point stepStart_;
};

}  // namespace trainbench::engine
