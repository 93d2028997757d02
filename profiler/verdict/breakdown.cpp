// Sums of the step breakdown (see breakdown.h).
#include "profiler/verdict/breakdown.h"

#include <algorithm>

#include "profiler/verdict/rules.h"

namespace trainbench::profiler {

void StepTotals::add(const StepSample& s) {
    if (count == 0) first_step = s.step;
    last_step = s.step;
    ++count;
    step += s.step_seconds;
    for (const StepPhase& p : kStepPhases) this->*p.seconds += s.*p.seconds;
    comm += s.comm_seconds;
    wait += s.wait_seconds;
}

void StepTotals::add(const StepTotals& t) {
    if (t.count == 0) return;
    if (count == 0) first_step = t.first_step;
    last_step = t.last_step;
    count += t.count;
    step += t.step;
    for (const StepPhase& p : kStepPhases) this->*p.seconds += t.*p.seconds;
    comm += t.comm;
    wait += t.wait;
}

double StepTotals::evalCheckpointFraction() const {
    const double wall = step + eval_seconds + checkpoint_seconds;
    return wall > 0 ? (eval_seconds + checkpoint_seconds) / wall : 0.0;
}

StepTotals sumSteps(const std::vector<StepSample>& steps, size_t begin, size_t end) {
    StepTotals t;
    end = std::min(end, steps.size());
    for (size_t i = begin; i < end; ++i) t.add(steps[i]);
    return t;
}

size_t warmupSteps(size_t n) {
    return std::min(static_cast<size_t>(rules::kWarmupMaxSteps), n / static_cast<size_t>(rules::kWarmupDivisor));
}

}  // namespace trainbench::profiler
