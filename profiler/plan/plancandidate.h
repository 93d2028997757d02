#pragma once
// One configuration the planner ranks: a seed group of stored runs (measured on the wall clock or
// emulated on the virtual clock) or a sweep point without runs whose time is projected.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/store/runid.h"

namespace trainbench::profiler {

enum class PlanSource { Measured, Emulated, Projected };
const char* planSourceName(PlanSource source);  // "measured", "emulated", "projected"

struct PlanCandidate {
    std::string label;     // the group's or sweep point's name
    std::string devices;   // "tpu-v3:v3-32", "cpu:2"
    std::string strategy;
    PlanSource source = PlanSource::Measured;
    int runs = 0;          // runs counted (projected: the runs the convergence came from)
    int reached = 0;       // of them, how many reached the target
    int pending = 0;       // running runs not at the target yet
    std::optional<double> seconds;  // time to target; nullopt: not reached or cannot be projected
    std::optional<double> cost;     // nullopt with seconds: no price known
    std::optional<int64_t> steps;   // projected: the steps to target taken from the measured runs
    std::optional<double> step_seconds;  // projected: the estimated time of one step
    std::string note;               // projected: how the time was made up
    std::vector<RunId> run_ids;     // the group's runs, or (projected) the runs convergence came from
    std::string why;                // when seconds is nullopt: why it has no time to target
};

}  // namespace trainbench::profiler
