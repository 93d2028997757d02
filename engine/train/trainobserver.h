#pragma once
// How a training loop reports progress and learns that it should stop. The CLI prints from it, the
// run store records from it; the engine knows neither.
#include <cstdint>

#include "engine/telemetry/runrecords.h"

namespace trainbench::engine {

struct TrainPlan {
    int64_t steps_per_epoch = 0;
    int64_t total_steps = 0;       // planned steps (epochs x steps/epoch, capped by max_steps)
    int64_t train_examples = 0;    // one pass over the training data (after data.fraction); 0 = not yet counted
    int64_t test_examples = 0;
    int64_t param_count = 0;
};

class TrainObserver {
public:
    virtual ~TrainObserver() = default;
    virtual void onStart(const TrainPlan& /*plan*/) {}
    // Around each training step, before its batch is fetched and right after it (before any
    // evaluation or checkpoint that follows): where a trace window opens, closes and is drained.
    virtual void onStepBegin(int64_t /*step*/) {}
    virtual void onStepEnd(int64_t /*step*/) {}
    virtual void onStep(const StepRecord& /*step*/) {}
    virtual void onEval(const EvalRecord& /*eval*/) {}
    // Polled once per step; true ends the run after the current step with StopReason::Stopped.
    virtual bool stopRequested() { return false; }
};

}  // namespace trainbench::engine
