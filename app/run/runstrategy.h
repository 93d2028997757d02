#pragma once
// Stage 4 of a run (runExperiment): the model and the strategy that trains it. On emulated devices
// the footprint is checked against one replica's memory first, so a model that does not fit fails
// before anything is allocated here.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "app/run/runner.h"
#include "app/run/runplan.h"
#include "engine/emulation/devicememory.h"
#include "engine/strategy/strategy.h"
#include "engine/strategy/strategyspec.h"

namespace trainbench::app {

// What this process of the run builds its strategy from: the experiment's model, optimizer, seed
// and strategy section, the data's example shape and classes, the plan's replicas and threads, and
// the job's task (request.cluster) with its token and timeout.
engine::StrategySpec strategySpecFor(const RunRequest& request, const RunPlan& plan, const engine::Dims& shape,
                                     int64_t classes);

struct RunModel {
    std::optional<engine::MemoryCheck> deviceMemory;  // emulated: one replica's footprint against its memory
    std::unique_ptr<engine::Strategy> strategy;
};

// Checks the footprint (emulated), makes the strategy (engine::makeStrategy) and says what it is.
// Throws std::runtime_error for a model that does not fit the emulated device, and what the
// strategy throws (a job's peers not arriving, a port taken).
RunModel buildStrategy(const RunRequest& request, const RunPlan& plan, const engine::Dims& shape, int64_t classes,
                       const std::function<void(const std::string&)>& say);

}  // namespace trainbench::app
