#include "profiler/tta/runtimetoaccuracy.h"

#include <algorithm>

namespace trainbench::profiler {

std::optional<double> RunTimeToAccuracy::secondsWithPretraining() const {
    if (!seconds) return std::nullopt;
    if (!pretraining) return seconds;
    if (!pretraining->seconds) return std::nullopt;
    return *seconds + *pretraining->seconds;
}

std::optional<double> RunTimeToAccuracy::costWithPretraining() const {
    if (!cost) return std::nullopt;
    if (!pretraining) return cost;
    if (!pretraining->cost) return std::nullopt;
    return *cost + *pretraining->cost;
}

RunTimeToAccuracy timeToAccuracy(const RunRow& run, const std::vector<StepSample>& steps,
                                 const std::vector<EvalSample>& evals, TargetAccuracy target) {
    RunTimeToAccuracy r;
    r.run = run.id;
    double evalSeconds = 0.0;
    const EvalSample* first = nullptr;
    for (const EvalSample& e : evals) {
        if (e.split != "test") continue;
        ++r.evaluations;
        r.best_accuracy = std::max(r.best_accuracy.value_or(e.accuracy), e.accuracy);
        if (first) continue;
        evalSeconds += e.eval_seconds;
        if (target.reachedBy(e.accuracy)) first = &e;
    }
    if (!first) return r;
    r.reached = true;
    r.step = first->step;
    r.eval_seconds = evalSeconds;
    // The run's own steps, whatever number they start at (a warm-started run may continue its
    // source's numbering): the pre-training is not in them.
    double seconds = 0.0;
    int64_t lastStep = 0;
    for (const StepSample& s : steps) {
        if (s.step > first->step) break;
        seconds += s.step_seconds;
        lastStep = s.step;
    }
    // Steps up to the evaluation missing from the store (never so for runs trainbench wrote): the
    // training time the evaluation itself recorded.
    r.seconds = lastStep == first->step || first->step == 0 ? seconds : first->wall_seconds;
    if (const auto perSecond = run.costPerSecond()) r.cost = *r.seconds * *perSecond;
    return r;
}

}  // namespace trainbench::profiler
