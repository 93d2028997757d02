#pragma once
// A load test as JSON, the document the run store keeps for a run of kind `serve`: the settings,
// each run's percentiles, breakdown, client check and per-second series (QPS, p50, p99), and the
// QPS search's probes. Times in microseconds, rates per second.
#include <nlohmann/json.hpp>

#include "app/loadtest/loadtest.h"

namespace trainbench::app::loadtest {

nlohmann::json resultJson(const LoadTestResult& result);
// The "settings" part alone: what a run of kind serve keeps as its config_json.
nlohmann::json settingsJson(const LoadTestOptions& options);

}  // namespace trainbench::app::loadtest
