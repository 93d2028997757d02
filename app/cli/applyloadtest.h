#pragma once
// `apply` and `profile` on a load test (a run of kind serve): its serving verdict's action as a new
// load test with the server's (or the client's) flags changed.
#include <optional>
#include <string>

#include "app/cli/servecommands.h"
#include "profiler/store/runstore.h"
#include "profiler/verdict/servingverdict.h"

namespace trainbench::cli {

// The load test `run` ran, with `action`'s flag changes. std::invalid_argument naming what is missing
// when the run did not record what is needed (a load test of a URL cannot change the server).
LoadTestArgs loadtestForAction(const profiler::RunRow& run, const profiler::ServingAction& action, const std::string& db,
                               int number);
// The command a user would type for it, every user string quoted for bash.
std::string loadtestCommandLine(const LoadTestArgs& args);

// `profile RUN` for a run of kind serve: its points, the breakdown of the judged point, the verdict
// and the actions.
void printServingProfile(profiler::RunStore& store, const profiler::RunRow& run, const std::string& db);

}  // namespace trainbench::cli
