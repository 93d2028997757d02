#pragma once
// `apply` on a prediction run (one that recorded predict.source_run): its action as a new prediction.
#include <optional>
#include <string>

#include "app/cli/commands.h"
#include "profiler/store/runstore.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::cli {

// nullopt for a training run (refusal empty), or for an action a prediction cannot take (refusal
// says which key). The output is the prediction's with "-action<N>" before its extension.
std::optional<PredictArgs> predictionForAction(profiler::RunStore& store, const profiler::RunRow& run,
                                               const profiler::Action& action, int number, std::string& refusal);
// The command a user would type for it, every user string quoted for bash.
std::string predictCommandLine(const PredictArgs& args);

}  // namespace trainbench::cli
