#pragma once
// The tasks of a parameter_server job other than the chief, and what the chief records of the job's
// updates. The chief trains through ParameterServerStrategy like any run; a ps task serves its shard
// and a worker task trains the steps it is handed, and neither records anything.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/run/runner.h"
#include "app/run/runplan.h"
#include "engine/strategy/parameterserverstrategy.h"

namespace trainbench::app {

// Checks the job's cluster spec (a chief, a ps and a worker task; std::invalid_argument otherwise),
// then runs this process's task when it is a ps or a worker task, to the job's end; nullopt for the
// chief, which goes on to train.
std::optional<RunOutcome> runParameterServerTask(const RunRequest& request, const Placement& place);

// What a parameter_server run keeps about its updates (run_attributes): staleness, rescheduled
// steps, lost workers.
std::vector<std::pair<std::string, std::string>> parameterServerAttributes(const engine::ParameterServerStats& st,
                                                                           size_t servers);

}  // namespace trainbench::app
