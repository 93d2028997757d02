#pragma once
// The training loop: epochs or a step limit, periodic evaluation on the test set, early stop at a
// target accuracy, with time-to-target measured on the training clock (evaluations excluded, as
// DAWNBench does). How a step runs over devices is the strategy's business. run() hands the run to
// the loop the strategy needs (synchronousloop.h, asynchronousloop.h); both keep their books with
// RunBookkeeping (counts, schedule, stop conditions, totals).
#include <functional>
#include <memory>
#include <vector>

#include "engine/data/pipeline/inputpipeline.h"
#include "engine/model/model.h"
#include "engine/optim/optimizer.h"
#include "engine/strategy/strategy.h"
#include "engine/telemetry/runrecords.h"
#include "engine/telemetry/stepclock.h"
#include "engine/train/trainconfig.h"
#include "engine/train/trainobserver.h"

namespace trainbench::engine {

// Where a run stands after a step: what a checkpoint keeps besides the parameters, and what a
// resumed run starts from.
struct TrainProgress {
    int64_t step = 0;            // steps done
    int64_t epoch = 0;           // epoch of the next step
    int64_t batch_in_epoch = 0;  // batches of that epoch already trained on
    bool evaluated_at_step = false;  // the test set was evaluated after this step
    RunSummary summary;          // the totals so far (train_seconds, evaluations, best accuracy, ...)
};

class Trainer {
public:
    // `strategy`, `train` and `test` must outlive the trainer. train yields global batches.
    Trainer(Strategy& strategy, InputPipeline& train, const EvalSet& test, const TrainConfig& config);
    // One device: the model and optimizer as a SingleStrategy.
    Trainer(Model& model, Optimizer& optimizer, InputPipeline& train, const EvalSet& test, const TrainConfig& config);

    // `resume` (may be null) continues a run from a checkpoint's progress (parameters and optimizer
    // state already restored): the pipeline is positioned at the same batch, the totals carry on.
    // `checkpoint` is called every config.checkpoint_every_steps steps, after that step's records,
    // and with config.checkpoint_at_end once more when the run ends (after its last evaluation),
    // unless its last step was just checkpointed.
    using CheckpointHook = std::function<void(const TrainProgress&)>;
    RunSummary run(TrainObserver& observer, const TrainProgress* resume = nullptr, const CheckpointHook& checkpoint = {});
    // Loss and accuracy of the current parameters on the test set.
    EvalRecord evaluate(int64_t step, int64_t epoch);
    TrainPlan plan() const;
    // Times steps and evaluations on `clock` (not owned; null: this host's wall clock). The summary's
    // host_seconds then holds the host's own training time. An asynchronous step is charged when it
    // is dispatched and again when its worker's record arrives (the clock must charge both alike).
    void setClock(StepClock* clock);

    // Steps at the start of a run left out of the steady-state throughput (warm-up, first plans).
    static constexpr int64_t kWarmupSteps = 20;

private:
    std::unique_ptr<Strategy> ownStrategy_;
    Strategy& strategy_;
    InputPipeline& train_;
    const EvalSet& test_;
    TrainConfig config_;
    AlignedBuffer evalX_;
    StepClock* clock_ = nullptr;  // the model may write its input (in-place first layers): eval copies here
};

}  // namespace trainbench::engine
