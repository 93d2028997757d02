#pragma once
// Sums of the step breakdown over a range of steps, and the fractions the rules compare. The run's
// verdict, each window of the timeline and the action estimates all start from one of these.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "profiler/verdict/profileinput.h"

namespace trainbench::profiler {

// The step phases' seconds (StepPhaseSeconds) are summed over the steps, as step, comm and wait are.
struct StepTotals : engine::StepPhaseSeconds {
    int64_t count = 0;
    int64_t first_step = 0;
    int64_t last_step = 0;
    double step = 0.0;
    double comm = 0.0;
    double wait = 0.0;

    void add(const StepSample& s);
    void add(const StepTotals& t);  // t must follow this range

    // Fractions of step time (0 when no step time was recorded).
    double of(double seconds) const { return step > 0 ? seconds / step : 0.0; }
    double inputFraction() const { return of(input_seconds); }
    double commFraction() const { return of(exposed_comm_seconds); }
    double compute() const { return forward_seconds + backward_seconds + optimizer_seconds; }
    // Evaluation and checkpoints against training wall time (steps + what ran between them).
    double evalCheckpointFraction() const;
    double meanStepMs() const { return count > 0 ? step / static_cast<double>(count) * 1e3 : 0.0; }
};

// Steps [begin, end) of `steps`.
StepTotals sumSteps(const std::vector<StepSample>& steps, size_t begin, size_t end);

// Steps skipped as warm-up for the run's verdict: min(20, n / 10).
size_t warmupSteps(size_t n);

}  // namespace trainbench::profiler
