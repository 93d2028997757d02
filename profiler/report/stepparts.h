#pragma once
// The six parts of a training step's time (steps table: input, forward, backward, optimizer, exposed
// communication, other; they add up to step_seconds), with the colours every chart gives them, and
// their means over a run the way `trainbench-cli profile` takes them (after warm-up).
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/telemetry/runrecords.h"

namespace trainbench::profiler {

struct StepPart {
    const char* name;
    int colour;  // palette index (svgchart.cpp)
    double engine::StepRecord::*seconds;
};

inline constexpr std::array<StepPart, 6> kStepParts{{
    {"input", 4, &engine::StepRecord::input_seconds},
    {"forward", 5, &engine::StepRecord::forward_seconds},
    {"backward", 0, &engine::StepRecord::backward_seconds},
    {"optimizer", 2, &engine::StepRecord::optimizer_seconds},
    {"exposed communication", 1, &engine::StepRecord::exposed_comm_seconds},
    {"other", 6, &engine::StepRecord::other_seconds},
}};

struct MeanStep {
    int64_t firstStep = 0, lastStep = 0;  // the steps averaged
    double stepSeconds = 0.0;
    std::array<double, 6> partSeconds{};  // in kStepParts order
};

// Mean over the steps after warm-up: the first min(20, n / 10) steps are skipped when there are more
// than 40 (as the profiler does). nullopt without steps.
std::optional<MeanStep> meanStep(const std::vector<engine::StepRecord>& steps);

}  // namespace trainbench::profiler
