#pragma once
// One step as the run store recorded it: a row of the steps table, the read side's type (the
// verdict, reports, time-to-accuracy and the GUI get these, never the engine's StepRecord). Its
// step phases (StepPhaseSeconds) are the columns kStepPhases names; RunStore::steps reads them.
#include <cstdint>

#include "engine/telemetry/stepphases.h"

namespace trainbench::profiler {

// The step phases, one table for the engine and every reader (engine/telemetry/stepphases.h).
using engine::kInStepPhases;
using engine::kStepPhases;
using engine::StepPhase;

// input + forward + backward + optimizer + exposed_comm + other = step_seconds; eval and checkpoint
// ran after the step, outside it. Steps recorded before schema 5 have no breakdown: everything but
// input is other.
struct StepSample : engine::StepPhaseSeconds {
    int64_t step = 0;
    int64_t epoch = 0;
    double loss = 0.0;
    double step_seconds = 0.0;
    int64_t samples = 0;
    double samples_per_second = 0.0;
    double learning_rate = 0.0;
    double wall_seconds = 0.0;  // training wall time since start, evaluations excluded
    double comm_seconds = 0.0;  // in collectives moving data, hidden behind backward or not
    double wait_seconds = 0.0;  // in collectives waiting for slower replicas
};

}  // namespace trainbench::profiler
