#pragma once
// The load generator's one entry point: `trainbench-cli loadtest` fills LoadTestOptions and gets a
// LoadTestResult back, which it prints, exports as perf_analyzer's CSV (perfcsv.h) and stores as a
// run of kind `serve` (resultjson.h). docs/loadtest.md describes the scenarios and their reports.
#include <optional>
#include <vector>

#include "app/loadtest/findmaxqps.h"
#include "app/loadtest/loadtestoptions.h"
#include "app/loadtest/scenarioresult.h"

namespace trainbench::app::loadtest {

struct LoadTestResult {
    LoadTestOptions options;           // as run (the examples' values dropped, their source kept)
    std::vector<ScenarioResult> runs;  // one; the sweep: one per concurrency level; the search: its probes
    std::optional<QpsSearch> search;   // findMaxQps
};

// Throws LoadTestError for settings that cannot run and a server that cannot be reached.
LoadTestResult runLoadTest(const LoadTestOptions& options);

// One Server-scenario run at `qps` (the search's probe).
ScenarioResult runServerScenario(const LoadTestOptions& options, const RequestSet& requests, double qps);

}  // namespace trainbench::app::loadtest
