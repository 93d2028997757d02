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
    input += s.input_seconds;
    forward += s.forward_seconds;
    backward += s.backward_seconds;
    optimizer += s.optimizer_seconds;
    exposed_comm += s.exposed_comm_seconds;
    other += s.other_seconds;
    eval += s.eval_seconds;
    checkpoint += s.checkpoint_seconds;
    comm += s.comm_seconds;
    wait += s.wait_seconds;
}

void StepTotals::add(const StepTotals& t) {
    if (t.count == 0) return;
    if (count == 0) first_step = t.first_step;
    last_step = t.last_step;
    count += t.count;
    step += t.step;
    input += t.input;
    forward += t.forward;
    backward += t.backward;
    optimizer += t.optimizer;
    exposed_comm += t.exposed_comm;
    other += t.other;
    eval += t.eval;
    checkpoint += t.checkpoint;
    comm += t.comm;
    wait += t.wait;
}

double StepTotals::evalCheckpointFraction() const {
    const double wall = step + eval + checkpoint;
    return wall > 0 ? (eval + checkpoint) / wall : 0.0;
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
