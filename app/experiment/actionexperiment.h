#pragma once
// A run's ranked action as the next experiment: the run's resolved experiment with the action's
// changes applied, named "<run>-action<N>" and described by what changed. The CLI's `apply` and
// the GUI's "Try it" both build it here.
#include <string>

#include <nlohmann/json.hpp>

#include "profiler/store/runrow.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::app {

// "data.pipeline.prefetch: 0 -> 2" ("(unset)" for a key the run did not have).
std::string changeText(const profiler::Change& change);

// number: the action's 1-based rank. Throws std::invalid_argument when the action changes nothing
// (hardware or the model's design) or a change's path runs through a non-object, and
// nlohmann::json::exception when the run's config is not JSON. The result is not yet validated.
nlohmann::json experimentForAction(const profiler::RunRow& run, const profiler::Action& action, int number);

}  // namespace trainbench::app
