#include "app/run/recordingobserver.h"
#include "profiler/store/runattributes.h"

#include <string>

namespace trainbench::app {

namespace runattr = profiler::runattr;

void RecordingObserver::onStart(const engine::TrainPlan& plan) {
    // What the run is about to do: the GUI's progress bar and ETA, and a report's scale.
    if (writer_)
        writer_->attributes({{runattr::kPlanTotalSteps, std::to_string(plan.total_steps)},
                             {runattr::kPlanStepsPerEpoch, std::to_string(plan.steps_per_epoch)},
                             {runattr::kPlanTrainExamples, std::to_string(plan.train_examples)},
                             {runattr::kPlanTestExamples, std::to_string(plan.test_examples)},
                             {runattr::kPlanParamCount, std::to_string(plan.param_count)}});
    if (display_) display_->onStart(plan);
}

void RecordingObserver::onStepBegin(int64_t step) {
    if (trace_) trace_->beginStep(step);
}

void RecordingObserver::onStepEnd(int64_t step) {
    if (afterStep_) afterStep_(step);
    if (!trace_) return;
    trace_->endStep(step);
    // The engine's buffers hold what the window recorded; outside it there is nothing to drain.
    if (step <= traceLast_ + 1) engine::prof::drainTrace(*trace_);
}

void RecordingObserver::onStep(const engine::StepRecord& s) {
    if (writer_) writer_->step(s);
    if (display_) display_->onStep(s);
}

void RecordingObserver::onEval(const engine::EvalRecord& e) {
    if (writer_) writer_->eval(e);
    if (display_) display_->onEval(e);
}

}  // namespace trainbench::app
