#pragma once
// A Measurement's records turned into a ScenarioResult: percentiles, the per-query breakdown, the
// per-second series and the client-bound check.
#include "app/loadtest/loaddriver.h"
#include "app/loadtest/scenarioresult.h"

namespace trainbench::app::loadtest {

struct SummaryContext {
    Scenario scenario = Scenario::SingleStream;
    double targetQps = 0;          // Server
    int64_t scheduleWindowNs = 0;  // Server: the window the arrivals were spread over
    int concurrency = 0;
    int instancesPerQuery = 1;
    double boundPercentile = 90;
    double latencyBoundUs = 0;     // Server: the bound to meet (0: none)
    double maxIssueLagUs = 2000;
};

LatencySummary summariseLatency(const LatencyHistogram& h);
ScenarioResult summarise(const Measurement& m, const SummaryContext& context);

}  // namespace trainbench::app::loadtest
