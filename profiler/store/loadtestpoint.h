#pragma once
// One measured point of a load test (a run of kind 'serve'), as the loadtest_points and
// loadtest_seconds tables hold it (schema 9, docs/run-store.md). Milliseconds throughout.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainbench::profiler {

struct LoadTestSecond {
    int64_t second = 0;
    int64_t completed = 0;
    int64_t errors = 0;
    std::optional<double> p50_ms, p99_ms;  // nullopt: no query ended in that second

    friend bool operator==(const LoadTestSecond&, const LoadTestSecond&) = default;
};

struct LoadTestPoint {
    int64_t point = 0;                 // 0, 1, ... in the order measured
    std::string scenario;              // "single-stream", "server", "offline", "concurrency"
    std::optional<double> target_qps;  // server scenario
    std::optional<int64_t> concurrency;  // concurrency sweep
    int64_t queries = 0;
    double achieved_qps = 0;
    std::optional<double> p50_ms, p90_ms, p95_ms, p99_ms, p999_ms;
    // Mean breakdown of a query's latency; nullopt where the server sent no timing.
    std::optional<double> queue_ms, batch_ms, compute_ms, serialize_ms, network_ms;
    bool client_bound = false;
    int64_t errors = 0;
    std::vector<LoadTestSecond> seconds;

    friend bool operator==(const LoadTestPoint&, const LoadTestPoint&) = default;
};

}  // namespace trainbench::profiler
