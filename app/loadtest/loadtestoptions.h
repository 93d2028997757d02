#pragma once
// Everything a load test is told: where the model is served, what to send, the scenario and its
// MLPerf-style limits (minimum query count and duration, scaled down for a small machine), the
// client's budget, and the client-bound rule's threshold. Defaults are documented in docs/loadtest.md.
#include <chrono>
#include <functional>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/loadtest/loaddriver.h"
#include "app/loadtest/requestset.h"

namespace trainbench::app::loadtest {

struct ScenarioResult;

enum class Scenario { SingleStream, Server, Offline, ConcurrencySweep };

const char* scenarioName(Scenario s);  // "single-stream", "server", "offline", "concurrency"
std::optional<Scenario> parseScenario(std::string_view name);

struct LoadTestOptions {
    PredictTarget target;
    ExampleSet examples;           // what the queries carry (loadIdxExamples)
    int instancesPerQuery = 1;
    int64_t samples = 256;         // distinct requests built from the examples, used in a seeded order
    Scenario scenario = Scenario::SingleStream;

    double targetQps = 100.0;                      // Server; the first probe of the QPS search
    std::chrono::microseconds latencyBound{10'000};  // Server: at latencyPercentile
    double latencyPercentile = 99.0;
    double offlineExpectedQps = 0.0;               // Offline: sizes the query count, as LoadGen's offline_expected_qps
    std::vector<int> concurrency = {1, 2, 4, 8};   // the sweep's levels (perf_analyzer's --concurrency-range)

    // LoadGen's rule: a run lasts until both minimums are met; maxima end it early. LoadGen's own
    // minimums (600 s, 270,336 Server queries) do not fit a 2-core machine shared by builds.
    int64_t minQueryCount = 100;
    std::chrono::milliseconds minDuration{2'000};
    std::chrono::milliseconds maxDuration{60'000};
    int64_t maxQueryCount = 1'000'000;

    ClientLimits client;
    int maxConnections = 64;  // Server / Offline: caps outstanding queries (one per HTTP/1.1 connection)
    // Client-bound when the issue lag's p99 exceeds this (Server), or its threads are busy >= 90 %
    // of the run while the target is not reached.
    std::chrono::microseconds maxIssueLag{2'000};
    uint64_t seed = 0;

    bool findMaxQps = false;       // Server: search the highest QPS meeting the bound
    double searchPrecision = 0.02; // stop bisecting when the bracket is this narrow, relative to its low end
    int maxProbes = 16;

    // Called on the calling thread after each run, concurrency level and search probe, as it ends
    // (the CLI records each as a point of the run while the test goes on). May be empty.
    std::function<void(const ScenarioResult&)> onRun;
};

// "http://host:port" (optionally followed by "/v1/models/NAME", which sets the model) into
// `target`; throws LoadTestError naming the text when it is not such a URL.
PredictTarget parseTargetUrl(const std::string& url, const std::string& model);

}  // namespace trainbench::app::loadtest
