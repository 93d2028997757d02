#pragma once
// The serving verdict (profiler/verdict/servingverdict.h) of a stored load test: its points and the
// server settings it recorded (serve.*, loadtest.*), judged on this machine's cache size.
#include <map>
#include <string>

#include "profiler/store/runstore.h"
#include "profiler/verdict/servingverdict.h"

namespace trainbench::app {

profiler::ServedSettings servedSettings(const profiler::RunRow& run, const std::map<std::string, std::string>& attributes);

// StoreError from the store.
profiler::ServingVerdict servingVerdictOf(profiler::RunStore& store, const profiler::RunRow& run);

}  // namespace trainbench::app
