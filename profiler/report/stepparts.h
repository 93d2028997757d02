#pragma once
// The parts of a training step's time as the report charts them: the in-step phases of
// engine/telemetry/stepphases.h (input, forward, backward, optimizer, exposed communication, other;
// they add up to step_seconds), with their report names and colours, and their means over a run the
// way `trainbench-cli profile` takes them (after warm-up).
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "profiler/verdict/stepsample.h"

namespace trainbench::profiler {

inline constexpr auto kStepParts = kInStepPhases;

struct MeanStep {
    int64_t firstStep = 0, lastStep = 0;  // the steps averaged
    double stepSeconds = 0.0;
    std::array<double, kStepParts.size()> partSeconds{};  // in kStepParts order
};

// Mean over the steps after warm-up: the first min(20, n / 10) steps are skipped when there are more
// than 40 (as the profiler does). nullopt without steps.
std::optional<MeanStep> meanStep(const std::vector<StepSample>& steps);

}  // namespace trainbench::profiler
